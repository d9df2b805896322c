"""Step (a) of ``delete``: what the workload cluster's cloud integrations created goes first.

A LoadBalancer Service makes the cloud controller manager (OCCM on OpenStack) create a load
balancer, a floating IP and a security group; a PersistentVolumeClaim makes the CSI driver
(Cinder CSI) create a volume; a Gateway makes its controller create a LoadBalancer Service.
Deleting the Cluster first stops those controllers with their objects still there, and what
they created leaks: an OCCM load balancer keeps a port on the cluster network, so CAPO cannot
delete the network and the delete hangs until it times out; volumes keep costing.

So, while the workload cluster is reachable, this deletes its Gateways, its LoadBalancer
Services and (unless volumes are kept) its PersistentVolumeClaims, and waits until the
controllers have finished: a LoadBalancer Service keeps the finalizer
:data:`LB_CLEANUP_FINALIZER` until OCCM has deleted its load balancer, and a released
PersistentVolume of reclaim policy ``Delete`` disappears once the CSI driver has deleted its
volume. Each step is idempotent: what is already gone is skipped, a second run finds nothing.
With ``keep_volumes`` the claims and their volumes are listed and left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import ToolError
from scs_templates._core.progress import Progress
from scs_templates._tools.kube import ObjectRef
from scs_templates._tools.removal import remove_all

if TYPE_CHECKING:
    from scs_templates._tools.kube import KubeClient


#: Set by the service controller on a LoadBalancer Service; removed after the cloud's load
#: balancer is deleted (k8s.io/cloud-provider, used by OCCM).
LB_CLEANUP_FINALIZER = "service.kubernetes.io/load-balancer-cleanup"
GATEWAY_API_VERSION = "gateway.networking.k8s.io/v1"
DEFAULT_TIMEOUT = 900.0


class WorkloadUnreadable(ToolError):
    """The workload cluster's API could not be read (nothing was deleted)."""


DEFAULT_POLL_INTERVAL = 5.0


