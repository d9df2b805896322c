"""``delete``: (a) the workload cluster's Gateways, LoadBalancer Services and PVCs while it
is reachable (:mod:`scs_templates._lifecycle.workload_cleanup`), (b) the Cluster object (and wait
until
Cluster API has torn the infrastructure down), then the release, what helm keeps and the
credentials Secret, (c) the provider's cloud resources. The templates and credentials are
needed by the controllers while they delete machines: removing them earlier could strand
machines.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.naming import kubeconfig_secret
from scs_templates._core.progress import Progress, quiet
from scs_templates._lifecycle.class_step import remove_class_if_unused
from scs_templates._lifecycle.target import (
    CLUSTER_LABEL,
    Target,
    cluster_ref,
    helm_of,
    kept,
    kube_of,
    release_objects,
    target_of,
)
from scs_templates._lifecycle.workload_cleanup import WorkloadUnreadable, clean_workload
from scs_templates._render.values import build_values
from scs_templates._render.values.class_release import class_release_of
from scs_templates._tools.kube import KubeClient, ObjectRef
from scs_templates._tools.kube.wait import (
    DEFAULT_POLL_INTERVAL,
    DEFAULT_WAIT_TIMEOUT,
    wait_until_gone,
)
from scs_templates._tools.kube.workload_kubeconfig import private_kubeconfig
from scs_templates.providers.interface import CloudOptions
from scs_templates.providers.operations import operations_of
from scs_templates.providers.registry import provider_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from scs_templates._lifecycle.workload_cleanup import WorkloadReport
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.helm import Helm, ReleaseInfo
    from scs_templates.providers.interface import Provider

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
    workload: WorkloadReport | None = None
    """Step (a): None when the Cluster did not exist or its API could not be reached."""
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)


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
    keep_volumes: bool = False,
    dry_run: bool = False,
    workload: KubeClient | None = None,
    uninstall: Callable[[], object] | None = None,
) -> DeleteResult:
    """Delete the cluster, in order, as ``scs-templates delete`` does: (a) while the workload
    cluster is reachable, its Gateways, LoadBalancer Services and PersistentVolumeClaims,
    waiting until the cloud controller manager and CSI driver have removed what they
    created (:mod:`scs_templates._lifecycle.workload_cleanup`; ``keep_volumes`` lists the claims
    instead); (b) the Cluster object, waiting until it is gone; then the release (``uninstall``,
    default ``helm uninstall``; ``Helmfile.destroy`` passes ``helmfile destroy``), the kept
    templates, the credentials Secret and - a topology cluster - its ClusterClass's release
    when no other Cluster of the namespace uses the class; (c) the provider releases what is
    left in the cloud (OpenStack: load balancers, floating IPs, security groups, volumes and
    snapshots, leftover ports and network, server groups, the per-cluster application credential,
    also one the credentials Secret held, read before (b) removed it:
    :func:`scs_templates.providers.openstack.provision.release_cluster_resources`), touching the
    cloud as ``cloud`` allows (default :class:`~scs_templates.providers.interface.CloudOptions`);
    ``cloud_progress`` receives what the provider did (default: ``progress``).

    ``workload`` is a client of the workload cluster (default: from the Cluster's
    kubeconfig Secret). ``dry_run`` changes nothing and reports what would be deleted.
    Idempotent: what is already gone is skipped. On timeout a ToolError is raised and
    NOTHING else has been deleted, so the controllers keep what they need to finish. When
    cloud resources remain, :class:`DeleteIncomplete` (a ToolError) carries the result.
    """
    target = target_of(settings)
    client = kube_of(kube, kubeconfig, context)
    runner = helm_of(helm, kubeconfig, context)
    installed = _read_release(runner, target, settings)
    step = _Step(client, target, keep_volumes, dry_run, timeout, poll_interval, progress)
    ref = cluster_ref(installed.objects, target)
    report, cluster_deleted = _delete_workload_and_cluster(step, ref, workload)
    _uninstall_release(step, runner, installed.release, uninstall)
    provider = provider_of(installed.settings)
    # read before the Secret goes: step (c) deletes the cloud credentials it held
    secret_name = provider.credentials_secret_name(installed.settings)
    credentials = client.secret_data(target.namespace, secret_name) if secret_name else None
    removed = _remove_kept(step, runner, installed, provider.machine_template_kinds)
    result = DeleteResult(
        target, cluster_deleted, installed.release is not None, removed, report, dry_run, step.notes
    )
    options = cloud if cloud is not None else CloudOptions()
    _release_cloud(step, provider, installed.settings, options, credentials, cloud_progress, result)
    return result


@dataclass(frozen=True)
class _Step:
    """What every step of one delete shares: the management cluster, the target, the user's
    choices, the wait, and the notes the result carries."""

    client: KubeClient
    target: Target
    keep_volumes: bool
    dry_run: bool
    timeout: float
    poll_interval: float
    progress: Progress | None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Installed:
    """The release as helm knows it, read before anything is deleted."""

    release: ReleaseInfo | None
    objects: list[dict[str, Any]]
    values: dict[str, Any] | None
    settings: ClusterSettings
    """With what the release recorded: the names the cluster's cloud leftovers carry."""


