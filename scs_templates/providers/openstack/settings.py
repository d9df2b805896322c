"""OpenStack's section of the settings (``spec.openstack``): its own model classes.

The settings model composes it in (:func:`scs_templates._settings.model.settings_model`) from
:meth:`~scs_templates.providers.openstack.provider.OpenStackProvider.settings_section`, so the
neutral model never names it; the published JSON Schema and docs/settings.md are generated from
the composition of the shipped providers.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, StringConstraints

from scs_templates.providers.sections import (
    Cidr,
    Dns1123Label,
    MetadataText,
    NonEmptyStr,
    SettingsModel,
)

RuleDirection = Literal["ingress", "egress"]


EtherType = Literal["IPv4", "IPv6"]


LoadBalancerProvider = Literal["amphora", "ovn"]


#: DNS-1123 subdomain characters: never '_', the separator of OCCM's load balancer names.
CloudClusterName = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", max_length=253)
]


class ApplicationCredential(SettingsModel):
    per_cluster: StrictBool = Field(
        default=True,
        description="Create a restricted application credential "
        "$PREFIX-$CLUSTER-appcred.$NAMESPACE for this cluster (a leak then affects one "
        "cluster only).",
    )
    separate_workload: StrictBool = Field(
        default=False,
        description="Use a second restricted credential "
        "($PREFIX-$CLUSTER-appcred-workload.$NAMESPACE) for the in-cluster cloud controller "
        "manager and Cinder CSI.",
    )


class AntiAffinity(SettingsModel):
    control_plane: Literal["hard", "soft", "none"] = Field(
        default="hard", description="Server-group policy of control-plane machines."
    )
    workers: Literal["hard", "soft", "none"] = Field(
        default="soft", description="Server-group policy of each worker group."
    )


class ServerMetadata(SettingsModel):
    control_plane: dict[Annotated[MetadataText, StringConstraints(min_length=1)], MetadataText] = (
        Field(default_factory=dict, description="Nova server metadata of control-plane machines.")
    )
    workers: dict[Annotated[MetadataText, StringConstraints(min_length=1)], MetadataText] = Field(
        default_factory=dict, description="Nova server metadata of worker machines."
    )


class ExistingNetwork(SettingsModel):
    network: NonEmptyStr = Field(description="Network name or ID to put the nodes on.")
    subnet: NonEmptyStr | None = Field(
        default=None,
        description="Subnet name or ID in that network; empty = all its subnets. Set "
        "network.nodeCIDR to its CIDR.",
    )


class SecurityGroupRule(SettingsModel):
    name: Dns1123Label = Field(description="Name of the rule (unique).")
    description: str = Field(default="", description="What the rule is for.")
    direction: RuleDirection = Field(default="ingress", description="Direction.")
    ether_type: EtherType = Field(default="IPv4", description="IP version.")
    protocol: Literal["tcp", "udp", "icmp", "vrrp", "sctp"] | None = Field(
        default=None, description="Protocol; empty = any."
    )
    port_range_min: StrictInt | None = Field(
        default=None, ge=1, le=65535, description="First port (tcp, udp, sctp)."
    )
    port_range_max: StrictInt | None = Field(
        default=None, ge=1, le=65535, description="Last port; empty = portRangeMin."
    )
    remote_ip_prefix: Cidr | None = Field(
        default=None, description="Source (ingress) or destination (egress) network."
    )


class MetadataService(SettingsModel):
    deny_pods: StrictBool = Field(
        default=True,
        description="Deny Pods egress to the metadata service (169.254.169.254), which serves "
        "each node's bootstrap data (kubeadm join token; on control-plane nodes the cluster's "
        "CA and service-account keys): a cluster-wide policy of the CNI. hostNetwork Pods "
        "(OCCM, the Cinder CSI node plugin) keep their node's access; kube-system is allowed.",
    )
    allowed_namespaces: list[Dns1123Label] = Field(
        default_factory=list,
        description="More namespaces (besides kube-system) whose Pods may still reach the "
        "metadata service.",
    )


class OpenStack(SettingsModel):
    cloud: NonEmptyStr = Field(
        default="openstack", description="Name of the cloud entry in clouds.yaml."
    )
    external_network_id: NonEmptyStr | None = Field(
        default=None,
        description="ID of the external network; empty = auto-detect (exactly one external "
        "network).",
    )
    image: NonEmptyStr = Field(
        default="ubuntu-capi-image-{version}",
        description="Node image name; {version} is replaced by the Kubernetes version (v1.33.5).",
    )
    ssh_key_name: NonEmptyStr | None = Field(
        default=None, description="Nova keypair injected into nodes; empty = none."
    )
    load_balancer_provider: LoadBalancerProvider = Field(
        default="amphora", description="Octavia provider of the API load balancer."
    )
    application_credential: ApplicationCredential = Field(
        default_factory=ApplicationCredential, description="Per-cluster credentials."
    )
    anti_affinity: AntiAffinity = Field(
        default_factory=AntiAffinity, description="Server groups (scs-0214)."
    )
    server_metadata: ServerMetadata = Field(
        default_factory=ServerMetadata, description="Nova server metadata."
    )
    instance_create_timeout_minutes: StrictInt | None = Field(
        default=None,
        ge=1,
        le=120,
        deprecated=True,
        description="Deprecated (KaaS v1 CLUSTER_API_OPENSTACK_INSTANCE_CREATE_TIMEOUT): CAPO "
        "has no per-cluster setting for it any more; it is ignored.",
    )
    existing_network: ExistingNetwork | None = Field(
        default=None,
        description="Use this existing network (and subnet) instead of creating one with a "
        "router; DNS servers and MTU of network are then the network's own.",
    )
    api_floating_ip: StrictBool = Field(
        default=True,
        description="Give the API load balancer a floating IP; false = reachable on the "
        "cluster network only (the management cluster must be able to route there).",
    )
    node_security_group_rules: list[SecurityGroupRule] = Field(
        default_factory=list,
        description="Extra rules of the security group of all nodes (e.g. NodePorts from "
        "an office network).",
    )
    credentials_secret: Dns1123Label | None = Field(
        default=None,
        description="Existing Secret with clouds.yaml and cacert to use instead of the one "
        "scs-templates creates; empty = $PREFIX-$CLUSTER-cloud-config.",
    )
    cloud_cluster_name: CloudClusterName | None = Field(
        default=None,
        description="The cluster's name for the cloud integrations: OCCM's --cluster-name (its "
        "load balancers are named kube_service_<this>_<namespace>_<service>), Cinder CSI's "
        "--cluster (a property of its volumes), and what delete's leftover search looks for. "
        "Must be unique in the OpenStack project. Empty: a new cluster gets "
        "$CLUSTER.$NAMESPACE; an installed cluster keeps the name its release recorded (one "
        "installed before this field existed: $CLUSTER). A value that differs from the "
        "recorded one is refused (the cluster's load balancers and volumes would be orphaned).",
    )
    metadata_service: MetadataService = Field(
        default_factory=MetadataService,
        description="Who in the workload cluster may read the metadata service.",
    )
