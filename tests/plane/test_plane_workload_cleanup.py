"""Step (a) of delete against a REAL kube-apiserver standing in as the workload cluster.

testenv's ``extra_apiserver``: a real kube-apiserver of its own (empty, real admission: it
adds the PVC/PV protection finalizers itself), with the real Gateway API CRDs from the
upstream chart in ../shared/charts. What runs in a workload cluster and is not here, the test
does in :class:`CloudControllers`, named for what it plays: OCCM removing a LoadBalancer
Service's cleanup finalizer once "its load balancer" is deleted (after a delay, so the wait
is real), the PVC protection controller, and the CSI provisioner deleting a released volume's
PersistentVolume.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scs_templates._core.errors import ToolError
from scs_templates._lifecycle.workload_cleanup import LB_CLEANUP_FINALIZER, clean_workload
from scs_templates._tools.kube import KubeClient
from tests.support import REPO, pinned_helm, skip_or_fail

if TYPE_CHECKING:
    from testenv import KubeAPI, Plane


GATEWAY_CRDS = REPO.parent / "shared" / "charts" / "gateway-crds-helm-v1.9.0.tgz"
GATEWAY = "gateway.networking.k8s.io/v1"
OCCM_DELAY = 2.0


def _gateway_crds() -> list[dict[str, Any]]:
    """The real Gateway and GatewayClass CRDs, rendered by the pinned helm from the upstream
    chart."""
    if not GATEWAY_CRDS.exists():
        skip_or_fail(f"{GATEWAY_CRDS} is missing (shared/ reference charts)")
    helm = pinned_helm()
    done = subprocess.run(
        [
            str(helm.tool.path),
            "template",
            "crds",
            str(GATEWAY_CRDS),
            "--set",
            "crds.gatewayAPI.enabled=true",
            "--set",
            "crds.gatewayAPI.channel=standard",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=helm.environment(),
    )
    assert done.returncode == 0, done.stderr
    wanted = {"gateways.gateway.networking.k8s.io", "gatewayclasses.gateway.networking.k8s.io"}
    found = [
        doc
        for doc in yaml.safe_load_all(done.stdout)
        if isinstance(doc, dict) and doc.get("metadata", {}).get("name") in wanted
    ]
    assert {d["metadata"]["name"] for d in found} == wanted
    return found


@pytest.fixture(scope="module")
def plane(api_plane: Plane) -> Plane:
    """Without the Cluster API managers (conftest's api_plane): these tests start their own
    API servers."""
    return api_plane


@pytest.fixture
def workload(plane: Plane, tmp_path: Path) -> Iterator[tuple[KubeAPI, KubeClient]]:
    from testenv.plane import extra_apiserver

    with extra_apiserver(plane, f"workload-{secrets.token_hex(3)}", ()) as api:
        for crd in _gateway_crds():
            api.apply(crd)
        config = json.loads(plane.kubeconfig.read_text())
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{api.port}"
        path = tmp_path / "workload.kubeconfig"
        path.write_text(json.dumps(config))
        path.chmod(0o600)
        deadline = time.monotonic() + 60
        while True:  # the CRDs established and served
            try:
                api.resource(GATEWAY, "Gateway", refresh=True)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        with KubeClient(str(path)) as client:
            yield api, client


def _populate(api: KubeAPI) -> None:
    """Two apps' objects: what step (a) deletes and what it must leave alone."""
    for namespace in ("shop", "data"):
        api.ensure_namespace(namespace)
    api.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "shop", "finalizers": [LB_CLEANUP_FINALIZER]},
            "spec": {"type": "LoadBalancer", "ports": [{"port": 80}], "selector": {"a": "b"}},
        }
    )
    api.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "internal", "namespace": "shop"},
            "spec": {"type": "ClusterIP", "ports": [{"port": 80}], "selector": {"a": "b"}},
        }
    )
    api.create(
        {
            "apiVersion": GATEWAY,
            "kind": "GatewayClass",
            "metadata": {"name": "envoy"},
            "spec": {"controllerName": "example.com/gateway-controller"},
        }
    )
    api.create(
        {
            "apiVersion": GATEWAY,
            "kind": "Gateway",
            "metadata": {"name": "edge", "namespace": "shop"},
            "spec": {
                "gatewayClassName": "envoy",
                "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}],
            },
        }
    )
    api.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-db"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Delete",
                "claimRef": {"namespace": "data", "name": "db"},
                "csi": {"driver": "cinder.csi.openstack.org", "volumeHandle": "vol-0001"},
            },
        }
    )
    api.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "db", "namespace": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "volumeName": "pv-db",
                "storageClassName": "",
            },
        }
    )


