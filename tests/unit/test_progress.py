"""The progress callback has one home, ``scs_templates._core.progress``: every layer that
reports progress speaks the same type and uses the same silent default, instead of each
module spelling its own ``Callable[[str], None]`` and no-op function."""

from __future__ import annotations

import ast

from tests.support import REPO
from tests.support.imports import package_modules

HOME = "scs_templates._core.progress"


def _is_silent_lambda(node: ast.AST) -> bool:
    """``lambda _: None``: a no-op progress callback written in place."""
    return (
        isinstance(node, ast.Lambda)
        and len(node.args.args) == 1
        and isinstance(node.body, ast.Constant)
        and node.body.value is None
    )


def _copies() -> list[str]:
    found = []
    for name, path in package_modules(REPO).items():
        if name == HOME:
            continue
        where = path.relative_to(REPO)
        text = path.read_text(encoding="utf-8")
        if "Callable[[str], None]" in text:
            found.append(f"{where}: spells Callable[[str], None]")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") == "quiet":
                found.append(f"{where}:{node.lineno}: defines {node.name}()")
            elif _is_silent_lambda(node):
                found.append(f"{where}:{getattr(node, 'lineno', 0)}: a silent lambda")
    return found


def test_the_progress_type_and_the_silent_callback_are_defined_once() -> None:
    copies = _copies()
    assert not copies, "use scs_templates._core.progress:\n" + "\n".join(copies)
