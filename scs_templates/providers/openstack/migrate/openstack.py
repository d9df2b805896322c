"""The KaaS v1 OpenStack keys: load balancer, metadata, keypair, server groups, cloud entry.

Two pairs of keys read each other: ``OPENSTACK_ANTI_AFFINITY`` with
``OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER`` (soft only counts when anti-affinity is on), and
``OPENSTACK_CLOUD`` with ``OLD_OPENSTACK_CLOUD`` (KaaS v1 moved the original clouds.yaml
entry there when it switched to the per-cluster application credential).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._settings.problems import format_path
from scs_templates.providers.openstack.migrate.shapes import Problem, bool_value, map_value, scalar

if TYPE_CHECKING:
    from scs_templates.providers.openstack.migrate.migration import KeyInfo, Migration
    from scs_templates.providers.openstack.migrate.reading import Entry

SOFT_ANTI_AFFINITY = "OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER"
OLD_CLOUD = "OLD_OPENSTACK_CLOUD"


def load_balancer_provider(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``USE_OVN_LB_PROVIDER``: ``false`` -> amphora, ``true`` -> ovn, ``auto`` -> amphora."""
    text = scalar(entry)
    if text is None:
        m.empty(info, "amphora, the default, is kept")
        return
    notes: list[str] = []
    lowered = text.lower()
    if lowered == "true":
        value = "ovn"
    elif lowered == "false":
        value = "amphora"
    elif lowered == "auto":
        value = "amphora"
        notes.append(
            "auto (ovn where the cloud offers it) has no equivalent: amphora is used; set ovn "
            "if your cloud has the OVN Octavia provider"
        )
    else:
        raise Problem(f"expected true, false or auto, found {text!r}")
    m.map_to(info, value, notes)


def server_metadata(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``{ k: 'v', }`` -> a mapping; an empty map is no metadata."""
    value = map_value(entry)
    if not value:
        m.empty(info, "no server metadata")
        return
    m.map_to(info, value)


def ssh_key(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """The keypair name, with a note that it must exist (KaaS v1 created it)."""
    text = scalar(entry)
    if text is None:
        m.empty(info, "no keypair is injected")
        return
    notes = [
        f"the keypair {text} must exist in the project; scs-templates does not create it "
        "(KaaS v1 made <prefix>-keypair on the management host)"
    ]
    m.map_to(info, text, notes)


def anti_affinity(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``true`` -> control plane hard (soft with the soft key), workers soft; ``false`` -> none."""
    value = bool_value(entry)
    base = info.path
    if value is None:
        m.empty(info, "hard for the control plane, soft for workers")
        return
    m.anti_affinity = value
    soft_entry = m.entries.get(SOFT_ANTI_AFFINITY)
    soft = False
    if soft_entry is not None:
        try:
            soft = bool(bool_value(soft_entry))
        except Problem:
            soft = False  # reported by its own handler
    control_plane = ("soft" if soft else "hard") if value else "none"
    workers = "soft" if value else "none"
    m.set((*base, "controlPlane"), control_plane, entry.key)
    m.set((*base, "workers"), workers, entry.key)
    m.mapped(entry.key, f"{format_path(base)}.controlPlane, {format_path(base)}.workers")


def soft_anti_affinity(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """Soft control-plane anti-affinity; ignored when anti-affinity is off."""
    value = bool_value(entry)
    if value is None:
        m.empty(info, "hard anti-affinity for the control plane")
        return
    if m.anti_affinity is False:
        m.report(entry.key, "ignored", "OPENSTACK_ANTI_AFFINITY is false: no server groups")
        return
    if m.anti_affinity is None:
        m.set(info.path, "soft" if value else "hard", entry.key)
    m.sources[info.path] = entry.key
    m.mapped(entry.key, info.target)


def cloud(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """The clouds.yaml entry, unless ``OLD_OPENSTACK_CLOUD`` holds the original one."""
    text = scalar(entry)
    old = m.entries.get(OLD_CLOUD)
    if old is not None and old.kind == "scalar" and old.text and old.text.strip():
        m.report(
            entry.key,
            "obsolete",
            "it named the per-cluster application credential entry KaaS v1 made; "
            f"{OLD_CLOUD} holds the original clouds.yaml entry and is used instead",
        )
        return
    if text is None:
        m.empty(info, "the default clouds.yaml entry 'openstack' is used")
        return
    m.map_to(info, text)


def old_cloud(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``OLD_OPENSTACK_CLOUD``: the original clouds.yaml entry, used for spec.openstack.cloud."""
    text = scalar(entry)
    if text is None:
        m.report(entry.key, "obsolete", "internal to KaaS v1 and empty here")
        return
    notes = [
        "the original clouds.yaml entry, before KaaS v1 switched to the per-cluster credential"
    ]
    m.map_to(info, text, notes)