class CloudControllers:
    """Plays what the workload cluster runs (this test's double, see the module docstring):
    OCCM, the PVC protection controller and the CSI provisioner, through the real API."""

    def __init__(self, api: KubeAPI) -> None:
        self.api = api
        self.stop = threading.Event()
        self.occm_released: float | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CloudControllers:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)

    def _unfinalize(self, obj: dict[str, Any]) -> None:
        self.api.request(
            "PATCH",
            self.api.object_path(obj),
            {"metadata": {"finalizers": None}},
            content_type="application/merge-patch+json",
        )

    def _run(self) -> None:
        seen: dict[str, float] = {}
        while not self.stop.wait(0.2):
            for svc in self.api.list("v1", "Service"):
                meta = svc["metadata"]
                if meta.get("deletionTimestamp") and meta.get("finalizers"):
                    first = seen.setdefault(meta["uid"], time.monotonic())
                    if time.monotonic() - first >= OCCM_DELAY:  # "its load balancer is gone"
                        self._unfinalize(svc | {"apiVersion": "v1", "kind": "Service"})
                        self.occm_released = time.monotonic()
            claims = {
                (c["metadata"]["namespace"], c["metadata"]["name"])
                for c in self.api.list("v1", "PersistentVolumeClaim")
            }
            for pvc in self.api.list("v1", "PersistentVolumeClaim"):
                if pvc["metadata"].get("deletionTimestamp"):
                    self._unfinalize(pvc | {"apiVersion": "v1", "kind": "PersistentVolumeClaim"})
            for pv in self.api.list("v1", "PersistentVolume"):
                ref = pv["spec"].get("claimRef") or {}
                if (ref.get("namespace"), ref.get("name")) not in claims:  # released: CSI
                    obj = pv | {"apiVersion": "v1", "kind": "PersistentVolume"}
                    self.api.delete("v1", "PersistentVolume", "", pv["metadata"]["name"])
                    if self.api.get("v1", "PersistentVolume", "", pv["metadata"]["name"]):
                        self._unfinalize(obj)


def _names(api: KubeAPI) -> set[str]:
    found = set()
    for api_version, kind in (
        ("v1", "Service"),
        ("v1", "PersistentVolumeClaim"),
        ("v1", "PersistentVolume"),
        (GATEWAY, "Gateway"),
    ):
        for obj in api.list(api_version, kind):
            meta = obj["metadata"]
            if meta.get("namespace") in ("default", "kube-system"):
                continue  # the API server's own Service
            found.add(f"{kind} {meta.get('namespace', '')}/{meta['name']}".replace(" /", " "))
    return found


def test_workload_objects_go_first_and_the_controllers_are_waited_for(
    workload: tuple[KubeAPI, KubeClient],
) -> None:
    api, client = workload
    _populate(api)
    before = _names(api)
    assert before == {
        "Service shop/web",
        "Service shop/internal",
        "Gateway shop/edge",
        "PersistentVolumeClaim data/db",
        "PersistentVolume pv-db",
    }

    planned = clean_workload(client, dry_run=True)
    assert _names(api) == before  # a dry run changes nothing
    assert [item.describe() for item in planned.deleted] == [
        "Gateway shop/edge",
        "Service shop/web (type LoadBalancer)",
        "PersistentVolumeClaim data/db",
    ]
    assert [item.describe() for item in planned.awaited] == [
        "PersistentVolume pv-db (reclaim Delete, volume vol-0001)"
    ]
    assert planned.lines()[0] == "workload: would delete Gateway shop/edge"

    lines: list[str] = []
    with CloudControllers(api) as controllers:
        report = clean_workload(client, poll_interval=0.2, timeout=60, progress=lines.append)
        returned = time.monotonic()
    assert controllers.occm_released is not None and controllers.occm_released <= returned
    assert _names(api) == {"Service shop/internal"}  # only what step (a) must not touch
    assert [item.describe() for item in report.deleted] == [
        item.describe() for item in planned.deleted
    ]
    assert any(line.startswith("workload: waiting for") for line in lines)

    again = clean_workload(client, poll_interval=0.2, timeout=5)  # idempotent
    assert again.deleted == [] and again.awaited == [] and again.kept == []


def test_keep_volumes_lists_the_claims_and_their_volumes(
    workload: tuple[KubeAPI, KubeClient],
) -> None:
    api, client = workload
    _populate(api)
    with CloudControllers(api):
        report = clean_workload(client, keep_volumes=True, poll_interval=0.2, timeout=60)
    assert [item.describe() for item in report.kept] == [
        "PersistentVolumeClaim data/db",
        "PersistentVolume pv-db (reclaim Delete, volume vol-0001)",
    ]
    assert _names(api) == {
        "Service shop/internal",
        "PersistentVolumeClaim data/db",
        "PersistentVolume pv-db",
    }


def test_a_controller_that_never_finishes_times_out_naming_the_finalizer(
    workload: tuple[KubeAPI, KubeClient],
) -> None:
    api, client = workload
    _populate(api)
    with pytest.raises(ToolError) as error:  # no OCCM: the finalizer stays
        clean_workload(client, keep_volumes=True, poll_interval=0.2, timeout=2)
    assert f"Service shop/web (type LoadBalancer) (finalizers: {LB_CLEANUP_FINALIZER})" in str(
        error.value
    )
    assert "Nothing else was deleted" in str(error.value)
