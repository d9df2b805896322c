"""Snapshots of the rendered manifests: every template x provider x scenario.

Each case is stored as one readable YAML file under ``tests/__snapshots__/test_snapshots/``
holding the raw ``helm template`` output, so a review shows exactly which objects a change
touches. Regenerate with ``make snapshot-update`` and review the diff.

CI must fail on a missing or stale snapshot: syrupy fails a missing snapshot when it is not
updating, and reports unused snapshot files as a failure; ``--snapshot-update`` itself is
refused when ``CI=true`` (below), so CI can never rewrite the expectations it checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from scs_templates import api
from scs_templates._tools.helm import Helm
from tests.support import crd_validation, in_ci, pinned_helm, skip_or_fail
from tests.support.scenarios import CASES, settings_for

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion


class YAMLSnapshot(SingleFileSnapshotExtension):
    """One ``.yaml`` file per case with the manifests as text (diffable, reviewable)."""

    file_extension = "yaml"
    _file_extension = "yaml"  # older syrupy releases read this name
    _write_mode = WriteMode.TEXT


@pytest.fixture(scope="module")
def helm() -> Helm:
    helm: Helm = pinned_helm()
    return helm


@pytest.fixture(autouse=True)
def _no_snapshot_update_in_ci(request: pytest.FixtureRequest) -> None:
    """CI compares against the committed snapshots; it must never regenerate them."""
    if in_ci() and request.config.getoption("--snapshot-update", default=False):
        pytest.fail("--snapshot-update is not allowed in CI (CI=true): update snapshots locally")


@pytest.fixture
def snapshot_yaml(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(YAMLSnapshot)


@pytest.mark.parametrize(("template", "provider", "scenario"), CASES)
def test_rendered_manifests(
    helm: Helm, snapshot_yaml: SnapshotAssertion, template: str, provider: str, scenario: str
) -> None:
    result = api.render(settings_for(template, provider, scenario), helm=helm)
    assert result.objects, "a render without objects"
    assert result.manifests == snapshot_yaml


@pytest.mark.parametrize(("template", "provider", "scenario"), CASES)
def test_scenarios_are_crd_valid(helm: Helm, template: str, provider: str, scenario: str) -> None:
    """Every object of every scenario passes the upstream CRDs strictly (closed objects: a
    misspelled field fails instead of being pruned by the API server)."""
    reason = crd_validation.skip_or_fail_reason()
    if reason:
        skip_or_fail(reason)
    result = api.render(settings_for(template, provider, scenario), helm=helm)
    assert crd_validation.validate_all(result.objects) == []
