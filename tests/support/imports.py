"""The package's imports read from its source (AST only): the graph, the closures, the deferrals.

Shared by tests/unit/test_import_layers.py (every import, for layers and cycles) and
tests/unit/test_deferred_imports.py (module-level closures and the ``# deferred:`` reasons),
and loaded by file path by the maintainer script that hoists needless in-function imports,
so it imports the standard library only and takes the repository root as an argument.

A module's *closure* is what importing it loads: itself, its parent packages, and, transitively,
what their module-level imports load. Imports inside functions, inside ``if TYPE_CHECKING:``
and under ``if __name__ == "__main__":`` are not module level. ``from pkg import name`` loads
``pkg`` and, when ``pkg.name`` is a module, that module too. A module outside the package
(the standard library, a third-party distribution) is a node whose own imports are not read:
importing ``a.b`` records ``a`` and ``a.b``, so a third-party package appears under its
top-level name (pydantic, yaml, openstack, kubernetes, ...).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

#: Loaded by the interpreter before a program's first line (``python -c pass`` has them), so no
#: import of them defers anything.
INTERPRETER: frozenset[str] = frozenset(
    {"abc", "builtins", "codecs", "genericpath", "io", "os", "os.path", "posixpath", "stat"}
    | {"sys", "time"}
)

#: The standard library's top-level modules (a reason names a third-party package first).
STDLIB: frozenset[str] = frozenset(sys.stdlib_module_names)

#: The heavy third-party packages a reason names first when an import defers several things.
HEAVY: tuple[str, ...] = (
    "openstack",
    "keystoneauth1",
    "kubernetes",
    "pydantic",
    "fastjsonschema",
    "jsonschema",
    "yaml",
    "ruamel",
)

#: ``# deferred: <module or distribution>`` on an import's line or on the line above it.
REASON = re.compile(r"#\s*deferred:\s*([A-Za-z_][\w.]*)")


def module_name(root: Path, path: Path) -> str:
    """The dotted name of the module in ``path`` (a file under ``root``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules(root: Path, package: str = "scs_templates") -> dict[str, Path]:
    """Every module of ``package`` (a folder under ``root``), by dotted name, sorted."""
    return {module_name(root, path): path for path in sorted((root / package).rglob("*.py"))}


def resolve(name: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module a ``from`` import in module ``name`` reads from."""
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported(
    name: str, node: ast.Import | ast.ImportFrom, is_package: bool, modules: dict[str, Path]
) -> Iterator[str]:
    """The dotted names an import statement uses: ``from pkg import mod`` uses the module
    ``pkg.mod``; ``from pkg import name`` uses ``pkg`` (where ``name`` is defined or
    re-exported)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    module = resolve(name, node, is_package)
    for alias in node.names:
        submodule = f"{module}.{alias.name}"
        yield submodule if submodule in modules else module


def prefixes(dotted: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``: what importing ``a.b.c`` runs."""
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


@dataclass(frozen=True)
class Statement:
    """One import statement and where it sits."""

    node: ast.Import | ast.ImportFrom
    #: The functions around it, outermost first (empty at module level and in class bodies).
    functions: tuple[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, ...]
    #: Inside ``if TYPE_CHECKING:`` or ``if __name__ == "__main__":``: never run on import.
    dormant: bool
    #: Inside an ``except`` block: a fallback, not what importing the module normally runs.
    fallback: bool
    #: The block (a list of statements) that holds it, and whether a ``try`` encloses it.
    block: list[ast.stmt]
    in_try: bool

    @property
    def module_level(self) -> bool:
        return not self.functions and not self.dormant and not self.fallback


def statements(tree: ast.Module) -> Iterator[Statement]:
    """Every import statement of a module with its context, in source order."""

    def walk(
        node: ast.AST,
        functions: tuple[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, ...],
        dormant: bool,
        fallback: bool,
        in_try: bool,
    ) -> Iterator[Statement]:
        for field, value in ast.iter_fields(node):
            asleep = dormant
            if isinstance(node, ast.If) and field == "body":
                asleep = dormant or _is_type_checking(node.test) or _is_main_guard(node.test)
            caught = fallback or isinstance(node, ast.ExceptHandler)
            tried = in_try or (isinstance(node, ast.Try | ast.TryStar) and field == "body")
            children = value if isinstance(value, list) else [value]
            for child in children:
                if isinstance(child, ast.Import | ast.ImportFrom):
                    yield Statement(child, functions, asleep, caught, value, tried)
                elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                    yield from walk(child, (*functions, child), asleep, caught, tried)
                elif isinstance(child, ast.AST):
                    yield from walk(child, functions, asleep, caught, tried)

    yield from walk(tree, (), False, False, False)


class Package:
    """The modules of one package under ``root``, their imports and their closures."""

    def __init__(self, root: Path, package: str = "scs_templates") -> None:
        self.root = root
        self.package = package
        self.modules = package_modules(root, package)
        self.trees = {
            name: ast.parse(path.read_text(encoding="utf-8"), str(path))
            for name, path in self.modules.items()
        }
        self._closures: dict[str, frozenset[str]] = {}

    def internal(self, dotted: str) -> bool:
        return dotted == self.package or dotted.startswith(self.package + ".")

    def loads(self, name: str, node: ast.Import | ast.ImportFrom) -> set[str]:
        """What the import statement ``node`` in module ``name`` loads directly (before the
        closures of those modules): packages on the way included."""
        loaded: set[str] = set()
        if isinstance(node, ast.Import):
            for alias in node.names:
                loaded.update(prefixes(alias.name))
            return loaded
        module = resolve(name, node, self.modules[name].name == "__init__.py")
        loaded.update(prefixes(module))
        for alias in node.names:
            submodule = f"{module}.{alias.name}"
            if submodule in self.modules:
                loaded.add(submodule)
        return loaded

    @cached_property
    def _direct(self) -> dict[str, set[str]]:
        """module -> what its module-level imports load, its parent packages included."""
        direct: dict[str, set[str]] = {}
        for name, tree in self.trees.items():
            found = set(prefixes(name)[:-1])
            for statement in statements(tree):
                if statement.module_level:
                    found |= self.loads(name, statement.node)
            found.discard(name)
            direct[name] = found
        return direct

    def closure(self, name: str) -> frozenset[str]:
        """Everything importing ``name`` loads (itself included): a breadth-first walk of the
        module-level imports that does not read modules outside the package."""
        if name not in self._closures:
            seen = {name} | INTERPRETER
            todo = [name]
            while todo:
                current = todo.pop()
                for target in self._direct.get(current, ()):
                    if target not in seen:
                        seen.add(target)
                        todo.append(target)
            self._closures[name] = frozenset(seen)
        return self._closures[name]

    def gained(self, name: str, node: ast.Import | ast.ImportFrom) -> set[str]:
        """What the import ``node`` in module ``name`` loads that the module's own closure
        has not loaded already: what it defers when it sits inside a function."""
        own = self.closure(name)
        found: set[str] = set()
        for target in self.loads(name, node):
            found |= self.closure(target) if target in self.modules else {target}
        return found - own

    def suggest(self, name: str, node: ast.Import | ast.ImportFrom) -> str | None:
        """The one name a reason gives for deferring ``node``: a heavy third-party package
        first, then any other third-party package, then the module the import names."""
        gained = self.gained(name, node)
        if not gained:
            return None
        outside = sorted({t for t in gained if not self.internal(t) and "." not in t})
        for heavy in HEAVY:
            if heavy in outside:
                return heavy
        direct = sorted(self.loads(name, node) & gained, key=lambda t: (-t.count("."), t))
        third_party = [t for t in outside if t not in STDLIB and not t.startswith("_")]
        if third_party:
            return third_party[0]
        return direct[0] if direct else sorted(gained)[0]


def reason(lines: list[str], node: ast.stmt) -> tuple[int, str] | None:
    """The ``# deferred:`` name given for ``node`` and its 1-based line: a comment on one of
    its lines or on the line directly above it."""
    end = node.end_lineno or node.lineno
    for number in [node.lineno - 1, *range(node.lineno, end + 1)]:
        if 1 <= number <= len(lines):
            text = lines[number - 1]
            if number == node.lineno - 1 and not text.lstrip().startswith("#"):
                continue
            found = REASON.search(text)
            if found:
                return number, found.group(1)
    return None


@dataclass(frozen=True)
class Deferral:
    """One import inside a function: what it defers and what its comment says."""

    module: str
    path: Path
    statement: Statement
    gained: frozenset[str]
    given: str | None
    suggested: str | None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.statement.node.lineno}"

    def problem(self) -> str | None:
        """Why this import is wrong where it is, or None."""
        if not self.gained:
            return (
                f"{self.where}: unnecessary deferral: its module is already loaded by "
                f"{self.module}'s module-level imports; import it at the top"
            )
        if self.given is None:
            return f"{self.where}: missing reason: add `# deferred: {self.suggested}`"
        if self.given not in self.gained:
            return (
                f"{self.where}: wrong reason: `{self.given}` is not something this import "
                f"loads that {self.module} has not loaded already (it defers "
                f"{self.suggested}, among {len(self.gained)} modules)"
            )
        return None


def deferrals(package: Package) -> Iterator[Deferral]:
    """Every import inside a function of the package that runs (not under TYPE_CHECKING)."""
    for name, tree in package.trees.items():
        path = package.modules[name]
        lines = path.read_text(encoding="utf-8").splitlines()
        for statement in statements(tree):
            if not statement.functions or statement.dormant:
                continue
            given = reason(lines, statement.node)
            yield Deferral(
                module=name,
                path=path.relative_to(package.root),
                statement=statement,
                gained=frozenset(package.gained(name, statement.node)),
                given=given[1] if given else None,
                suggested=package.suggest(name, statement.node),
            )


def deferral_problems(root: Path, package: str = "scs_templates") -> list[str]:
    """file:line and what is wrong, for every missing, wrong or unnecessary deferral."""
    found = Package(root, package)
    return [problem for d in deferrals(found) if (problem := d.problem()) is not None]
