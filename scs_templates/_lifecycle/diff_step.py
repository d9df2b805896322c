"""``diff``: the rendered manifests against the installed release's, object by object
(kind/namespace/name), without the helm-diff plugin. Secret values are never compared or
shown.
"""

from __future__ import annotations

import difflib
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from scs_templates._lifecycle.target import Target, helm_of, kept, release_objects, target_of
from scs_templates._render.values.class_release import class_release_of
from scs_templates._tools.kube import ObjectRef

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.helm import Helm

__all__ = [
    "DiffResult",
    "ObjectChange",
    "diff",
]


@dataclass(frozen=True)
class ObjectChange:
    """One object that differs: ``added`` (only rendered), ``removed`` (only installed) or
    ``changed``; ``diff`` is a unified diff of the object's YAML (secret values hidden)."""

    kind: str
    namespace: str
    name: str
    change: Literal["added", "removed", "changed"]
    diff: str = ""
    note: str = ""

    @property
    def key(self) -> str:
        return (
            f"{self.kind}/{self.namespace}/{self.name}"
            if self.namespace
            else f"{self.kind}/{self.name}"
        )


@dataclass(frozen=True)
class DiffResult:
    target: Target
    installed: bool
    changes: list[ObjectChange] = field(default_factory=list)
    unchanged: int = 0

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    def summary(self) -> str:
        counts = {
            kind: sum(1 for c in self.changes if c.change == kind)
            for kind in ("added", "changed", "removed")
        }
        head = "" if self.installed else "not installed yet: "
        return (
            f"{head}{counts['added']} to add, {counts['changed']} to change, "
            f"{counts['removed']} to remove, {self.unchanged} unchanged"
        )


def _hide_secret(obj: dict[str, Any]) -> dict[str, Any]:
    """A Secret with every value replaced by a marker: only keys and metadata compare."""
    if obj.get("kind") != "Secret" or str(obj.get("apiVersion")) != "v1":
        return obj
    hidden = dict(obj)
    for section in ("data", "stringData"):
        content = obj.get(section)
        if isinstance(content, Mapping):
            hidden.pop(section)
            hidden.setdefault("keys", [])
            hidden["keys"] = sorted({*hidden["keys"], *(str(k) for k in content)})
    return hidden


def _yaml_text(obj: Mapping[str, Any]) -> str:
    from ruamel.yaml import YAML  # deferred: ruamel

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    stream = io.StringIO()
    yaml.dump(dict(obj), stream)
    return stream.getvalue()


def _index(
    objects: list[dict[str, Any]], namespace: str
) -> dict[tuple[str, str, str], dict[str, Any]]:
    index: dict[tuple[str, str, str], dict[str, Any]] = {}
    for obj in objects:
        ref = ObjectRef.of(obj, namespace if obj.get("kind") != "Namespace" else "")
        index[(ref.kind, ref.namespace, ref.name)] = _hide_secret(obj)
    return index


def diff(
    settings: ClusterSettings,
    *,
    helm: Helm | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> DiffResult:
    """What an install of ``settings`` would change in the installed release's objects (a
    topology cluster: and in its ClusterClass's release)."""
    from scs_templates._render.render import render  # deferred: ruamel

    target = target_of(settings)
    runner = helm_of(helm, kubeconfig, context)
    result = render(settings, helm=runner)
    rendered = _index(list(result.objects), target.namespace)
    installed_release = runner.status(target.release, namespace=target.namespace) is not None
    installed: dict[tuple[str, str, str], dict[str, Any]] = {}
    if installed_release:
        manifest = runner.get_manifest(target.release, namespace=target.namespace)
        installed = _index(release_objects(manifest), target.namespace)
    # a topology cluster's ClusterClass is in the class's own release (render prints both)
    shared = class_release_of(result.values, target.release)
    if shared is not None and runner.status(shared.release, namespace=shared.namespace):
        manifest = runner.get_manifest(shared.release, namespace=shared.namespace)
        installed.update(_index(release_objects(manifest), shared.namespace))
    changes, unchanged = _compare(rendered, installed)
    return DiffResult(target, installed_release, changes, unchanged)


def _compare(
    rendered: dict[tuple[str, str, str], dict[str, Any]],
    installed: dict[tuple[str, str, str], dict[str, Any]],
) -> tuple[list[ObjectChange], int]:
    """The added, removed and changed objects (by kind, namespace and name, in that order)
    and how many are unchanged."""
    changes: list[ObjectChange] = []
    unchanged = 0
    for key in sorted(set(rendered) | set(installed)):
        kind, namespace, name = key
        old, new = installed.get(key), rendered.get(key)
        note = "secret values are not compared" if kind == "Secret" else ""
        if old is None and new is not None:
            text = "".join(
                difflib.unified_diff(
                    [],
                    _yaml_text(new).splitlines(keepends=True),
                    "/dev/null",
                    f"rendered/{kind}/{name}",
                )
            )
            changes.append(ObjectChange(kind, namespace, name, "added", text, note))
        elif new is None and old is not None:
            if kept(old):
                note = "kept by helm (helm.sh/resource-policy: keep) until the cluster is deleted"
            changes.append(ObjectChange(kind, namespace, name, "removed", "", note))
        elif old is not None and new is not None:
            before, after = _yaml_text(old), _yaml_text(new)
            if before == after:
                unchanged += 1
                continue
            text = "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    f"installed/{kind}/{name}",
                    f"rendered/{kind}/{name}",
                )
            )
            changes.append(ObjectChange(kind, namespace, name, "changed", text, note))
    return changes, unchanged
