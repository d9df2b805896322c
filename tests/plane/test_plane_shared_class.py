"""One ClusterClass shared by two topology clusters of one namespace, with the REAL Cluster API
topology controller on CAPD's in-memory backend (the test-only provider of
tests/support/inmemory.py).

The class and its templates live in a release of their own (``scs-inmemory-v0-1-0``, named
after the class), installed before the clusters that use it and uninstalled only with the last
of them. In order, through ``lifecycle.install`` / ``lifecycle.delete`` with the real helm:

- a cluster installed the way an earlier scs-templates did (the class inside the cluster's
  release) hands the class over to the class's release on its next install: the same class
  object (uid), no machine replaced;
- a second cluster of the same class in the same namespace is installed and Available; the
  class release is not touched (no new revision);
- ``two`` rebased onto a new release's class (only with ``rebase_class``) leaves the old
  class to ``one``; rebased back, the new class, unused, is uninstalled; no machine replaced;
- deleting the first leaves the class (the second still uses it) and the second cluster as
  it was;
- deleting the last removes the class, its templates and its release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates._core.errors import InputError
from scs_templates._lifecycle.target import release_objects
from scs_templates._render.charts import chart_for
from scs_templates._render.values import build_values
from tests.plane.test_plane_topology import GROUPS, NEXT_CLASS, TopologyWalk
from tests.support import inmemory, settings_from_text
from tests.support.inmemory import BOOTSTRAP, CAPI, INFRA, KCP_API

if TYPE_CHECKING:
    from testenv import Plane


VERSION = "1.36.1"
CLASS = "scs-inmemory-v0-1-0"
#: The class's templates: what its release holds besides the ClusterClass.
CLASS_TEMPLATES = (
    (KCP_API, "KubeadmControlPlaneTemplate"),
    (BOOTSTRAP, "KubeadmConfigTemplate"),
    (INFRA, "DevClusterTemplate"),
    (INFRA, "DevMachineTemplate"),
)
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"


class SharedWalk(TopologyWalk):
    """Two clusters, ``one`` and ``two``, of one class in one namespace."""

    def settings(self, name: str) -> Any:
        return settings_from_text(
            inmemory.settings_text(
                self.namespace, version=VERSION, template="clusterclass", name=name
            )
        )

    def machines_of(self, cluster: str) -> set[str]:
        return {
            name
            for name, machine in self.machines().items()
            if machine["metadata"]["labels"].get(CLUSTER_NAME_LABEL) == cluster
        }

    def settled_cluster(self, cluster: str) -> bool:
        """``cluster`` has its three machines, all Running at the version."""
        machines = [
            m
            for m in self.machines().values()
            if m["metadata"]["labels"].get(CLUSTER_NAME_LABEL) == cluster
        ]
        return len(machines) == sum(GROUPS.values()) and all(
            (m.get("status") or {}).get("phase") == "Running"
            and m["spec"].get("version") == f"v{VERSION}"
            and not m["metadata"].get("deletionTimestamp")
            for m in machines
        )

    def the_class(self) -> dict[str, Any] | None:
        return self.plane.api.get(CAPI, "ClusterClass", self.namespace, CLASS)

    def available(self, cluster: str) -> bool:
        obj = self.plane.api.get(CAPI, "Cluster", self.namespace, cluster) or {}
        return any(
            c.get("type") == "Available" and c.get("status") == "True"
            for c in (obj.get("status") or {}).get("conditions") or []
        )

    def release_kinds(self, release: str) -> list[str]:
        manifest = self.helm.get_manifest(release, namespace=self.namespace)
        return sorted(str(o["kind"]) for o in release_objects(manifest))

    def install_cluster(self, name: str, **options: Any) -> lifecycle.InstallResult:
        return lifecycle.install(
            self.settings(name),
            helm=self.helm,
            kube=self.kube,
            wait=True,
            timeout=inmemory.STEP_TIMEOUT,
            poll_interval=1.0,
            **options,
        )

    def delete(self, name: str) -> lifecycle.DeleteResult:
        return lifecycle.delete(
            self.settings(name),
            helm=self.helm,
            kube=self.kube,
            timeout=inmemory.STEP_TIMEOUT,
            poll_interval=1.0,
        )


_inmemory_provider = inmemory.registered_for_module()


@pytest.fixture(scope="module")
def walk(plane: Plane) -> SharedWalk:
    return SharedWalk.on(plane, "shared-class")


def test_a_cluster_of_an_earlier_release_hands_its_class_over(walk: SharedWalk) -> None:
    settings = walk.settings("one")
    # what an earlier scs-templates installed: the class inside the cluster's release
    lifecycle.ensure_release_secrets(walk.kube, settings)
    chart = chart_for("inmemory")
    walk.helm.upgrade_install(
        "one", chart.path, namespace=walk.namespace, values=build_values(settings)
    )
    assert "ClusterClass" in walk.release_kinds("one")
    walk.wait("one Available", lambda: walk.available("one"))
    walk.wait("one's machines Running", lambda: walk.settled_cluster("one"))
    uid, machines = (walk.the_class() or {})["metadata"]["uid"], walk.machines_of("one")

    result = lifecycle.install(
        settings, helm=walk.helm, kube=walk.kube, wait=True, timeout=inmemory.STEP_TIMEOUT
    )
    assert result.cluster is not None and result.cluster.available
    assert walk.release_kinds("one") == ["Cluster"]
    assert walk.release_kinds(CLASS) == sorted(
        ["ClusterClass", *(kind for _, kind in CLASS_TEMPLATES), "DevMachineTemplate"]
    )
    found = walk.the_class() or {}
    annotations = found["metadata"].get("annotations") or {}
    assert found["metadata"]["uid"] == uid, "the class was handed over, not replaced"
    assert annotations.get("meta.helm.sh/release-name") == CLASS
    assert lifecycle.KEEP_ANNOTATION not in annotations
    # the class's templates handed over too, none kept (the topology controller's clones
    # of them copy their metadata, but no release holds a clone)
    manifest = walk.helm.get_manifest(CLASS, namespace=walk.namespace)
    for obj in release_objects(manifest):
        live = walk.plane.api.get(
            obj["apiVersion"], obj["kind"], walk.namespace, obj["metadata"]["name"]
        )
        live_annotations = (live or {})["metadata"].get("annotations") or {}
        assert live_annotations.get("meta.helm.sh/release-name") == CLASS, obj["metadata"]
        assert lifecycle.KEEP_ANNOTATION not in live_annotations
    assert walk.machines_of("one") == machines
    walk.passed.add("handover")


def test_a_second_cluster_of_the_namespace_shares_the_class(walk: SharedWalk) -> None:
    walk.after("handover")
    revision = walk.helm.status(CLASS, namespace=walk.namespace)
    assert revision is not None
    machines = walk.machines_of("one")
    result = lifecycle.install(
        walk.settings("two"),
        helm=walk.helm,
        kube=walk.kube,
        wait=True,
        timeout=inmemory.STEP_TIMEOUT,
    )
    assert result.cluster is not None and result.cluster.available
    walk.wait("two's machines Running", lambda: walk.settled_cluster("two"))
    after = walk.helm.status(CLASS, namespace=walk.namespace)
    assert after is not None and after.revision == revision.revision  # not touched
    assert lifecycle.class_users(walk.kube, walk.namespace, CLASS) == ["one", "two"]
    assert walk.classes() == {CLASS}
    assert walk.machines_of("one") == machines
    walk.passed.add("second")


def test_a_rebase_keeps_the_class_another_cluster_uses(
    walk: SharedWalk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``two`` rebased onto a new release's class (only when asked): the new class's release
    is installed, the old class stays for ``one`` (the note says so); rebased back, the new
    class, now unused, is uninstalled. No machine of either cluster is replaced."""
    walk.after("second")
    machines = {name: walk.machines_of(name) for name in ("one", "two")}
    monkeypatch.setattr(
        "scs_templates._render.values.cluster_class_name", lambda provider: NEXT_CLASS
    )
    with pytest.raises(InputError, match="--rebase-class"):
        walk.install_cluster("two")
    said: list[str] = []
    result = walk.install_cluster("two", rebase_class=True, progress=said.append)
    assert result.cluster is not None and result.cluster.available
    assert f"ClusterClass {walk.namespace}/{CLASS} kept: used by one" in said
    assert walk.classes() == {CLASS, NEXT_CLASS}
    assert lifecycle.class_users(walk.kube, walk.namespace, NEXT_CLASS) == ["two"]
    assert lifecycle.class_users(walk.kube, walk.namespace, CLASS) == ["one"]
    assert walk.helm.status(CLASS, namespace=walk.namespace) is not None
    assert walk.release_kinds("two") == ["Cluster"]
    walk.wait("two settled on the new class", lambda: walk.settled_cluster("two"))

    monkeypatch.undo()
    said.clear()
    result = walk.install_cluster("two", rebase_class=True, progress=said.append)
    assert result.cluster is not None and result.cluster.available
    assert not any("kept: used by" in line for line in said)
    assert walk.helm.status(NEXT_CLASS, namespace=walk.namespace) is None
    walk.wait("the unused class removed", lambda: walk.classes() == {CLASS})
    assert lifecycle.class_users(walk.kube, walk.namespace, CLASS) == ["one", "two"]
    walk.wait("two settled on the old class", lambda: walk.settled_cluster("two"))
    # the two classes render the same templates: neither rebase replaced a machine
    assert {name: walk.machines_of(name) for name in ("one", "two")} == machines
    walk.passed.add("rebased")


