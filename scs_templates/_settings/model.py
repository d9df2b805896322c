# One module over 500 lines: the settings model is the one source of truth of every field,
# its default and its description (and so of the JSON Schema and docs/settings.md); split,
# a reader would chase one field's definition across files.
"""The standardized cluster settings model: ONE source of truth.

Fields, defaults, descriptions and the published JSON Schema all come from these classes.
Words are provider-neutral (machine type, zone); provider specifics live in one section per
provider (``openstack``, ``docker``). Defaults are the values SCS tested and documented for
KaaS v1 (see ``docs/migration-from-kaas-v1.md``). Cross-field rules live in :mod:`.rules`
so that every problem is reported at once with its own path.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictInt,
    StringConstraints,
    create_model,
)
from pydantic_core import PydanticCustomError

from scs_templates._settings import plugins
from scs_templates._settings.derived import ClusterSettingsDerived, WorkerGroupDerived
from scs_templates._settings.keys import API_VERSION as API_VERSION
from scs_templates._settings.keys import KIND as KIND
from scs_templates._settings.keys import alias_for as alias_for
from scs_templates._versions.kubernetes import DEFAULT_VERSION

#: The cluster templates: the one place their names are written (``spec.template`` takes
#: them; the catalogue describes each, in this order:
#: ``scs_templates._render.catalogue.TEMPLATES``).
TemplateName = Literal["simple", "multi-md", "clusterclass"]
TEMPLATES: tuple[TemplateName, ...] = typing.get_args(TemplateName)

# Choices the cluster charts' values take as they are (scs_templates._contract.model uses the
# same names, so the settings and the values contract cannot drift apart).
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
ControlPlaneReplicas = Literal[1, 3, 5]
ControlPlaneMaxSurge = Literal[0, 1]

# DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric.
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
Dns1123Label = Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)]
NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]
#: A directory on a node, written into its shell scripts as it is: absolute, and no space,
#: quote or other character the shell would read (rules.py refuses '..' and etcd's data).
NodeDirectory = Annotated[str, StringConstraints(pattern=r"^(/[A-Za-z0-9._-]+)+$", max_length=255)]
Cidr = Annotated[str, Field(json_schema_extra={"format": "cidr"})]
# DNS-1123 subdomain (RFC 1123 host name): DNS labels joined by '.', each <= 63 characters.
# apimachinery bounds the whole to 253 characters (a rule: settings/rules.py, the JSON
# Schema's regular expressions cannot count across labels).
_SUBDOMAIN_BODY = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*"
DNS_SUBDOMAIN = rf"^{_SUBDOMAIN_BODY}$"
Dns1123Subdomain = Annotated[str, StringConstraints(pattern=DNS_SUBDOMAIN, max_length=253)]
#: A label key as apimachinery's IsQualifiedName takes it: an optional DNS subdomain prefix
#: and '/', then a name of <= 63 characters [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?.
LABEL_KEY = rf"^({_SUBDOMAIN_BODY}/)?[A-Za-z0-9]([-A-Za-z0-9_.]{{0,61}}[A-Za-z0-9])?$"
LabelKey = Annotated[str, StringConstraints(pattern=LABEL_KEY, max_length=253 + 1 + 63)]
LABEL_VALUE = r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$"
LabelValue = Annotated[str, StringConstraints(pattern=LABEL_VALUE)]
ServiceVersion = Annotated[
    str,
    StringConstraints(pattern=r"^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$"),
    Field(description="A chart version to pin instead of the tested default, e.g. 1.16.3."),
]

#: etcd's --auto-compaction-retention in periodic mode (server/embed/etcd.go
#: parseCompactionRetention): a whole number of hours (strconv.Atoi), else a Go duration
#: (time.ParseDuration; ASCII units only). Go's int64 nanoseconds bound it: a rule.
COMPACTION_RETENTION = r"^([0-9]+|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|ms|s|m|h))+)$"
#: A NO_PROXY entry: what the cluster charts take (no ',' separator, blank or quote inside).
NO_PROXY_ENTRY = r'^[^,\s"]+$'
#: What systemd's OnCalendar may hold at all (the grammar itself: settings/calendar.py).
ON_CALENDAR = r"^[A-Za-z0-9*,./:~ -]+$"

Duration = Annotated[
    str,
    StringConstraints(pattern=r"^[1-9][0-9]*(s|m|h)$"),
    Field(description="A duration: a number and s, m or h, e.g. 10m."),
]


def nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model class inside ``X | None``, ``list[X]`` or ``Annotated[X, ...]``, if any
    (for walking the model: did-you-mean suggestions, the generated reference)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return nested_model(typing.get_args(annotation)[0])
    if origin in (list, types.UnionType, typing.Union):
        for arg in typing.get_args(annotation):
            found = nested_model(arg)
            if found is not None:
                return found
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _known_provider(value: Any) -> str:
    """An installed provider (:mod:`.plugins`: the shipped ones, plug-ins, test ones)."""
    names = plugins.provider_names()
    if value not in names:
        quoted = [repr(name) for name in names]
        expected = " or ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)
        raise PydanticCustomError(
            "literal_error", "Input should be {expected}", {"expected": expected}
        )
    return str(value)


class _ProviderEnum:
    """The JSON Schema of ``spec.provider``: the providers of the composed model (the shipped
    ones in the published schema, every installed one in ``scs-templates schema``)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.json_schema: dict[str, Any] = {"enum": list(names), "type": "string"}

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        return self.json_schema


