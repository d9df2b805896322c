"""The public surface is exactly the names ``scs_templates.api`` lists (#38 item 5): a name
added or dropped there is a decision this test makes visible, and each one is documented."""

from __future__ import annotations

import re

from scs_templates import api
from tests.support import REPO

PUBLIC = [
    "CloudOptions",
    "ClusterSettings",
    "DeleteIncomplete",
    "GitopsOptions",
    "InputError",
    "RenderResult",
    "ScsTemplatesError",
    "SettingsError",
    "ToolError",
    "apply_services",
    "build_values",
    "delete",
    "diff",
    "install",
    "load_settings",
    "migrate_kaas_v1",
    "parse_chart_source",
    "render",
    "render_many",
    "settings_schema",
    "status",
    "validate_data",
    "write_fleet",
    "write_gitops",
    "write_manifests",
]


def test_the_public_names_are_pinned() -> None:
    assert api.__all__ == PUBLIC


def test_the_module_shows_no_other_public_name() -> None:
    """No stray import (``annotations``, a helper module) leaks into ``dir(api)``."""
    assert sorted(name for name in dir(api) if not name.startswith("_")) == sorted(PUBLIC)


def test_star_import_gives_exactly_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from scs_templates.api import *", namespace)
    assert sorted(name for name in namespace if name != "__builtins__") == sorted(PUBLIC)


def test_every_public_name_has_its_own_docstring() -> None:
    """Its own: not inherited, not the signature a dataclass writes when there is none."""
    missing = []
    for name in PUBLIC:
        obj = getattr(api, name)
        doc = (obj.__doc__ or "").strip()
        generated = isinstance(obj, type) and doc.startswith(f"{obj.__name__}(")
        if not doc or generated:
            missing.append(name)
    assert missing == []


def test_every_public_name_has_a_section_in_library_md() -> None:
    text = (REPO / "docs" / "library.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### `api\.([A-Za-z_][A-Za-z0-9_]*)`$", text, re.M))
    assert sorted(headings) == sorted(PUBLIC)
