"""The values gate's inputs (tests/unit/test_values_gate.py against ``jsonschema``,
tests/render/test_values_gate_helm.py against the real helm): the real values of the examples
and a generated fleet, and near-misses generated from them."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from bench.fleetgen import fleet_settings
from scs_templates._render import fleet
from scs_templates._render.charts import chart_for
from scs_templates._render.values import build_values
from scs_templates._settings.validate import load_settings, validate_data
from tests.support import EXAMPLES


def chart_path(provider: str) -> Path:
    """The directory of ``provider``'s chart."""
    return Path(chart_for(provider).path).resolve()


def _checked(provider: str, values: dict[str, Any]) -> dict[str, Any]:
    """What helm validates for an alias of the shared umbrella."""
    given = fleet.umbrella_values(chart_for(provider), {"c-0": values})["c-0"]
    return {**given, "global": {}}


@functools.cache
def real_values() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(provider, values as helm checks them) of the examples and a fleet of 40 (built once;
    copy before changing one)."""
    settings_list = [load_settings(p).settings for p in EXAMPLES]
    settings_list += [validate_data(d).settings for d in fleet_settings(40)]
    return tuple(
        (s.spec.provider, _checked(s.spec.provider, build_values(s))) for s in settings_list
    )


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
    provider, values = draw(st.sampled_from(real_values()))
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
