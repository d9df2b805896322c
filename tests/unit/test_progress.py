"""The progress callback has one home, ``scs_templates._core.progress``: every layer that
reports progress speaks the same type and uses the same silent default, instead of each
module spelling its own ``Callable[[str], None]`` and no-op function."""

from __future__ import annotations

import ast

from tests.support import REPO

HOME = REPO / "scs_templates" / "_core" / "progress.py"


def _copies() -> list[str]:
    found = []
    for path in sorted((REPO / "scs_templates").rglob("*.py")):
        if path == HOME:
            continue
        where = path.relative_to(REPO)
        text = path.read_text(encoding="utf-8")
        if "Callable[[str], None]" in text:
            found.append(f"{where}: spells Callable[[str], None]")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") == "quiet":
                found.append(f"{where}:{node.lineno}: defines {node.name}()")
    return found


def test_the_progress_type_and_the_silent_callback_are_defined_once() -> None:
    assert not _copies(), "use scs_templates._core.progress:\n" + "\n".join(_copies())
