"""The fast path of settings validation (``scs_templates.settings.fastpath``).

Proven here: the fast path is ON for the shipped model and schema; what it accepts, pydantic
accepts too, and the settings it builds EQUAL pydantic's (``==``, ``model_dump`` and
``model_fields_set`` at every level) for the examples, the benchmark fleet, generated valid
documents and generated near-misses (one value changed to something of another type, one
key removed or added); it switches itself off when the schema file is out of date with the
model or a model gets a validator the schema cannot express; and a valid file is loaded
without building any pydantic validator or importing ``importlib.metadata``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError, field_validator

from bench.fleetgen import fleet_settings
from scs_templates.settings import fastpath, load_settings, validate_data
from scs_templates.settings.loader import parse_yaml
from scs_templates.settings.model import ClusterSettings
from tests.support import EXAMPLES
from tests.support.strategies import settings_documents


def _pydantic(data: Any) -> ClusterSettings:
    return ClusterSettings.model_validate(data, by_alias=True, by_name=False)


def _same(fast: Any, slow: Any, where: str = "settings") -> None:
    """Equal values, types and fields_set at every level."""
    assert type(fast) is type(slow), where
    if isinstance(fast, BaseModel):
        assert fast.model_fields_set == slow.model_fields_set, where
        for name in type(fast).model_fields:
            _same(fast.__dict__[name], slow.__dict__[name], f"{where}.{name}")
    elif isinstance(fast, list):
        assert len(fast) == len(slow), where
        for index, (a, b) in enumerate(zip(fast, slow, strict=True)):
            _same(a, b, f"{where}[{index}]")
    elif isinstance(fast, dict):
        assert fast == slow and list(fast) == list(slow), where
        assert fast is not slow
    else:
        assert fast == slow, where


def _documents() -> list[dict[str, Any]]:
    examples = [parse_yaml(p.read_text(), str(p))[0] for p in EXAMPLES]
    smallest = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "x"},
    }
    return [*examples, *fleet_settings(60), smallest]


def test_fast_path_is_on() -> None:
    assert fastpath.why_disabled() is None


@pytest.mark.parametrize("index", range(len(_documents())))
def test_fast_path_builds_what_pydantic_builds(index: int) -> None:
    data = _documents()[index]
    before = copy.deepcopy(data)
    fast = fastpath.validate(data)
    assert fast is not None, "the compiled check refused a valid document"
    slow = _pydantic(data)
    assert fast == slow
    assert fast.model_dump() == slow.model_dump()
    _same(fast, slow)
    assert data == before  # the input is not changed ...
    data["metadata"]["name"] = "changed"
    assert fast.metadata.name != "changed"  # ... nor shared


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(settings_documents())
def test_fast_path_equals_pydantic_on_generated_documents(document: dict[str, Any]) -> None:
    fast = fastpath.validate(document)
    assert fast is not None
    _same(fast, _pydantic(document))


_ODD_VALUES = st.sampled_from(
    [
        None, True, False, 0, 1, 3, -1, 3.0, 1.5, 10**6, "", "x", "3", "true", "yes",
        "ÄÖ", "a\n", "abc\n", "-a", "a" * 64, "1.33.x", [], ["x"], [1], {}, {"a": 1},
        {"name": "x"},
    ]
)  # fmt: skip


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*path, index))
    return found


@st.composite
def near_misses(draw: st.DrawFn) -> dict[str, Any]:
    """A valid document with one change: a value replaced, a key removed or one added."""
    document = copy.deepcopy(draw(st.sampled_from(_documents()[:6])))
    path = draw(st.sampled_from(_paths(document)[1:]))
    *parents, last = path
    node: Any = document
    for part in parents:
        node = node[part]
    action = draw(st.sampled_from(["replace", "remove", "add"]))
    if action == "replace":
        node[last] = draw(_ODD_VALUES)
    elif action == "remove":
        del node[last]
    elif isinstance(node[last], dict):
        node[last][draw(st.sampled_from(["extra", "nameX", "replicas", "name"]))] = draw(
            _ODD_VALUES
        )
    return document


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_misses())
def test_fast_path_never_accepts_what_pydantic_refuses(document: dict[str, Any]) -> None:
    fast = fastpath.validate(document)
    try:
        slow = _pydantic(document)
    except ValidationError:
        assert fast is None, "the fast path accepted a document pydantic refuses"
        return
    if fast is not None:
        _same(fast, slow)


def test_errors_still_come_from_pydantic_with_positions(tmp_path: Path) -> None:
    from scs_templates.settings import SettingsError

    file = tmp_path / "bad.yaml"
    file.write_text(
        "apiVersion: scs-templates.scs.community/v1alpha1\nkind: ClusterSettings\n"
        "metadata:\n  name: demo\nspec:\n  provider: docker\n  controlPlane:\n    replicas: 2\n"
    )
    with pytest.raises(SettingsError) as raised:
        load_settings(file)
    assert [str(p) for p in raised.value.problems] == [
        f"{file}:8:5: spec.controlPlane.replicas: 2 is not allowed; expected 1, 3 or 5"
    ]


# --------------------------------------------------------------------------- off switches


def test_an_out_of_date_schema_file_switches_it_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = json.loads(fastpath.schema_file().read_text())
    del schema["$defs"]["WorkerGroup"]["properties"]["zone"]
    stale = tmp_path / fastpath.SCHEMA_NAME
    stale.write_text(json.dumps(schema))
    monkeypatch.setattr(fastpath, "schema_file", lambda: stale)
    fastpath._compiled.cache_clear()
    try:
        assert "out of date" in (fastpath.why_disabled() or "")
        assert fastpath.validate(_documents()[0]) is None
        assert validate_data(_documents()[0]).settings == _pydantic(_documents()[0])
    finally:
        fastpath._compiled.cache_clear()


def test_a_model_validator_switches_it_off() -> None:
    class Checked(BaseModel):
        name: str

        @field_validator("name")
        @classmethod
        def shout(cls, value: str) -> str:
            return value.upper()

    with pytest.raises(fastpath.Unsupported, match="validators"):
        fastpath._plan(Checked, {})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "number"},
        {"type": "string", "format": "uri"},
        {"type": "string", "contentEncoding": "base64"},
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        {"$ref": "#/$defs/Missing"},
    ],
)
def test_the_compiler_refuses_what_it_cannot_mirror(schema: dict[str, Any]) -> None:
    with pytest.raises(fastpath.Unsupported):
        fastpath._Compiler({"$defs": {}}).node(schema)


@pytest.mark.parametrize(
    ("schema", "value", "accepted"),
    [
        ({"type": "integer", "minimum": 1}, 1, True),
        ({"type": "integer", "minimum": 1}, True, False),  # a bool is no integer here
        ({"type": "integer"}, 3.0, False),
        ({"enum": [1, 3, 5], "type": "integer"}, True, False),
        ({"type": "string", "pattern": "^[a-z]+$"}, "abc", True),
        ({"type": "string", "pattern": "^[a-z]+$"}, "abc\n", False),  # Python's $ would match
        ({"type": "string", "pattern": "^[a-z0-9]+$"}, "\uff11\uff12", False),  # full-width digits
        ({"type": "object", "patternProperties": {"^a": {"type": "string"}}}, {"b": "x"}, False),
        ({"type": "object", "patternProperties": {"^a": {"type": "string"}}}, {"ab": "x"}, True),
        ({"type": "array", "items": {"type": "string"}, "minItems": 1}, [], False),
        ({"type": "array", "items": {"type": "string"}}, ("x",), False),  # tuples go to pydantic
    ],
)
def test_the_compiled_check_is_strict(schema: dict[str, Any], value: Any, accepted: bool) -> None:
    assert fastpath._Compiler({"$defs": {}}).node(schema)(value) is accepted


# --------------------------------------------------------------------------- what it saves


def test_the_schema_is_found_by_the_one_wheel_or_checkout_lookup() -> None:
    """scs_templates/shipped.py is the only place that knows where shipped files are (the
    wheel's ``_data`` or the checkout): the fast path's schema is found through it."""
    from scs_templates.shipped import shipped_dir
    from tests.support import REPO

    assert fastpath.schema_file() == shipped_dir("schemas", "schema") / fastpath.SCHEMA_NAME
    elsewhere = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "scs_templates").rglob("*.py"))
        if path.name != "shipped.py" and '"_data"' in path.read_text(encoding="utf-8")
    ]
    assert elsewhere == []


def test_a_pattern_is_compiled_when_a_value_is_first_checked_with_it() -> None:
    """Patterns compile on first use (fastpath._Lazy): a file sets few of the schema's
    patterns, and compiling all of them cost ~1 ms of every validate (issue #19). An
    unparsable pattern of a property the data does not set is never compiled."""
    import re

    check = fastpath.compile_check(
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "pattern": "^x+$"},
                "b": {"type": "string", "pattern": "("},
            },
            "additionalProperties": False,
        }
    )
    assert check({"a": "xx"}) is True and check({"a": "xy"}) is False
    assert check({"a": "xx\n"}) is False  # a last "$" is the end of the text, as pydantic's
    with pytest.raises(re.error):
        check({"b": "z"})