#: ``spec.provider``: validated against the catalogue (its providers, the one list of them).
ProviderName = Annotated[str, PlainValidator(_known_provider)]


class SettingsModel(BaseModel):
    """Strict base: unknown keys are errors, YAML keys are camelCase, objects are immutable.

    ``defer_build``: pydantic builds a class's validator on first use, not at import; a valid
    file never needs it (:mod:`.fastpath`), an invalid one builds it to word the errors.
    """

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=alias_for,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        frozen=True,
        validate_default=True,
        use_attribute_docstrings=False,
        defer_build=True,
    )


# --------------------------------------------------------------------------- metadata


class Metadata(SettingsModel):
    name: Dns1123Label = Field(
        description="Cluster name, DNS-1123 label. Becomes the Cluster object's name and "
        "$CLUSTER in $PREFIX-$CLUSTER-$RESOURCE names."
    )
    namespace: Dns1123Label = Field(
        default="default",
        description="Namespace on the management cluster that holds the cluster's objects.",
    )


# --------------------------------------------------------------------------- machines


class Taint(SettingsModel):
    key: LabelKey = Field(description="Taint key, e.g. dedicated.")
    value: LabelValue = Field(default="", description="Taint value (may be empty).")
    effect: TaintEffect = Field(description="What the taint does to pods that do not tolerate it.")


class Autoscaling(SettingsModel):
    min: StrictInt = Field(ge=0, le=1000, description="Lowest number of machines.")
    max: StrictInt = Field(ge=1, le=1000, description="Highest number of machines.")


Seconds = Annotated[StrictInt, Field(ge=0, le=2**31 - 1)]


class MachineDeletion(SettingsModel):
    """How Cluster API takes a machine away (rolling update, scale-down, remediation)."""

    node_drain_timeout_seconds: Seconds | None = Field(
        default=None,
        description="Give up draining the node after this many seconds and delete the machine "
        "anyway; empty = Cluster API's default (wait for ever, 0).",
    )
    node_volume_detach_timeout_seconds: Seconds | None = Field(
        default=None,
        description="Give up waiting for the node's volumes to detach after this many "
        "seconds; empty = Cluster API's default (wait for ever, 0).",
    )
    node_deletion_timeout_seconds: Seconds | None = Field(
        default=None,
        description="How long Cluster API retries deleting the Node object; 0 = for ever, "
        "empty = Cluster API's default (10 seconds).",
    )


class HealthCheck(SettingsModel):
    """The MachineHealthCheck of a machine group: when a machine counts as failed."""

    node_startup_timeout_seconds: Seconds = Field(
        default=600,
        description="A machine whose node has not joined after this many seconds is "
        "replaced (control plane: 1200); 0 disables the check.",
    )
    unhealthy_timeout_seconds: Seconds = Field(
        default=300,
        description="A node that is not Ready (False or Unknown) for this many seconds is "
        "replaced.",
    )


class WorkerHealthCheck(HealthCheck):
    max_unhealthy_percent: StrictInt = Field(
        default=40,
        ge=0,
        le=100,
        description="Stop replacing machines when more than this share of the group is "
        "unhealthy (then the cause is likely not the machines: an image, network or cloud "
        "outage).",
    )


class ControlPlaneHealthCheck(HealthCheck):
    node_startup_timeout_seconds: Seconds = Field(
        default=1200,
        description="A control-plane machine whose node has not joined after this many "
        "seconds is replaced; 0 disables the check.",
    )
    max_unhealthy_percent: StrictInt | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Stop replacing control-plane machines when more than this share of "
        "them is unhealthy (e.g. 34 with 3 replicas: only a single failed machine is "
        "replaced); empty = no such stop (Cluster API's default, 100). Independently, "
        "Cluster API replaces one at a time and never when etcd would lose quorum.",
    )


class ControlPlaneRollout(SettingsModel):
    max_surge: ControlPlaneMaxSurge = Field(
        default=1,
        description="Extra control-plane machine during a rolling update: 1 (create the new "
        "one first) or 0 (delete an old one first; needs 3 or 5 replicas).",
    )
    deletion: MachineDeletion = Field(
        default_factory=MachineDeletion, description="Drain and deletion timeouts."
    )


class WorkerRollout(SettingsModel):
    max_surge: StrictInt = Field(
        default=1,
        ge=0,
        le=1000,
        description="Machines created above the wanted count during a rolling update (0 for "
        "a group with no spare capacity, e.g. GPUs).",
    )
    max_unavailable: StrictInt = Field(
        default=0,
        ge=0,
        le=1000,
        description="Machines that may be missing during a rolling update (at least 1 when "
        "maxSurge is 0).",
    )
    deletion: MachineDeletion = Field(
        default_factory=MachineDeletion, description="Drain and deletion timeouts."
    )


