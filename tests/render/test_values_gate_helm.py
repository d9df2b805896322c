"""The values gate (``scs_templates.values.gate``): what it accepts, helm's schema accepts.

render-fleet leaves helm's values schema check out of a batch only when the gate accepted
every alias's values; so the gate must be ON for real values (else no speed-up) and must
NEVER accept values that helm's own check (gojsonschema) refuses (else a fleet would print
manifests where ``render`` fails). Proven against the ``jsonschema`` package for many
generated near-misses and against the REAL pinned helm for a sample of them and for the
cases where Python's and Go's regular expressions differ.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fleetgen import fleet_settings
from scs_templates import fleet
from scs_templates.charts import chart_for
from scs_templates.errors import ToolNotFoundError
from scs_templates.helm import Helm
from scs_templates.settings import load_settings, validate_data
from scs_templates.toolchain import find_helm
from scs_templates.values import build_values
from scs_templates.values.gate import values_gate
from tests.support import EXAMPLES, skip_or_fail

SCHEMA_FAILURE = "don't meet the specifications of the schema"


def _chart(provider: str) -> Path:
    return Path(chart_for(provider).path).resolve()


def _checked(provider: str, values: dict[str, Any]) -> dict[str, Any]:
    """What helm validates for an alias of the shared umbrella."""
    given = fleet.umbrella_values(chart_for(provider), {"c-0": values})["c-0"]
    return {**given, "global": {}}


def _real_values() -> list[tuple[str, dict[str, Any]]]:
    settings_list = [load_settings(p).settings for p in EXAMPLES]
    settings_list += [validate_data(d).settings for d in fleet_settings(40)]
    return [(s.spec.provider, _checked(s.spec.provider, build_values(s))) for s in settings_list]


REAL = _real_values()


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [path] + [p for k, v in sorted(value.items()) for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [path] + [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    return [path]


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 70000)
    | st.floats(-2.5, 1e10, allow_nan=False)
    | st.sampled_from(["", "a", "ab c", "x\n", "v1.33.1", "10.0.0.0/8", "https://a", "\u0661"]),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)


@st.composite
def near_misses(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """Real values with one to three places replaced, removed or given an extra key."""
    provider, values = draw(st.sampled_from(REAL))
    values = copy.deepcopy(values)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _leaves(values) if p]
        path = draw(st.sampled_from(paths))
        parent: Any = values
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "remove", "extra"]))
        if action == "remove" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "extra" and isinstance(parent[path[-1]], dict):
            parent[path[-1]][draw(st.sampled_from(["zz", "replicas", "name"]))] = draw(_JSON)
        else:
            parent[path[-1]] = draw(_JSON)
    return provider, values


@pytest.fixture(scope="module")
def helm_path() -> Path:
    try:
        return find_helm().path
    except ToolNotFoundError as error:
        skip_or_fail(f"helm 3 is not installed (`scs-templates tools install`): {error}")
        raise


def _helm_refuses_schema(helm: Path, provider: str, values: dict[str, Any]) -> bool:
    """True when the real helm's schema check refuses ``values`` (a plain render)."""
    chart = chart_for(provider)
    argv = [str(helm), *Helm.template_args("c", chart.path, namespace="ns", kube_version="v1.34.1")]
    done = subprocess.run(
        [*argv, "-f", "-"],
        input=json.dumps(values).encode(),
        capture_output=True,
        check=False,
        timeout=120,
    )
    return done.returncode != 0 and SCHEMA_FAILURE in done.stderr.decode()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_misses())
def test_what_the_gate_accepts_the_real_helm_accepts(
    helm_path: Path, case: tuple[str, dict[str, Any]]
) -> None:
    provider, values = case
    if values_gate(_chart(provider))(values):  # type: ignore[misc]
        assert not _helm_refuses_schema(helm_path, provider, values)


def test_helm_refuses_what_the_gate_refuses_for_clear_violations(helm_path: Path) -> None:
    """The gate is not a no-op: clear violations are refused by both (and helm words them)."""
    provider, values = next(item for item in REAL if item[0] == "openstack")
    for path, wrong in (
        (("controlPlane", "replicas"), "three"),
        (("cluster", "name"), "Not A DNS Label"),
        (("unknown",), 1),
        (("kubernetes", "version"), "v1.34.1\n"),
    ):
        broken = copy.deepcopy(values)
        parent = broken
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = wrong
        assert not values_gate(_chart(provider))(broken)  # type: ignore[misc]
        assert _helm_refuses_schema(helm_path, provider, broken)
