"""The documentation's relative links point at files that exist (anchors: at headings)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


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