class ControlPlane(SettingsModel):
    replicas: ControlPlaneReplicas = Field(
        default=3,
        description="Control-plane machines: 1 (no high availability), 3 or 5. An odd count "
        "keeps etcd quorum.",
    )
    machine_type: NonEmptyStr | None = Field(
        default=None,
        description="Machine type (the cloud's flavor or instance type), where the provider "
        "has them (see each provider's notes below). KaaS v1 default: SCS-2V-4-20s.",
    )
    zones: list[NonEmptyStr] = Field(
        default_factory=list,
        description="Zones (the cloud's failure domains) to spread control-plane machines "
        "over; empty means the provider's default placement.",
    )
    root_disk_gb: StrictInt = Field(
        default=0,
        ge=0,
        le=10000,
        description="Root volume size in GB; 0 boots from the machine type's own disk.",
    )
    root_disk_type: NonEmptyStr | None = Field(
        default=None,
        description="Volume type of the root volume; needs rootDiskGB. "
        "Empty = the cloud's default type.",
    )
    extra_networks: list[NonEmptyStr] = Field(
        default_factory=list,
        description="Further networks (name or ID), one more port each after the "
        "cluster network's, where the provider attaches them.",
    )
    image: NonEmptyStr | None = Field(
        default=None,
        description="Image override for control-plane machines; {version} is replaced by the "
        "Kubernetes version. Without {version} it does not follow upgrades (a warning; an "
        "error when the name carries another Kubernetes version).",
    )
    remediation_max_retry: StrictInt = Field(
        default=3,
        ge=0,
        le=100,
        description="How often a failed control-plane machine is replaced before remediation "
        "gives up.",
    )
    rollout: ControlPlaneRollout = Field(
        default_factory=ControlPlaneRollout, description="Rolling updates and machine deletion."
    )
    health_check: ControlPlaneHealthCheck = Field(
        default_factory=ControlPlaneHealthCheck,
        description="When a control-plane machine counts as failed (MachineHealthCheck).",
    )


class WorkerGroup(WorkerGroupDerived, SettingsModel):
    name: Dns1123Label = Field(
        description="Group name, DNS-1123, unique; $RESOURCE of the group's objects."
    )
    replicas: StrictInt | None = Field(
        default=None,
        ge=0,
        le=1000,
        description="Fixed number of machines. Leave out when `autoscaling` is set; default 3.",
    )
    autoscaling: Autoscaling | None = Field(
        default=None,
        description="Let the cluster-autoscaler scale between min and max machines.",
    )
    machine_type: NonEmptyStr | None = Field(
        default=None,
        description="Machine type (the cloud's flavor or instance type), where the provider "
        "has them (see each provider's notes below). KaaS v1 default: SCS-2V-4-20s.",
    )
    zone: NonEmptyStr | None = Field(
        default=None, description="Zone (the cloud's failure domain) of the group's machines."
    )
    labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, description="Kubernetes node labels of the group's nodes."
    )
    taints: list[Taint] = Field(
        default_factory=list, description="Kubernetes node taints of the group's nodes."
    )
    root_disk_gb: StrictInt = Field(
        default=0,
        ge=0,
        le=10000,
        description="Root volume size in GB; 0 boots from the machine type's own disk.",
    )
    root_disk_type: NonEmptyStr | None = Field(
        default=None,
        description="Volume type of the root volume; needs rootDiskGB. "
        "Empty = the cloud's default type.",
    )
    extra_networks: list[NonEmptyStr] = Field(
        default_factory=list,
        description="Further networks (name or ID), one more port each after the "
        "cluster network's, where the provider attaches them.",
    )
    image: NonEmptyStr | None = Field(
        default=None,
        description="Image override for this group's machines; {version} is replaced by the "
        "Kubernetes version. Without {version} it does not follow upgrades (a warning; an "
        "error when the name carries another Kubernetes version).",
    )
    rollout: WorkerRollout = Field(
        default_factory=WorkerRollout, description="Rolling updates and machine deletion."
    )
    health_check: WorkerHealthCheck = Field(
        default_factory=WorkerHealthCheck,
        description="When a machine of the group counts as failed (MachineHealthCheck).",
    )


# --------------------------------------------------------------------------- network


class ApiAccess(SettingsModel):
    mode: Literal["open", "internal", "cidrs"] = Field(
        default="open",
        description="Who may reach the Kubernetes API load balancer: `open` (anyone), "
        "`internal` (the cluster's own network and the management cluster only; KaaS v1 "
        "RESTRICT_KUBEAPI=[ none ]), or `cidrs` (the listed networks, plus internal).",
    )
    cidrs: list[Cidr] = Field(
        default_factory=list, description="Allowed source networks when mode is `cidrs`."
    )
    management_cidrs: list[Cidr] = Field(
        default_factory=list,
        description="Egress networks of the management cluster, always allowed when access "
        "is restricted (so Cluster API keeps reaching the API).",
    )


PemCertificates = Annotated[
    str,
    StringConstraints(
        pattern=r"^\s*-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\s*$"
    ),
]


