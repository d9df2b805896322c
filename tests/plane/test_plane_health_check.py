"""The control plane's share of unhealthy machines that stops remediation
(``controlPlane.healthCheck.maxUnhealthyPercent``), decided by the REAL Cluster API
MachineHealthCheck controller.

A cluster on CAPD's in-memory backend (tests/support/inmemory.py: the real core, kubeadm bootstrap,
kubeadm control-plane and CAPD controllers of the session's plane, simulated machines) with
one control-plane machine. The test marks that machine unhealthy the way Cluster API
documents for operators, the ``cluster.x-k8s.io/remediate-machine`` annotation (the health
check counts it as failed at once, so nothing waits for a timeout), and reads what the real
controllers decide:

- ``maxUnhealthyPercent: 0``: one unhealthy machine of one is more than 0 %, so the health
  check stops: its ``RemediationAllowed`` condition is False (``TooManyUnhealthy``) and it
  never asks the KubeadmControlPlane to remediate (no ``OwnerRemediated`` condition on the
  machine). Nothing is replaced.
- unset (the default, rendered as before: no ``remediation`` stanza, Cluster API's 100 %):
  remediation is allowed, the health check asks the owner (``OwnerRemediated`` False), and
  the KubeadmControlPlane's own rule answers: it never remediates a control plane of one
  machine (``CannotBeRemediated``). Nothing is replaced either: the last protection is
  Cluster API's, not ours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import _lifecycle as lifecycle
from tests.plane.test_plane_inmemory import Walk
from tests.support import inmemory, settings_from_text
from tests.support.inmemory import CAPI

if TYPE_CHECKING:
    from testenv import Plane


REMEDIATE = "cluster.x-k8s.io/remediate-machine"
NAME = "hc"
CONTROL_PLANE_CHECK = f"capi-{NAME}-control-plane"

_inmemory_provider = inmemory.registered_for_module()


class HealthWalk(Walk):
    """The module's one cluster: one control-plane machine, one worker."""

    def text(self, percent: int | None) -> str:
        stop = (
            "" if percent is None else f"\n    healthCheck:\n      maxUnhealthyPercent: {percent}"
        )
        return f"""apiVersion: scs-templates.scs.community/v1alpha1
kind: ClusterSettings
metadata:
  name: {NAME}
  namespace: {self.namespace}
spec:
  template: simple
  provider: inmemory
  kubernetes:
    version: 1.36.1
  controlPlane:
    replicas: 1{stop}
  workers:
    - name: md-0
      replicas: 1
"""

    def control_plane_machine(self) -> dict[str, Any]:
        (machine,) = [m for m in self.machines().values() if self.group(m) == "control-plane"]
        return machine

    def annotate(self, name: str, value: str | None) -> None:
        self.plane.api.request(
            "PATCH",
            self.plane.api.path(CAPI, "Machine", self.namespace, name),
            {"metadata": {"annotations": {REMEDIATE: value}}},
            content_type="application/merge-patch+json",
        )

    def check_condition(self, kind: str) -> dict[str, Any] | None:
        check = self.plane.api.get(CAPI, "MachineHealthCheck", self.namespace, CONTROL_PLANE_CHECK)
        assert check is not None
        return condition(check, kind)

    def machine_condition(self, kind: str) -> dict[str, Any] | None:
        return condition(self.control_plane_machine(), kind)


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The v1beta2 condition ``kind`` of an object's status, if it has one."""
    for entry in (obj.get("status") or {}).get("conditions") or []:
        if entry["type"] == kind:
            return dict(entry)
    return None


def status_of(found: dict[str, Any] | None) -> str | None:
    return None if found is None else str(found["status"])


@pytest.fixture(scope="module")
def walk(plane: Plane) -> HealthWalk:
    return HealthWalk(plane, inmemory.plane_helm(plane), plane.namespace("health"))


def test_the_control_planes_share_of_unhealthy_machines_stops_remediation(
    walk: HealthWalk,
) -> None:
    result = walk.install(walk.text(percent=0))
    assert result.cluster is not None and result.cluster.available
    check = walk.plane.api.get(CAPI, "MachineHealthCheck", walk.namespace, CONTROL_PLANE_CHECK)
    assert check is not None
    assert check["spec"]["remediation"] == {"triggerIf": {"unhealthyLessThanOrEqualTo": "0%"}}
    machine = walk.control_plane_machine()["metadata"]["name"]
    walk.annotate(machine, "")
    try:
        walk.wait(
            "the control plane's health check to stop remediation",
            lambda: (
                status_of(walk.machine_condition("HealthCheckSucceeded")) == "False"
                and status_of(walk.check_condition("RemediationAllowed")) == "False"
            ),
        )
        stopped = walk.check_condition("RemediationAllowed")
        assert stopped is not None and stopped["reason"] == "TooManyUnhealthy", stopped
        assert "(total: 1, unhealthy: 1, maxUnhealthy: 0%)" in stopped["message"], stopped
        assert walk.machine_condition("OwnerRemediated") is None, "the owner was asked"

        # the default (no stop rendered): the health check asks, KubeadmControlPlane refuses
        # (no --wait: only the MachineHealthCheck changes, and the machine stays unhealthy)
        lifecycle.install(
            settings_from_text(walk.text(percent=None)), helm=walk.helm, kube=walk.kube
        )
        check = walk.plane.api.get(CAPI, "MachineHealthCheck", walk.namespace, CONTROL_PLANE_CHECK)
        assert check is not None
        assert "remediation" not in check["spec"], check["spec"]
        walk.wait(
            "the health check to ask the KubeadmControlPlane, and its answer",
            lambda: (
                status_of(walk.check_condition("RemediationAllowed")) == "True"
                and (walk.machine_condition("OwnerRemediated") or {}).get("reason")
                == "CannotBeRemediated"
            ),
        )
        assert walk.control_plane_machine()["metadata"]["name"] == machine, "replaced"
        assert not walk.control_plane_machine()["metadata"].get("deletionTimestamp")
    finally:
        walk.annotate(machine, None)
    lifecycle.delete(
        settings_from_text(walk.text(percent=None)),
        helm=walk.helm,
        kube=walk.kube,
        timeout=inmemory.STEP_TIMEOUT,
        poll_interval=1.0,
    )
    assert walk.plane.api.list(CAPI, "Machine", walk.namespace) == []
