"""Readable units (#38 item 6): no function longer than 60 lines, no module longer than 500
lines unless a comment at its top says why it is one module.

Length is ``end_lineno - lineno + 1`` of the ``def`` (decorators not counted, nested
functions and methods measured on their own). Generated modules (first line ``# GENERATED``)
are not read.
"""

from __future__ import annotations

import ast

from tests.support import REPO

PACKAGE = REPO / "scs_templates"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 500


def _sources() -> list[tuple[str, str]]:
    """(path relative to the repository, text) of every hand-written module."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not text.startswith("# GENERATED"):
            found.append((path.relative_to(REPO).as_posix(), text))
    return found


def long_functions(relative: str, text: str) -> dict[str, int]:
    """ "file:function" -> length of every function in ``text`` longer than the limit."""
    return {
        f"{relative}:{node.name}": node.end_lineno - node.lineno + 1
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    }


def says_why(text: str) -> bool:
    """The module opens with a comment (before its docstring) that says why it is one."""
    return text.startswith("# ")


def test_no_function_is_longer_than_60_lines() -> None:
    found: dict[str, int] = {}
    for relative, text in _sources():
        found |= long_functions(relative, text)
    assert not found, f"functions longer than {MAX_FUNCTION_LINES} lines (split them): {found}"


def test_a_module_longer_than_500_lines_says_why_at_its_top() -> None:
    silent = [
        f"{relative} ({len(text.splitlines())} lines)"
        for relative, text in _sources()
        if len(text.splitlines()) > MAX_MODULE_LINES and not says_why(text)
    ]
    assert not silent, f"split them, or say at the top why each is one module: {silent}"


def test_the_measure_counts_the_def_to_its_last_line() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    text = f"@decorator\ndef long():\n{body}\n\ndef short():\n    pass\n"
    assert long_functions("m.py", text) == {"m.py:long": MAX_FUNCTION_LINES + 1}
    assert says_why("# One module: why.\n" + text) and not says_why('"""Doc."""\n' + text)