# An http(s) URL without user information: proxy credentials would end up in node files and
# helm values, which must never hold secrets (nor may an error message echo them: validate).
PROXY_URL = r"^https?://[^\s/@?#]+(/[^\s@]*)?$"
ProxyURL = Annotated[str, StringConstraints(pattern=PROXY_URL)]


class Proxy(SettingsModel):
    """HTTP(S) proxy of the nodes (containerd: image pulls, also kubeadm's; kubelet) and of
    the pods that call the cloud's APIs (OpenStack: OCCM and the Cinder CSI plugin)."""

    http_proxy: ProxyURL | None = Field(
        default=None, description="Proxy for http:// requests, e.g. http://proxy.example:3128."
    )
    https_proxy: ProxyURL | None = Field(
        default=None, description="Proxy for https:// requests (image pulls)."
    )
    no_proxy: list[Annotated[str, StringConstraints(pattern=NO_PROXY_ENTRY)]] = Field(
        default_factory=list,
        description="Further hosts, domains (.example.com) and CIDRs reached directly. The "
        "cluster's own are always added: localhost, the pod, service and node CIDRs, the "
        "service domain, .svc and the API endpoint.",
    )


class Network(SettingsModel):
    pod_cidr: Cidr = Field(default="192.168.0.0/16", description="Pod network.")
    service_cidr: Cidr = Field(default="10.96.0.0/12", description="Service network.")
    node_cidr: Cidr = Field(
        default="10.8.0.0/20", description="Network of the nodes (the cluster network's subnet)."
    )
    mtu: StrictInt = Field(
        default=0,
        ge=0,
        le=9000,
        description="MTU of the node network and the CNI; 0 lets the provider decide. "
        "Otherwise at least 118 (IPv4) or 1350 (IPv6): the Linux minimum of the pod "
        "interfaces (68, 1280) plus the CNI's VXLAN overhead (50, 70 bytes).",
    )
    dns_servers: list[NonEmptyStr] = Field(
        default_factory=lambda: ["5.1.66.255", "185.150.99.255"],
        description="DNS servers of the node subnet (KaaS v1 default: the FFMUC resolvers).",
    )
    service_domain: Dns1123Subdomain = Field(
        default="cluster.local",
        description="DNS domain of Services: a DNS subdomain (kubeadm's dnsDomain).",
    )
    api_access: ApiAccess = Field(
        default_factory=ApiAccess, description="Allow-list of the API load balancer."
    )
    proxy: Proxy = Field(default_factory=Proxy, description="HTTP(S) proxy of the nodes.")


# --------------------------------------------------------------------------- services


class Service(SettingsModel):
    enabled: StrictBool = Field(default=True, description="Deploy this service.")
    version: ServiceVersion | None = Field(
        default=None, description="Chart version override; empty = the tested default."
    )
    values: dict[str, object] = Field(
        default_factory=dict, description="Extra helm values merged over ours."
    )


class OptionalService(Service):
    enabled: StrictBool = Field(default=False, description="Deploy this service.")


class Cni(SettingsModel):
    type: Literal["cilium", "calico"] = Field(
        default="cilium", description="The CNI: Cilium (default) or Calico."
    )
    version: ServiceVersion | None = Field(
        default=None, description="Chart version override; empty = the tested default."
    )
    values: dict[str, object] = Field(
        default_factory=dict, description="Extra helm values merged over ours."
    )


class IngressNginx(OptionalService):
    proxy_protocol: StrictBool = Field(
        default=True,
        description="Use the PROXY protocol on the load balancer so pods see real client "
        "addresses (KaaS v1 NGINX_INGRESS_PROXY).",
    )


class GatewayAPI(OptionalService):
    proxy_protocol: StrictBool = Field(
        default=False,
        description="Expect the PROXY protocol from the load balancer on every Gateway "
        "listener, so Routes see real client addresses, where the provider's load balancers "
        "speak it; each Gateway then needs the provider's annotation (docs/services.md).",
    )


class ScaleDown(SettingsModel):
    enabled: StrictBool = Field(
        default=True, description="Remove nodes that stay unneeded (cluster-autoscaler)."
    )
    unneeded_time: Duration = Field(
        default="10m", description="How long a node must be unneeded before it is removed."
    )
    delay_after_add: Duration = Field(
        default="10m", description="No scale-down for this long after a scale-up."
    )
    utilization_percent: StrictInt = Field(
        default=50,
        ge=1,
        le=100,
        description="A node whose requested CPU and memory stay below this percentage of its "
        "capacity is unneeded.",
    )


class ClusterAutoscaler(SettingsModel):
    enabled: StrictBool | None = Field(
        default=None,
        description="Deploy the cluster-autoscaler (on the management cluster, next to the "
        "Cluster). Empty: on exactly when a worker group has `autoscaling`.",
    )
    version: ServiceVersion | None = Field(
        default=None, description="Chart version override; empty = the tested default."
    )
    values: dict[str, object] = Field(
        default_factory=dict, description="Extra helm values merged over ours."
    )
    expander: Literal["least-waste", "random", "most-pods", "priority"] = Field(
        default="least-waste",
        description="Which group to grow when several could take the pending Pods "
        "(`least-waste`: the one left with the least idle CPU and memory).",
    )
    scale_down: ScaleDown = Field(
        default_factory=ScaleDown, description="When unneeded nodes are removed."
    )


