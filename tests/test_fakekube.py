"""The FAKE Kubernetes API (a test double, not a cluster) works for helm 3, helm 4 and the
``kubernetes`` Python client: proven with a trivial chart built in tmp_path."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakekube import FakeKubeAPI
from tests.fakekube.helpers import helm_env, run_helm, write_trivial_chart
from tests.fakekube.selectors import label_matcher
from tests.support import helm_tool

pytestmark = [
    pytest.mark.fakekube,
    # the kubernetes client itself calls a deprecated urllib3 API when it raises ApiException
    pytest.mark.filterwarnings("ignore:HTTPResponse.getheaders:DeprecationWarning"),
]


@pytest.fixture
def api() -> Iterator[FakeKubeAPI]:
    with FakeKubeAPI() as fake:
        yield fake


def _get(api: FakeKubeAPI, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(api.url + path, timeout=5) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_discovery_reports_core_as_v1_and_the_capi_kinds(api: FakeKubeAPI) -> None:
    assert _get(api, "/api")[1]["versions"] == ["v1"]
    code, core = _get(api, "/api/v1")
    assert code == 200 and core["groupVersion"] == "v1"
    assert {"secrets", "namespaces", "configmaps", "events"} <= {
        r["name"] for r in core["resources"]
    }
    groups = {g["name"]: g for g in _get(api, "/apis")[1]["groups"]}
    infra = [v["version"] for v in groups["infrastructure.cluster.x-k8s.io"]["versions"]]
    assert set(infra) == {"v1beta1", "v1beta2"}
    capi = _get(api, "/apis/cluster.x-k8s.io/v1beta2")[1]
    assert capi["groupVersion"] == "cluster.x-k8s.io/v1beta2"
    kinds = {r["kind"] for r in capi["resources"] if "/" not in r["name"]}
    assert kinds == {
        "Cluster",
        "ClusterClass",
        "MachineDeployment",
        "MachineHealthCheck",
        "Machine",
        "MachineSet",
    }
    assert all(
        r["namespaced"] and "patch" in r["verbs"] for r in capi["resources"] if "/" not in r["name"]
    )
    osc = _get(api, "/apis/infrastructure.cluster.x-k8s.io/v1beta1")[1]
    assert {r["kind"] for r in osc["resources"]} >= {"OpenStackCluster", "OpenStackMachineTemplate"}
    assert _get(api, "/openapi/v3")[0] == 404


def test_not_found_and_conflict_answers_are_status_objects(api: FakeKubeAPI) -> None:
    code, body = _get(api, "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/nope")
    assert code == 404 and body["kind"] == "Status" and body["reason"] == "NotFound"
    api.add_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    request = urllib.request.Request(
        api.url + "/api/v1/namespaces/default/configmaps",
        data=json.dumps({"metadata": {"name": "a"}}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    assert caught.value.code == 409
    assert json.loads(caught.value.read())["reason"] == "AlreadyExists"
    code, listing = _get(api, "/api/v1/namespaces/default/configmaps")
    assert listing["kind"] == "ConfigMapList" and listing["apiVersion"] == "v1"
    code, body = _get(api, "/api/v1/namespaces/missing/configmaps/a")
    assert code == 404


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("owner=helm", True),
        ("owner==helm,name=r1", True),
        ("owner!=helm", False),
        ("name in (r1, r2)", True),
        ("name notin (r1)", False),
        ("status", False),
        ("!status", True),
        ("owner,name in (x,r1)", True),
    ],
)
def test_label_selectors(selector: str, expected: bool) -> None:
    assert label_matcher(selector)({"owner": "helm", "name": "r1"}) is expected


@pytest.mark.parametrize("major", [3, 4])
def test_real_helm_installs_upgrades_and_uninstalls_against_the_fake(
    api: FakeKubeAPI, tmp_path: Path, major: int
) -> None:
    tool = helm_tool(major)
    chart = write_trivial_chart(tmp_path)
    env = helm_env(tmp_path / "helm", api.write_kubeconfig(tmp_path / "kubeconfig"))
    base = ["upgrade", "--install", "r1", str(chart), "-n", "ns1", "--create-namespace"]

    run_helm(tool, base, env)
    assert [o["metadata"]["name"] for o in api.objects("Namespace")].count("ns1") == 1
    assert api.get("ConfigMap", "ns1", "r1-cm")["data"] == {"value": "one"}  # type: ignore[index]
    releases = api.objects("Secret", "ns1")
    assert [s["metadata"]["labels"]["status"] for s in releases] == ["deployed"]

    run_helm(tool, [*base, "--set", "value=two"], env)
    assert api.get("ConfigMap", "ns1", "r1-cm")["data"] == {"value": "two"}  # type: ignore[index]
    kept = sorted(o["metadata"]["name"] for o in api.objects("KubeadmConfigTemplate", "ns1"))
    assert kept == ["r1-md-one", "r1-md-two"]  # the old template is kept by helm

    cluster_before = api.get("Cluster", "ns1", "r1")
    run_helm(tool, [*base, "--set", "value=two"], env)
    listing = json.loads(run_helm(tool, ["list", "-n", "ns1", "-o", "json"], env).stdout)
    assert listing[0]["revision"] == "3" and listing[0]["status"] == "deployed"
    cluster_after = api.get("Cluster", "ns1", "r1")
    assert cluster_before is not None and cluster_after is not None
    assert cluster_after["spec"] == cluster_before["spec"]
    assert cluster_after["metadata"]["generation"] == cluster_before["metadata"]["generation"]

    run_helm(tool, ["uninstall", "r1", "-n", "ns1"], env)
    assert api.objects("ConfigMap", "ns1") == []
    assert api.objects("Cluster", "ns1") == []
    assert api.objects("Secret", "ns1") == []
    assert len(api.objects("KubeadmConfigTemplate", "ns1")) == 2  # resource-policy: keep
    if major == 4:
        assert any("protobuf" in r.content_type for r in api.requests if r.kind == "Secret")
        assert any("apply-patch" in r.content_type for r in api.requests if r.kind == "Cluster")


@pytest.mark.parametrize("major", [3, 4])
def test_failed_install_is_rolled_back(api: FakeKubeAPI, tmp_path: Path, major: int) -> None:
    tool = helm_tool(major)
    chart = write_trivial_chart(tmp_path)
    env = helm_env(tmp_path / "helm", api.write_kubeconfig(tmp_path / "kubeconfig"))
    rollback = "--atomic" if major == 3 else "--rollback-on-failure"
    base = ["upgrade", "--install", "r1", str(chart), "-n", "default", rollback, "--timeout", "20s"]
    run_helm(tool, base, env)
    # an upgrade patches: helm 3 with a merge patch, helm 4 with a server-side apply patch
    api.fail_next("patch", "Cluster", code=422, message="injected: spec.clusterNetwork invalid")
    failed = run_helm(tool, [*base, "--set", "cidr=10.0.0.0/8"], env, check=False)
    assert failed.returncode == 1
    assert "injected" in failed.stderr
    history = json.loads(
        run_helm(tool, ["history", "r1", "-n", "default", "-o", "json"], env).stdout
    )
    assert [h["status"] for h in history][-1] == "deployed"
    assert history[-1]["revision"] == 3  # 1 installed, 2 failed, 3 = rollback to 1
    cluster = api.get("Cluster", "default", "r1")
    assert cluster is not None
    assert cluster["spec"]["clusterNetwork"]["pods"]["cidrBlocks"] == ["192.168.0.0/16"]


def test_helm4_wait_uses_watch_with_initial_events_bookmark(
    api: FakeKubeAPI, tmp_path: Path
) -> None:
    tool = helm_tool(4)
    chart = write_trivial_chart(tmp_path)
    env = helm_env(tmp_path / "helm", api.write_kubeconfig(tmp_path / "kubeconfig"))
    started = time.monotonic()
    run_helm(
        tool,
        ["install", "r1", str(chart), "-n", "default", "--wait=watcher", "--timeout", "20s"],
        env,
    )
    assert time.monotonic() - started < 15
    assert any(r.verb in ("watch", "list") for r in api.requests if r.kind == "Cluster")


def test_kubernetes_client_and_test_hooks(api: FakeKubeAPI, tmp_path: Path) -> None:
    from kubernetes import client, config, watch

    kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig", contexts=("fake", "other"))
    assert kubeconfig.stat().st_mode & 0o777 == 0o600
    api_client = config.new_client_from_config(str(kubeconfig), context="other")
    custom = client.CustomObjectsApi(api_client)
    core = client.CoreV1Api(api_client)
    body = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": "c1", "labels": {"scs.community/cluster": "c1"}},
        "spec": {},
    }
    custom.create_namespaced_custom_object(
        "cluster.x-k8s.io", "v1beta2", "default", "clusters", body
    )
    api.set_status("Cluster", "default", "c1", {"phase": "Provisioned"})
    got = custom.get_namespaced_custom_object(
        "cluster.x-k8s.io", "v1beta2", "default", "clusters", "c1"
    )
    assert got["status"] == {"phase": "Provisioned"}

    events: list[str] = []

    def follow() -> None:
        stream = watch.Watch().stream(
            custom.list_namespaced_custom_object,
            "cluster.x-k8s.io",
            "v1beta2",
            "default",
            "clusters",
            timeout_seconds=3,
        )
        for event in stream:
            events.append(event["type"])
            if event["type"] == "DELETED":
                break

    watcher = threading.Thread(target=follow)
    watcher.start()
    time.sleep(0.2)
    api.delay_deletion("Cluster", gets=2)
    custom.delete_namespaced_custom_object(
        "cluster.x-k8s.io", "v1beta2", "default", "clusters", "c1"
    )
    first = custom.get_namespaced_custom_object(
        "cluster.x-k8s.io", "v1beta2", "default", "clusters", "c1"
    )
    assert "deletionTimestamp" in first["metadata"]
    custom.get_namespaced_custom_object("cluster.x-k8s.io", "v1beta2", "default", "clusters", "c1")
    with pytest.raises(client.ApiException) as gone:
        custom.get_namespaced_custom_object(
            "cluster.x-k8s.io", "v1beta2", "default", "clusters", "c1"
        )
    assert gone.value.status == 404
    watcher.join(timeout=5)
    assert events[0] == "ADDED" and events[-1] == "DELETED"

    core.create_namespaced_secret(
        "default",
        client.V1Secret(
            metadata=client.V1ObjectMeta(name="s1", labels={"scs.community/cluster": "c1"}),
            string_data={"k": "v"},
        ),
    )
    found = core.list_namespaced_secret("default", label_selector="scs.community/cluster=c1")
    assert [s.metadata.name for s in found.items] == ["s1"]
    api.fail_next("delete", "Secret", code=500)
    with pytest.raises(client.ApiException) as failed:
        core.delete_namespaced_secret("s1", "default")
    assert failed.value.status == 500
    core.delete_namespaced_secret("s1", "default")
    assert api.objects("Secret", "default") == []
    deletes = [(r.kind, r.name, r.code) for r in api.requests if r.verb == "delete"]
    assert deletes == [("Cluster", "c1", 200), ("Secret", "s1", 500), ("Secret", "s1", 200)]
