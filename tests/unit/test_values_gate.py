"""The values gate (``scs_templates._render.values.gate``): what it accepts, helm's schema accepts.

render-fleet leaves helm's values schema check out of a batch only when the gate accepted
every alias's values; so the gate must be ON for real values (else no speed-up) and must
NEVER accept values that helm's own check (gojsonschema) refuses (else a fleet would print
manifests where ``render`` fails). Proven here against the ``jsonschema`` package for many
generated near-misses; against the REAL pinned helm for a sample of them in
tests/render/test_values_gate_helm.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft7Validator

from bench.fleetgen import fleet_settings
from scs_templates._render import fleet
from scs_templates._render.charts import chart_for
from scs_templates._render.values import build_values
from scs_templates._render.values.gate import (
    DRAFT_07,
    Unsupported,
    compile_gate,
    dependency_keys,
    values_gate,
)
from scs_templates._settings.validate import validate_data
from tests.support.values_gate import chart_path, near_misses, real_values

VALIDATORS = {
    p: Draft7Validator(json.loads((chart_path(p) / "values.schema.json").read_text()))
    for p in ("openstack", "docker")
}


def test_the_gate_is_on_and_accepts_every_real_cluster() -> None:
    for provider in ("openstack", "docker"):
        assert values_gate(chart_path(provider)) is not None
    for provider, values in real_values():
        assert values_gate(chart_path(provider))(values)  # type: ignore[misc]
        assert VALIDATORS[provider].is_valid(values)
    own = {
        f"c-{i}": build_values(validate_data(d).settings) for i, d in enumerate(fleet_settings(8))
    }
    openstack = {a: v for a, v in own.items() if v.get("openstack")}
    assert fleet.values_checked_by_gate(chart_for("openstack"), openstack)


def test_the_schema_is_left_out_only_for_checked_values(tmp_path: Path) -> None:
    chart = chart_for("openstack")
    checked = fleet.write_umbrella(tmp_path / "a", chart, ["c-0"], values_checked=True)
    kept = fleet.write_umbrella(tmp_path / "b", chart, ["c-0"])
    assert not (checked / "charts" / chart.name / "values.schema.json").exists()
    assert (kept / "charts" / chart.name / "values.schema.json").is_file()
    broken = build_values(validate_data(next(iter(fleet_settings(1)))).settings)
    broken["controlPlane"]["replicas"] = "three"
    assert not fleet.values_checked_by_gate(chart, {"c-0": broken})


def test_the_gate_refuses_what_it_cannot_decide() -> None:
    base = {"$schema": "http://json-schema.org/draft-07/schema#"}
    for schema in (
        {**base, "patternProperties": {"a": {}}},
        {**base, "type": "object", "format": "email"},
        {**base, "type": "array", "uniqueItems": True},
        {**base, "type": "string", "pattern": "("},
        {**base, "$ref": "#/$defs/x"},
        {"type": "object"},  # no draft-07 $schema
        {**base, "then": {}},
    ):
        with pytest.raises(Unsupported):
            compile_gate(schema)


def test_a_subcharts_values_are_left_to_helm(tmp_path: Path) -> None:
    """helm checks what a subchart's key holds against the subchart's own schema (the
    library's takes only ``global``), which the gate does not compile: the gate accepts
    there only what helm itself puts there, so it never accepts what that schema refuses."""
    for provider in ("openstack", "docker"):
        assert dependency_keys(chart_path(provider)) == {"scs-cluster-common"}
        gate = values_gate(chart_path(provider))
        values = next(v for p, v in real_values() if p == provider)
        assert gate is not None and gate(values)
        assert VALIDATORS[provider].is_valid(values)
        for wrong in ({"global": {}, "zz": None}, {"global": 1}, []):
            assert not gate({**values, "scs-cluster-common": wrong}), wrong
        assert gate({k: v for k, v in values.items() if k != "scs-cluster-common"})
    (tmp_path / "values.schema.json").write_text(json.dumps({"$schema": DRAFT_07}))
    (tmp_path / "Chart.yaml").write_text("name: c\ndependencies:\n- {name: a, alias: b}\n")
    assert dependency_keys(tmp_path) == {"b"}
    (tmp_path / "Chart.yaml").write_text("name: c\ndependencies: {name: a}\n")
    assert values_gate(tmp_path) is None  # not a chart helm would read: no gate


def test_regular_expressions_where_python_and_go_differ() -> None:
    gate = compile_gate(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "properties": {"a": {"type": "string", "pattern": "^[a-z]+$"}},
            "additionalProperties": {"type": "string", "pattern": "^\\d+$"},
        }
    )
    assert gate({"a": "abc", "b": "12"})
    assert not gate({"a": "abc\n"})  # Python's $ matches before a final newline, Go's not
    assert not gate({"b": "\u0661\u0662"})  # Arabic-Indic digits: \d in Python's Unicode mode
    assert not gate({"a": 1}) and not gate({"b": True})
    assert gate([])  # no "type": a keyword for objects says nothing about a list


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_misses())
def test_what_the_gate_accepts_jsonschema_accepts(case: tuple[str, dict[str, Any]]) -> None:
    provider, values = case
    if values_gate(chart_path(provider))(values):  # type: ignore[misc]
        assert VALIDATORS[provider].is_valid(values)
