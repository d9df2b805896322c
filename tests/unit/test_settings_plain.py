"""The plain settings objects of the CLI's happy path (``scs_templates._settings.plain``).

Proven here: the path is ON for the shipped schema; the objects it builds equal the model
instances pydantic builds (every field, its type, ``model_fields_set``, field order) for the
examples, the benchmark fleet, every snapshot scenario and generated documents; the values
builder, the cross-field rules and the Kubernetes version give the same answers for both
(so ``render`` prints the same bytes); what it accepts, pydantic accepts; every property of
a model class exists on its plain twin; and the CLI's render and validate of a valid file
import no pydantic, while an invalid file still gets pydantic's FILE:LINE:COL errors.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from scs_templates._render.render import kube_version_of
from scs_templates._render.values import build_values
from scs_templates._settings import fastpath, plain, rules
from scs_templates._settings.keys import API_VERSION, KIND, alias_for, name_for
from scs_templates._settings.model import TEMPLATES, ClusterSettings
from scs_templates._settings.validate import load_settings
from tests.support import EXAMPLES, REPO, SHIPPED_PROVIDERS
from tests.support.scenarios import SCENARIOS, settings_for
from tests.support.strategies import settings_documents
from tests.unit.test_settings_fastpath import _documents, _pydantic, near_misses


def _model_classes() -> dict[str, type[BaseModel]]:
    """Every model class reachable from ClusterSettings, by name."""
    import typing

    from scs_templates._settings.model import nested_model

    found: dict[str, type[BaseModel]] = {}
    pending: list[type[BaseModel]] = [ClusterSettings]
    while pending:
        cls = pending.pop()
        assert found.setdefault(cls.__name__, cls) is cls, f"two classes named {cls.__name__}"
        for info in cls.model_fields.values():
            annotation = info.annotation
            while typing.get_origin(annotation) is typing.Annotated:
                annotation = typing.get_args(annotation)[0]
            for arg in (annotation, *typing.get_args(annotation)):
                nested = nested_model(arg)
                if nested is not None and nested.__name__ not in found:
                    pending.append(nested)
    return found


def _same(fast: Any, slow: Any, where: str = "settings") -> None:
    """The plain object holds what the model instance holds, at every level (its fields in
    the schema's order, which is sorted)."""
    if isinstance(slow, BaseModel):
        assert isinstance(fast, plain.PlainSettings), where
        assert type(fast).__name__ == type(slow).__name__, where
        assert set(type(fast).model_fields) == set(type(slow).model_fields), where
        assert fast.model_fields_set == slow.model_fields_set, where
        for name in type(slow).model_fields:
            _same(getattr(fast, name), slow.__dict__[name], f"{where}.{name}")
    elif isinstance(slow, list):
        assert type(fast) is list and len(fast) == len(slow), where
        for index, (a, b) in enumerate(zip(fast, slow, strict=True)):
            _same(a, b, f"{where}[{index}]")
    else:
        assert type(fast) is type(slow) and fast == slow, where
        if isinstance(slow, dict):
            assert list(fast) == list(slow), where


def _agree(data: dict[str, Any]) -> None:
    """Plain and model settings of ``data``: equal, and equal for everything render reads."""
    before = copy.deepcopy(data)
    fast = plain.validate(data)
    assert fast is not None, "the compiled check refused a valid document"
    slow = _pydantic(data)
    _same(fast, slow)
    assert json.dumps(build_values(fast)) == json.dumps(build_values(slow))  # type: ignore[arg-type]
    # the same findings; their order may differ (fields in the schema's order), the
    # problems of a SettingsError are sorted by position anyway
    for check in (rules.errors, rules.warnings):
        assert sorted(map(str, check(fast))) == sorted(map(str, check(slow)))  # type: ignore[arg-type]
    assert kube_version_of(fast) == kube_version_of(slow)  # type: ignore[arg-type]
    assert fast.name == slow.name  # type: ignore[attr-defined]
    assert data == before  # the input is not changed ...
    if isinstance(data.get("metadata"), dict):
        data["metadata"]["name"] = "changed"
        assert fast.metadata.name != "changed"  # type: ignore[attr-defined]  # ... nor shared


def _scenario_documents() -> list[dict[str, Any]]:
    return [
        settings_for(t, p, s).model_dump(mode="json", by_alias=True, exclude_unset=True)
        for t in TEMPLATES
        for p in SHIPPED_PROVIDERS
        for s in SCENARIOS
    ]


def test_plain_path_is_on() -> None:
    assert plain.why_disabled() is None


def test_name_for_reads_back_every_key_of_the_model() -> None:
    for cls in _model_classes().values():
        for name, info in cls.model_fields.items():
            assert name_for(info.alias or alias_for(name)) == name, f"{cls.__name__}.{name}"


def test_every_property_of_a_model_class_is_on_its_plain_twin() -> None:
    builder = plain._Builder(
        json.loads((REPO / "schemas/cluster-settings.schema.json").read_text())
    )
    builder.cls("#")
    twins = {cls.__name__: cls for cls in builder.classes.values()}
    for name, cls in _model_classes().items():
        own = {
            attribute
            for klass in cls.__mro__
            if klass.__module__.startswith("scs_templates.")
            for attribute, value in vars(klass).items()
            if not attribute.startswith("_")
            and (isinstance(value, property) or callable(value))
            and attribute not in cls.model_fields
        }
        missing = sorted(a for a in own if not hasattr(twins[name], a))
        assert not missing, f"{name}: {missing} (put them into settings/derived.py)"


@pytest.mark.parametrize("index", range(len(_documents())))
def test_plain_settings_agree_with_pydantic(index: int) -> None:
    _agree(_documents()[index])


def test_plain_settings_agree_on_every_snapshot_scenario() -> None:
    documents = _scenario_documents()
    assert len(documents) == len(TEMPLATES) * len(SHIPPED_PROVIDERS) * len(SCENARIOS)
    taken = 0
    for document in documents:
        if plain.validate(document) is None:
            # the check refuses more than the model: pydantic decides
            assert not fastpath.check(document)
            continue
        _agree(document)
        taken += 1
    assert taken >= len(documents) * 3 // 4


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(settings_documents())
def test_plain_settings_agree_on_generated_documents(document: dict[str, Any]) -> None:
    _agree(document)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_misses())
