"""Nova server groups for anti-affinity (scs-0214).

CAPO v0.14 can only *reference* a server group (by ID or name filter); it does not create
one. The machine templates reference ``$PREFIX-$CLUSTER-control-plane`` and
``$PREFIX-$CLUSTER-$GROUP`` by name (see
:func:`scs_templates.providers.openstack.values.server_groups`), so they must exist
before the cluster is applied and are removed with the cluster. Policies:
``hard`` -> ``anti-affinity``, ``soft`` -> ``soft-anti-affinity``.

The local test stack has no compute service: only the "no compute endpoint" path runs
there; what is created is decided by the pure :func:`wanted_server_groups`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import ToolError
from scs_templates.providers.openstack.connection import error_summary, has_service
from scs_templates.providers.openstack.values import server_groups

if TYPE_CHECKING:
    from openstack.connection import Connection

    from scs_templates._settings.model import ClusterSettings


@dataclass(frozen=True)
class ServerGroupAction:
    """What happened to one server group: created, exists, deleted, absent, conflict."""

    name: str
    policy: str
    action: str
    detail: str = ""

    def __str__(self) -> str:
        text = f"server group {self.name} ({self.policy}): {self.action}"
        return f"{text}: {self.detail}" if self.detail else text


def wanted_server_groups(settings: ClusterSettings) -> list[tuple[str, str]]:
    """(name, policy) pairs the rendered machine templates reference, in a stable order."""

    return server_groups(settings)


def _policy_of(group: Any) -> str:
    policies = getattr(group, "policies", None) or []
    return str(getattr(group, "policy", None) or (policies[0] if policies else ""))


def ensure_server_groups(conn: Connection, settings: ClusterSettings) -> list[ServerGroupAction]:
    """Create the missing server groups; refuse a same-named group with another policy.

    Nova cannot change a group's policy, and servers cannot move between groups: a policy
    change in the settings therefore needs the group to be replaced while no machine uses
    it, which we report instead of doing behind the operator's back.
    """
    wanted = wanted_server_groups(settings)
    if not wanted:
        return []
    if not has_service(conn, "compute"):
        raise ToolError(
            "cannot create the anti-affinity server groups: no compute endpoint in the "
            "service catalog (set spec.openstack.antiAffinity to none to go without)"
        )
    existing: dict[str, list[Any]] = {}
    try:
        for group in conn.compute.server_groups():
            existing.setdefault(str(group.name), []).append(group)
    except Exception as error:
        raise ToolError(f"listing server groups failed: {error_summary(error)}") from None
    actions: list[ServerGroupAction] = []
    for name, policy in wanted:
        found = existing.get(name, [])
        if len(found) > 1:
            raise ToolError(
                f"server group name {name} is used {len(found)} times in the project; CAPO's "
                "name filter needs exactly one: delete the extra groups"
            )
        if found:
            current = _policy_of(found[0])
            if current != policy:
                raise ToolError(
                    f"server group {name} has policy {current!r}, the settings want "
                    f"{policy!r}: Nova cannot change it; delete the group while no machine "
                    "of it exists, or keep the old policy in spec.openstack.antiAffinity"
                )
            actions.append(ServerGroupAction(name, policy, "exists"))
            continue
        try:
            conn.compute.create_server_group(name=name, policy=policy)
        except Exception as error:
            raise ToolError(
                f"creating server group {name} failed: {error_summary(error)}"
            ) from None
        actions.append(ServerGroupAction(name, policy, "created"))
    return actions


def delete_server_groups(
    conn: Connection, settings: ClusterSettings, *, dry_run: bool = False
) -> list[ServerGroupAction]:
    """Delete the cluster's server groups (after the cluster's servers are gone); idempotent.
    ``dry_run``: report "would delete" and delete nothing."""
    wanted = wanted_server_groups(settings)
    if not wanted or not has_service(conn, "compute"):
        return [ServerGroupAction(n, p, "absent", "no compute endpoint") for n, p in wanted]
    names = {name for name, _ in wanted}
    actions: list[ServerGroupAction] = []
    try:
        groups = [g for g in conn.compute.server_groups() if str(g.name) in names]
    except Exception as error:
        raise ToolError(f"listing server groups failed: {error_summary(error)}") from None
    present = {str(g.name) for g in groups}
    for group in groups:
        members = list(getattr(group, "member_ids", None) or [])
        if members:
            actions.append(
                ServerGroupAction(
                    str(group.name), _policy_of(group), "kept", f"{len(members)} servers in it"
                )
            )
            continue
        if dry_run:
            actions.append(ServerGroupAction(str(group.name), _policy_of(group), "would delete"))
            continue
        try:
            conn.compute.delete_server_group(group, ignore_missing=True)
        except Exception as error:
            raise ToolError(
                f"deleting server group {group.name} failed: {error_summary(error)}"
            ) from None
        actions.append(ServerGroupAction(str(group.name), _policy_of(group), "deleted"))
    actions.extend(ServerGroupAction(n, p, "absent") for n, p in wanted if n not in present)
    return actions
