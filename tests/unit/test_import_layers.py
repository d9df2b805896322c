"""The package's house: layers that import downward only, and no import cycle at all.

Every import of ``scs_templates`` is read from the source (module level, inside ``if``
blocks and inside functions alike), so an import hidden in a function cannot hide a cycle.
The layers, bottom to top, are the private packages in :data:`LAYERS`; docs/architecture.md
draws them. A layer may import any layer below it and itself, never one above it.
"""

from __future__ import annotations

import ast
from collections import defaultdict

from tests.support import REPO
from tests.support.imports import imported, package_modules

#: Bottom to top. A module's layer is its first folder under scs_templates/ (or its name).
LAYERS: tuple[str, ...] = (
    "__init__",  # the package itself: its version, nothing imported
    "_core",  # errors, text input, atomic files, subprocesses and signals, cache dir, records
    "_tools",  # helm, helmfile, the toolchain that builds them, the Kubernetes API
    "_versions",  # the versions table and Kubernetes versions
    "_settings",  # the neutral settings model, loading, validation, schema, provider registry
    "_contract",  # the values contract of the cluster charts (typed models)
    "_clikit",  # what every command uses (settings loading, -o formats): providers' too
    "providers",  # the provider interface and the providers (plug-ins)
    "_render",  # values builders, charts, render, render-fleet, the catalogue
    "_lifecycle",  # install, status, diff, delete on the management cluster
    "_services",  # the workload cluster's standard services
    "_gitops",  # the Flux repository layout
    "_migrate",  # KaaS v1 migration
    "_cli",  # the command line
    "_maintain",  # maintainer scripts (the versions table's update)
    "api",  # the public library API
)


def _edges() -> dict[str, set[str]]:
    """module -> the package modules it imports (anywhere in its source)."""
    modules = package_modules(REPO)

    def owner(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in imported(name, node, path.name == "__init__.py", modules):
                found = owner(target) if target.startswith("scs_templates") else None
                if found and found != name:
                    edges[name].add(found)
    return edges


def _layer(module: str) -> int:
    parts = module.split(".")
    key = parts[1] if len(parts) > 1 else "__init__"
    assert key in LAYERS, f"{module}: its folder {key!r} is no layer; add it to LAYERS"
    return LAYERS.index(key)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(set(edges) | {t for ts in edges.values() for t in ts}):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_package_has_no_import_cycle() -> None:
    cycles = _cycles(_edges())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_every_import_points_down_the_layers() -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in _edges().items()
        for target in targets
        if _layer(target) > _layer(module)
    )
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The finder itself can fail: a two-module cycle and a three-module one are found."""
    edges = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(_cycles(edges)) == [["a", "b"], ["c", "d", "e"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
