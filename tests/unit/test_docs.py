"""The documentation's relative links point at files that exist (anchors: at headings), the
tests it names as proof exist, and so do the modules and names of ours it names."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.support import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
#: ``tests/TIER/MODULE.py``, ``test_module.py`` (found in any tier), either with
#: ``::test_name`` (``*``: any ending).
TEST_REFERENCE = re.compile(
    r"(?<![\w/.-])(?:tests/[a-z_/0-9]+\.py|test_[a-z_0-9]+\.py)(?:::[A-Za-z_0-9]+\*?)?"
)
TEST_MODULES = {path.name: path for path in (REPO / "tests").rglob("test_*.py")}


def _anchors(path: Path) -> set[str]:
    """GitHub-style anchors of a Markdown file's headings."""
    found = set()
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            title = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
            found.add(title)
    return found


@pytest.mark.parametrize("doc", DOCS, ids=[p.name for p in DOCS])
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for target in LINK.findall(doc.read_text()):
        if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in _anchors(path)):
            broken.append(target)
    assert broken == [], f"{doc.name}: broken links {broken}"


def _missing(reference: str) -> bool:
    module, _, name = reference.partition("::")
    path = REPO / module if "/" in module else TEST_MODULES.get(module)
    if path is None or not path.is_file():
        return True
    if not name:
        return False
    pattern = re.escape(name.rstrip("*")) + (r"\w*" if name.endswith("*") else r"\b")
    return re.search(rf"^\s*(?:async )?(?:def|class) {pattern}", path.read_text(), re.M) is None


@pytest.mark.parametrize("doc", DOCS, ids=[p.name for p in DOCS])
def test_named_tests_exist(doc: Path) -> None:
    """A test named as the proof of something was moved or renamed: the docs follow (one
    proof was named in tests/render/ after its move to tests/plane/)."""
    missing = sorted({ref for ref in TEST_REFERENCE.findall(doc.read_text()) if _missing(ref)})
    assert missing == [], f"{doc.name}: tests that do not exist: {missing}"


#: ``scs_templates.MODULE.NAME`` as the docs name a module, a class or a function of ours.
CODE_REFERENCE = re.compile(r"scs_templates(?:\.[A-Za-z_][A-Za-z_0-9]*)+")


def _entry_point_groups() -> set[str]:
    from scs_templates._cli.main import COMMANDS_GROUP
    from scs_templates._clikit.arguments import CLOUD_OPTIONS_GROUP
    from scs_templates._contract.migration import GROUP as MIGRATIONS
    from scs_templates._settings.plugins import GROUP as PROVIDERS

    return {COMMANDS_GROUP, CLOUD_OPTIONS_GROUP, MIGRATIONS, PROVIDERS}


def _resolves(reference: str) -> bool:
    """The longest importable module of ``reference``, then its attributes."""
    parts = reference.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for name in parts[end:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=[p.name for p in DOCS])
def test_named_code_exists(doc: Path) -> None:
    """A module, class or function moved or renamed: the docs follow (three named names
    that had moved into modules of their provider's package)."""
    groups = _entry_point_groups()
    references = set(CODE_REFERENCE.findall(doc.read_text())) - groups
    missing = sorted(ref for ref in references if not _resolves(ref))
    assert missing == [], f"{doc.name}: names of ours that do not exist: {missing}"
