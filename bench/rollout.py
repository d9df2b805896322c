"""Rollout minimality: which immutable templates a settings change renames.

Cluster API rolls machines when a MachineDeployment/KubeadmControlPlane points at a template
with a NEW NAME; the charts name machine templates (``OpenStackMachineTemplate``,
``DockerMachineTemplate``) and bootstrap templates (``KubeadmConfigTemplate``) after the hash
of their rendered spec. A rename is SPURIOUS when the change did not need that template's
spec to change (machines would be replaced for nothing); a MISSING rename means a change that
must reach the machines does not (they would keep the old configuration).

Each scenario states the minimum: the set of templates whose spec must change, written as
``(kind, group)`` with ``group`` the worker group name or ``control-plane``. Why each one:

* machine templates hold flavor, image (hence the Kubernetes version unless the image is
  pinned), root disk, server group and server metadata;
* KubeadmConfigTemplates hold what ``kubeadm join`` and cloud-init do on a worker: kubelet
  arguments (node labels kubelet may set), taints, and node files (registry mirrors);
* everything else lives in mutable objects (MachineDeployment replicas and autoscaler
  annotations, Machine labels that Cluster API syncs, KubeadmControlPlane, OpenStackCluster)
  or outside the cluster chart (services): no template rename.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.fleetgen import base_settings, variant

TEMPLATE_KINDS = ("OpenStackMachineTemplate", "DockerMachineTemplate", "KubeadmConfigTemplate")
_HASH_SUFFIX = re.compile(r"-[0-9a-f]{8}$")

Mutation = Callable[[dict[str, Any]], None]
Key = tuple[str, str]  # (kind, group)


@dataclass(frozen=True)
class Scenario:
    name: str
    provider: str
    change: Mutation
    expected: frozenset[Key]


def _group(data: dict[str, Any], name: str) -> dict[str, Any]:
    groups: list[dict[str, Any]] = data["spec"]["workers"]
    return next(g for g in groups if g["name"] == name)


def _set(path: str, value: Any) -> Mutation:
    def change(data: dict[str, Any]) -> None:
        node = data
        *parents, last = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value

    return change


def _in_group(name: str, key: str, value: Any) -> Mutation:
    def change(data: dict[str, Any]) -> None:
        _group(data, name)[key] = value

    return change


def _add_label(name: str, key: str, value: str) -> Mutation:
    def change(data: dict[str, Any]) -> None:
        _group(data, name).setdefault("labels", {})[key] = value

    return change


def _add_mirror(data: dict[str, Any]) -> None:
    data["spec"]["registryMirrors"][0]["endpoints"].append("https://mirror2.example.com/v2")


OSMT, DMT, KCT = TEMPLATE_KINDS
CP = "control-plane"
WORKERS = ("general", "burst", "gpu")
_ = frozenset

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("replicas of one group", "openstack", _in_group("general", "replicas", 5), _()),
    Scenario("control-plane replicas", "openstack", _set("spec.controlPlane.replicas", 5), _()),
    Scenario(
        "machine type of one group",
        "openstack",
        _in_group("general", "machineType", "SCS-8V-16"),
        _({(OSMT, "general")}),
    ),
    Scenario(
        "node label of one group (kubelet --node-labels)",
        "openstack",
        _add_label("gpu", "scs.community/model", "h100"),
        _({(KCT, "gpu")}),
    ),
    Scenario(
        "node-role label of one group (Machine label, synced by Cluster API)",
        "openstack",
        _add_label("burst", "node-role.kubernetes.io/burst", ""),
        _(),
    ),
    Scenario(
        "taint of one group",
        "openstack",
        _in_group(
            "general", "taints", [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        ),
        _({(KCT, "general")}),
    ),
    Scenario(
        # The gpu group pins its image (a literal name without a Kubernetes version; one
        # naming another version is refused), so its machines keep theirs.
        "Kubernetes version 1.34 -> 1.33",
        "openstack",
        _set("spec.kubernetes.version", "1.33.x"),
        _({(OSMT, CP), (OSMT, "general"), (OSMT, "burst")}),
    ),
    Scenario("etcd quota", "openstack", _set("spec.etcd.quotaGiB", 8), _()),
    Scenario("etcd unsafeFS off", "openstack", _set("spec.etcd.unsafeFS", False), _()),
    Scenario(
        "service toggle (cert-manager off)",
        "openstack",
        _set("spec.services.certManager", {"enabled": False}),
        _(),
    ),
    Scenario(
        "API access CIDRs",
        "openstack",
        _set("spec.network.apiAccess.cidrs", ["203.0.113.0/24"]),
        _(),
    ),
    Scenario(
        "registry mirror endpoint",
        "openstack",
        _add_mirror,
        _({(KCT, g) for g in WORKERS}),
    ),
    Scenario(
        "control-plane machine type",
        "openstack",
        _set("spec.controlPlane.machineType", "SCS-8V-16"),
        _({(OSMT, CP)}),
    ),
    Scenario(
        "root disk of one group",
        "openstack",
        _in_group("general", "rootDiskGB", 120),
        _({(OSMT, "general")}),
    ),
    Scenario(
        "autoscaling bounds",
        "openstack",
        _in_group("burst", "autoscaling", {"min": 2, "max": 20}),
        _(),
    ),
    Scenario(
        "pod security level",
        "openstack",
        _set("spec.security.podSecurity", {"enforce": "baseline"}),
        _(),
    ),
    Scenario(
        "server metadata of workers",
        "openstack",
        _set("spec.openstack.serverMetadata", {"workers": {"team": "data"}}),
        _({(OSMT, g) for g in WORKERS}),
    ),
    Scenario("DNS servers", "openstack", _set("spec.network.dnsServers", ["9.9.9.9"]), _()),
    Scenario(
        "Kubernetes version (Docker)",
        "docker",
        _set("spec.kubernetes.version", "1.33.x"),
        _({(DMT, CP), (DMT, "md-0"), (DMT, "md-1")}),
    ),
    Scenario("replicas (Docker)", "docker", _in_group("md-1", "replicas", 4), _()),
)


def templates(objects: Any, cluster_prefix: str) -> dict[Key, str]:
    """``(kind, group) -> name`` of the immutable templates among rendered objects."""
    found: dict[Key, str] = {}
    for obj in objects:
        kind = obj.get("kind")
        if kind not in TEMPLATE_KINDS:
            continue
        name = str(obj["metadata"]["name"])
        base = _HASH_SUFFIX.sub("", name)
        if base == name:
            raise ValueError(f"{kind} {name} has no spec hash suffix")
        group = base.removeprefix(cluster_prefix)
        found[(kind, group)] = name
    return found


@dataclass(frozen=True)
class Outcome:
    scenario: str
    expected: tuple[Key, ...]
    renamed: tuple[Key, ...]
    spurious: tuple[Key, ...]
    missing: tuple[Key, ...]


Renderer = Callable[[list[dict[str, Any]]], list[tuple[Any, ...]]]


def run_scenarios(render_objects: Renderer) -> list[Outcome]:
    """Render every scenario before/after (one call of ``render_objects`` for all)."""
    documents: list[dict[str, Any]] = []
    for scenario in SCENARIOS:
        before = base_settings(scenario.provider)
        after = variant(before)
        scenario.change(after)
        documents += [before, after]
    rendered = render_objects(documents)
    outcomes = []
    for i, scenario in enumerate(SCENARIOS):
        data = documents[2 * i]
        prefix = data["spec"].get("prefix", "capi") + "-" + data["metadata"]["name"] + "-"
        old = templates(rendered[2 * i], prefix)
        new = templates(rendered[2 * i + 1], prefix)
        if old.keys() != new.keys():
            raise ValueError(f"{scenario.name}: the set of templates changed")
        renamed = {key for key in old if old[key] != new[key]}
        outcomes.append(
            Outcome(
                scenario=scenario.name,
                expected=tuple(sorted(scenario.expected)),
                renamed=tuple(sorted(renamed)),
                spurious=tuple(sorted(renamed - scenario.expected)),
                missing=tuple(sorted(scenario.expected - renamed)),
            )
        )
    return outcomes