@dataclass(frozen=True, order=True)
class WorkloadItem:
    """One object of the workload cluster (namespace empty for cluster-scoped kinds)."""

    kind: str
    namespace: str
    name: str
    api_version: str = "v1"
    detail: str = ""

    def ref(self) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, self.namespace, self.name)

    def describe(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class WorkloadReport:
    """What step (a) deleted (or would delete, dry run), waited for and kept."""

    dry_run: bool
    reachable: bool = True
    deleted: list[WorkloadItem] = field(default_factory=list)
    awaited: list[WorkloadItem] = field(default_factory=list)
    kept: list[WorkloadItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        verb = "would delete" if self.dry_run else "deleted"
        wait = "would wait for" if self.dry_run else "waited for"
        out = [f"workload: {verb} {item.describe()}" for item in self.deleted]
        out += [f"workload: {wait} {item.describe()}" for item in self.awaited]
        out += [f"workload: kept {item.describe()}" for item in self.kept]
        out += [f"workload: {note}" for note in self.notes]
        return out


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _item(
    obj: Mapping[str, Any], kind: str, api_version: str = "v1", detail: str = ""
) -> WorkloadItem:
    meta = _meta(obj)
    return WorkloadItem(
        kind, str(meta.get("namespace") or ""), str(meta.get("name")), api_version, detail
    )


def _volume_handle(pv: Mapping[str, Any]) -> str:
    csi = _spec(pv).get("csi")
    return str(csi.get("volumeHandle") or "") if isinstance(csi, Mapping) else ""


def _pv_item(pv: Mapping[str, Any]) -> WorkloadItem:
    policy = _spec(pv).get("persistentVolumeReclaimPolicy") or "Delete"
    handle = _volume_handle(pv)
    detail = f"reclaim {policy}" + (f", volume {handle}" if handle else "")
    return _item(pv, "PersistentVolume", detail=detail)


@dataclass(frozen=True)
class _Plan:
    delete: list[WorkloadItem]
    await_pvs: list[WorkloadItem]
    kept: list[WorkloadItem]
    notes: list[str]


def plan_workload_cleanup(client: KubeClient, *, keep_volumes: bool = False) -> _Plan:
    """What step (a) deletes, waits for and keeps; reads the workload cluster only."""
    delete: list[WorkloadItem] = []
    notes: list[str] = []
    if client.serves(GATEWAY_API_VERSION, "Gateway"):
        for gateway in client.list(GATEWAY_API_VERSION, "Gateway", ""):
            delete.append(_item(gateway, "Gateway", GATEWAY_API_VERSION))
    for service in client.list("v1", "Service", ""):
        if _spec(service).get("type") == "LoadBalancer":
            delete.append(_item(service, "Service", detail="type LoadBalancer"))
    claims = sorted(
        _item(c, "PersistentVolumeClaim") for c in client.list("v1", "PersistentVolumeClaim", "")
    )
    volumes_by_claim: dict[tuple[str, str], Mapping[str, Any]] = {}
    for pv in client.list("v1", "PersistentVolume", ""):
        ref = _spec(pv).get("claimRef")
        if isinstance(ref, Mapping):
            volumes_by_claim[(str(ref.get("namespace")), str(ref.get("name")))] = pv
    kept: list[WorkloadItem] = []
    await_pvs: list[WorkloadItem] = []
    for claim in claims:
        bound = volumes_by_claim.get((claim.namespace, claim.name))
        if keep_volumes:
            kept.append(claim)
            if bound is not None:
                kept.append(_pv_item(bound))
            continue
        delete.append(claim)
        if bound is None:
            continue
        if (_spec(bound).get("persistentVolumeReclaimPolicy") or "Delete") == "Delete":
            await_pvs.append(_pv_item(bound))
        else:
            notes.append(
                f"{_pv_item(bound).describe()} stays after its claim is deleted (reclaim policy); "
                "the cloud cleanup after the Cluster removes its volume"
            )
    return _Plan(delete, await_pvs, kept, notes)


def clean_workload(
    client: KubeClient,
    *,
    keep_volumes: bool = False,
    dry_run: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    progress: Progress | None = None,
) -> WorkloadReport:
    """Delete the workload cluster's Gateways, LoadBalancer Services and claims; wait.

    On timeout a :class:`ToolError` names every object still present (and why it stays:
    its finalizers), and nothing else has been deleted: the Cluster is left for the
    controllers to finish, like ``delete`` does on every timeout.
    """
    try:
        plan = plan_workload_cleanup(client, keep_volumes=keep_volumes)
    except ToolError as error:
        raise WorkloadUnreadable(str(error)) from None
    report = WorkloadReport(dry_run, kept=plan.kept, notes=list(plan.notes))
    report.awaited = list(plan.await_pvs)
    if dry_run:
        report.deleted = list(plan.delete)
        return report

    watched = [*plan.delete, *plan.await_pvs]
    removal = remove_all(
        plan.delete,
        _deleter(client, progress),
        present=lambda: {item for item in watched if client.get(item.ref()) is not None},
        also_await=plan.await_pvs,
        timeout=timeout,
        poll_interval=poll_interval,
        waiting=_waiting_reporter(progress),
    )
    report.deleted = removal.deleted
    if not removal.left:
        return report
    blocking = _still_present(client, removal.left)
    if not blocking:  # gone since the last poll
        return report
    raise ToolError(
        f"the workload cluster's controllers did not finish within {int(timeout)} s; "
        f"still present: {'; '.join(blocking)}. Nothing else was deleted: check the "
        "cloud controller manager and CSI driver (or pass --keep-volumes), then run "
        "delete again"
    )


def _deleter(client: KubeClient, progress: Progress | None) -> Callable[[WorkloadItem], bool]:
    """Delete one object, saying so only when it was there (a rerun stays quiet)."""

    def delete(item: WorkloadItem) -> bool:
        if not client.delete(item.ref()):
            return False
        if progress:
            progress(f"workload: deleting {item.describe()}")
        return True

    return delete


def _waiting_reporter(
    progress: Progress | None,
) -> Callable[[list[WorkloadItem], float], None]:
    """The line shown while the controllers work, so a long wait names what it waits for."""

    def waiting(pending: list[WorkloadItem], waited: float) -> None:
        if progress:
            progress(
                f"workload: waiting for {len(pending)} object(s) to be removed by their "
                f"controllers, first {pending[0].describe()} [{int(waited)}s]"
            )

    return waiting


def _still_present(client: KubeClient, left: list[WorkloadItem]) -> list[str]:
    """Each object left after the timeout with its finalizers: the reason it stays."""
    blocking = []
    for item in left:
        found = client.get(item.ref())
        if found is None:
            continue
        finalizers = _meta(found).get("finalizers") or []
        why = f" (finalizers: {', '.join(map(str, finalizers))})" if finalizers else ""
        blocking.append(item.describe() + why)
    return blocking
