"""Where a settings file lives on the management cluster, and how the steps reach it: the
release and Cluster of a settings file, the helm runner and API client, the release's
objects and which of them helm keeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import ToolError
from scs_templates._core.labels import KEEP_ANNOTATION
from scs_templates._render.values import CLUSTER_LABEL
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient, ObjectRef
from scs_templates._tools.kube.client import CLUSTER_API_VERSION
from scs_templates._tools.kube.config import check_kubeconfig

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings

__all__ = [
    "CLUSTER_LABEL",
    "KEEP_ANNOTATION",
    "Target",
    "cluster_ref",
    "helm_of",
    "kept",
    "kube_of",
    "release_objects",
    "target_of",
]


@dataclass(frozen=True)
class Target:
    """Where a settings file lives on the management cluster."""

    release: str
    namespace: str
    cluster: str


def target_of(settings: ClusterSettings) -> Target:
    """Release name and namespace are the settings' ``metadata``; the Cluster has its name."""
    return Target(settings.metadata.name, settings.metadata.namespace, settings.name)


def helm_of(helm: Helm | None, kubeconfig: str | None, context: str | None) -> Helm:
    """``helm``, or a runner for ``kubeconfig``/``context`` once the server there is known
    to be a Kubernetes API (helm reads any HTTP server answering 200 as an empty cluster:
    "release not installed", exit 0; issue #41)."""
    if helm is not None:
        return helm

    check_kubeconfig(kubeconfig, context)  # InputError (exit 2), as the commands, not helm's

    with KubeClient(kubeconfig, context) as client:
        client.check_api()
    return Helm(kubeconfig=kubeconfig, kube_context=context)


def kube_of(kube: KubeClient | None, kubeconfig: str | None, context: str | None) -> KubeClient:
    """``kube``, or an API client for ``kubeconfig``/``context``."""
    if kube is not None:
        return kube

    return KubeClient(kubeconfig, context)


def release_objects(manifest: str) -> list[dict[str, Any]]:
    """The objects of an installed release's manifest (ToolError when it does not parse)."""
    from scs_templates._render.render import split_documents  # deferred: ruamel

    try:
        return split_documents(manifest)[1]
    except ValueError as error:
        raise ToolError(f"cannot read the release's manifest: {error}") from None


def cluster_ref(objects: list[dict[str, Any]], target: Target) -> ObjectRef:
    """The Cluster object of a manifest, else the settings' cluster name in v1beta2."""
    for obj in objects:
        api_version = str(obj.get("apiVersion", ""))
        if obj.get("kind") == "Cluster" and api_version.startswith("cluster.x-k8s.io/"):
            return ObjectRef.of(obj, target.namespace)
    return ObjectRef(CLUSTER_API_VERSION, "Cluster", target.namespace, target.cluster)


def kept(obj: Mapping[str, Any]) -> bool:
    """helm keeps the object on uninstall (``helm.sh/resource-policy: keep``)."""
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return isinstance(annotations, Mapping) and annotations.get(KEEP_ANNOTATION) == "keep"
