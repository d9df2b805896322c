"""The check of the settings happy path (``scs_templates._settings.fastpath``).

Proven here: the committed check (``_settings/_schema_check.py``) is what fastjsonschema
generates from the model's schema today; it accepts the examples, the benchmark fleet and
generated valid documents; what it accepts, pydantic accepts (generated near-misses: one
value changed to something of another type, one key removed or added); the strictness it
adds to JSON Schema (exact types, closed objects, ASCII patterns whose ``$`` is the end);
and invalid files still get pydantic's messages with FILE:LINE:COL.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from bench.fleetgen import fleet_settings
from scs_templates._settings import fastpath
from scs_templates._settings.loader import parse_yaml
from scs_templates._settings.model import ClusterSettings, settings_model
from scs_templates._settings.validate import load_settings
from tests.support import EXAMPLES
from tests.support.strategies import settings_documents


def _pydantic(data: Any) -> ClusterSettings:
    """pydantic with the published schema's providers (what the compiled check checks)."""
    return settings_model(shipped=True).model_validate(data, by_alias=True, by_name=False)


def _documents() -> list[dict[str, Any]]:
    examples = [parse_yaml(p.read_text(), str(p))[0] for p in EXAMPLES]
    smallest = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "x"},
    }
    return [*examples, *fleet_settings(60), smallest]


def test_the_committed_check_is_the_generated_one() -> None:
    committed = fastpath.CHECK_MODULE.read_text(encoding="utf-8")
    assert committed == fastpath.check_code(), (
        "scs_templates/_settings/_schema_check.py is stale: run "
        "`python -m scs_templates._settings.fastpath --write`"
    )


@pytest.mark.parametrize("index", range(len(_documents())))
def test_the_check_accepts_every_valid_document(index: int) -> None:
    data = _documents()[index]
    before = copy.deepcopy(data)
    assert fastpath.check(data), "the compiled check refused a valid document"
    _pydantic(data)
    assert data == before  # the check fills no defaults into the input


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(settings_documents())
def test_the_check_accepts_generated_documents(document: dict[str, Any]) -> None:
    assert fastpath.check(document)


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
def test_the_check_never_accepts_what_pydantic_refuses(document: dict[str, Any]) -> None:
    accepted = fastpath.check(document)
    try:
        _pydantic(document)
    except ValidationError:
        assert not accepted, "the check accepted a document pydantic refuses"


def test_errors_still_come_from_pydantic_with_positions(tmp_path: Path) -> None:
    from scs_templates._settings.problems import SettingsError

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


# --------------------------------------------------------------------------- strictness


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "number"},
        {"type": "string", "format": "uri"},
        {"type": "string", "contentEncoding": "base64"},
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    ],
)
def test_the_generator_refuses_what_it_cannot_mirror(schema: dict[str, Any]) -> None:
    with pytest.raises(fastpath.Unsupported):
        fastpath.strict_schema(schema)


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
        ({"type": "string", "pattern": "^\\w+$"}, "\u00e4", False),  # patterns: ASCII text only
        ({"type": "string", "pattern": "^a$"}, "a", True),
        ({"type": "string", "pattern": "^-----BEGIN[\\s\\S]+END$"}, "-----BEGIN\nx\nEND", True),
        ({"type": "object", "propertyNames": {"pattern": "^a$"}}, {"a\n": "x"}, False),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, {"b": "x"}, False),
        ({"type": "object", "patternProperties": {"^a": {"type": "string"}}}, {"b": "x"}, False),
        ({"type": "object", "patternProperties": {"^a": {"type": "string"}}}, {"ab": "x"}, True),
        ({"type": "array", "items": {"type": "string"}, "minItems": 1}, [], False),
        ({"type": "array", "items": {"type": "string"}}, ("x",), False),  # tuples go to pydantic
    ],
)
def test_the_compiled_check_is_strict(schema: dict[str, Any], value: Any, accepted: bool) -> None:
    assert fastpath.compile_check(schema)(value) is accepted


# --------------------------------------------------------------------------- what it saves


def test_the_schema_is_found_by_the_one_wheel_or_checkout_lookup() -> None:
    """scs_templates/_core/shipped.py is the only place that knows where shipped files are (the
    wheel's ``_data`` or the checkout): the fast path's schema is found through it."""
    from scs_templates._core.shipped import shipped_dir
    from tests.support import REPO

    assert fastpath.schema_file() == shipped_dir("schemas", "schema") / fastpath.SCHEMA_NAME
    elsewhere = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "scs_templates").rglob("*.py"))
        if path.name != "shipped.py" and '"_data"' in path.read_text(encoding="utf-8")
    ]
    assert elsewhere == []


def test_generation_fails_when_fastjsonschema_imports_other_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The generated code's one import of fastjsonschema is replaced by fastpath.Refused (so
    render and validate never import fastjsonschema); another import must stop generation."""
    import fastjsonschema

    real = fastjsonschema.compile_to_code
    monkeypatch.setattr(
        fastjsonschema,
        "compile_to_code",
        lambda *args, **options: real(*args, **options).replace(
            fastpath._LIBRARY_IMPORT, "from fastjsonschema import JsonSchemaException\n"
        ),
    )
    with pytest.raises(fastpath.Unsupported, match="imports other names"):
        fastpath.check_code({"type": "string"})
    monkeypatch.undo()
    assert "fastjsonschema" not in fastpath.check_code({"type": "string"}).split("VERSION")[1]
