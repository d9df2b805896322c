"""Prune the cluster's superseded hashed machine templates after a rollout has finished.

Why: the charts name machine and bootstrap templates by a hash of their content and annotate
them ``helm.sh/resource-policy: keep``: Cluster API reads a template for as long as a
machine cloned from it lives (a MachineSet scaling back up, remediation), so helm must not
delete the old one when an upgrade renders a new one. Left alone, every upgrade would add
one template per group, forever. ``install`` (and so ``apply``) therefore removes, after
helm has run, every kept template of the cluster that

- is not in the release's current manifest,
- is named by no MachineDeployment, MachineSet, MachinePool, KubeadmControlPlane or
  ClusterClass in the namespace (``...Ref``/``templateRef`` by kind and name), and
- has no object cloned from it left (``cluster.x-k8s.io/cloned-from-name`` on the infra
  machines and bootstrap configs): a machine of an unfinished rollout keeps it.

During a rollout the old MachineSet and the old machines still exist, so nothing they need
is removed; the install after the rollout prunes what it left. Idempotent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scs_templates._core.progress import Progress
from scs_templates._tools.kube import ObjectRef

if TYPE_CHECKING:
    from scs_templates._tools.kube import KubeClient

__all__ = ["CLONED_FROM_ANNOTATION", "REFERRER_KINDS", "PruneResult", "prune_templates"]

CLONED_FROM_ANNOTATION = "cluster.x-k8s.io/cloned-from-name"
#: The Cluster API objects whose spec names machine and bootstrap templates.
REFERRER_KINDS: tuple[tuple[str, str], ...] = (
    ("cluster.x-k8s.io/v1beta2", "ClusterClass"),
    ("cluster.x-k8s.io/v1beta2", "MachineDeployment"),
    ("cluster.x-k8s.io/v1beta2", "MachinePool"),
    ("cluster.x-k8s.io/v1beta2", "MachineSet"),
    ("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"),
)


@dataclass
class PruneResult:
    """What prune removed, and the superseded templates it kept because they are in use."""

    pruned: list[str]
    in_use: list[str]


def _references(value: Any, found: set[tuple[str, str]]) -> None:
    """Every (kind, name) under a key ending in ``Ref`` (infrastructureRef, configRef,
    templateRef, ...) anywhere below ``value``."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if (
                isinstance(key, str)
                and key.endswith("Ref")
                and isinstance(item, Mapping)
                and isinstance(item.get("kind"), str)
                and isinstance(item.get("name"), str)
            ):
                found.add((item["kind"], item["name"]))
            _references(item, found)
    elif isinstance(value, list):
        for item in value:
            _references(item, found)


def _in_use(
    client: KubeClient, namespace: str, template_kinds: Iterable[tuple[str, str]]
) -> set[tuple[str, str]]:
    """(template kind, name) of every template something in the namespace still needs."""
    used: set[tuple[str, str]] = set()
    for api_version, kind in REFERRER_KINDS:
        if client.serves(api_version, kind):
            for obj in client.list(api_version, kind, namespace):
                _references(obj.get("spec"), used)
    for api_version, kind in template_kinds:
        clone_kind = kind.removesuffix("Template")
        if clone_kind == kind or not client.serves(api_version, clone_kind):
            continue
        for obj in client.list(api_version, clone_kind, namespace):
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            source = annotations.get(CLONED_FROM_ANNOTATION)
            if isinstance(source, str):
                used.add((kind, source))
    return used


def prune_templates(
    client: KubeClient,
    *,
    namespace: str,
    selector: str,
    template_kinds: Iterable[tuple[str, str]],
    current: Iterable[ObjectRef],
    kept: Callable[[Mapping[str, Any]], bool],
    progress: Progress | None = None,
) -> PruneResult:
    """Delete the superseded templates of one cluster (see the module docstring).

    ``selector`` is the cluster's label selector, ``template_kinds`` the kept template
    kinds (apiVersion, kind), ``current`` the objects of the release's current manifest,
    ``kept`` tells whether an object carries the keep policy (only those are ours to prune).
    """
    kinds = list(dict.fromkeys(template_kinds))
    wanted = set(current)
    candidates: list[ObjectRef] = []
    for api_version, kind in kinds:
        if not client.serves(api_version, kind):
            continue
        for obj in client.list(api_version, kind, namespace, label_selector=selector):
            ref = ObjectRef.of(obj, namespace)
            if (
                ref not in wanted
                and kept(obj)
                and not (obj.get("metadata") or {}).get("deletionTimestamp")
            ):
                candidates.append(ref)
    result = PruneResult([], [])
    if not candidates:
        return result
    used = _in_use(client, namespace, kinds)
    for ref in sorted(candidates):
        if (ref.kind, ref.name) in used:
            result.in_use.append(str(ref))
            continue
        if client.delete(ref):
            result.pruned.append(str(ref))
            if progress:
                progress(f"pruned the superseded {ref}")
    return result