# A chart mirror: oci://HOST/PATH, https://HOST/PATH (a helm repository), file:///DIR or /DIR.
ChartMirror = Annotated[
    str,
    StringConstraints(pattern=r"^(oci://[^\s/]+(/\S*)?|https?://[^\s/]+(/\S*)?|file:///\S*|/\S*)$"),
]


class Services(SettingsModel):
    cni: Cni = Field(default_factory=Cni, description="Container network interface.")
    cloud_controller_manager: Service = Field(
        default_factory=Service,
        description="The provider's cloud controller manager, where it has one (its nodes "
        "stay uninitialized without it).",
    )
    cinder_csi: Service = Field(
        default_factory=Service, description="Cinder CSI driver with the snapshot controller."
    )
    metrics_server: Service = Field(
        default_factory=Service,
        description="metrics-server, with real TLS to kubelets (serving certificates).",
    )
    ingress_nginx: IngressNginx = Field(
        default_factory=IngressNginx, description="ingress-nginx controller."
    )
    cert_manager: OptionalService = Field(
        default_factory=OptionalService, description="cert-manager."
    )
    flux: OptionalService = Field(default_factory=OptionalService, description="Flux (GitOps).")
    gateway_api: GatewayAPI = Field(
        default_factory=GatewayAPI,
        description="Gateway API (the recommended ingress): its CRDs and an implementation - "
        "Cilium's own with Cilium, Envoy Gateway with Calico.",
    )
    cluster_autoscaler: ClusterAutoscaler = Field(
        default_factory=ClusterAutoscaler,
        description="cluster-autoscaler (Cluster API provider) for the groups with `autoscaling`.",
    )
    # -- chart mirror (air-gapped installs); owned by scs_templates/_services, see
    # docs/services.md
    chart_mirror: ChartMirror | None = Field(
        default=None,
        description="Where to take the service charts from instead of their upstream "
        "repositories (air-gapped installs): an OCI registry (oci://harbor.example/charts, "
        "chart NAME at oci://.../NAME), a helm repository (https://...), or a local "
        "directory of packaged charts NAME-VERSION.tgz (file:///srv/charts or an absolute "
        "path).",
    )


# --------------------------------------------------------------------------- etcd


class EtcdDefrag(SettingsModel):
    enabled: StrictBool = Field(
        default=True, description="Nightly, leader-aware defragmentation with a snapshot."
    )
    schedule: Annotated[str, StringConstraints(pattern=ON_CALENDAR)] = Field(
        default="*-*-* 02:30:00",
        description="systemd OnCalendar expression of the defragmentation timer (checked "
        "as `systemd-analyze calendar` parses it; time zone UTC or the node's).",
    )


#: An S3 endpoint: https only (a snapshot holds every Secret of the cluster), a host and an
#: optional port, no path (the script signs the path-style request /<bucket>/<key>).
S3_ENDPOINT = r"^https://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$"
#: S3's bucket naming rules (lower case, digits, '.', '-'; 3-63 characters).
S3_BUCKET = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
S3_REGION = r"^[A-Za-z0-9_-]{1,64}$"
#: The Secret keys with the S3 credentials (the names the AWS tools use).
S3_ACCESS_KEY_ID = "AWS_ACCESS_KEY_ID"
S3_SECRET_ACCESS_KEY = "AWS_SECRET_ACCESS_KEY"  # noqa: S105 (a key's name)
#: Path segments that need no URI encoding and that no client normalises ('.', '..').
S3_PREFIX = r"^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$"


class EtcdBackupS3(SettingsModel):
    """An S3-compatible bucket that every snapshot is uploaded to after it is taken."""

    endpoint: Annotated[str, StringConstraints(pattern=S3_ENDPOINT, max_length=255)] = Field(
        description="The object store's S3 endpoint, https://host[:port] without a path (AWS, "
        "Ceph RGW, MinIO, Swift's s3api); path-style requests "
        "(<endpoint>/<bucket>/<key>)."
    )
    bucket: Annotated[str, StringConstraints(pattern=S3_BUCKET)] = Field(
        description="The bucket (it must exist; the nightly job only puts objects into it)."
    )
    region: Annotated[str, StringConstraints(pattern=S3_REGION)] = Field(
        default="us-east-1",
        description="The region in the request signature (AWS Signature Version 4): the "
        "bucket's region on AWS, the store's configured region (location) elsewhere.",
    )
    prefix: Annotated[str, StringConstraints(pattern=S3_PREFIX, max_length=512)] | None = Field(
        default=None,
        description="Object key prefix; the objects are <prefix>/etcd-snapshot-<UTC "
        "time>.db.gz. Empty = <namespace>/<cluster name>.",
    )
    retention: StrictInt = Field(
        default=0,
        ge=0,
        le=3650,
        description="Snapshots kept in the bucket under the prefix (of all control-plane "
        "nodes together): after each upload all but the newest are deleted. Needs "
        "credentials that may list and delete; 0 = never delete (the store's own expiry, "
        "e.g. an S3 lifecycle rule, keeps the bucket small).",
    )
    credentials_secret: Dns1123Label = Field(
        description=f"Secret in the cluster's namespace on the management cluster with the "
        f"keys {S3_ACCESS_KEY_ID} and {S3_SECRET_ACCESS_KEY}; it reaches the control-plane "
        "nodes as root-only files through the bootstrap data, never through helm values."
    )