def test_plain_path_never_accepts_what_pydantic_refuses(document: dict[str, Any]) -> None:
    fast = plain.validate(document)
    try:
        slow = _pydantic(document)
    except ValidationError:
        assert fast is None, "the plain path accepted a document pydantic refuses"
        return
    if fast is not None:
        _same(fast, slow)


def test_the_objects_are_immutable_and_compare_by_value() -> None:
    data = _documents()[0]
    one, two = plain.validate(data), plain.validate(copy.deepcopy(data))
    assert one == two and hash(one) == hash(two) and one is not two
    with pytest.raises(AttributeError, match="immutable"):
        one.metadata.name = "x"  # type: ignore[union-attr]
    other = copy.deepcopy(data)
    other["metadata"]["name"] = "other"
    assert plain.validate(other) != one
    assert "ClusterSettings(" in repr(one)


def test_defaults_come_from_the_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A default changed in the schema file changes the plain objects: no second copy."""
    schema = json.loads((REPO / "schemas/cluster-settings.schema.json").read_text())
    schema["$defs"]["Metadata"]["properties"]["namespace"]["default"] = "elsewhere"
    changed = tmp_path / "cluster-settings.schema.json"
    changed.write_text(json.dumps(schema))
    monkeypatch.setattr(plain.fastpath, "schema_file", lambda: changed)
    plain._builder.cache_clear()
    try:
        built = plain.validate({"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "x"}})
        assert built is not None and built.metadata.namespace == "elsewhere"  # type: ignore[attr-defined]
    finally:
        plain._builder.cache_clear()


def test_an_optional_key_without_a_default_switches_it_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = json.loads((REPO / "schemas/cluster-settings.schema.json").read_text())
    del schema["$defs"]["Metadata"]["properties"]["namespace"]["default"]
    changed = tmp_path / "cluster-settings.schema.json"
    changed.write_text(json.dumps(schema))
    monkeypatch.setattr(plain.fastpath, "schema_file", lambda: changed)
    plain._builder.cache_clear()
    try:
        assert "namespace" in (plain.why_disabled() or "")
        assert plain.validate(_documents()[0]) is None  # pydantic decides then
    finally:
        plain._builder.cache_clear()


def test_load_settings_plain_keeps_warnings_and_positions(tmp_path: Path) -> None:
    for path in EXAMPLES:
        fast, slow = load_settings(path, plain=True), load_settings(path)
        assert isinstance(fast.settings, plain.PlainSettings)
        assert isinstance(slow.settings, ClusterSettings)
        assert fast.warnings == slow.warnings and fast.positions == slow.positions
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLES[0].read_text().replace("name:", "nmae:", 1))
    with pytest.raises(Exception) as plain_error:
        load_settings(bad, plain=True)
    with pytest.raises(Exception) as model_error:
        load_settings(bad)
    assert [str(p) for p in plain_error.value.problems] == [  # type: ignore[attr-defined]
        str(p)
        for p in model_error.value.problems  # type: ignore[attr-defined]
    ]
    assert str(plain_error.value.problems[0]).startswith(f"{bad}:")  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FFFF, blacklist_categories=["Cs"])))
def test_the_ascii_check_of_printable_text_matches_the_full_one(text: str) -> None:
    from scs_templates._settings import validate

    full = validate._unprintable_unicode().search(text)
    fast = validate._first_unprintable(text)
    assert (fast and (fast.start(), fast.group())) == (full and (full.start(), full.group()))