def _read_release(runner: Helm, target: Target, settings: ClusterSettings) -> _Installed:
    """The release's objects and values (none when it is not installed), and the settings with
    what it recorded, read before anything goes."""
    release = runner.status(target.release, namespace=target.namespace)
    if release is None:
        return _Installed(None, [], None, settings)
    objects = release_objects(runner.get_manifest(target.release, namespace=target.namespace))
    values = runner.get_values(target.release, namespace=target.namespace)
    # before anything goes: the names the cluster's cloud leftovers carry (OpenStack:
    # the cloud cluster name its release recorded)
    recorded = provider_of(settings).with_recorded(settings, values)
    return _Installed(release, objects, values, recorded)


def _delete_workload_and_cluster(
    step: _Step, ref: ObjectRef, workload: KubeClient | None
) -> tuple[WorkloadReport | None, bool]:
    """Steps (a) and (b), when the Cluster exists: what the workload cluster's controllers
    created, then the Cluster object and the wait until Cluster API has torn it down."""
    client = step.client
    if not (client.serves(ref.api_version, "Cluster") and client.get(ref) is not None):
        return None, False
    report = _clean_workload(step, workload)
    if step.progress:
        verb = "would delete" if step.dry_run else "deleting"
        step.progress(f"{verb} Cluster {ref.namespace}/{ref.name}")
    if step.dry_run:
        return report, True
    deleted = client.delete(ref)
    wait_until_gone(
        client, ref, timeout=step.timeout, poll_interval=step.poll_interval, progress=step.progress
    )
    return report, deleted


def _uninstall_release(
    step: _Step, runner: Helm, release: ReleaseInfo | None, uninstall: Callable[[], object] | None
) -> None:
    """The release goes after the Cluster: its templates were needed while machines went."""
    target = step.target
    if release is not None and step.progress:
        verb = "would uninstall" if step.dry_run else "uninstalling"
        step.progress(f"{verb} release {target.release}")
    if release is not None and not step.dry_run:
        if uninstall is not None:
            uninstall()
        else:
            runner.uninstall(target.release, namespace=target.namespace)


def _remove_kept(
    step: _Step,
    runner: Helm,
    installed: _Installed,
    machine_template_kinds: tuple[tuple[str, str], ...],
) -> list[str]:
    """What helm keeps (and the credentials), then the ClusterClass release when unused."""
    leftovers = _kept_leftovers(
        step.client, installed.objects, step.target, (*KEPT_KINDS, *machine_template_kinds)
    )
    removed = _remove_leftovers(step.client, leftovers, step.dry_run)
    removed.extend(
        _remove_class(
            step.client,
            runner,
            installed.settings,
            installed.values,
            step.dry_run,
            step.progress,
            step.notes,
        )
    )
    return removed


def _kept_leftovers(
    client: KubeClient,
    objects: list[dict[str, Any]],
    target: Target,
    kept_kinds: tuple[tuple[str, str], ...],
) -> list[ObjectRef]:
    """Sorted: the current manifest's kept objects by name, and every object of the kept kinds
    (older template generations too) by the cluster label."""
    leftovers: dict[ObjectRef, None] = {}
    for obj in objects:
        if kept(obj):
            leftovers[ObjectRef.of(obj, target.namespace)] = None
    selector = f"{CLUSTER_LABEL}={target.cluster}"
    kinds = dict.fromkeys([*kept_kinds, ("v1", "Secret")])
    for obj in objects:
        if kept(obj):
            kinds[(str(obj.get("apiVersion")), str(obj.get("kind")))] = None
    for api_version, kind in kinds:
        if not client.serves(api_version, kind):
            continue
        for found in client.list(api_version, kind, target.namespace, label_selector=selector):
            leftovers[ObjectRef.of(found, target.namespace)] = None
    return sorted(leftovers)