class EtcdVolume(SettingsModel):
    size_gib: StrictInt = Field(ge=1, le=1000, description="Size of the etcd volume in GiB.")
    type: NonEmptyStr | None = Field(
        default=None, description="Volume type; empty = the cloud's default type."
    )


class Etcd(SettingsModel):
    unsafe_fs: StrictBool = Field(
        default=False,
        description="Remount the control-plane root filesystem with barrier=0,commit=20. Only "
        "for multi-node control planes on network (ceph) disks: faster fsync, but a power "
        "loss can corrupt the local etcd member.",
    )
    quota_gib: StrictInt = Field(
        default=2, ge=1, le=8, description="etcd backend quota in GiB (quota-backend-bytes)."
    )
    snapshot_count: StrictInt = Field(
        default=6400, ge=100, le=1000000, description="etcd snapshot-count."
    )
    auto_compaction_retention: Annotated[str, StringConstraints(pattern=COMPACTION_RETENTION)] = (
        Field(
            default="8h",
            description="Periodic auto-compaction retention (scs-0215: 8h): whole hours (8) or "
            "a Go duration (8h, 90m, 1h30m), as etcd parses it.",
        )
    )
    defrag: EtcdDefrag = Field(
        default_factory=EtcdDefrag, description="Nightly defragmentation timer."
    )
    prio_boost: StrictBool | None = Field(
        default=None,
        deprecated=True,
        description="Obsolete (KaaS v1 ETCD_PRIO_BOOST): heartbeat 250 ms, election timeout "
        "2500 ms and I/O priority are always set now; it is ignored.",
    )
    volume: EtcdVolume | None = Field(
        default=None,
        description="Put etcd's data on its own volume (formatted ext4 and mounted at "
        "/var/lib/etcd before kubeadm runs), where the provider has volumes; empty = the "
        "root disk.",
    )
    backup_retention: StrictInt = Field(
        default=3,
        ge=0,
        le=365,
        description="Compressed snapshots kept on each control-plane node by the nightly job.",
    )
    backup_directory: NodeDirectory = Field(
        default="/var/backups/etcd",
        description="Where the nightly job writes its snapshots on each control-plane node "
        "(absolute; letters, digits, '.', '_', '-' and '/'; not inside /var/lib/etcd). The "
        "default is on the machine's own disk: the snapshots go with the machine (upgrades, "
        "certificate rollouts, remediation replace it); they survive that only in a "
        "directory that outlives the machine, a mount the node image provides, or with "
        "backupS3 (docs/maintenance.md).",
    )
    backup_s3: EtcdBackupS3 | None = Field(
        default=None,
        description="Upload each snapshot to an S3-compatible bucket after it is saved in "
        "backupDirectory, so that it outlives the machines; empty = no upload. A failed upload "
        "keeps the local snapshot and fails etcd-defrag.service (docs/maintenance.md).",
    )


# --------------------------------------------------------------------------- security

PodSecurityLevel = Literal["privileged", "baseline", "restricted"]


class PodSecurity(SettingsModel):
    enforce: PodSecurityLevel = Field(default="baseline", description="Enforced level.")
    warn: PodSecurityLevel = Field(default="restricted", description="Level that warns.")
    audit: PodSecurityLevel = Field(default="restricted", description="Level that audits.")
    exempt_namespaces: list[Dns1123Label] = Field(
        default_factory=lambda: ["kube-system"],
        description="Namespaces exempt from Pod Security admission.",
    )


class ApiRateLimits(SettingsModel):
    max_requests_inflight: StrictInt = Field(
        default=400,
        ge=1,
        le=100_000,
        description="kube-apiserver --max-requests-inflight (scs-0215).",
    )
    max_mutating_requests_inflight: StrictInt = Field(
        default=200,
        ge=1,
        le=100_000,
        description="kube-apiserver --max-mutating-requests-inflight (scs-0215).",
    )
    min_request_timeout: StrictInt = Field(
        default=1800,
        ge=1,
        le=86_400,
        description="kube-apiserver --min-request-timeout in seconds.",
    )
    event_qps: StrictInt = Field(
        default=5000, ge=1, le=1_000_000, description="EventRateLimit server-wide QPS (scs-0215)."
    )
    event_burst: StrictInt = Field(
        default=20000,
        ge=1,
        le=10_000_000,
        description="EventRateLimit server-wide burst (scs-0215).",
    )


