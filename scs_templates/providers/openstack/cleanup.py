"""Clean up what a deleted cluster left behind in Neutron.

When Cluster API Provider OpenStack fails to tidy up (a server vanished under it, a timeout),
DOWN ports stay on the cluster's network and keep its security groups, subnet and network from
being deleted (HTTP 409 "in use"). :func:`cleanup_cluster_network` finds the cluster's
CAPO-named resources (see :mod:`.preflight` for the names), deletes the leftover ports, then
the security groups, subnets and the network, retrying a conflict briefly.

Which ports are deleted: status DOWN, not owned by Neutron itself (``network:*``: router
interfaces, DHCP, HA router ports, floating IPs ...), and either on the cluster's network with
every fixed IP inside the node CIDR, or carrying one of the cluster's security groups. ACTIVE
ports and router interfaces are reported as blockers, never touched. A 403 on a port owned by
compute (``compute:*``) is reported with what to do: the default policy lets only admins
delete those.

``dry_run`` lists what would be deleted and changes nothing; a second run finds nothing to do.
"""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scs_templates._tools.removal import remove_all
from scs_templates.providers.openstack.capo_names import (
    CAPO_SECGROUP_DESCRIPTION,
    capo_description,
    capo_network_name,
    capo_security_group_names,
)
from scs_templates.providers.openstack.cloud_report import CloudItem, report_lines
from scs_templates.providers.openstack.connection import CallAbandoned, error_summary, http_status

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from openstack.connection import Connection

    from scs_templates._settings.model import ClusterSettings

# Ports Neutron owns itself: never deleted here. DHCP ports go away with their network.
NEUTRON_OWNER_PREFIX = "network:"
DHCP_OWNER = "network:dhcp"
ROUTER_OWNERS = (
    "network:router_interface",
    "network:router_interface_distributed",
    "network:ha_router_replicated_interface",
    "network:router_centralized_snat",
)
ADMIN_ONLY_OWNER_PREFIXES = ("compute:", "baremetal:", "manila:")

CONFLICT_RETRIES = 3
CONFLICT_DELAY_SECONDS = 1.0


@dataclass(frozen=True)
class Problem:
    item: CloudItem
    message: str

    def describe(self) -> str:
        return f"{self.item.describe()}: {self.message}"


@dataclass
class CleanupReport:
    dry_run: bool
    planned: list[CloudItem] = field(default_factory=list)
    deleted: list[CloudItem] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def nothing_to_do(self) -> bool:
        return not self.planned and not self.problems

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0

    def lines(self) -> list[str]:
        """Human-readable report, one line per item."""
        nothing = (
            ["nothing to do: no leftovers of this cluster found"] if self.nothing_to_do else []
        )
        return nothing + report_lines(
            self.dry_run,
            self.planned if self.dry_run else self.deleted,
            notes=self.notes,
            problems=[problem.describe() for problem in self.problems],
        )


