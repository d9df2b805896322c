"""The tests' shared helpers are defined once (tests/support/__init__.py): no test module finds the
repository root again or defines a name of its own that tests.support already defines
(``REPO``, ``EXAMPLES``, ``settings_of``, ...)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tests.support import REPO

TESTS = REPO / "tests"
SUPPORT = TESTS / "support" / "__init__.py"


def _repository_roots(tree: ast.AST) -> Iterator[int]:
    """Lines computing the repository root from ``__file__``: ``Path(__file__)...parents[1]``
    or ``Path(__file__)...parent.parent``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            if node.value.attr == "parents" and _from_file(node.value.value):
                yield node.lineno
        elif isinstance(node, ast.Attribute) and node.attr == "parent":
            inner = node.value
            if (
                isinstance(inner, ast.Attribute)
                and inner.attr == "parent"
                and _from_file(inner.value)
            ):
                yield node.lineno


def _from_file(node: ast.AST) -> bool:
    """``Path(__file__)`` itself, or a method called on it (``.resolve()``)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value
    return isinstance(node, ast.Call) and any(
        isinstance(arg, ast.Name) and arg.id == "__file__" for arg in node.args
    )


def test_the_repository_root_is_found_once() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if path != SUPPORT
        for line in _repository_roots(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "import REPO from tests.support"


def test_the_root_finder_finds_both_spellings() -> None:
    support = SUPPORT.read_text(encoding="utf-8")
    assert list(_repository_roots(ast.parse(support))) != []
    tree = ast.parse(
        "ROOT = Path(__file__).resolve().parent.parent\nHERE = Path(__file__).parent\n"
    )
    assert list(_repository_roots(tree)) == [1]


def _top_level_names(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """(name, line) of every function, class and assigned name a module defines at top level."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, node.lineno
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.lineno


def _shared_names() -> set[str]:
    tree = ast.parse(SUPPORT.read_text(encoding="utf-8"))
    return {name for name, _ in _top_level_names(tree) if not name.startswith("_")}


def test_the_shared_helpers_are_defined_once() -> None:
    shared = _shared_names()
    assert {"REPO", "EXAMPLES", "settings_of", "settings_from_text"} <= shared
    found = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path in sorted(TESTS.rglob("*.py"))
        if path != SUPPORT
        for name, line in _top_level_names(ast.parse(path.read_text(encoding="utf-8")))
        if name in shared
    ]
    assert found == [], "use (or extend) the helper of tests/support/__init__.py instead of a copy"


def test_the_copy_finder_finds_a_copy() -> None:
    tree = ast.parse("REPO = 1\ndef settings_of(text): ...\nclass _X: ...\n")
    assert [name for name, _ in _top_level_names(tree) if name in _shared_names()] == [
        "REPO",
        "settings_of",
    ]
