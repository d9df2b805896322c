"""The release of a topology cluster's ClusterClass
(:mod:`scs_templates._render.values.class_release`):
installed before the cluster's release, waited for until Cluster API has reconciled the
class, and uninstalled only with the last Cluster of the namespace that uses the class.

A cluster installed by an earlier scs-templates holds its class in its own release; its next
install hands the class over to the class's release without deleting it (:class:`Handover`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.labels import CLASS_LABEL as CLASS_LABEL
from scs_templates._core.progress import Progress
from scs_templates._lifecycle.target import KEEP_ANNOTATION
from scs_templates._tools.kube import ObjectRef
from scs_templates._tools.kube.wait import DEFAULT_POLL_INTERVAL, elapsed, poll

if TYPE_CHECKING:
    from scs_templates._render.charts import ChartRef
    from scs_templates._render.values.class_release import ClassRelease
    from scs_templates._tools.helm import Helm
    from scs_templates._tools.kube import KubeClient

__all__ = [
    "CLASS_LABEL",
    "CLASS_RECONCILE_TIMEOUT",
    "Handover",
    "class_users",
    "install_class",
    "remove_class_if_unused",
    "wait_class_reconciled",
]


#: Seconds to wait for Cluster API to reconcile a ClusterClass before a Cluster uses it.
CLASS_RECONCILE_TIMEOUT = 120.0
CLUSTER_API = "cluster.x-k8s.io/v1beta2"
RELEASE_NAME_ANNOTATION = "meta.helm.sh/release-name"
RELEASE_NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"


def _class_reconciled(obj: Mapping[str, Any] | None) -> bool:
    """Cluster API's own test (its Cluster webhook refuses a classRef to a class failing it):
    status.observedGeneration is the generation and VariablesReady is True."""
    if not obj:
        return False
    status = obj.get("status") or {}
    if status.get("observedGeneration") != (obj.get("metadata") or {}).get("generation"):
        return False
    return any(
        c.get("type") == "VariablesReady" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _class_ref(shared: ClassRelease) -> ObjectRef:
    return ObjectRef(CLUSTER_API, "ClusterClass", shared.namespace, shared.class_name)


@dataclass(frozen=True)
class Handover:
    """The class objects of a cluster release from before the class had a release of its
    own: kept (``helm.sh/resource-policy: keep``) while that release is upgraded without
    them, then given to the class's release (:meth:`finish`)."""

    shared: ClassRelease
    objects: tuple[ObjectRef, ...]

    def finish(
        self, client: KubeClient, runner: Helm, chart: ChartRef, progress: Progress | None
    ) -> None:
        """After the cluster's release no longer holds the class: the class's release adopts
        its objects (helm's ownership annotations), the keep annotation goes."""
        patch = {
            "metadata": {
                "annotations": {
                    RELEASE_NAME_ANNOTATION: self.shared.release,
                    RELEASE_NAMESPACE_ANNOTATION: self.shared.namespace,
                    KEEP_ANNOTATION: None,
                }
            }
        }
        for ref in self.objects:
            client.merge_patch(ref, patch)
        _upgrade(runner, self.shared, chart)
        if progress:
            progress(f"ClusterClass {self.shared.class_name}: moved into its release")


def _upgrade(runner: Helm, shared: ClassRelease, chart: ChartRef) -> None:
    runner.upgrade_install(
        shared.release,
        Path(chart.path),
        namespace=shared.namespace,
        values=shared.values,
        create_namespace=True,
        rollback_on_failure=True,
    )


def _current(runner: Helm, shared: ClassRelease, chart: ChartRef) -> bool:
    """The class's release is deployed with this chart and these values: nothing to do (a
    class is versioned by name, so every cluster install would otherwise add a revision)."""
    info = runner.status(shared.release, namespace=shared.namespace)
    if info is None or info.status != "deployed" or info.chart != f"{chart.name}-{chart.version}":
        return False
    return runner.get_values(shared.release, namespace=shared.namespace) == shared.values


