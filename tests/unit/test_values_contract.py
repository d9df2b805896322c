"""The cluster charts' values contract: typed models (scs_templates/_contract/model.py and each
provider's part), generated into every chart's schema, and nothing unread in it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import pytest

from scs_templates._contract.contract import OPEN, Also, Definition, S, json_schema
from scs_templates._render.charts import LIBRARY_CHART, charts_dir
from scs_templates._render.values.schema import (
    chart_values_schema,
    common_schema,
    schema_text,
    write_chart_schemas,
)
from scs_templates.providers.interface import Provider
from scs_templates.providers.registry import shipped_providers
from tests.support import REPO
from tests.support.inmemory import INMEMORY, SCHEMA

GENERATE = "python -m scs_templates._render.values.schema"


@pytest.mark.parametrize("provider", shipped_providers(), ids=lambda p: p.name)
def test_chart_schema_is_generated_from_the_contract(provider: Provider) -> None:
    path = provider.chart_source(charts_dir()) / "values.schema.json"
    assert path.read_text(encoding="utf-8") == schema_text(provider), (
        f"{path.relative_to(REPO)} is stale: run `{GENERATE}` (never edit it by hand)"
    )


def test_the_test_only_providers_schema_is_generated_from_its_models() -> None:
    """The in-memory provider (tests/support/inmemory.py) has its values part like a shipped one."""
    assert SCHEMA.read_text(encoding="utf-8") == schema_text(INMEMORY), (
        f"{SCHEMA.relative_to(REPO)} is stale: "
        "write schema_text(tests.support.inmemory.INMEMORY) to it"
    )
    schema = chart_values_schema(INMEMORY)
    assert "inMemory" in schema["else"]["required"]
    section = schema["properties"]["inMemory"]
    assert (section["required"], section["additionalProperties"]) == (["vmStartup"], False)


def test_the_generator_rewrites_a_stale_schema_and_only_that(tmp_path: Path) -> None:
    for provider in shipped_providers():
        folder = tmp_path / provider.chart
        folder.mkdir()
        (folder / "values.schema.json").write_text(schema_text(provider), encoding="utf-8")
    stale = shipped_providers()[0].chart_source(tmp_path) / "values.schema.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert write_chart_schemas(tmp_path) == [stale]
    assert stale.read_text(encoding="utf-8") == schema_text(shipped_providers()[0])
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


# the shipped charts only: the test-only in-memory chart takes the docker provider's values
# as they are (its Chart.yaml), and its simulated machines boot no image (controlPlane.image
# and workers[].image are unread there)
@pytest.mark.parametrize("provider", shipped_providers(), ids=lambda p: p.name)
def test_every_value_in_the_contract_is_read_by_a_template(provider: Provider) -> None:
    unread = _unread(chart_values_schema(provider), _template_text(provider))
    assert unread == [], "values no template reads (drop them from the contract): " + ", ".join(
        unread
    )


def test_the_unread_check_finds_an_unread_value() -> None:
    schema = {"properties": {"cluster": {"properties": {"name": {}, "prefix": {}}}}}
    assert _unread(schema, "{{ .Values.cluster.name }}") == [".cluster.prefix"]


def test_providers_share_the_common_part_once() -> None:
    common = common_schema()
    for provider in shipped_providers():
        schema = chart_values_schema(provider)
        for name, definition in common["definitions"].items():
            assert schema["definitions"][name] == definition
        for name, section in common["properties"].items():
            if name not in ("controlPlane", "workers", "network"):  # the provider adds keys
                assert schema["properties"][name] == section


# --------------------------------------------------------------------------- the typed models


class _Inner(TypedDict):
    """Schema: an object with a description"""

    size: Annotated[int, S(minimum=1)]
    note: NotRequired[str]


_Shared = Annotated[str, S(pattern="^[a-z]+$"), Definition("shared")]


class _Outer(TypedDict):
    inner: _Inner
    shared: Annotated[_Shared, S(description="used here")]
    tighter: Annotated[_Shared, Also({"maxLength": 3})]
    choice: Literal["a", "b"]
    fixed: Literal["x"]
    document: Annotated[_Inner, OPEN]
    names: list[_Shared]
    labels: dict[str, str]
    anything: NotRequired[Any]


def test_a_model_says_what_its_schema_says() -> None:
    definitions: dict[str, Any] = {}
    schema = json_schema(_Outer, definitions)
    inner = {
        "description": "an object with a description",
        "type": "object",
        "required": ["size"],
        "additionalProperties": False,
        "properties": {"size": {"type": "integer", "minimum": 1}, "note": {"type": "string"}},
    }
    assert definitions == {"shared": {"type": "string", "pattern": "^[a-z]+$"}}
    ref = {"$ref": "#/definitions/shared"}
    assert schema == {
        "type": "object",
        # NotRequired is found although the module's annotations are strings (Python 3.11)
        "required": [
            "inner",
            "shared",
            "tighter",
            "choice",
            "fixed",
            "document",
            "names",
            "labels",
        ],
        "additionalProperties": False,
        "properties": {
            "inner": inner,
            # the definition's own keywords stay in the definition, the use's stay here
            "shared": {**ref, "description": "used here"},
            "tighter": {"allOf": [ref, {"maxLength": 3}]},
            "choice": {"enum": ["a", "b"]},
            "fixed": {"const": "x"},
            "document": {
                key: value for key, value in inner.items() if key != "additionalProperties"
            },
            "names": {"type": "array", "items": ref},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "anything": {},
        },
    }


def test_a_model_with_a_union_is_refused() -> None:
    class Loose(TypedDict):
        value: int | str

    with pytest.raises(TypeError, match="no unions"):
        json_schema(Loose, {})


def test_the_providers_part_is_typed_models() -> None:
    """The OpenStack chart's keys come from its models, the common ones from ClusterValues."""
    from scs_templates.providers.openstack.provider import OPENSTACK
    from scs_templates.providers.openstack.values_model import OpenStackWorkerKeys

    schema = chart_values_schema(OPENSTACK)
    worker = schema["properties"]["workers"]["items"]
    assert set(OpenStackWorkerKeys.__annotations__) <= set(worker["properties"])
    assert set(OpenStackWorkerKeys.__annotations__) <= set(worker["required"])
    assert "openstack" in schema["properties"]
    assert "openstack" in schema["else"]["required"]
