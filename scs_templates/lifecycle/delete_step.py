"""``delete``: the Cluster object first (and wait until Cluster API has torn the
infrastructure down), then the release, what helm keeps and the credentials Secret, then
the provider's cloud resources. The templates and credentials are needed by the
controllers while they delete machines: removing them earlier could strand machines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scs_templates.errors import ToolError
from scs_templates.lifecycle.target import (
    CLUSTER_LABEL,
    Target,
    cluster_ref,
    helm_of,
    kept,
    kube_of,
    release_objects,
    target_of,
)
from scs_templates.lifecycle.wait import (
    DEFAULT_POLL_INTERVAL,
    DEFAULT_WAIT_TIMEOUT,
    Progress,
    quiet,
    wait_until_gone,
)

if TYPE_CHECKING:
    from scs_templates.helm import Helm
    from scs_templates.kube import KubeClient
    from scs_templates.providers import CloudOptions
    from scs_templates.settings.model import ClusterSettings

__all__ = [
    "KEPT_KINDS",
    "DeleteIncomplete",
    "DeleteResult",
    "delete",
]


#: Kinds the library chart keeps across upgrades (immutable templates with hashed names),
#: besides the provider's machine templates: after the Cluster is gone they are found by
#: :data:`CLUSTER_LABEL` and removed.
KEPT_KINDS: tuple[tuple[str, str], ...] = (
    ("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"),
)


@dataclass(frozen=True)
class DeleteResult:
    target: Target
    cluster_deleted: bool
    release_uninstalled: bool
    removed: list[str] = field(default_factory=list)


class DeleteIncomplete(ToolError):
    """The cluster and its objects are gone, but the provider could not release all of its
    cloud resources; ``result`` tells what was deleted (the message says what remains)."""

    def __init__(self, message: str, result: DeleteResult) -> None:
        super().__init__(message)
        self.result = result


def delete(
    settings: ClusterSettings,
    *,
    helm: Helm | None = None,
    kube: KubeClient | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    progress: Progress | None = None,
    cloud: CloudOptions | None = None,
    cloud_progress: Progress | None = None,
) -> DeleteResult:
    """Delete the cluster: the Cluster object first (and wait until it is gone), then the
    release, the kept templates and the credentials Secret; then the provider releases
    what it created in the cloud, as ``scs-templates delete`` does (OpenStack: leftover
    ports and networks, server groups, the per-cluster application credential), touching
    the cloud as ``cloud`` allows (default :class:`~scs_templates.providers.CloudOptions`).
    ``cloud_progress`` receives what the provider did (default: ``progress``).

    Idempotent: what is already gone is skipped. On timeout a ToolError is raised and
    NOTHING else has been deleted, so the controllers keep what they need to finish. When
    cloud resources remain, :class:`DeleteIncomplete` (a ToolError) carries the result.
    """
    from scs_templates.catalogue import provider_of
    from scs_templates.kube import ObjectRef
    from scs_templates.providers import CloudOptions

    target = target_of(settings)
    client = kube_of(kube, kubeconfig, context)
    runner = helm_of(helm, kubeconfig, context)
    release = runner.status(target.release, namespace=target.namespace)
    objects: list[dict[str, Any]] = []
    if release is not None:
        objects = release_objects(runner.get_manifest(target.release, namespace=target.namespace))
    ref = cluster_ref(objects, target)

    cluster_deleted = False
    if client.serves(ref.api_version, "Cluster") and client.get(ref) is not None:
        if progress:
            progress(f"deleting Cluster {ref.namespace}/{ref.name}")
        cluster_deleted = client.delete(ref)
        wait_until_gone(
            client, ref, timeout=timeout, poll_interval=poll_interval, progress=progress
        )

    if release is not None:
        if progress:
            progress(f"uninstalling release {target.release}")
        runner.uninstall(target.release, namespace=target.namespace)

    # What helm keeps (and the credentials): the current manifest's kept objects by name, and
    # every object of the kept kinds (older template generations too) by the cluster label.
    leftovers: dict[ObjectRef, None] = {}
    for obj in objects:
        if kept(obj):
            leftovers[ObjectRef.of(obj, target.namespace)] = None
    selector = f"{CLUSTER_LABEL}={target.cluster}"
    kept_kinds = (*KEPT_KINDS, *provider_of(settings).machine_template_kinds)
    kinds = dict.fromkeys([*kept_kinds, ("v1", "Secret")])
    for obj in objects:
        if kept(obj):
            kinds[(str(obj.get("apiVersion")), str(obj.get("kind")))] = None
    for api_version, kind in kinds:
        if not client.serves(api_version, kind):
            continue
        for found in client.list(api_version, kind, target.namespace, label_selector=selector):
            leftovers[ObjectRef.of(found, target.namespace)] = None
    removed = []
    for leftover in sorted(leftovers):
        if client.delete(leftover):
            removed.append(str(leftover))
    result = DeleteResult(target, cluster_deleted, release is not None, removed)
    try:
        provider_of(settings).release(
            settings,
            cloud if cloud is not None else CloudOptions(),
            progress=cloud_progress or progress or quiet,
        )
    except ToolError as error:
        raise DeleteIncomplete(str(error), result) from None
    return result