class Audit(SettingsModel):
    """API server audit logging: on by default, a log file per control-plane node."""

    enabled: StrictBool = Field(
        default=True,
        description="Write an audit log on every control-plane node "
        "(/var/log/kubernetes/audit/audit.log).",
    )
    max_age_days: StrictInt = Field(
        default=30, ge=1, le=3650, description="Days to keep rotated audit log files."
    )
    max_backups: StrictInt = Field(
        default=10, ge=1, le=1000, description="Rotated audit log files to keep."
    )
    max_size_mb: StrictInt = Field(
        default=100, ge=1, le=10000, description="Size in MB at which the audit log rotates."
    )
    policy: dict[str, object] | None = Field(
        default=None,
        description="Your own audit Policy (audit.k8s.io/v1, a complete document) instead of "
        "the default: metadata for everything, never request or response bodies, no noise "
        "from health checks, events, leases and node status reads.",
    )


HttpsURL = Annotated[str, StringConstraints(pattern=r"^https://[^\s/?#]+(/[^\s?#]*)?$")]


class OidcIssuer(SettingsModel):
    """One OpenID Connect issuer the API server trusts for user tokens."""

    issuer_url: HttpsURL = Field(
        description="The issuer URL (https, the `iss` claim), e.g. https://keycloak.example/realms/k8s."
    )
    client_id: NonEmptyStr = Field(
        description="The client ID: tokens must carry it in their `aud` claim."
    )
    extra_audiences: list[NonEmptyStr] = Field(
        default_factory=list, description="Further accepted audiences besides the client ID."
    )
    username_claim: NonEmptyStr = Field(
        default="sub", description="Claim that holds the user name (e.g. sub, email)."
    )
    username_prefix: str = Field(
        default="oidc:",
        description="Prefix of user names (keeps them apart from other authenticators); may be "
        "empty.",
    )
    groups_claim: NonEmptyStr | None = Field(
        default="groups", description="Claim that holds the groups; empty = no groups."
    )
    groups_prefix: str = Field(default="oidc:", description="Prefix of group names; may be empty.")
    certificate_authority: PemCertificates | None = Field(
        default=None,
        description="PEM CA certificate(s) of the issuer's TLS endpoint; empty = the node's "
        "trust store.",
    )


class EncryptionAtRest(SettingsModel):
    """Encryption of API objects in etcd with a per-cluster key (docs/cluster-features.md)."""

    enabled: StrictBool = Field(
        default=True,
        description="Encrypt Secrets in etcd (secretbox). The key is generated by `install` "
        "into the Secret $PREFIX-$CLUSTER-encryption on the management cluster, never into "
        "helm values or rendered output; rotate it with `scs-templates encryption-key "
        "rotate`.",
    )
    resources: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9*][-a-z0-9.*]*$")]] = Field(
        default_factory=lambda: ["secrets"],
        min_length=1,
        description="Resources to encrypt (resource or resource.group), e.g. secrets, configmaps.",
    )


class Security(SettingsModel):
    pod_security: PodSecurity = Field(
        default_factory=PodSecurity, description="Pod Security admission defaults."
    )
    api_rate_limits: ApiRateLimits = Field(
        default_factory=ApiRateLimits, description="API server request limits (scs-0215)."
    )
    certificate_rollout_days: StrictInt = Field(
        default=21,
        ge=7,
        le=365,
        description="Roll control-plane machines this many days before their certificates "
        "expire (KubeadmControlPlane rolloutBefore.certificatesExpiryDays; at least 7).",
    )
    audit: Audit = Field(default_factory=Audit, description="API server audit logging.")
    encryption_at_rest: EncryptionAtRest = Field(
        default_factory=EncryptionAtRest, description="Encryption of Secrets in etcd."
    )
    trusted_cas: list[PemCertificates] = Field(
        default_factory=list,
        description="PEM CA certificates added to every node's OS trust store before kubeadm "
        "runs (a corporate proxy's or registry's CA).",
    )
    oidc: list[OidcIssuer] = Field(
        default_factory=list,
        description="OpenID Connect issuers for user logins (structured authentication "
        "configuration; several allowed); empty = none.",
    )


# --------------------------------------------------------------------------- registries


#: A registry host (optionally :port), or containerd's ``_default``: it names a directory
#: under /etc/containerd/certs.d, so ``/`` or ``..`` must never get through.
REGISTRY_HOST = (
    r"^(_default|[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*"
    r"(:[0-9]{1,5})?)$"
)
#: Nova limits server metadata keys and values to 255 characters (the chart schema too).
MetadataText = Annotated[str, StringConstraints(max_length=255)]


