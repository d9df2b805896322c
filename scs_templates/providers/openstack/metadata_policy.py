"""Who may read OpenStack's metadata service: the values of the ``scs-metadata-policy`` chart.

Nova serves every instance its user-data at the link-local address 169.254.169.254, and
Cluster API's bootstrap data is that user-data: the kubeadm join token, and on control-plane
nodes the cluster's CA and service-account keys. Any Pod could read it through its node
unless the CNI denies it; capi-helm-charts (a Calico GlobalNetworkPolicy) and Gardener deny
it by default, and so does this (``spec.openstack.metadataService.denyPods``).

Who still needs it: OCCM and the Cinder CSI node plugin run with ``hostNetwork`` (their
charts' DaemonSets), which no pod policy of either CNI touches; the Cinder CSI controller
plugin is a Deployment on the pod network in ``kube-system``. ``kube-system`` is therefore
always allowed (the namespace of both cloud integrations, as capi-helm-charts allows its
cloud-integration namespace), and ``allowedNamespaces`` adds more. The metadata address is
OpenStack's: the Docker provider has no metadata service, so the release is OpenStack's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates.providers.openstack.section import section

if TYPE_CHECKING:
    from typing import Any

    from scs_templates._settings.model import ClusterSettings

__all__ = [
    "ALWAYS_ALLOWED",
    "METADATA_SERVICE_CIDR",
    "metadata_policy_enabled",
    "metadata_policy_values",
]

#: Nova's metadata service, link-local on every instance. IPv4 only: the pod networks
#: rendered here are IPv4, and Nova's IPv6 address (fe80::a9fe:a9fe) is link-local, which
#: no router forwards from a Pod's own link.
METADATA_SERVICE_CIDR = "169.254.169.254/32"
#: The namespace of OCCM and Cinder CSI: its Pods keep access (the CSI controller plugin is
#: on the pod network there).
ALWAYS_ALLOWED = ("kube-system",)
#: Calico: the order of the policy's own tier (before kube-admin, 1000, and the default
#: tier, 1000000; lower is evaluated first).
CALICO_TIER_ORDER = 100


def metadata_policy_enabled(settings: ClusterSettings) -> bool:
    """``spec.openstack.metadataService.denyPods``: the policy release is wanted."""
    return section(settings).metadata_service.deny_pods


def metadata_policy_values(settings: ClusterSettings) -> dict[str, Any]:
    """The chart's values: the CNI, the denied address and the allowed namespaces (sorted,
    without duplicates: same settings, same policy)."""
    extra = section(settings).metadata_service.allowed_namespaces
    return {
        "cni": settings.spec.services.cni.type,
        "deniedCidrs": [METADATA_SERVICE_CIDR],
        "allowedNamespaces": sorted({*ALWAYS_ALLOWED, *extra}),
        "calicoTierOrder": CALICO_TIER_ORDER,
    }