def cleanup_cluster_network(
    conn: Connection,
    settings: ClusterSettings,
    *,
    dry_run: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> CleanupReport:
    """Delete the cluster's leftover ports, security groups, subnet(s) and network."""
    report = CleanupReport(dry_run=dry_run)
    network_api = conn.network
    project_id = str(conn.current_project_id)
    node_cidr = ipaddress.ip_network(settings.spec.network.node_cidr, strict=False)

    networks = _capo_networks(network_api, settings, project_id, report)
    subnets = [s for n in networks for s in network_api.subnets(network_id=n.id)]
    groups = _capo_groups(network_api, settings, project_id, report)

    # Ports: on the network, or carrying one of the groups (possibly on another network).
    ports: dict[str, Any] = {}
    for network in networks:
        for port in network_api.ports(network_id=network.id):
            ports[port.id] = port
    for group in groups:
        for port in network_api.ports(security_group_ids=[group.id]):
            ports[port.id] = port
    network_ids = {n.id for n in networks}
    group_ids = {g.id for g in groups}

    doomed: list[Any] = []
    remaining: list[Any] = []  # ports that stay and will block something
    for port in sorted(ports.values(), key=lambda p: p.id):
        reason = _port_verdict(port, network_ids, group_ids, node_cidr)
        if reason is None:
            doomed.append(port)
            continue
        if reason:
            report.notes.append(f"port {port.id} kept: {reason}")
        if port.device_owner != DHCP_OWNER:
            remaining.append(port)

    port_items = [_port_item(port) for port in doomed]
    group_items = [CloudItem("security group", g.id, g.name or "") for g in groups]
    subnet_items = [CloudItem("subnet", s.id, s.name or "", s.cidr or "") for s in subnets]
    network_items = [CloudItem("network", n.id, n.name or "") for n in networks]
    report.planned = port_items + group_items + subnet_items + network_items
    if dry_run:
        return report
    _delete_ports(network_api, doomed, port_items, remaining, report)
    _delete_unblocked(
        network_api, group_items + subnet_items + network_items, remaining, sleep, report
    )
    return report


def _capo_networks(
    network_api: Any, settings: ClusterSettings, project_id: str, report: CleanupReport
) -> list[Any]:
    """The cluster's network by its CAPO name and description."""
    own_name = capo_network_name(settings)
    found = network_api.networks(name=own_name, project_id=project_id)
    label = f"network {own_name}"
    return _made_by_capo(found, capo_description(settings), label, report, " for this cluster")


def _capo_groups(
    network_api: Any, settings: ClusterSettings, project_id: str, report: CleanupReport
) -> list[Any]:
    """The cluster's security groups by their CAPO names and description."""
    return [
        group
        for name in capo_security_group_names(settings)
        for group in _made_by_capo(
            network_api.security_groups(name=name, project_id=project_id),
            CAPO_SECGROUP_DESCRIPTION,
            f"security group {name}",
            report,
        )
    ]


def _made_by_capo(
    found: Iterable[Any], description: str, label: str, report: CleanupReport, whose: str = ""
) -> list[Any]:
    """Those of ``found`` with the description CAPO gives them; one of the same name that
    CAPO did not create (another description) is left alone, with a note."""
    made = []
    for resource in found:
        if (resource.description or "") == description:
            made.append(resource)
        else:
            report.notes.append(
                f"{label} {resource.id} left alone: not created by CAPO{whose} "
                f"(description {resource.description!r})"
            )
    return made


def _delete_ports(
    network_api: Any,
    doomed: list[Any],
    port_items: list[CloudItem],
    remaining: list[Any],
    report: CleanupReport,
) -> None:
    """Delete the leftover ports; one that cannot be deleted is reported (with what to do
    about a port only an admin may delete) and joins ``remaining``: it blocks what it uses."""

    ports_of = {item.id: port for port, item in zip(doomed, port_items, strict=True)}
    removal = remove_all(
        port_items,
        lambda item: network_api.delete_port(item.id, ignore_missing=True),
        gone=lambda _error: False,  # every error is reported (ignore_missing: no 404)
    )
    report.deleted += removal.deleted + removal.absent
    for item, error in removal.failed:
        report.problems.append(Problem(item, _port_error(ports_of[item.id], error)))
        remaining.append(ports_of[item.id])


def _blockers(remaining: list[Any], kind: str, resource_id: str) -> list[Any]:
    """The remaining ports that keep a security group, subnet or network in use."""
    if kind == "security group":
        return [p for p in remaining if resource_id in (p.security_group_ids or [])]
    if kind == "subnet":
        return [
            p
            for p in remaining
            if any(ip.get("subnet_id") == resource_id for ip in p.fixed_ips or [])
        ]
    return [p for p in remaining if p.network_id == resource_id]


def _delete_unblocked(
    network_api: Any,
    items: list[CloudItem],
    remaining: list[Any],
    sleep: Callable[[float], None],
    report: CleanupReport,
) -> None:
    """The security groups, subnets and network, in that order; one a remaining port still
    uses is reported, not tried (Neutron would answer 409 "in use")."""
    deleters: dict[str, Callable[[str], Any]] = {
        "security group": lambda i: network_api.delete_security_group(i, ignore_missing=True),
        "subnet": lambda i: network_api.delete_subnet(i, ignore_missing=True),
        "network": lambda i: network_api.delete_network(i, ignore_missing=True),
    }
    for item in items:
        in_the_way = _blockers(remaining, item.kind, item.id)
        if in_the_way:
            ids = ", ".join(p.id for p in in_the_way)
            report.problems.append(Problem(item, f"not deleted: still in use by port(s) {ids}"))
            continue
        failure = _delete_with_retry(deleters[item.kind], item.id, sleep)
        if failure is None:
            report.deleted.append(item)
        else:
            report.problems.append(Problem(item, failure))


def _port_verdict(
    port: Any,
    network_ids: set[str],
    group_ids: set[str],
    node_cidr: ipaddress.IPv4Network | ipaddress.IPv6Network,
) -> str | None:
    """None: delete the port. Otherwise why it is kept ('' = silently, it is harmless)."""
    owner = port.device_owner or ""
    if owner == DHCP_OWNER:
        return ""
    if owner.startswith(ROUTER_OWNERS):
        subnets = ", ".join(ip.get("subnet_id", "?") for ip in port.fixed_ips or [])
        return (
            f"router interface ({owner}, router {port.device_id or '?'}); remove it with "
            f"`openstack router remove subnet {port.device_id or 'ROUTER'} {subnets or 'SUBNET'}`"
        )
    if owner.startswith(NEUTRON_OWNER_PREFIX):
        return f"owned by Neutron ({owner})"
    if (port.status or "").upper() != "DOWN":
        user = " ".join(part for part in (owner, port.device_id) if part) or "unknown"
        return f"status {port.status}, in use by {user}; delete what uses it first"
    if port.network_id in network_ids:
        addresses = [ip.get("ip_address") for ip in port.fixed_ips or []]
        inside = [a for a in addresses if a and ipaddress.ip_address(a) in node_cidr]
        if addresses and len(inside) != len(addresses):
            return f"fixed IPs {', '.join(str(a) for a in addresses)} not all inside the node CIDR"
        return None
    if group_ids.intersection(port.security_group_ids or []):
        return None
    return "neither on the cluster network nor in its security groups"


def _port_item(port: Any) -> CloudItem:
    addresses = ",".join(str(ip.get("ip_address")) for ip in port.fixed_ips or [])
    owner = port.device_owner or "no owner"
    detail = f"{port.status}, {owner}" + (f", {addresses}" if addresses else "")
    return CloudItem("port", port.id, port.name or "", detail)


def _port_error(port: Any, error: BaseException) -> str:
    owner = port.device_owner or ""
    status = http_status(error)
    if status == 403 and owner.startswith(ADMIN_ONLY_OWNER_PREFIXES):
        device = port.device_id or "?"
        return (
            f"HTTP 403: the cloud's policy lets only administrators delete ports owned by "
            f"{owner} (device {device}). This port is a leftover of that server/device: if it "
            f"still exists, delete it (e.g. `openstack server delete {device}`), which frees "
            f"the port; otherwise ask the cloud operator to run `openstack port delete "
            f"{port.id}`. Then run the cleanup again"
        )
    return f"could not delete: {error_summary(error)}"


def _delete_with_retry(
    delete: Callable[[str], Any], resource_id: str, sleep: Callable[[float], None]
) -> str | None:
    """Delete; retry a 409 (in use) a few times. None on success, else the error text."""
    for attempt in range(CONFLICT_RETRIES):
        try:
            delete(resource_id)
        except CallAbandoned:
            raise
        except Exception as error:
            if http_status(error) == 409 and attempt + 1 < CONFLICT_RETRIES:
                sleep(CONFLICT_DELAY_SECONDS)
                continue
            return f"could not delete: {error_summary(error)}"
        return None
    return "could not delete: still in use"  # pragma: no cover - loop always returns
