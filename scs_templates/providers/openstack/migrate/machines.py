"""The KaaS v1 keys of the machines: Kubernetes version, node image, flavors, counts, disks, zones.

Each handler writes to the target(s) of its key table row and reports what it made of the
KaaS v1 value; the rules (rounding control-plane counts, the oldest supported minor, the
``{version}`` placeholder in image names) are KaaS v1 semantics, explained in the notes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scs_templates._core import version_numbers
from scs_templates._versions.kubernetes import SUPPORTED_MINORS, TESTED_PATCHES
from scs_templates.providers.openstack.migrate.shapes import Problem, count, list_value, scalar

if TYPE_CHECKING:
    from scs_templates.providers.openstack.migrate.migration import Handler, KeyInfo, Migration
    from scs_templates.providers.openstack.migrate.reading import Entry

_MACHINES = "0 or more machines"
#: A SCS flavor name with a local disk (``SCS-2V-4-20s``): its root disk size is its own.
_DISK_FLAVOR = re.compile(r"^SCS-\d+[A-Za-z]*(:\d+)?-\d+(\.\d+)?[a-z]*-\d+[a-z]?([_-].*)?$")


def kubernetes_version(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``v1.28.x`` -> ``1.28.x``; a minor older than supported -> the oldest, with a note."""
    text = scalar(entry)
    if text is None:
        m.empty(info, "the default version of scs-templates is used")
        return
    parts = version_numbers.kubernetes(text)
    if parts is None:
        raise Problem(f"{text!r} is not a Kubernetes version such as v1.28.x or v1.28.5")
    major, minor, patch_number = parts
    patch = "x" if patch_number is None else patch_number
    m.k8s_minor = (major, minor)
    low, high = SUPPORTED_MINORS[0], SUPPORTED_MINORS[-1]
    notes: list[str] = []
    if (major, minor) in TESTED_PATCHES:
        value = f"{major}.{minor}.{patch}"
    elif (major, minor) < low:
        value = f"{low[0]}.{low[1]}.x"
        steps = ", ".join(f"{major}.{step}" for step in range(minor + 1, low[1] + 1))
        notes.append(
            f"KaaS v1 ran Kubernetes {major}.{minor}, older than the supported "
            f"{low[0]}.{low[1]} to {high[0]}.{high[1]}: set to {value}. Upgrade the cluster "
            f"step by step, one minor at a time ({major}.{minor} -> {steps}), before it is "
            "managed with these settings; never skip a minor"
        )
    else:
        raise Problem(
            f"Kubernetes {major}.{minor} is newer than this release of scs-templates supports "
            f"({low[0]}.{low[1]} to {high[0]}.{high[1]}); use a newer scs-templates"
        )
    m.map_to(info, value, notes)


def image(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """The image name; the Kubernetes version it embeds becomes ``{version}``."""
    text = scalar(entry)
    if text is None:
        m.empty(info, "the default ubuntu-capi-image-{version} is used")
        return
    notes: list[str] = []
    embedded = list(re.finditer(r"v(\d+)\.(\d+)\.(\d+|x)", text))
    value = text
    if m.k8s_minor is not None and embedded:
        same = [e for e in embedded if (int(e[1]), int(e[2])) == m.k8s_minor]
        if same:
            value = text[: same[0].start()] + "{version}" + text[same[0].end() :]
        else:
            notes.append(
                f"the image names {embedded[0][0]}, not the KUBERNETES_VERSION minor; it is "
                "kept as is: make sure it matches spec.kubernetes.version"
            )
    elif m.k8s_minor is not None:
        notes.append(
            "the image name embeds no Kubernetes version: it is used for every version, so "
            "change it on every upgrade"
        )
    m.map_to(info, value, notes)


def flavor(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """The flavor name; empty (or missing) -> the row's KaaS v1 default, with a note."""
    text = scalar(entry)
    notes: list[str] = []
    if text is None:
        assert info.when_missing is not None, f"{info.key}: a flavor row names its default"
        text = info.when_missing
        notes.append(f"empty: the KaaS v1 default {text} is used")
    m.map_to(info, text, notes)


def control_plane_count(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """Rounded to a count etcd can use: 0 -> 1, even -> the next odd, more than 5 -> 5."""
    value = count(entry, _MACHINES)
    if value is None:
        m.empty(info, "the default is kept")
        return
    notes: list[str] = []
    replicas = value
    if value == 0:
        replicas = 1
        notes.append(
            "0 meant 'no test cluster' in KaaS v1; a cluster needs a control plane: 1 is used"
        )
    elif value > 5:
        replicas = 5
        notes.append(f"{value} control-plane machines are not supported; 5 is used")
    elif value % 2 == 0:
        replicas = value + 1
        notes.append(
            f"an even count ({value}) does not improve etcd quorum; rounded up to {replicas}"
        )
    m.map_to(info, replicas, notes)


def worker_count(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """The worker group's replicas; 0 is kept, with a note."""
    value = count(entry, _MACHINES)
    if value is None:
        m.empty(info, "the default (3) is kept")
        return
    notes = (
        ["no worker machines: workloads only run if the control plane allows it"]
        if value == 0
        else []
    )
    m.map_to(info, value, notes)


def root_disk(flavor_key: str) -> Handler:
    """The root disk size in GB; notes where KaaS v1 meant something else (``flavor_key``:
    the key of the machines' flavor, whose local disk KaaS v1 preferred)."""

    def handle(m: Migration, entry: Entry, info: KeyInfo) -> None:
        value = count(entry, "a size in GB (0 or more)")
        if value is None:
            m.empty(info, "0, boot from the flavor's disk")
            return
        notes: list[str] = []
        flavor_entry = m.entries.get(flavor_key)
        flavor = None
        if flavor_entry is not None and flavor_entry.kind == "scalar" and flavor_entry.text:
            flavor = flavor_entry.text.strip()
        if value == 0:
            notes.append(
                "0 now means booting from the flavor's own disk (KaaS v1 sized a volume "
                "automatically for diskless flavors): set a size if the flavor has no disk"
            )
        elif flavor and _DISK_FLAVOR.match(flavor):
            notes.append(
                f"KaaS v1 ignored this for flavors with a local disk, and {flavor} seems to "
                "have one: set 0 to keep booting from it"
            )
        m.map_to(info, value, notes)

    return handle


def failure_domain(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """One zone -> both targets (control-plane zones, worker zone); a list -> all / the first."""
    if entry.kind == "scalar" and entry.text is not None and not entry.text.strip().startswith("["):
        zones = [entry.text.strip()] if entry.text.strip() else []
    else:
        zones = list_value(entry) or []
    if not zones:
        m.empty(info, "the provider's default placement")
        return
    control_plane_zones, worker_zone = info.targets
    notes: list[str] = []
    if len(zones) > 1:
        notes.append(
            f"the control plane is spread over all {len(zones)} zones, the worker group uses "
            f"{zones[0]}; use template multi-md for one worker group per zone"
        )
    m.set(control_plane_zones, zones, entry.key, notes)
    m.set(worker_zone, zones[0], entry.key)
    m.mapped(entry.key, info.target, notes)
