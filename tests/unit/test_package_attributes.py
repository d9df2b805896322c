"""Every name of the package is an ordinary attribute: no module computes one on first use.

A module-level ``__getattr__`` (PEP 562) hides where a name lives from a reader and from the
import checks (tests/support/imports.py reads imports, not calls): a caller imports a name
from the module that defines it, and a package whose submodules are heavy re-exports nothing.
"""

from __future__ import annotations

import ast

from tests.support import REPO


def _module_getattr(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in {"__getattr__", "__dir__"}:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            if any(isinstance(n, ast.Name) and n.id in {"__getattr__", "__dir__"} for n in names):
                return True
    return False


def test_no_module_computes_its_attributes() -> None:
    found = {
        path.relative_to(REPO).as_posix()
        for path in sorted((REPO / "scs_templates").rglob("*.py"))
        if _module_getattr(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert not found


def test_the_check_sees_both_forms() -> None:
    assert _module_getattr(ast.parse("def __getattr__(name): ...\n"))
    assert _module_getattr(ast.parse("__getattr__, __dir__ = exports(__name__, {})\n"))
    assert not _module_getattr(ast.parse("def getattr_of(name): ...\n"))