class RegistryMirror(SettingsModel):
    registry: Annotated[str, StringConstraints(pattern=REGISTRY_HOST, max_length=253)] = Field(
        description="Registry host to mirror, e.g. docker.io, registry.k8s.io, ghcr.io, "
        "harbor.example:5000 (or _default for every registry)."
    )
    endpoints: list[Annotated[str, StringConstraints(pattern=r"^https?://\S+$")]] = Field(
        min_length=1, description="Mirror URLs tried in order (e.g. a Harbor proxy project)."
    )
    skip_verify: StrictBool = Field(
        default=False, description="Do not verify the mirror's TLS certificate."
    )
    override_path: StrictBool = Field(
        default=False,
        description="The endpoint URL already contains the API path (e.g. /v2/proxy).",
    )
    ca_certificate: PemCertificates | None = Field(
        default=None, description="PEM CA certificate(s) that sign the endpoints' TLS certificates."
    )
    credentials_secret: Dns1123Label | None = Field(
        default=None,
        description="Secret (type kubernetes.io/basic-auth: keys username, password) in the "
        "cluster's namespace on the management cluster with the endpoints' credentials; "
        "never inline. The endpoints must accept HTTP basic authentication.",
    )


# --------------------------------------------------------------------------- spec + document


class Kubernetes(SettingsModel):
    version: NonEmptyStr = Field(
        default=DEFAULT_VERSION,
        description="Kubernetes version: 1.33.x (newest tested patch) or 1.33.5. Upgrades go "
        "one minor version at a time.",
    )


class Spec(SettingsModel):
    template: TemplateName = Field(
        default="simple",
        description="Cluster template: `simple` (one worker group, the KaaS v1 shape), "
        "`multi-md` (any number of named worker groups) or `clusterclass` (any number of "
        "worker groups as a Cluster API topology of the release's ClusterClass). An "
        "installed cluster cannot switch between `clusterclass` and the other two.",
    )
    #: The composed model (:func:`settings_model`) gives it the first provider as its default.
    provider: ProviderName = Field(description="Infrastructure provider.")
    prefix: Dns1123Label = Field(
        default="capi", description="$PREFIX of resource names $PREFIX-$CLUSTER-$RESOURCE."
    )
    kubernetes: Kubernetes = Field(default_factory=Kubernetes, description="Kubernetes.")
    control_plane: ControlPlane = Field(
        default_factory=ControlPlane, description="Control-plane machines."
    )
    workers: list[WorkerGroup] = Field(
        default_factory=lambda: [WorkerGroup(name="workers")],
        description="Worker groups (one MachineDeployment each).",
    )
    network: Network = Field(default_factory=Network, description="Networks and API access.")
    services: Services = Field(default_factory=Services, description="Standard services.")
    etcd: Etcd = Field(default_factory=Etcd, description="etcd tuning and maintenance.")
    security: Security = Field(default_factory=Security, description="Security defaults.")
    registry_mirrors: list[RegistryMirror] = Field(
        default_factory=list, description="Registry mirrors written to every node's containerd."
    )


class ClusterSettings(ClusterSettingsDerived, SettingsModel):
    """A versioned settings document: apiVersion, kind, metadata and spec."""

    api_version: Literal["scs-templates.scs.community/v1alpha1"] = Field(
        alias="apiVersion", description="Format version of this document."
    )
    kind: Literal["ClusterSettings"] = Field(description="Always ClusterSettings.")
    metadata: Metadata = Field(description="Name and namespace of the cluster.")
    #: Required here: the composed model (:func:`settings_model`) gives the default.
    spec: Spec = Field(description="The wanted cluster.")


# --------------------------------------------------------------------------- composition

_COMPOSED: dict[tuple[int, ...], type[ClusterSettings]] = {}


def settings_model(*, shipped: bool = False) -> type[ClusterSettings]:
    """The settings document of the installed providers: :class:`ClusterSettings` with each
    provider's own section under ``spec`` (``spec.<provider>``, from
    ``Provider.settings_section``) and the first provider as the default ``spec.provider``.

    ``shipped``: of the providers scs-templates ships only (the published JSON Schema and
    docs/settings.md). Composed once per set of providers (a provider registered for a test
    gets its own composition); instances are instances of :class:`ClusterSettings`.
    """
    providers = plugins.shipped_providers() if shipped else plugins.installed_providers()
    key = tuple(id(provider) for provider in providers)
    found = _COMPOSED.get(key)
    if found is None:
        found = _COMPOSED[key] = _compose(providers)
    return found


def _factory(model: type[BaseModel]) -> Any:
    """``model`` as a default factory (pydantic's stubs type a class poorly there)."""
    return model


def _compose(providers: tuple[Any, ...]) -> type[ClusterSettings]:
    sections: dict[str, Any] = {}
    for provider in providers:
        section = provider.settings_section()
        if section is not None:
            model, description = section
            sections[provider.name] = (
                model,
                Field(default_factory=model, description=description),
            )
    names = tuple(provider.name for provider in providers)
    default = names[0] if names else None
    spec = create_model(
        "Spec",
        __base__=Spec,
        __module__=__name__,
        __doc__=Spec.__doc__,
        provider=(
            Annotated[str, PlainValidator(_known_provider), _ProviderEnum(names)],
            Field(default=default, description="Infrastructure provider."),
        ),
        **sections,
    )
    composed: type[ClusterSettings] = create_model(
        "ClusterSettings",
        __base__=ClusterSettings,
        __module__=__name__,
        __doc__=ClusterSettings.__doc__,
        spec=(spec, Field(default_factory=_factory(spec), description="The wanted cluster.")),
    )
    return composed
