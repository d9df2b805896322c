"""The provider abstraction: the catalogue's providers, and nothing else asking for names."""

from __future__ import annotations

import pytest

from scs_templates._render.catalogue import catalogue
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import parse_settings_text
from scs_templates.providers import registry as providers
from tests.support import skip_or_fail

# --------------------------------------------------------------------------- a new provider


def test_a_provider_added_in_the_documented_steps_validates_renders_and_is_crd_valid() -> None:
    """docs/architecture.md's three steps, and nothing else: the test-only in-memory
    provider (tests/support/inmemory.py, tests/charts/inmemory-cluster, a catalogue row while the
    test runs) validates, renders through the library with the REAL helm, and every object
    is valid against the REAL upstream CRDs (CAPD's DevCluster/DevMachineTemplate). The
    plane tests (test_plane_inmemory, test_plane_lifecycle) install, roll and delete the
    same chart."""
    from scs_templates._lifecycle import KEPT_KINDS
    from scs_templates._render.render import render
    from tests.support import crd_validation, inmemory

    reason = crd_validation.skip_or_fail_reason()
    if reason:
        skip_or_fail(reason)
    text = inmemory.settings_text("default", version="1.36.4", provider="inmemory")
    with pytest.raises(SettingsError, match=r"spec\.provider"):
        parse_settings_text(text)  # not a provider until its catalogue row exists
    with inmemory.registered():
        settings = parse_settings_text(text).settings
        assert providers.provider_of(settings) is inmemory.INMEMORY
        assert any(row.provider == "inmemory" for row in catalogue())
        result = render(settings)
    assert "inmemory" not in providers.provider_names()
    objects = list(result.objects)
    assert sorted({str(obj["kind"]) for obj in objects}) == [
        "Cluster",
        "DevCluster",
        "DevMachineTemplate",
        "KubeadmConfigTemplate",
        "KubeadmControlPlane",
        "MachineDeployment",
        "MachineHealthCheck",
    ]
    assert crd_validation.validate_all(objects) == []
    cluster = next(obj for obj in objects if obj["kind"] == "Cluster")
    assert cluster["spec"]["infrastructureRef"]["kind"] == "DevCluster"
    # what delete removes after the Cluster: the library's kept kinds and the provider's
    assert {kind for _, kind in (*KEPT_KINDS, *inmemory.INMEMORY.machine_template_kinds)} == {
        "KubeadmConfigTemplate",
        "DevMachineTemplate",
    }


def test_the_added_providers_values_are_held_to_its_generated_schema() -> None:
    """Step 2's values model is the chart's contract: helm refuses in-memory values that
    break it (a VM start-up that is no Go duration) before anything renders."""
    from scs_templates._core.errors import ToolError
    from scs_templates._render.render import render
    from tests.support import inmemory

    text = inmemory.settings_text("default", version="1.36.4", provider="inmemory")
    with inmemory.registered(vm_startup="soon"):
        settings = parse_settings_text(text).settings
        with pytest.raises(ToolError, match=r"inMemory\.vmStartup|vmStartup"):
            render(settings)
