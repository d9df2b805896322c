"""Rollout minimality: a settings change renames exactly the templates it must.

Cluster API replaces machines when their machine or bootstrap template gets a new name, and
the charts name those templates after the hash of their rendered spec. For each change in
``bench.rollout.SCENARIOS`` (with the reason for its expected set), render before and after
and compare the ``OpenStackMachineTemplate``/``DockerMachineTemplate``/``KubeadmConfigTemplate``
names: a rename outside the expected set is SPURIOUS (machines replaced for nothing), an
expected rename that does not happen is MISSING (the change never reaches the machines).
Both must be zero. The benchmark (``make bench``) reports the same table.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.rollout import SCENARIOS, Outcome, run_scenarios
from scs_templates._core.errors import ToolNotFoundError
from scs_templates._render.render import render
from scs_templates._settings.validate import validate_data
from scs_templates._tools.toolchain.resolve import find_helm
from tests.support import skip_or_fail


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    try:
        find_helm()
    except ToolNotFoundError as error:
        skip_or_fail(f"helm is not installed (`scs-templates tools install`): {error}")

    def render_objects(documents: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [render(validate_data(d).settings).objects for d in documents]

    return run_scenarios(render_objects)


@pytest.mark.parametrize("index", range(len(SCENARIOS)), ids=[s.name for s in SCENARIOS])
def test_no_spurious_or_missing_renames(outcomes: list[Outcome], index: int) -> None:
    outcome = outcomes[index]
    assert outcome.spurious == (), f"renamed without need: {outcome.spurious}"
    assert outcome.missing == (), f"not renamed although the spec must change: {outcome.missing}"
    assert outcome.renamed == outcome.expected
