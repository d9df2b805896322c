"""Step (c) of ``delete``: what is still in the cluster's project and belongs to the cluster.

After Cluster API has deleted the cluster, what the workload cluster's own controllers
created can still be there (they died with the cluster, or step (a) could not reach it):

============================  ===============================================================
load balancers (Octavia)      OCCM's: name ``kube_service_<cluster>_<namespace>_<service>``
floating IPs (Neutron)        OCCM's: description ``... from cluster <cluster>``; CAPO's:
                              description ``Created by cluster-api-provider-openstack ...``
security groups (Neutron)     OCCM's: name ``lb-sg-...``, description ``... in cluster <cluster>``
volumes, snapshots (Cinder)   Cinder CSI's: property ``cinder.csi.openstack.org/cluster`` =
                              <cluster>; snapshots also when their volume is one of them
============================  ===============================================================

``<cluster>`` is the name OCCM (``cluster.name``) and Cinder CSI (``clusterID``) are given by
scs_templates/_services/values.py: :func:`~.values.cloud_cluster_name`, ``$CLUSTER.$NAMESPACE``
for a new cluster (unique in a project shared by clusters of one name in several
namespaces), the recorded one of an installed cluster (``delete`` reads it from the release
first). Those names never hold ``_``, so the load balancer prefix ``kube_service_<cluster>_``
never matches another cluster's. Deleted in this order, each waited for: load balancers
(cascade; their VIP ports go with them), floating IPs, OCCM's security groups, snapshots,
volumes. Then
:mod:`.cleanup` removes leftover ports, CAPO's groups, the subnet and the network.

Seams: Octavia and Cinder are reached only through :class:`LoadBalancerAPI` and
:class:`BlockStorageAPI` (implemented over openstacksdk by :func:`load_balancer_api` and
:func:`block_storage_api`; ``None`` when the cloud's catalog has no such service, which is
reported, not an error). Neutron is used directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from scs_templates._tools.removal import remove_all
from scs_templates.providers.openstack.capo_names import capo_description
from scs_templates.providers.openstack.cloud_report import CloudItem, report_lines
from scs_templates.providers.openstack.connection import (
    CallAbandoned,
    error_summary,
    has_service,
    http_status,
)
from scs_templates.providers.openstack.values import cloud_cluster_name

if TYPE_CHECKING:
    from openstack.connection import Connection

    from scs_templates._settings.model import ClusterSettings

#: Property Cinder CSI sets on every volume and snapshot it creates (its ``--cluster`` flag).
CINDER_CSI_CLUSTER_PROPERTY = "cinder.csi.openstack.org/cluster"
OCCM_LB_PREFIX = "kube_service_"
OCCM_SECGROUP_PREFIX = "lb-sg-"
DEFAULT_WAIT_SECONDS = 600.0
POLL_SECONDS = 2.0


@dataclass(frozen=True)
class CloudObject:
    """What the cleanup needs to know of one OpenStack resource."""

    id: str
    name: str = ""
    description: str = ""
    status: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    parent_id: str = ""
    """A snapshot's volume."""


class LoadBalancerAPI(Protocol):
    """The seam to Octavia (the project's load balancers)."""

    def load_balancers(self) -> list[CloudObject]: ...
    def delete_load_balancer(self, lb_id: str) -> None: ...


