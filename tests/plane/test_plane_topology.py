"""A clusterclass cluster provisioned, upgraded, changed, rebased and deleted by the REAL
Cluster API topology controller.

The test-only provider ``inmemory`` (tests/support/inmemory.py, its chart
tests/charts/inmemory-cluster,
registered in the catalogue while the module runs) renders the library chart's
``clusterclass`` template for CAPD's in-memory backend: a
ClusterClass over DevClusterTemplate / DevMachineTemplate and a ``Cluster`` with
``spec.topology``. The plane's managers run with ClusterTopology on, so the real topology
controller creates the KubeadmControlPlane, MachineDeployments and templates from the class,
and the real kubeadm and CAPD controllers provision the simulated machines. Everything goes
through ``lifecycle.install`` / ``lifecycle.delete`` with the real helm.

One cluster walks through the steps in order: Available -> a Kubernetes upgrade is a change
of ``spec.topology.version`` only and rolls every machine -> a change to one worker group is
a change of that group's variable overrides and rolls only that group -> a new release's
ClusterClass is refused until asked, then ``rebase_class`` moves the cluster onto it ->
delete removes the cluster and its class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates._core.errors import InputError
from tests.plane.test_plane_inmemory import CAPI, Walk
from tests.support import inmemory, settings_from_text

if TYPE_CHECKING:
    from testenv import Plane


FIRST, UPGRADED = "1.36.1", "1.36.4"
CLASS, NEXT_CLASS = "scs-inmemory-v0-1-0", "scs-inmemory-v9-0-0"
#: The label the topology controller puts on a worker group's objects: the group's name.
GROUP_LABEL = "topology.cluster.x-k8s.io/deployment-name"
GROUPS = {"control-plane": 1, "md-0": 1, "md-1": 1}


class TopologyWalk(Walk):
    """The module's one topology cluster; worker groups by their topology name."""

    def group(self, machine: dict[str, Any]) -> str:
        labels = machine["metadata"].get("labels", {})
        if "cluster.x-k8s.io/control-plane" in labels:
            return "control-plane"
        return str(labels.get(GROUP_LABEL, "?"))

    def group_templates(self) -> dict[str, set[tuple[str, str]]]:
        groups: dict[str, set[tuple[str, str]]] = {}
        for md in self.plane.api.list(CAPI, "MachineDeployment", self.namespace):
            spec = md["spec"]["template"]["spec"]
            refs = (spec["bootstrap"]["configRef"], spec["infrastructureRef"])
            groups[md["metadata"]["labels"][GROUP_LABEL]] = {(r["kind"], r["name"]) for r in refs}
        return groups

    def assert_templates_of_machines_exist(self) -> None:
        """Not for topology clusters: the topology controller owns and rotates the templates
        (it deletes a replaced one itself once no MachineSet uses it)."""

    def text(self, version: str, md1_labels: str = "") -> str:
        return inmemory.settings_text(
            self.namespace, version=version, md1_labels=md1_labels, template="clusterclass"
        )

    def topology(self) -> dict[str, Any]:
        cluster = self.plane.api.get(CAPI, "Cluster", self.namespace, "mem")
        assert cluster is not None
        return dict(cluster["spec"]["topology"])

    def classes(self) -> set[str]:
        return {
            c["metadata"]["name"] for c in self.plane.api.list(CAPI, "ClusterClass", self.namespace)
        }


_inmemory_provider = inmemory.registered_for_module()


@pytest.fixture(scope="module")
def walk(plane: Plane) -> TopologyWalk:
    return TopologyWalk.on(plane, "topology")


def test_install_reaches_available(walk: TopologyWalk) -> None:
    result = walk.install(walk.text(FIRST))
    assert result.cluster is not None and result.cluster.available
    assert walk.topology()["classRef"]["name"] == CLASS
    walk.wait("3 machines Running", lambda: walk.settled(GROUPS, FIRST))
    # the topology controller, not the release, created the control plane and the groups
    kcp = walk.plane.api.list(
        "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", walk.namespace
    )
    assert [k["metadata"]["labels"].get("topology.cluster.x-k8s.io/owned") for k in kcp] == [""]
    assert set(walk.group_templates()) == {"md-0", "md-1"}
    walk.passed.add("install")


def test_clusterclass_machines_get_serving_certificates(walk: TopologyWalk) -> None:
    """The approver's PROVIDER_REGEX matches the names the real topology controller (its
    KubeadmControlPlane and MachineDeployments) and the real MachineSet controller gave
    this clusterclass cluster's Machines, and nothing else in the namespace (#40)."""
    walk.after("install")
    walk.assert_approver_matches_the_machines(walk.text(FIRST))


