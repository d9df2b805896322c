"""The OpenStack provider's standard services: the cloud controller manager, the policy that
keeps Pods off the metadata service (:mod:`.metadata_policy`), Cinder CSI and the CSI
snapshot controller that Cinder CSI's VolumeSnapshotClass needs.

Their catalogue rows (:data:`SERVICES`) come after the CNI and before the common services
(:mod:`scs_templates._services.catalogue`); their values builders are pure functions
settings -> values, like the common ones.

Cinder CSI: the chart's own StorageClasses bind volumes immediately (in a random zone
of a multi-AZ cloud), and their ``volumeBindingMode`` cannot be set, so ours replace them:
``csi-cinder-delete`` (default) and ``csi-cinder-retain`` with ``WaitForFirstConsumer``,
plus the VolumeSnapshotClass ``csi-cinder-snapshot`` (default) for the VolumeSnapshot CRDs
the snapshot controller brings.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from scs_templates._contract.services import PACKAGED, ServiceInfo, default_chart_version
from scs_templates._core.shipped import chart_version
from scs_templates.providers.openstack import metadata_policy
from scs_templates.providers.openstack.cloud_config import CLOUD_CONFIG_SECRET
from scs_templates.providers.openstack.values import cloud_cluster_name
from scs_templates.providers.proxy import proxy_env

if TYPE_CHECKING:
    from typing import Any

    from scs_templates._settings.model import ClusterSettings

    Values = dict[str, Any]

__all__ = [
    "CINDER_DEFAULT_CLASS",
    "CINDER_PROVISIONER",
    "CINDER_SNAPSHOT_CLASS",
    "PROXY_PROTOCOL_ANNOTATION",
    "SERVICES",
    "cinder_csi_values",
    "cinder_storage_objects",
    "occm_values",
    "snapshot_controller_values",
]

#: Octavia's annotation (read by the OpenStack cloud controller manager) for PROXY protocol.
PROXY_PROTOCOL_ANNOTATION = "loadbalancer.openstack.org/proxy-protocol"
#: Cinder CSI StorageClasses and VolumeSnapshotClass (ours, see the module doc).
CINDER_PROVISIONER = "cinder.csi.openstack.org"
CINDER_DEFAULT_CLASS = "csi-cinder-delete"
CINDER_SNAPSHOT_CLASS = "csi-cinder-snapshot"
#: Where the cloud-provider-openstack charts come from.
CPO_CHARTS = "https://kubernetes.github.io/cloud-provider-openstack"


def occm_values(settings: ClusterSettings) -> Values:
    values: Values = {
        "secret": {"enabled": True, "create": False, "name": CLOUD_CONFIG_SECRET},
        "cluster": {"name": cloud_cluster_name(settings)},
    }
    env = proxy_env(settings)
    if env:
        values["extraEnv"] = env
    return values


def snapshot_controller_values(settings: ClusterSettings) -> Values:
    replicas = 1 if settings.spec.control_plane.replicas == 1 else 2
    return {"controller": {"replicaCount": replicas}}


def _storage_class(name: str, reclaim: str, *, default: bool) -> Values:
    metadata: Values = {"name": name}
    if default:
        metadata["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": metadata,
        "provisioner": CINDER_PROVISIONER,
        "reclaimPolicy": reclaim,
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    }


def cinder_storage_objects() -> list[Values]:
    """Our Cinder StorageClasses and VolumeSnapshotClass (the chart's ``custom`` objects)."""
    return [
        _storage_class(CINDER_DEFAULT_CLASS, "Delete", default=True),
        _storage_class("csi-cinder-retain", "Retain", default=False),
        {
            "apiVersion": "snapshot.storage.k8s.io/v1",
            "kind": "VolumeSnapshotClass",
            "metadata": {
                "name": CINDER_SNAPSHOT_CLASS,
                "annotations": {"snapshot.storage.kubernetes.io/is-default-class": "true"},
            },
            "driver": CINDER_PROVISIONER,
            "deletionPolicy": "Delete",
        },
    ]


def cinder_csi_values(settings: ClusterSettings) -> Values:
    # The chart takes extra objects only as one YAML string (storageClass.custom); JSON is
    # YAML, so each object is serialised, never templated.
    custom = "\n---\n".join(json.dumps(obj, sort_keys=True) for obj in cinder_storage_objects())
    values: Values = {
        "secret": {"enabled": True, "create": False, "name": CLOUD_CONFIG_SECRET},
        "clusterID": cloud_cluster_name(settings),
        "storageClass": {"enabled": False, "custom": custom + "\n"},
    }
    env = proxy_env(settings)
    if env:
        # the plugin container (controller and node) calls Cinder and Nova; the sidecars
        # talk to the in-cluster API only
        values["csi"] = {"plugin": {"extraEnv": env}}
    return values


#: The OpenStack rows of the service catalogue, in install order.
SERVICES: tuple[ServiceInfo, ...] = (
    ServiceInfo(
        release="openstack-cloud-controller-manager",
        namespace="kube-system",
        chart="openstack-cloud-controller-manager",
        repository=CPO_CHARTS,
        version=default_chart_version("openstack-cloud-controller-manager"),
        setting="cloudControllerManager",
        values=occm_values,
        description="OpenStack cloud controller manager: initializes nodes, creates Octavia "
        "load balancers for Services.",
        providers=("openstack",),
        pod_security="privileged",
        workload_credentials=True,
        follows_kubernetes_minor=True,
    ),
    ServiceInfo(
        release="metadata-policy",
        namespace="kube-system",  # cluster-scoped policies only; a namespace that always exists
        chart="scs-metadata-policy",
        repository=PACKAGED,
        version=chart_version("scs-metadata-policy"),
        setting=None,
        values=metadata_policy.metadata_policy_values,
        description="Our chart: the CNI's cluster-wide policy that denies Pods the metadata "
        "service (node bootstrap data: join token, CA keys) but in kube-system and "
        "metadataService.allowedNamespaces (after the CNI: Cilium's operator creates "
        "the policy CRD at start).",
        providers=("openstack",),
        enabled_by=metadata_policy.metadata_policy_enabled,
    ),
    ServiceInfo(
        release="snapshot-controller",
        namespace="kube-system",
        chart="snapshot-controller",
        repository="https://piraeus.io/helm-charts",
        version=default_chart_version("snapshot-controller"),
        setting=None,
        values=snapshot_controller_values,
        description="CSI snapshot controller and the VolumeSnapshot CRDs (with Cinder CSI).",
        providers=("openstack",),
        companion_of="cinderCSI",
        pod_security="baseline",
    ),
    ServiceInfo(
        release="openstack-cinder-csi",
        namespace="kube-system",
        chart="openstack-cinder-csi",
        repository=CPO_CHARTS,
        version=default_chart_version("openstack-cinder-csi"),
        setting="cinderCSI",
        values=cinder_csi_values,
        description="Cinder CSI driver, its StorageClasses (default: delete, bound where the "
        "Pod is scheduled) and a VolumeSnapshotClass.",
        providers=("openstack",),
        pod_security="privileged",
        needs=("snapshot-controller",),
        workload_credentials=True,
        follows_kubernetes_minor=True,
    ),
)
