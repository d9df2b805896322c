"""``status``: the release and the Cluster's phase and conditions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scs_templates._lifecycle.target import (
    Target,
    cluster_ref,
    helm_of,
    kube_of,
    release_objects,
    target_of,
)
from scs_templates._lifecycle.version_guard import installed_kubernetes_version

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.helm import Helm, ReleaseInfo
    from scs_templates._tools.kube import ClusterState, KubeClient

__all__ = [
    "StatusResult",
    "status",
]


@dataclass(frozen=True)
class StatusResult:
    target: Target
    release: ReleaseInfo | None
    kubernetes_version: str | None = None
    cluster: ClusterState | None = None

    def to_dict(self) -> dict[str, Any]:
        release = None
        if self.release is not None:
            r = self.release
            release = {
                "name": r.name,
                "namespace": r.namespace,
                "revision": r.revision,
                "status": r.status,
                "chart": r.chart,
                "updated": r.updated,
            }
        return {
            "release": release,
            "kubernetesVersion": self.kubernetes_version,
            "cluster": self.cluster.to_dict() if self.cluster is not None else None,
        }


def status(
    settings: ClusterSettings,
    *,
    helm: Helm | None = None,
    kube: KubeClient | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> StatusResult:
    """The release (None if not installed) and the Cluster's phase and conditions."""
    target = target_of(settings)
    client = kube_of(kube, kubeconfig, context)
    client.check_api()  # before helm: a server that is no Kubernetes API is exit 1 (#41)
    runner = helm_of(helm, kubeconfig, context)
    release = runner.status(target.release, namespace=target.namespace)
    objects: list[dict[str, Any]] = []
    version = None
    if release is not None:
        objects = release_objects(runner.get_manifest(target.release, namespace=target.namespace))
        found = installed_kubernetes_version(runner, target, objects)
        version = str(found) if found is not None else None
    ref = cluster_ref(objects, target)
    cluster = None
    if client.serves(ref.api_version, "Cluster"):
        cluster = client.cluster(ref.namespace, ref.name, api_version=ref.api_version)
    return StatusResult(target, release, version, cluster)