class BlockStorageAPI(Protocol):
    """The seam to Cinder (the project's volumes and snapshots)."""

    def volumes(self) -> list[CloudObject]: ...
    def snapshots(self) -> list[CloudObject]: ...
    def delete_volume(self, volume_id: str) -> None: ...
    def delete_snapshot(self, snapshot_id: str) -> None: ...


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _strings(value: Any) -> dict[str, str]:
    return {str(k): _text(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


class _SdkLoadBalancers:
    def __init__(self, conn: Connection) -> None:
        self._api: Any = conn.load_balancer
        self._project = str(conn.current_project_id)

    def load_balancers(self) -> list[CloudObject]:
        return [
            CloudObject(
                _text(lb.id),
                _text(lb.name),
                _text(lb.description),
                _text(lb.provisioning_status),
            )
            for lb in self._api.load_balancers(project_id=self._project)
        ]

    def delete_load_balancer(self, lb_id: str) -> None:
        self._api.delete_load_balancer(lb_id, ignore_missing=True, cascade=True)


class _SdkBlockStorage:
    def __init__(self, conn: Connection) -> None:
        self._api: Any = conn.block_storage

    def volumes(self) -> list[CloudObject]:
        return [
            CloudObject(
                _text(v.id),
                _text(v.name),
                _text(v.description),
                _text(v.status),
                _strings(v.metadata),
            )
            for v in self._api.volumes(details=True)
        ]

    def snapshots(self) -> list[CloudObject]:
        return [
            CloudObject(
                _text(s.id),
                _text(s.name),
                _text(s.description),
                _text(s.status),
                _strings(s.metadata),
                _text(s.volume_id),
            )
            for s in self._api.snapshots(details=True)
        ]

    def delete_volume(self, volume_id: str) -> None:
        self._api.delete_volume(volume_id, ignore_missing=True)

    def delete_snapshot(self, snapshot_id: str) -> None:
        self._api.delete_snapshot(snapshot_id, ignore_missing=True)


def load_balancer_api(conn: Connection) -> LoadBalancerAPI | None:
    """Octavia over openstacksdk, or None without a load-balancer endpoint."""
    return _SdkLoadBalancers(conn) if has_service(conn, "load-balancer") else None


def block_storage_api(conn: Connection) -> BlockStorageAPI | None:
    """Cinder over openstacksdk, or None without a block-storage endpoint."""
    return _SdkBlockStorage(conn) if has_service(conn, "block-storage") else None


@dataclass
class LeftoverReport:
    dry_run: bool
    deleted: list[CloudItem] = field(default_factory=list)
    """Deleted (dry run: would be deleted)."""
    kept: list[CloudItem] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return report_lines(
            self.dry_run, self.deleted, kept=self.kept, notes=self.notes, problems=self.problems
        )


def occm_load_balancer_prefix(settings: ClusterSettings) -> str:
    return f"{OCCM_LB_PREFIX}{cloud_cluster_name(settings)}_"


def _occm_fip(description: str, cluster: str) -> bool:
    return description.startswith("Floating IP for Kubernetes external service ") and (
        description.endswith(f" from cluster {cluster}")
    )


def _occm_group(name: str, description: str, cluster: str) -> bool:
    return name.startswith(OCCM_SECGROUP_PREFIX) and description.endswith(f" in cluster {cluster}")


def _already_gone(error: BaseException) -> bool:
    """A 404: the item is gone already. An abandoned call (``--timeout``) is raised: it ends
    the cleanup instead of becoming one failed item of many."""
    if isinstance(error, CallAbandoned):
        raise error
    return http_status(error) == 404


def clean_project_leftovers(
    conn: Connection,
    settings: ClusterSettings,
    *,
    load_balancers: LoadBalancerAPI | None,
    block_storage: BlockStorageAPI | None,
    keep_volumes: bool = False,
    dry_run: bool = False,
    timeout: float = DEFAULT_WAIT_SECONDS,
) -> LeftoverReport:
    """Delete (or list) the cluster's load balancers, floating IPs, OCCM security groups,
    snapshots and volumes; idempotent. Pass :func:`load_balancer_api` and
    :func:`block_storage_api` of ``conn`` (or another implementation of the seams)."""
    report = LeftoverReport(dry_run)
    cluster = cloud_cluster_name(settings)
    remove = _Remover(report, dry_run, timeout)
    # 1. OCCM's load balancers (cascade: listeners, pools, members, the VIP port).
    if load_balancers is None:
        report.notes.append("no load-balancer (Octavia) endpoint in the catalog: none to delete")
    else:
        _remove_load_balancers(remove, load_balancers, occm_load_balancer_prefix(settings))
    network: Any = conn.network
    project_id = str(conn.current_project_id)
    # 2. Floating IPs: OCCM's (one per LoadBalancer Service) and CAPO's (API load balancer).
    ips = _cluster_floating_ips(network, project_id, capo_description(settings), cluster)
    remove(ips, partial(network.delete_ip, ignore_missing=True))
    # 3. OCCM's security groups.
    groups = [
        CloudItem("security group", str(group.id), _text(group.name))
        for group in sorted(network.security_groups(project_id=project_id), key=lambda g: str(g.id))
        if _occm_group(_text(group.name), _text(group.description), cluster)
    ]
    remove(groups, partial(network.delete_security_group, ignore_missing=True))
    # 4./5. Cinder CSI's snapshots and volumes.
    if block_storage is None:
        report.notes.append("no block-storage (Cinder) endpoint in the catalog: none to delete")
        return report
    _remove_volumes(remove, block_storage, cluster, keep_volumes)
    return report


@dataclass(frozen=True)
class _Remover:
    """Deletes a list of one kind for :func:`clean_project_leftovers` and reports into its
    report: what went, what failed, what was still being deleted at the timeout."""

    report: LeftoverReport
    dry_run: bool
    timeout: float

    def __call__(
        self,
        items: list[CloudItem],
        delete: Callable[[str], Any],
        *,
        present: Callable[[], set[str]] | None = None,
        what: str = "",
    ) -> None:
        """Delete each (a 404: already gone), note failures; wait when ``present`` lists
        what is still there (the service deletes asynchronously)."""

        result = remove_all(
            items,
            lambda item: delete(item.id),
            present=present,
            key=lambda item: item.id,
            gone=_already_gone,
            dry_run=self.dry_run,
            timeout=self.timeout,
            poll_interval=POLL_SECONDS,
        )
        self.report.deleted += result.deleted
        self.report.problems += [
            f"{item.describe()}: could not delete: {error_summary(error)}"
            for item, error in result.failed
        ]
        if result.left:
            self.report.problems.append(
                f"{what} {', '.join(sorted(item.id for item in result.left))} still being "
                f"deleted after {int(self.timeout)} s"
            )


def _remove_load_balancers(remove: _Remover, load_balancers: LoadBalancerAPI, prefix: str) -> None:
    """OCCM's load balancers of the cluster (by name prefix), waited for until Octavia has
    deleted them: their VIP ports block the network until then."""
    doomed = [lb for lb in load_balancers.load_balancers() if lb.name.startswith(prefix)]
    remove(
        [
            CloudItem("load balancer", lb.id, lb.name, lb.status)
            for lb in sorted(doomed, key=lambda o: o.id)
        ],
        load_balancers.delete_load_balancer,
        present=lambda: {lb.id for lb in load_balancers.load_balancers()},
        what="load balancer(s)",
    )


def _cluster_floating_ips(
    network: Any, project_id: str, capo: str, cluster: str
) -> list[CloudItem]:
    """The project's floating IPs whose description says OCCM or CAPO created them for the
    cluster, sorted by id."""
    ips = []
    for fip in sorted(network.ips(project_id=project_id), key=lambda f: str(f.id)):
        description = _text(fip.description)
        if description != capo and not _occm_fip(description, cluster):
            continue
        detail = ", ".join(
            part
            for part in (
                _text(fip.floating_ip_address),
                f"port {fip.port_id}" if fip.port_id else "unassociated",
            )
            if part
        )
        ips.append(CloudItem("floating IP", str(fip.id), "", detail))
    return ips


def _remove_volumes(
    remove: _Remover, block_storage: BlockStorageAPI, cluster: str, keep_volumes: bool
) -> None:
    """Cinder CSI's snapshots (also of the cluster's volumes), waited for, then its volumes;
    ``keep_volumes`` lists both as kept instead."""
    volumes = [
        v for v in block_storage.volumes() if v.metadata.get(CINDER_CSI_CLUSTER_PROPERTY) == cluster
    ]
    volume_ids = {v.id for v in volumes}
    snapshots = [
        s
        for s in block_storage.snapshots()
        if s.metadata.get(CINDER_CSI_CLUSTER_PROPERTY) == cluster or s.parent_id in volume_ids
    ]
    snapshot_items = [
        CloudItem("volume snapshot", s.id, s.name, f"{s.status}, of volume {s.parent_id}")
        for s in sorted(snapshots, key=lambda o: o.id)
    ]
    volume_items = [
        CloudItem("volume", v.id, v.name, v.status) for v in sorted(volumes, key=lambda o: o.id)
    ]
    if keep_volumes:
        remove.report.kept += snapshot_items + volume_items
        return
    remove(
        snapshot_items,
        block_storage.delete_snapshot,
        present=lambda: {s.id for s in block_storage.snapshots()},
        what="volume snapshot(s)",
    )
    remove(volume_items, block_storage.delete_volume)
