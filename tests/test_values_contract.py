"""The cluster charts' values contract: generated from one source, and nothing unread in it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scs_templates.catalogue import PROVIDERS
from scs_templates.charts import LIBRARY_CHART, charts_dir
from scs_templates.providers import Provider
from scs_templates.values.schema import (
    COMMON_PART,
    chart_values_schema,
    schema_text,
    write_chart_schemas,
)
from tests.support import REPO

GENERATE = "python -m scs_templates.values.schema"


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
def test_chart_schema_is_generated_from_the_contract(provider: Provider) -> None:
    path = provider.chart_source(charts_dir()) / "values.schema.json"
    assert path.read_text(encoding="utf-8") == schema_text(provider), (
        f"{path.relative_to(REPO)} is stale: run `{GENERATE}` (never edit it by hand)"
    )


def test_the_generator_rewrites_a_stale_schema_and_only_that(tmp_path: Path) -> None:
    for provider in PROVIDERS:
        folder = tmp_path / provider.chart
        folder.mkdir()
        (folder / "values.schema.json").write_text(schema_text(provider), encoding="utf-8")
    stale = PROVIDERS[0].chart_source(tmp_path) / "values.schema.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert write_chart_schemas(tmp_path) == [stale]
    assert stale.read_text(encoding="utf-8") == schema_text(PROVIDERS[0])
    assert write_chart_schemas(tmp_path) == []


def _property_paths(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, str]]:
    """(dotted path, key) of every named property, through arrays and nested objects."""
    for key, sub in schema.get("properties", {}).items():
        yield f"{path}.{key}", key
        yield from _property_paths(sub, f"{path}.{key}")
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _property_paths(items, f"{path}[]")


def _template_text(provider: Provider) -> str:
    root = charts_dir()
    folders = [provider.chart_source(root), root / LIBRARY_CHART]
    return "\n".join(
        path.read_text(encoding="utf-8")
        for folder in folders
        for path in sorted((folder / "templates").rglob("*"))
        if path.is_file()
    )


# Properties whose content the charts pass on whole (toYaml), so their own keys are not
# read one by one; the framework keys helm adds itself.
_PASSED_WHOLE = (
    ".apiServer.authentication.",
    ".apiServer.audit.policy.",
    ".openstack.apiSecurityGroupRules[]",
)
_FRAMEWORK = (".global", f".{LIBRARY_CHART}")


def _unread(schema: dict[str, Any], templates: str) -> list[str]:
    return [
        path
        for path, key in _property_paths(schema)
        if path not in _FRAMEWORK
        and not path.startswith(_PASSED_WHOLE)
        and not re.search(rf"\.{re.escape(key)}\b|\"{re.escape(key)}\"", templates)
    ]


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
def test_every_value_in_the_contract_is_read_by_a_template(provider: Provider) -> None:
    unread = _unread(chart_values_schema(provider), _template_text(provider))
    assert unread == [], "values no template reads (drop them from the contract): " + ", ".join(
        unread
    )


def test_the_unread_check_finds_an_unread_value() -> None:
    schema = {"properties": {"cluster": {"properties": {"name": {}, "prefix": {}}}}}
    assert _unread(schema, "{{ .Values.cluster.name }}") == [".cluster.prefix"]


def test_providers_share_the_common_part_once() -> None:
    common = json.loads(COMMON_PART.read_text(encoding="utf-8"))
    for provider in PROVIDERS:
        schema = chart_values_schema(provider)
        for name, definition in common["definitions"].items():
            assert schema["definitions"][name] == definition
        for name, section in common["properties"].items():
            if name not in ("controlPlane", "workers", "network"):  # the provider adds keys
                assert schema["properties"][name] == section
