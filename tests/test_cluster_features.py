"""The operator features of issue #16, one section each: the settings' rules and what the
charts render from them (through the real pinned helm; manifests CRD-checked in
tests/test_snapshots.py)."""

from __future__ import annotations

from typing import Any

import pytest

from scs_templates import api
from scs_templates.settings import SettingsError, validate_data
from scs_templates.settings.model import ClusterSettings
from scs_templates.settings.problems import format_path
from tests.support import pinned_helm


def settings_of(spec: dict[str, Any], provider: str = "openstack") -> ClusterSettings:
    body: dict[str, Any] = {
        "provider": provider,
        "controlPlane": {"machineType": "cp"} if provider == "openstack" else {},
        "workers": [
            {"name": "w", "machineType": "w"} if provider == "openstack" else {"name": "w"}
        ],
    }
    for key, value in spec.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "feat"},
        "spec": body,
    }
    return validate_data(data, file="f.yaml").settings


def problems(spec: dict[str, Any], provider: str = "openstack") -> list[str]:
    with pytest.raises(SettingsError) as caught:
        settings_of(spec, provider)
    return [f"{format_path(p.path)}: {p.message}" for p in caught.value.problems]


@pytest.fixture(scope="module")
def helm() -> api.Helm:
    helm: api.Helm = pinned_helm()
    return helm


def kinds(result: api.RenderResult, kind: str) -> list[dict[str, Any]]:
    return [o for o in result.objects if o["kind"] == kind]


# --------------------------------------------------------------------------- rollout


def test_control_plane_max_surge_zero_needs_three_replicas() -> None:
    assert problems({"controlPlane": {"replicas": 1, "rollout": {"maxSurge": 0}}}) == [
        "spec.controlPlane.rollout.maxSurge: maxSurge 0 (delete before create) needs 3 or 5 "
        "control-plane replicas: with one, the control plane would be gone during the update"
    ]
    settings_of({"controlPlane": {"replicas": 3, "rollout": {"maxSurge": 0}}})


def test_worker_rollout_must_make_progress() -> None:
    group = {"name": "gpu", "machineType": "g", "rollout": {"maxSurge": 0}}
    assert problems({"workers": [group]}) == [
        "spec.workers[0].rollout.maxSurge: maxSurge and maxUnavailable cannot both be 0: a "
        "rolling update could never replace a machine"
    ]
    settings_of({"workers": [{**group, "rollout": {"maxSurge": 0, "maxUnavailable": 1}}]})


def test_rollout_defaults_render_what_they_rendered_before(helm: api.Helm) -> None:
    result = api.render(settings_of({}, "docker"), helm=helm)
    (kcp,) = kinds(result, "KubeadmControlPlane")
    (md,) = kinds(result, "MachineDeployment")
    assert kcp["spec"]["rollout"]["strategy"]["rollingUpdate"] == {"maxSurge": 1}
    assert "deletion" not in kcp["spec"]["machineTemplate"]["spec"]
    assert md["spec"]["rollout"]["strategy"]["rollingUpdate"] == {
        "maxSurge": 1,
        "maxUnavailable": 0,
    }
    assert "deletion" not in md["spec"]["template"]["spec"]
    checks = {o["metadata"]["name"]: o["spec"] for o in kinds(result, "MachineHealthCheck")}
    assert checks["capi-feat-control-plane"]["checks"]["nodeStartupTimeoutSeconds"] == 1200
    assert checks["capi-feat-w"]["checks"]["nodeStartupTimeoutSeconds"] == 600
    assert checks["capi-feat-w"]["remediation"]["triggerIf"] == {
        "unhealthyLessThanOrEqualTo": "40%"
    }


def test_rollout_tuning_reaches_the_objects(helm: api.Helm) -> None:
    deletion = {"nodeDrainTimeoutSeconds": 900, "nodeDeletionTimeoutSeconds": 0}
    spec = {
        "controlPlane": {"replicas": 3, "rollout": {"maxSurge": 0, "deletion": deletion}},
        "workers": [
            {
                "name": "w",
                "rollout": {"maxSurge": 0, "maxUnavailable": 2, "deletion": deletion},
                "healthCheck": {"unhealthyTimeoutSeconds": 60, "maxUnhealthyPercent": 100},
            }
        ],
    }
    result = api.render(settings_of(spec, "docker"), helm=helm)
    (kcp,) = kinds(result, "KubeadmControlPlane")
    (md,) = kinds(result, "MachineDeployment")
    assert kcp["spec"]["rollout"]["strategy"]["rollingUpdate"] == {"maxSurge": 0}
    assert kcp["spec"]["machineTemplate"]["spec"]["deletion"] == deletion
    assert md["spec"]["rollout"]["strategy"]["rollingUpdate"] == {
        "maxSurge": 0,
        "maxUnavailable": 2,
    }
    assert md["spec"]["template"]["spec"]["deletion"] == deletion
    (check,) = [o for o in kinds(result, "MachineHealthCheck") if "w" in o["metadata"]["name"][-2:]]
    assert check["spec"]["remediation"]["triggerIf"] == {"unhealthyLessThanOrEqualTo": "100%"}
    assert {c["timeoutSeconds"] for c in check["spec"]["checks"]["unhealthyNodeConditions"]} == {60}
