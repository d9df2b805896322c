"""No file outside scs_templates/providers/ names a provider: the providers are plug-ins, and
the rest of the package asks the provider of a settings document instead.

A file "names" a provider when its code imports a provider's package, has an identifier
containing a provider's name, or a string (not a docstring) with the name as a word (the
registry host ``docker.io`` is no provider). The files that still do are listed in
:data:`STILL_NAMING` with how often: the list only shrinks (the test fails on a new file, on
more names in a listed one, and on a listed file that no longer names one: then delete or
lower its line).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support import REPO, SHIPPED_PROVIDERS

PACKAGE = REPO / "scs_templates"
#: file -> how many places still name a provider (none left: the version updater's provider
#: sources moved into the providers' ``read_versions``).
STILL_NAMING: dict[str, int] = {}


def _names(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    names = "|".join(SHIPPED_PROVIDERS)
    word = re.compile(rf"\b({names})\b(?!\.io)", re.IGNORECASE)
    package = re.compile(rf"\.providers\.({names})\b")
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            modules = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
            )
            found += [(node.lineno, m) for m in modules if package.search(m)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and word.search(node.value):
                found.append((node.lineno, node.value[:50]))
        elif isinstance(node, ast.Name | ast.Attribute | ast.FunctionDef | ast.ClassDef):
            name = getattr(node, "id", None) or getattr(node, "attr", None) or node.name  # type: ignore[union-attr]
            if any(provider in name.lower() for provider in SHIPPED_PROVIDERS):
                found.append((node.lineno, name))
    return found


def _naming() -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if relative.startswith("scs_templates/providers/") or path.name == "_schema_check.py":
            continue
        found = _names(path)
        if found:
            counts[relative] = len(found)
    return counts


def test_no_file_outside_providers_names_a_provider_but_the_listed_ones() -> None:
    naming = _naming()
    new = {f: n for f, n in naming.items() if n > STILL_NAMING.get(f, 0)}
    assert not new, f"files that name a provider (ask the settings' provider instead): {new}"
    gone = {f: n for f, n in STILL_NAMING.items() if naming.get(f, 0) < n}
    assert not gone, f"fewer names than listed, lower STILL_NAMING: {gone} (now {naming})"


def test_the_finder_finds_each_way_of_naming(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        '"""docstrings may say openstack."""\n'
        "from scs_templates.providers.openstack import OPENSTACK\n"
        "openstack_thing = 1\n"
        'x = "needs provider docker"\n'
        'y = "docker.io/library/busybox"\n',
        encoding="utf-8",
    )
    assert [line for line, _ in _names(source)] == [2, 3, 4]