def test_upgrade_is_a_topology_version_change(walk: TopologyWalk) -> None:
    walk.after("install")
    before, topology = set(walk.machines()), walk.topology()
    walk.install(walk.text(UPGRADED))
    after = walk.topology()
    assert after["version"] == f"v{UPGRADED}" != topology["version"]
    assert after["classRef"] == topology["classRef"]
    walk.wait("the rollout to the new patch", lambda: walk.settled(GROUPS, UPGRADED))
    assert not before & set(walk.machines()), "every machine is replaced"
    walk.passed.add("upgrade")


def test_a_group_change_is_a_variable_change_of_that_group(walk: TopologyWalk) -> None:
    walk.after("upgrade")
    before, refs, topology = walk.by_group(), walk.group_templates(), walk.topology()
    walk.install(walk.text(UPGRADED, md1_labels="scs.community/pool: blue"))
    after = walk.topology()
    assert {k: v for k, v in after.items() if k != "workers"} == {
        k: v for k, v in topology.items() if k != "workers"
    }
    old_md = {d["name"]: d for d in topology["workers"]["machineDeployments"]}
    new_md = {d["name"]: d for d in after["workers"]["machineDeployments"]}
    assert new_md["md-0"] == old_md["md-0"]
    changed = {k for k in new_md["md-1"] if new_md["md-1"][k] != old_md["md-1"][k]}
    assert changed == {"variables", "metadata"} or changed == {"variables"}, changed
    walk.wait("md-1 replaced", lambda: not (walk.by_group().get("md-1", set()) & before["md-1"]))
    walk.wait("the rollout of md-1", lambda: walk.settled(GROUPS, UPGRADED))
    now = walk.by_group()
    assert now["control-plane"] == before["control-plane"]
    assert now["md-0"] == before["md-0"]
    assert walk.group_templates()["md-0"] == refs["md-0"]
    walk.passed.add("group")


def test_a_new_class_only_when_asked(walk: TopologyWalk, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new scs-templates release (a new chart version: a new class name) is refused
    without ``rebase_class``; with it the cluster moves onto the new class and the old
    class goes with the release's previous revision."""
    walk.after("group")
    text = walk.text(UPGRADED, md1_labels="scs.community/pool: blue")
    monkeypatch.setattr(
        "scs_templates._render.values.cluster_class_name", lambda provider: NEXT_CLASS
    )
    with pytest.raises(InputError, match="--rebase-class"):
        walk.install(text)
    assert walk.topology()["classRef"]["name"] == CLASS
    assert walk.classes() == {CLASS}
    before = walk.by_group()
    result = lifecycle.install(
        settings_from_text(text),
        helm=walk.helm,
        kube=walk.kube,
        wait=True,
        timeout=inmemory.STEP_TIMEOUT,
        poll_interval=1.0,
        rebase_class=True,
    )
    assert result.cluster is not None and result.cluster.available
    assert walk.topology()["classRef"]["name"] == NEXT_CLASS
    walk.wait("the old class removed", lambda: walk.classes() == {NEXT_CLASS})
    walk.wait("settled on the new class", lambda: walk.settled(GROUPS, UPGRADED))
    # the new class renders the same templates: the rebase replaces no machine
    assert walk.by_group() == before
    walk.passed.add("rebase")


def test_delete_removes_the_cluster_and_its_class(walk: TopologyWalk) -> None:
    walk.after("install")
    lifecycle.delete(
        settings_from_text(walk.text(UPGRADED)),
        helm=walk.helm,
        kube=walk.kube,
        timeout=inmemory.STEP_TIMEOUT,
        poll_interval=1.0,
    )
    api = walk.plane.api
    left = {
        kind: [o["metadata"]["name"] for o in api.list(version, kind, walk.namespace)]
        for version, kind in (
            (CAPI, "Cluster"),
            (CAPI, "ClusterClass"),
            (CAPI, "Machine"),
            (CAPI, "MachineDeployment"),
            ("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"),
            ("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlaneTemplate"),
            ("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"),
            ("infrastructure.cluster.x-k8s.io/v1beta2", "DevCluster"),
            ("infrastructure.cluster.x-k8s.io/v1beta2", "DevClusterTemplate"),
            ("infrastructure.cluster.x-k8s.io/v1beta2", "DevMachine"),
            ("infrastructure.cluster.x-k8s.io/v1beta2", "DevMachineTemplate"),
        )
    }
    assert {k: v for k, v in left.items() if v} == {}
