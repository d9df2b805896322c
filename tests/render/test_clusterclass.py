"""The clusterclass template: one ClusterClass per provider and release, a topology Cluster
per settings file, and the same settings as a classic cluster (real helm renders; the
install guard with the real helm binaries against the REAL management plane of testenv/, on
the test-only provider ``inmemory``)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import api
from scs_templates._core.errors import InputError
from scs_templates._render.charts import chart_version
from scs_templates._render.values import cluster_class_name
from scs_templates._tools.helm import Helm, HelmError
from tests.support import helm_tool

if TYPE_CHECKING:
    pass

CLASS_KINDS = {
    "ClusterClass",
    "KubeadmControlPlaneTemplate",
    "KubeadmConfigTemplate",
    "OpenStackClusterTemplate",
    "OpenStackMachineTemplate",
    "DockerClusterTemplate",
    "DockerMachineTemplate",
}


def settings(
    provider: str, *, template: str = "clusterclass", name: str = "cc", **changes: Any
) -> api.ClusterSettings:
    spec: dict[str, Any] = {
        "template": template,
        "provider": provider,
        "kubernetes": {"version": "1.35.x"},
        "controlPlane": {"replicas": 3},
        "workers": [
            {"name": "md-0", "replicas": 2, "labels": {"tier": "web"}},
            {
                "name": "gpu",
                "autoscaling": {"min": 1, "max": 4},
                "taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
            },
        ],
        "registryMirrors": [{"registry": "docker.io", "endpoints": ["https://mirror.example"]}],
        "etcd": {"quotaGiB": 4},
    }
    if provider == "openstack":
        spec["controlPlane"].update(machineType="SCS-2V-4", zones=["az1", "az2"])
        spec["workers"][0].update(machineType="SCS-4V-8", zone="az1")
        spec["workers"][1].update(machineType="SCS-8V-32-GPU")
        spec["network"] = {"apiAccess": {"mode": "cidrs", "cidrs": ["203.0.113.0/24"]}}
    spec.update(copy.deepcopy(changes))
    if provider == "openstack":
        spec["controlPlane"].setdefault("machineType", "SCS-2V-4")
        for group in spec["workers"]:
            group.setdefault("machineType", "SCS-4V-8")
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": name, "namespace": "fleet"},
        "spec": spec,
    }
    return api.validate_data(data, file=f"{name}.yaml").settings


@pytest.fixture(scope="module")
def helm() -> Helm:
    return Helm(helm_tool())


def by_kind(objects: tuple[dict[str, Any], ...]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        found.setdefault(obj["kind"], []).append(obj)
    return found


def class_documents(result: api.RenderResult) -> list[str]:
    return [
        text
        for text, obj in zip(result.documents, result.objects, strict=True)
        if obj["kind"] in CLASS_KINDS
    ]


def variables(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {entry["name"]: entry["value"] for entry in entries}


@pytest.mark.parametrize("provider", ["openstack", "docker"])
def test_class_name_carries_the_chart_version(provider: str) -> None:
    version = chart_version(f"{provider}-cluster").replace(".", "-")
    assert cluster_class_name(provider) == f"scs-{provider}-v{version}"


@pytest.mark.parametrize("provider", ["openstack", "docker"])
def test_the_class_does_not_depend_on_the_cluster(helm: Helm, provider: str) -> None:
    """Two different clusters of one provider render byte-identical class objects: ONE class
    per provider and release, whatever the settings (and the render is deterministic)."""
    first = api.render(settings(provider), helm=helm)
    other = api.render(
        settings(
            provider,
            name="other",
            controlPlane={"replicas": 1},
            workers=[{"name": "solo", "replicas": 5}],
            etcd={"unsafeFS": True, "quotaGiB": 8},
        ),
        helm=helm,
    )
    again = api.render(settings(provider), helm=helm)
    assert again.manifests == first.manifests
    assert class_documents(first) == class_documents(other)
    assert {obj["kind"] for obj in first.objects} == {
        "ClusterClass",
        "Cluster",
        "KubeadmControlPlaneTemplate",
        "KubeadmConfigTemplate",
        f"{'OpenStack' if provider == 'openstack' else 'Docker'}ClusterTemplate",
        f"{'OpenStack' if provider == 'openstack' else 'Docker'}MachineTemplate",
    }  # never a Secret: the library writes the credentials through the API, not helm


@pytest.mark.parametrize("provider", ["openstack", "docker"])
def test_topology_carries_what_the_classic_cluster_renders(helm: Helm, provider: str) -> None:
    """The same settings as multi-md and as clusterclass: every variable equals the spec of
    the classic object it replaces, and the topology says what the classic objects say."""
    classic = by_kind(api.render(settings(provider, template="multi-md"), helm=helm).objects)
    topo = by_kind(api.render(settings(provider), helm=helm).objects)
    infra = "OpenStack" if provider == "openstack" else "Docker"

    cluster = topo["Cluster"][0]
    topology = cluster["spec"]["topology"]
    assert topology["classRef"] == {"name": cluster_class_name(provider)}
    assert topo["ClusterClass"][0]["metadata"]["name"] == cluster_class_name(provider)
    assert cluster["spec"]["clusterNetwork"] == classic["Cluster"][0]["spec"]["clusterNetwork"]

    kcp = classic["KubeadmControlPlane"][0]["spec"]
    assert topology["version"] == kcp["version"]
    assert topology["controlPlane"]["replicas"] == kcp["replicas"] == 3
    cluster_vars = variables(topology["variables"])
    assert cluster_vars["controlPlane"] == {
        key: value
        for key, value in kcp.items()
        if key not in ("replicas", "version", "machineTemplate")
    }
    templates = {
        t["metadata"]["name"]: t["spec"]["template"]["spec"]
        for t in classic[f"{infra}MachineTemplate"]
    }
    cp_ref = kcp["machineTemplate"]["spec"]["infrastructureRef"]["name"]
    assert cluster_vars["controlPlaneMachine"] == templates[cp_ref]
    assert cluster_vars["infrastructureCluster"] == classic[f"{infra}Cluster"][0]["spec"]

    bootstrap = {
        t["metadata"]["name"]: t["spec"]["template"]["spec"]
        for t in classic["KubeadmConfigTemplate"]
    }
    deployments = {md["metadata"]["name"]: md for md in classic["MachineDeployment"]}
    tops = topology["workers"]["machineDeployments"]
    assert [md["name"] for md in tops] == ["md-0", "gpu"]
    for md in tops:
        assert md["class"] == "worker"
        classic_md = deployments[f"capi-cc-{md['name']}"]["spec"]
        overrides = variables(md["variables"]["overrides"])
        assert (
            overrides["workerBootstrap"]
            == bootstrap[classic_md["template"]["spec"]["bootstrap"]["configRef"]["name"]]
        )
        assert (
            overrides["workerMachine"]
            == templates[classic_md["template"]["spec"]["infrastructureRef"]["name"]]
        )
        assert md.get("replicas") == classic_md.get("replicas")
        assert md["rollout"] == classic_md["rollout"]
        if provider == "openstack" and md["name"] == "md-0":
            assert md["failureDomain"] == classic_md["template"]["spec"]["failureDomain"] == "az1"
    gpu = tops[1]
    assert "replicas" not in gpu  # autoscaled: the autoscaler owns the size
    assert gpu["metadata"]["annotations"] == {
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "4",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1",
    }
    # the class's patches cover every variable, each one selecting the template it fills
    clusterclass = topo["ClusterClass"][0]["spec"]
    patched = {
        patch["definitions"][0]["jsonPatches"][0]["valueFrom"]["variable"]
        for patch in clusterclass["patches"]
    }
    assert patched == {v["name"] for v in clusterclass["variables"]}


def test_a_kubernetes_upgrade_is_a_topology_version_change(helm: Helm) -> None:
    """Only the version and the image (in the machine variables) change: no other object."""
    old = api.render(settings("openstack"), helm=helm)
    new = api.render(settings("openstack", kubernetes={"version": "1.36.x"}), helm=helm)
    assert class_documents(old) == class_documents(new)
    old_topology = by_kind(old.objects)["Cluster"][0]["spec"]["topology"]
    new_topology = by_kind(new.objects)["Cluster"][0]["spec"]["topology"]
    assert old_topology["version"] != new_topology["version"]
    assert (
        variables(old_topology["variables"])["controlPlane"]
        == variables(new_topology["variables"])["controlPlane"]
    )
    image = variables(new_topology["variables"])["controlPlaneMachine"]["image"]["filter"]["name"]
    assert new_topology["version"] in image


# --------------------------------------------------------------------------- install guard


def test_install_moves_a_topology_cluster_onto_a_new_class_only_when_asked() -> None:
    """The guard alone (pure); the real topology controller's rebase is in
    tests/plane/test_plane_topology.py."""
    from scs_templates._lifecycle import check_class_change

    def values(template: str, name: str) -> dict[str, Any]:
        return {"cluster": {"template": template, "className": name}}

    old, new = (
        values("clusterclass", "scs-docker-v0-1-0"),
        values("clusterclass", "scs-docker-v0-2-0"),
    )
    assert check_class_change(old, old, "topo", rebase=False) is None
    with pytest.raises(InputError) as refused:
        check_class_change(old, new, "topo", rebase=False)
    message = str(refused.value)
    assert "'scs-docker-v0-1-0' to 'scs-docker-v0-2-0'" in message and "--rebase-class" in message
    assert check_class_change(old, new, "topo", rebase=True) == "scs-docker-v0-2-0"
    # classic clusters have a class name in their values too, and no class to move
    assert (
        check_class_change(values("multi-md", "a"), values("multi-md", "b"), "c", rebase=False)
        is None
    )


@pytest.mark.parametrize("provider", ["openstack", "docker"])
def test_the_class_has_a_release_of_its_own_and_the_cluster_release_not_the_class(
    provider: str, helm: Helm
) -> None:
    """Installed, a topology cluster is two releases: the class's (named after the class,
    values = its name and namespace only) and the cluster's (values ``classObjects: false``);
    rendered with the real helm they hold exactly what ``render`` prints for the cluster."""
    from scs_templates._render.charts import chart_for
    from scs_templates._render.render import split_documents
    from scs_templates._render.values import build_values
    from scs_templates._render.values.class_release import class_release_of, cluster_release_values

    cluster = settings(provider)
    rendered = api.render(cluster, helm=helm)
    values = build_values(cluster)
    shared = class_release_of(values, "cc")
    assert shared is not None
    assert (shared.release, shared.namespace) == (cluster_class_name(provider), "fleet")
    assert shared.values == {"clusterClass": {"name": shared.class_name, "namespace": "fleet"}}
    chart, version = Path(chart_for(provider).path), rendered.kube_version

    def objects(release: str, release_values: dict[str, Any]) -> list[dict[str, Any]]:
        text = helm.template(
            release, chart, namespace="fleet", values=release_values, kube_version=version
        )
        return split_documents(text)[1]

    classes = objects(shared.release, shared.values)
    own = objects("cc", cluster_release_values(values))
    assert {o["kind"] for o in classes} <= CLASS_KINDS and len(classes) == 6
    assert [o["kind"] for o in own] == ["Cluster"]
    assert sorted(classes + own, key=str) == sorted(rendered.objects, key=str)
    # a classic cluster has no class release and keeps its values
    classic = build_values(settings(provider, template="multi-md"))
    assert class_release_of(classic, "cc") is None
    assert cluster_release_values(classic) == classic
    # the class's values never carry a cluster: the chart's schema refuses them
    with pytest.raises(HelmError, match="schema"):
        objects(shared.release, {**shared.values, "cluster": values["cluster"]})


def test_a_cluster_named_like_its_class_release_is_refused() -> None:
    from scs_templates._render.values import build_values
    from scs_templates._render.values.class_release import class_release_of

    name = cluster_class_name("openstack")
    with pytest.raises(InputError, match=rf"metadata.name: '{name}' is the name of the release"):
        class_release_of(build_values(settings("openstack", name=name)), name)
