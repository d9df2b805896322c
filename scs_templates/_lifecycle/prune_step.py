"""``install``'s last step: prune the cluster's superseded hashed templates that nothing uses
any more (:mod:`scs_templates._lifecycle.template_prune` says why and when that is safe)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._lifecycle.delete_step import KEPT_KINDS
from scs_templates._lifecycle.target import CLUSTER_LABEL, kept, release_objects, target_of
from scs_templates._lifecycle.template_prune import prune_templates
from scs_templates._tools.kube import ObjectRef
from scs_templates.providers.registry import provider_of

if TYPE_CHECKING:
    from scs_templates._core.progress import Progress
    from scs_templates._lifecycle.template_prune import PruneResult
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.helm import Helm
    from scs_templates._tools.kube import KubeClient

__all__ = ["prune_superseded_templates"]


def prune_superseded_templates(
    client: KubeClient,
    settings: ClusterSettings,
    helm: Helm,
    *,
    progress: Progress | None = None,
) -> PruneResult:
    """Remove the cluster's kept templates that are not in the release's current manifest
    and that no Cluster API object uses any more
    (:mod:`scs_templates._lifecycle.template_prune`)."""

    target = target_of(settings)
    objects = release_objects(helm.get_manifest(target.release, namespace=target.namespace))
    kinds = [*KEPT_KINDS, *provider_of(settings).machine_template_kinds]
    for obj in objects:
        if kept(obj) and str(obj.get("kind", "")).endswith("Template"):
            kinds.append((str(obj.get("apiVersion")), str(obj.get("kind"))))
    return prune_templates(
        client,
        namespace=target.namespace,
        selector=f"{CLUSTER_LABEL}={target.cluster}",
        template_kinds=kinds,
        current=[ObjectRef.of(obj, target.namespace) for obj in objects],
        kept=kept,
        progress=progress,
    )