def test_deleting_one_cluster_keeps_the_class_the_other_uses(walk: SharedWalk) -> None:
    walk.after("rebased")
    machines = walk.machines_of("two")
    result = walk.delete("one")
    assert result.cluster_deleted
    assert f"ClusterClass {walk.namespace}/{CLASS} kept: used by two" in result.notes
    assert not any(CLASS in r for r in result.removed)
    assert walk.plane.api.get(CAPI, "Cluster", walk.namespace, "one") is None
    assert walk.classes() == {CLASS}
    assert walk.helm.status(CLASS, namespace=walk.namespace) is not None
    assert walk.available("two") and walk.machines_of("two") == machines
    assert walk.settled_cluster("two")
    walk.passed.add("first deleted")


def test_deleting_the_last_cluster_removes_the_class(walk: SharedWalk) -> None:
    walk.after("first deleted")
    result = walk.delete("two")
    assert f"release {CLASS} (ClusterClass {CLASS})" in result.removed
    assert walk.helm.status(CLASS, namespace=walk.namespace) is None
    api = walk.plane.api
    walk.wait("the class and its templates gone", lambda: not walk.classes())
    left = {
        kind: [o["metadata"]["name"] for o in api.list(version, kind, walk.namespace)]
        for version, kind in ((CAPI, "Cluster"), (CAPI, "Machine"), *CLASS_TEMPLATES)
    }
    assert {k: v for k, v in left.items() if v} == {}
    assert api.get(CAPI, "ClusterClass", walk.namespace, CLASS) is None
