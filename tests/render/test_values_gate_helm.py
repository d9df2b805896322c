"""The values gate (``scs_templates._render.values.gate``): what it accepts, helm's schema accepts.

render-fleet leaves helm's values schema check out of a batch only when the gate accepted
every alias's values; so the gate must be ON for real values (else no speed-up) and must
NEVER accept values that helm's own check (gojsonschema) refuses (else a fleet would print
manifests where ``render`` fails). Proven here against the REAL pinned helm for a sample of
generated near-misses and for clear violations; against the ``jsonschema`` package for many
more in tests/unit/test_values_gate.py.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from scs_templates._render.charts import chart_for
from scs_templates._render.values.gate import values_gate
from scs_templates._tools.helm import Helm
from tests.support.values_gate import chart_path, near_misses, real_values

SCHEMA_FAILURE = "don't meet the specifications of the schema"


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
    if values_gate(chart_path(provider))(values):  # type: ignore[misc]
        assert not _helm_refuses_schema(helm_path, provider, values)


def test_helm_refuses_what_the_gate_refuses_for_clear_violations(helm_path: Path) -> None:
    """The gate is not a no-op: clear violations are refused by both (and helm words them)."""
    provider, values = next(item for item in real_values() if item[0] == "openstack")
    for path, wrong in (
        (("controlPlane", "replicas"), "three"),
        (("cluster", "name"), "Not A DNS Label"),
        (("unknown",), 1),
        (("kubernetes", "version"), "v1.34.1\n"),
        (("scs-cluster-common", "zz"), None),  # the library's own schema takes only global
    ):
        broken = copy.deepcopy(values)
        parent = broken
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = wrong
        assert not values_gate(chart_path(provider))(broken)  # type: ignore[misc]
        assert _helm_refuses_schema(helm_path, provider, broken)
