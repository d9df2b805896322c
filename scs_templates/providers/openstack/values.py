"""The OpenStack part of the cluster chart's values, and the names it shares with install.

Server groups and the credentials Secret are named here once: the chart references them
(``controlPlane.serverGroup``, ``workers[].serverGroup``, ``openstack.credentials``), and
install, delete and apply create, read and remove the same objects.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from scs_templates._core import naming
from scs_templates._core.errors import InputError
from scs_templates.providers.api_access import api_access_plan
from scs_templates.providers.openstack.capo_names import capo_network_name
from scs_templates.providers.openstack.section import section

if TYPE_CHECKING:
    from typing import Any

    from scs_templates._settings.model import ClusterSettings, WorkerGroup
    from scs_templates.providers.openstack.values_model import (
        KeyValue,
        OpenStackControlPlaneKeys,
        OpenStackNetworkKeys,
        OpenStackRefSpec,
        OpenStackSection,
        OpenStackWorkerKeys,
    )

__all__ = [
    "CACERT_KEY",
    "CLOUDS_YAML_KEY",
    "CLOUD_CONF_KEY",
    "cloud_cluster_name",
    "control_plane_values",
    "credentials_secret_name",
    "internal_network_name",
    "network_values",
    "openstack_values",
    "server_groups",
    "with_recorded_cloud_cluster_name",
    "worker_values",
]

#: Keys of ``secrets`` (and of the credentials Secret) that the OpenStack chart uses.
CLOUDS_YAML_KEY = "clouds.yaml"
CACERT_KEY = "cacert"
#: cloud.conf of the in-cluster cloud controller manager and Cinder CSI (copied into the
#: workload cluster's kube-system/cloud-config by ``apply``); optional.
CLOUD_CONF_KEY = "cloud.conf"

_SERVER_GROUP_POLICIES = {"hard": "anti-affinity", "soft": "soft-anti-affinity"}

# Node registration as CAPO's reference template does it (templates/cluster-template.yaml,
# v0.14.7): the provider ID from the instance ID and the node name from the instance, both
# filled in by cloud-init's Jinja on the machine. The Node and its Machine are then linked by
# ID, not by a server name that may repeat in the project.
KUBELET_ARGS = {
    "cloud-provider": "external",
    "provider-id": "openstack:///'{{ instance_id }}'",
}
NODE_NAME = "{{ local_hostname }}"


def _name(settings: ClusterSettings, resource: str) -> str:
    return naming.resource_name(settings.spec.prefix, settings.name, resource)


def server_groups(settings: ClusterSettings) -> list[tuple[str, str]]:
    """The Nova server groups the OpenStack machine templates reference: (name, policy).

    CAPO v0.14 can only reference a server group (by ID or name), not create one, so the
    OpenStack integration must create these before the cluster is applied. Names are the
    ones in ``controlPlane.serverGroup`` / ``workers[].serverGroup`` of the values; empty
    for other providers or with anti-affinity ``none``.
    """
    spec = settings.spec
    if spec.provider != "openstack":
        return []
    policy = section(settings).anti_affinity
    groups: list[tuple[str, str]] = []
    if policy.control_plane != "none":
        groups.append(
            (_name(settings, naming.CONTROL_PLANE), _SERVER_GROUP_POLICIES[policy.control_plane])
        )
    if policy.workers != "none":
        groups.extend(
            (_name(settings, group.name), _SERVER_GROUP_POLICIES[policy.workers])
            for group in spec.workers
        )
    return groups


def control_plane_values(settings: ClusterSettings) -> OpenStackControlPlaneKeys:
    cp = settings.spec.control_plane
    volume = settings.spec.etcd.volume
    return {
        "machineType": cp.machine_type or "",
        "zones": list(cp.zones),
        "rootDiskGB": cp.root_disk_gb,
        "rootDiskType": cp.root_disk_type or "",
        "extraNetworks": [_openstack_ref(n) for n in cp.extra_networks],
        "etcdVolume": (
            {"sizeGiB": volume.size_gib, "type": volume.type or ""} if volume is not None else {}
        ),
        "serverGroup": (
            _name(settings, naming.CONTROL_PLANE)
            if section(settings).anti_affinity.control_plane != "none"
            else ""
        ),
    }


def worker_values(settings: ClusterSettings, group: WorkerGroup) -> OpenStackWorkerKeys:
    return {
        "machineType": group.machine_type or "",
        "zone": group.zone or "",
        "rootDiskGB": group.root_disk_gb,
        "rootDiskType": group.root_disk_type or "",
        "extraNetworks": [_openstack_ref(n) for n in group.extra_networks],
        "serverGroup": (
            _name(settings, group.name) if section(settings).anti_affinity.workers != "none" else ""
        ),
    }


def network_values(settings: ClusterSettings) -> OpenStackNetworkKeys:
    """The node network CAPO creates, and who may reach the API load balancer."""

    net = settings.spec.network
    return {
        "nodeCIDR": net.node_cidr,
        "dnsServers": list(net.dns_servers),
        "mtu": net.mtu,
        "apiAllowedCIDRs": api_access_plan(settings).load_balancer_cidrs,
    }


def credentials_secret_name(settings: ClusterSettings) -> str:
    """The cluster's OpenStack credentials Secret: ``spec.openstack.credentialsSecret`` or
    ``$PREFIX-$CLUSTER-cloud-config`` (the chart, install, delete and apply all use it)."""
    return section(settings).credentials_secret or _name(settings, "cloud-config")


def openstack_values(settings: ClusterSettings) -> OpenStackSection:
    """The ``openstack`` section of the values. The credentials Secret is only referenced:
    the library writes it through the Kubernetes API, never as a helm value."""

    os_settings = section(settings)
    metadata = os_settings.server_metadata
    existing = os_settings.existing_network
    rules = [
        {
            key: value
            for key, value in {
                "name": rule.name,
                "description": rule.description,
                "direction": rule.direction,
                "etherType": rule.ether_type,
                "protocol": rule.protocol,
                "portRangeMin": rule.port_range_min,
                "portRangeMax": (
                    rule.port_range_max if rule.port_range_max is not None else rule.port_range_min
                ),
                "remoteIPPrefix": rule.remote_ip_prefix,
            }.items()
            if value not in (None, "")
        }
        for rule in os_settings.node_security_group_rules
    ]
    return {
        "existingNetwork": (
            {
                "network": _openstack_ref(existing.network),
                "subnets": [_openstack_ref(existing.subnet)] if existing.subnet else [],
            }
            if existing is not None
            else {}
        ),
        "apiFloatingIP": os_settings.api_floating_ip,
        "nodeSecurityGroupRules": rules,
        "cloud": os_settings.cloud,
        "externalNetworkID": os_settings.external_network_id or "",
        "sshKeyName": os_settings.ssh_key_name or "",
        "loadBalancerProvider": os_settings.load_balancer_provider,
        "apiSecurityGroupRules": api_access_plan(settings).security_group_rules(),
        "serverMetadata": {
            "controlPlane": _key_values(metadata.control_plane),
            "workers": _key_values(metadata.workers),
        },
        "credentials": {"secretName": credentials_secret_name(settings)},
        # not used by a template: the record install, services apply and delete read back
        "cloudClusterName": cloud_cluster_name(settings),
    }


def cloud_cluster_name(settings: ClusterSettings) -> str:
    """The cluster's name for the cloud integrations (OCCM ``--cluster-name``, Cinder CSI
    ``--cluster``, delete's leftover search): ``openstack.cloudClusterName``, else
    ``$CLUSTER.$NAMESPACE``, unique in a project whose clusters share names across
    namespaces (an installed cluster's recorded name is put into the settings by
    :func:`with_recorded_cloud_cluster_name` first)."""
    return section(settings).cloud_cluster_name or naming.in_namespace(
        settings.name, settings.metadata.namespace
    )


#: Where the cluster release's values record :func:`cloud_cluster_name`.
RECORDED_KEY = ("openstack", "cloudClusterName")


def with_recorded_cloud_cluster_name(
    settings: ClusterSettings, installed: Mapping[str, Any]
) -> ClusterSettings:
    """``settings`` with the cloud cluster name the installed release (its values
    ``installed``) was made with: the recorded one, or the bare cluster name for a release
    made before the record existed, so that an upgrade never renames what OCCM and Cinder
    CSI created (load balancers and volumes keep their names). An explicit
    ``openstack.cloudClusterName`` that differs is refused (InputError, exit 2)."""

    recorded_section = installed.get(RECORDED_KEY[0])
    recorded = (
        recorded_section.get(RECORDED_KEY[1]) if isinstance(recorded_section, Mapping) else None
    )
    name = str(recorded) if recorded else settings.name
    wanted = section(settings).cloud_cluster_name
    if wanted is not None and wanted != name:
        raise InputError(
            f"spec.openstack.cloudClusterName: {wanted!r} differs from {name!r}, the name the "
            "installed cluster's load balancers and volumes carry; remove the field or set "
            f"it to {name!r}"
        )
    if wanted == name:
        return settings
    openstack = section(settings).model_copy(update={"cloud_cluster_name": name})
    spec = settings.spec.model_copy(update={"openstack": openstack})
    return settings.model_copy(update={"spec": spec})


_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


def has_extra_networks(settings: ClusterSettings) -> bool:
    """Some machine of the cluster has a port on a network besides the cluster network."""
    spec = settings.spec
    return bool(spec.control_plane.extra_networks) or any(
        group.extra_networks for group in spec.workers
    )


def internal_network_name(settings: ClusterSettings) -> str | None:
    """The cluster network's name for OCCM's ``internal-network-name`` when a machine has
    ``extraNetworks`` (else None: one network, nothing to choose): CAPO's network, or
    ``existingNetwork`` given by name. None for an existing network given by ID, whose name
    is not known here (a settings warning asks for the name)."""
    if not has_extra_networks(settings):
        return None
    existing = section(settings).existing_network
    if existing is None:
        return capo_network_name(settings)
    return None if _UUID.match(existing.network) else existing.network


def _openstack_ref(name_or_id: str) -> OpenStackRefSpec:
    """A CAPO network/subnet parameter: ``{id}`` for a UUID, else a filter by name."""
    if _UUID.match(name_or_id):
        return {"id": name_or_id.lower()}
    return {"filter": {"name": name_or_id}}


def _key_values(mapping: Mapping[str, str]) -> list[KeyValue]:
    """A map as a key-sorted list of {key, value} (CAPO's serverMetadata shape)."""
    return [{"key": key, "value": mapping[key]} for key in sorted(mapping)]