def _remove_leftovers(client: KubeClient, leftovers: list[ObjectRef], dry_run: bool) -> list[str]:
    """Delete each leftover (a dry run lists those present); what is gone already is skipped."""
    removed = []
    for leftover in leftovers:
        if dry_run:
            if client.get(leftover) is not None:
                removed.append(str(leftover))
        elif client.delete(leftover):
            removed.append(str(leftover))
    return removed


def _release_cloud(
    step: _Step,
    provider: Provider,
    settings: ClusterSettings,
    cloud: CloudOptions,
    credentials: dict[str, str] | None,
    cloud_progress: Progress | None,
    result: DeleteResult,
) -> None:
    """Step (c): the provider releases what is left in the cloud; what remains is reported
    with what was deleted (:class:`DeleteIncomplete`)."""
    options = replace(cloud, dry_run=step.dry_run, keep_volumes=step.keep_volumes)
    try:
        operations_of(provider).release(
            settings,
            options,
            progress=cloud_progress or step.progress or quiet,
            credentials=credentials,
        )
    except ToolError as error:
        raise DeleteIncomplete(str(error), result) from None


def _remove_class(
    client: KubeClient,
    runner: Helm,
    settings: ClusterSettings,
    installed_values: dict[str, Any] | None,
    dry_run: bool,
    progress: Progress | None,
    notes: list[str],
) -> list[str]:
    """A topology cluster's ClusterClass release, uninstalled when no other Cluster of the
    namespace uses the class (:func:`~scs_templates._lifecycle.class_step.remove_class_if_unused`);
    the class of the installed release, else the settings' one."""
    target = target_of(settings)
    values = installed_values if installed_values is not None else build_values(settings)
    shared = class_release_of(values, target.release)
    if shared is None or not client.serves("cluster.x-k8s.io/v1beta2", "Cluster"):
        return []
    removed, note = remove_class_if_unused(
        client, runner, shared, leaving=target.cluster, dry_run=dry_run, progress=progress
    )
    if note:
        notes.append(note)
    return [f"release {shared.release} (ClusterClass {shared.class_name})"] if removed else []


def _clean_workload(step: _Step, workload: KubeClient | None) -> WorkloadReport | None:
    """Step (a) of delete on the workload cluster, when it can be reached."""

    target, notes, progress = step.target, step.notes, step.progress

    def run(workload_client: KubeClient) -> WorkloadReport | None:
        if not workload_client.serves("v1", "Service"):
            notes.append(
                f"workload cluster {target.cluster}: its API cannot be reached; its load "
                "balancers and volumes are left to the cloud cleanup after the Cluster"
            )
            return None
        try:
            report = clean_workload(
                workload_client,
                keep_volumes=step.keep_volumes,
                dry_run=step.dry_run,
                timeout=step.timeout,
                poll_interval=step.poll_interval,
                progress=progress,
            )
        except WorkloadUnreadable as error:
            notes.append(
                f"workload cluster {target.cluster}: cannot be read ({error}); its load "
                "balancers and volumes are left to the cloud cleanup after the Cluster"
            )
            return None
        if progress:
            for line in report.lines():
                progress(line)
        return report

    if workload is not None:
        return run(workload)
    return _with_workload_client(step.client, target, notes, run)


def _with_workload_client(
    client: KubeClient,
    target: Target,
    notes: list[str],
    run: Callable[[KubeClient], WorkloadReport | None],
) -> WorkloadReport | None:
    """``run`` on a client of the workload cluster, opened from its kubeconfig Secret (kept
    in a private temporary file); a note instead when there is none or it is unusable."""
    text = client.cluster_kubeconfig(target.namespace, target.cluster)
    if text is None:
        notes.append(
            f"workload cluster {target.cluster}: no kubeconfig Secret "
            f"{target.namespace}/{kubeconfig_secret(target.cluster)} (never came up?); skipped"
        )
        return None

    with private_kubeconfig(text) as path:
        try:
            opened = KubeClient(str(path), check_api=False)  # Cluster API wrote it
        except InputError as error:
            notes.append(f"workload cluster {target.cluster}: unusable kubeconfig ({error})")
            return None
        with opened:
            return run(opened)
