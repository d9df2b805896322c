"""Every example and every snapshot scenario, both providers, ADMITTED by the real plane.

The rendered objects go to the real kube-apiserver as server-side dry-run creates: the API
server validates them against the real CRD schemas (pruning and all) and calls the real
Cluster API, kubeadm, CAPD and CAPO mutating and validating webhooks, exactly as an install
would, without storing anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import api
from scs_templates._settings.validate import load_settings
from scs_templates._tools.helm import Helm
from tests.support import EXAMPLES
from tests.support.scenarios import CASES, settings_for

if TYPE_CHECKING:
    from testenv import Plane


@pytest.fixture(scope="module")
def namespace(plane: Plane) -> str:
    return plane.namespace("admission")


def admit(plane: Plane, objects: tuple[dict[str, Any], ...], namespace: str) -> list[str]:
    """Dry-run create every object; the refusals, one line each."""
    from testenv import APIError

    refused = []
    for obj in objects:
        try:
            plane.api.create(
                obj | {"metadata": obj["metadata"] | {"namespace": namespace}}, dry_run=True
            )
        except APIError as error:
            refused.append(f"{obj['kind']} {obj['metadata']['name']}: {error}")
    return refused


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_is_admitted(plane: Plane, helm: Helm, namespace: str, example: Any) -> None:
    result = api.render(load_settings(example).settings, helm=helm)
    assert result.objects
    assert admit(plane, result.objects, namespace) == []


@pytest.mark.parametrize(("template", "provider", "scenario"), CASES)
def test_snapshot_scenario_is_admitted(
    plane: Plane, helm: Helm, namespace: str, template: str, provider: str, scenario: str
) -> None:
    result = api.render(settings_for(template, provider, scenario), helm=helm)
    assert admit(plane, result.objects, namespace) == []


def test_a_broken_object_is_refused_by_the_webhooks(
    plane: Plane, helm: Helm, namespace: str
) -> None:
    """The check can fail: a KubeadmControlPlane with an even number of replicas is refused
    by the real KCP webhook (etcd quorum), not by our schema."""
    docker = next(p for p in EXAMPLES if p.stem == "docker-dev")
    result = api.render(load_settings(docker).settings, helm=helm)
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    broken = kcp | {"spec": kcp["spec"] | {"replicas": 2}}
    refused = admit(plane, (broken,), namespace)
    assert len(refused) == 1
    assert "replicas" in refused[0]


def test_the_webhook_refuses_what_the_control_plane_rollout_rule_refuses(
    plane: Plane, helm: Helm, namespace: str
) -> None:
    """controlPlane.rollout.maxSurge 0 needs 3 or 5 replicas (settings rule,
    docs/cluster-features.md): the real KubeadmControlPlane webhook refuses the rendered
    object with one replica and maxSurge 0 as well (its message, Cluster API v1.14's
    kubeadmcontrolplane webhook), and admits it with three. Our rule refuses it earlier, in
    validate, naming the setting."""
    docker = next(p for p in EXAMPLES if p.stem == "docker-dev")
    result = api.render(load_settings(docker).settings, helm=helm)
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    rollout = {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}}
    spec = kcp["spec"] | {"rollout": kcp["spec"].get("rollout", {}) | rollout}
    (refused,) = admit(plane, (kcp | {"spec": spec | {"replicas": 1}},), namespace)
    assert "spec.rollout.strategy.rollingUpdate" in refused, refused
    assert "replica count needs to be at least 3" in refused, refused
    assert admit(plane, (kcp | {"spec": spec | {"replicas": 3}},), namespace) == []