def install_class(
    client: KubeClient,
    runner: Helm,
    shared: ClassRelease,
    chart: ChartRef,
    *,
    cluster_release: str,
    kube_version: str,
    progress: Progress | None = None,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    timeout: float = CLASS_RECONCILE_TIMEOUT,
) -> Handover | None:
    """Install or upgrade the class's release before ``cluster_release`` uses the class, and
    wait until Cluster API has reconciled the class.

    When the class belongs to ``cluster_release`` itself (installed by an earlier
    scs-templates), its objects are marked keep and a :class:`Handover` is returned: the
    caller upgrades the cluster's release (without the class, which helm then keeps), then
    calls :meth:`Handover.finish`. A class owned by any other release is refused (exit 2).
    """
    found = client.get(_class_ref(shared))
    owner = ((found or {}).get("metadata", {}).get("annotations") or {}).get(
        RELEASE_NAME_ANNOTATION
    )
    if found is not None and owner not in (None, shared.release):
        if owner != cluster_release:
            raise InputError(
                f"ClusterClass {shared.namespace}/{shared.class_name} belongs to the release "
                f"{owner!r} (installed by an earlier scs-templates): install the cluster of "
                f"that release first, which moves the class into its own release "
                f"{shared.release!r}"
            )
        from scs_templates._render.render import split_documents  # deferred: ruamel

        manifests = runner.template(
            shared.release,
            Path(chart.path),
            namespace=shared.namespace,
            values=shared.values,
            kube_version=kube_version,
        )
        refs = tuple(ObjectRef.of(o, shared.namespace) for o in split_documents(manifests)[1])
        keep = {"metadata": {"annotations": {KEEP_ANNOTATION: "keep"}}}
        for ref in refs:
            if client.get(ref) is not None:
                client.merge_patch(ref, keep)
        if progress:
            progress(
                f"ClusterClass {shared.class_name}: moving it from release {owner} into "
                f"its own release {shared.release}"
            )
        return Handover(shared, refs)
    if not _current(runner, shared, chart):
        if progress:
            progress(f"installing release {shared.release} (ClusterClass {shared.class_name})")
        _upgrade(runner, shared, chart)
    wait_class_reconciled(client, shared, poll_interval=poll_interval, timeout=timeout)
    return None


def wait_class_reconciled(
    client: KubeClient,
    shared: ClassRelease,
    *,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    timeout: float = CLASS_RECONCILE_TIMEOUT,
) -> None:
    """Wait until Cluster API has reconciled the class: its Cluster webhook refuses a
    ``classRef`` to a class it has not reconciled yet (found with the real topology
    controller). ToolError on timeout."""
    found, _, reconciled = poll(
        lambda: client.get(_class_ref(shared)),
        _class_reconciled,
        timeout=timeout,
        poll_interval=poll_interval,
    )
    if not reconciled:
        state = ((found or {}).get("status") or {}).get("conditions") or "no status"
        raise ToolError(
            f"ClusterClass {shared.namespace}/{shared.class_name} is not reconciled by Cluster "
            f"API after {elapsed(timeout)} ({state}); no cluster was moved onto it"
        )


def class_users(client: KubeClient, namespace: str, class_name: str) -> list[str]:
    """The Clusters of ``namespace`` whose topology uses ClusterClass ``class_name``
    (a ``classRef`` without namespace is the Cluster's own), sorted."""
    users = []
    for cluster in client.list(CLUSTER_API, "Cluster", namespace):
        ref = ((cluster.get("spec") or {}).get("topology") or {}).get("classRef") or {}
        if ref.get("name") == class_name and ref.get("namespace") in (None, "", namespace):
            users.append(str(cluster["metadata"]["name"]))
    return sorted(users)


def remove_class_if_unused(
    client: KubeClient,
    runner: Helm,
    shared: ClassRelease,
    *,
    leaving: str = "",
    dry_run: bool = False,
    progress: Progress | None = None,
) -> tuple[bool, str | None]:
    """Uninstall the class's release when no Cluster of the namespace but ``leaving`` (the
    one being deleted) uses the class any more. Returns (uninstalled or would be, a note
    naming the Clusters that keep it)."""
    if runner.status(shared.release, namespace=shared.namespace) is None:
        return False, None
    users = [
        name for name in class_users(client, shared.namespace, shared.class_name) if name != leaving
    ]
    if users:
        return False, (
            f"ClusterClass {shared.namespace}/{shared.class_name} kept: used by {', '.join(users)}"
        )
    if progress:
        verb = "would uninstall" if dry_run else "uninstalling"
        progress(f"{verb} release {shared.release} (ClusterClass {shared.class_name}, unused)")
    if not dry_run:
        runner.uninstall(shared.release, namespace=shared.namespace)
    return True, None
