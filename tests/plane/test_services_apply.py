"""``apply`` of the standard services: the plumbing, with the REAL charts on REAL API servers.

State values -> the REAL helmfile 1.8 and helm 4.3 -> a REAL management and a REAL
workload kube-apiserver (fresh for each test, on the test plane's etcd: :class:`Clusters`),
the charts being the REAL upstream packages (../shared/charts as a local chart mirror):
idempotence without new helm revisions, keep and --force-remove, the CNI guard, dry runs,
the autoscaler on the management cluster, the cloud-config copy. The assertions read what
the real charts created: helm's release records, the objects helm annotated with their
release, the values in them (a Deployment's replicas).

No kubelet or controller runs here, so nothing becomes Ready: ``apply`` runs without
``--wait`` and helm without hooks (:class:`NoHooksHelmfile`: Cilium's post-install
``hubble-generate-certs`` and cert-manager's ``startupapicheck`` Jobs would never finish).
Whether the charts' Pods are admitted and created is test_services_workload.py, with a
workload cluster that has its controllers.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from ruamel.yaml import YAML

from scs_templates._core.errors import InputError
from scs_templates._services.catalogue import service_info
from scs_templates._settings.model import ClusterSettings
from tests.support import autoscaled, services_settings
from tests.support.workload_cluster import NoHooksHelmfile

if TYPE_CHECKING:
    from testenv import Plane
    from testenv.kubeapi import KubeAPI

yaml = YAML(typ="safe")
#: Kinds whose objects :meth:`Clusters.released` reads helm's release annotation from (every
#: chart used here makes a Deployment or a DaemonSet, and ServiceAccounts and Services).
RELEASED_KINDS = (
    ("apps/v1", "Deployment"),
    ("apps/v1", "DaemonSet"),
    ("v1", "ServiceAccount"),
    ("v1", "Service"),
)


# --------------------------------------------------------------------------- helmfile (real)


# --------------------------------------------------------------------------- apply (real API)


def _kubeconfig_of(plane: Plane, server: KubeAPI, path: Path) -> Path:
    """A cluster-admin kubeconfig (context ``testenv``) of ``server``, 0600."""
    from testenv.plane import _kubeconfig, _write_private

    pki = plane.directory / "pki"
    text = _kubeconfig(
        f"https://{server.host}:{server.port}", pki / "ca.crt", pki / "admin.crt", pki / "admin.key"
    )
    _write_private(path, text)
    return path


class Clusters:
    """A REAL management and a REAL workload kube-apiserver, each an empty cluster of its own
    (testenv.plane.extra_apiserver: on the plane's etcd under its own key prefix, started
    fresh for each test). The workload cluster's kubeconfig is the management cluster's
    Secret ``demo-kubeconfig``, as Cluster API writes it. No controllers run: the REAL charts'
    objects are created (helm without --wait and without hooks), none has to become Ready."""

    def __init__(self, plane: Plane, tmp: Path, stack: contextlib.ExitStack) -> None:
        from testenv.plane import extra_apiserver

        tag = secrets.token_hex(3)
        self.management = stack.enter_context(extra_apiserver(plane, f"mgmt-{tag}", ()))
        self.workload = stack.enter_context(extra_apiserver(plane, f"workload-{tag}", ()))
        self.mgmt_kubeconfig = _kubeconfig_of(plane, self.management, tmp / "mgmt.kubeconfig")
        self.workload_kubeconfig = _kubeconfig_of(plane, self.workload, tmp / "workload.kubeconfig")
        value = base64.b64encode(self.workload_kubeconfig.read_bytes()).decode()
        self.management.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "demo-kubeconfig", "namespace": "default"},
                "data": {"value": value},
            }
        )

    @staticmethod
    def _helm_releases(server: KubeAPI) -> dict[str, int]:
        """Helm release Secrets on ``server``: release name -> highest revision."""
        found: dict[str, int] = {}
        for secret in server.list("v1", "Secret", selector="owner=helm"):
            labels = secret["metadata"]["labels"]
            name, version = labels["name"], int(labels["version"])
            found[name] = max(found.get(name, 0), version)
        return found

    def revisions(self) -> dict[str, int]:
        """Helm releases in the workload cluster: release name -> highest revision."""
        return self._helm_releases(self.workload)

    def management_releases(self) -> dict[str, int]:
        return self._helm_releases(self.management)

    @staticmethod
    def _released(server: KubeAPI) -> set[str]:
        """Releases that have objects on ``server``, read from the objects (helm annotates
        each object it creates with ``meta.helm.sh/release-name``), not from helm's records:
        an uninstall that left its Deployment behind shows here."""
        return {
            obj["metadata"]["annotations"]["meta.helm.sh/release-name"]
            for api_version, kind in RELEASED_KINDS
            for obj in server.list(api_version, kind, selector="app.kubernetes.io/managed-by=Helm")
        }

    def released(self) -> set[str]:
        """Releases whose objects exist in the workload cluster."""
        return self._released(self.workload)

    def management_released(self) -> set[str]:
        return self._released(self.management)

    def record(self, release: str) -> dict[str, Any]:
        """The newest helm release record of ``release`` in the workload cluster (the
        Secret's ``release``: base64 of gzipped JSON with the manifest and the values)."""
        secrets_ = self.workload.list("v1", "Secret", selector=f"owner=helm,name={release}")
        newest = max(secrets_, key=lambda s: int(s["metadata"]["labels"]["version"]))
        packed = base64.b64decode(base64.b64decode(newest["data"]["release"]))
        record: dict[str, Any] = json.loads(gzip.decompress(packed))
        return record

    def missing_objects(self, release: str) -> list[str]:
        """``Kind/name`` of every object in the release's manifest that is not in the
        workload cluster (empty: helm created all that the real chart rendered)."""
        record = self.record(release)
        missing = []
        for obj in yaml.load_all(record["manifest"]):
            if not obj:
                continue
            meta = obj["metadata"]
            namespace = meta.get("namespace") or record["namespace"]
            if self.workload.get(obj["apiVersion"], obj["kind"], namespace, meta["name"]) is None:
                missing.append(f"{obj['kind']}/{meta['name']}")
        return missing


@pytest.fixture
def clusters(api_plane: Plane, tmp_path: Path, services_helmfile: Any) -> Iterator[Clusters]:
    with contextlib.ExitStack() as stack:
        yield Clusters(api_plane, tmp_path, stack)


class WaitDroppingHelmfile(NoHooksHelmfile):
    """A DOUBLE around the real helmfile for the CLI tests (which cannot hand ``apply`` a
    helmfile): it records each sync's arguments, so a test sees ``--wait`` reach helmfile,
    then drops that ``--wait``, since no Pod can become Ready here (no kubelet)."""

    syncs: ClassVar[list[list[str]]] = []

    def run(
        self, state: Mapping[str, Any], command: Sequence[str], *, cluster: bool = False
    ) -> Any:
        if "sync" in command:
            self.syncs.append(list(command))
            command = [arg for arg in command if arg != "--wait"]
        return super().run(state, command, cluster=cluster)


@pytest.fixture
def cli_helmfile(monkeypatch: pytest.MonkeyPatch) -> type[WaitDroppingHelmfile]:
    """What ``apply`` of the CLI uses as its helmfile: :class:`WaitDroppingHelmfile`."""
    from scs_templates._services import runner

    monkeypatch.setattr(WaitDroppingHelmfile, "syncs", [])
    monkeypatch.setattr(runner, "ServicesHelmfile", WaitDroppingHelmfile)
    return WaitDroppingHelmfile


def run_apply(clusters: Clusters, settings: ClusterSettings, **options: Any) -> Any:
    from scs_templates._services.deploy import apply

    return apply(
        settings,
        kubeconfig=str(clusters.mgmt_kubeconfig),
        install_cluster=False,
        wait=False,
        helmfile=NoHooksHelmfile(),
        poll_interval=0.1,
        kubeconfig_timeout=5,
        api_timeout=5,
        **options,
    )


def test_apply_sync_is_idempotent_keeps_disabled_and_force_removes(
    clusters: Clusters, chart_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    services = {"chartMirror": str(chart_mirror), "certManager": {"enabled": True}}
    settings = services_settings("docker", **services)

    first = run_apply(clusters, settings)
    assert set(first.synced) == {"cilium", "kubelet-csr-approver", "metrics-server", "cert-manager"}
    assert {p.action for p in first.plan} == {"install"}
    assert clusters.released() == set(first.synced)
    missing = {name: clusters.missing_objects(name) for name in first.synced}
    assert [name for name, objects in missing.items() if objects] == [], missing
    revisions = clusters.revisions()
    assert revisions == dict.fromkeys(first.synced, 1)
    metrics_server = ("apps/v1", "Deployment", "kube-system", "metrics-server")
    deployment = clusters.workload.get(*metrics_server)
    assert deployment is not None and deployment["spec"]["replicas"] == 1
    assert list(private_tmp.glob("scs-templates-workload-*")) == []  # kubeconfig removed

    second = run_apply(clusters, settings)
    assert second.synced == ()
    assert {p.action for p in second.plan} == {"unchanged"}
    assert clusters.revisions() == revisions  # no new helm revision anywhere

    changed = services_settings("docker", **services, metricsServer={"values": {"replicas": 2}})
    third = run_apply(clusters, changed)
    assert third.synced == ("metrics-server",)
    assert clusters.revisions()["metrics-server"] == 2
    assert clusters.record("metrics-server")["config"]["replicas"] == 2
    deployment = clusters.workload.get(*metrics_server)
    assert deployment is not None and deployment["spec"]["replicas"] == 2  # the value arrived

    disabled = services_settings(
        "docker", chartMirror=str(chart_mirror), certManager={"enabled": False}
    )
    kept = run_apply(clusters, disabled)
    plans = {p.name: p.action for p in kept.plan}
    assert plans["cert-manager"] == "keep"
    assert "cert-manager" in clusters.released()
    assert clusters.workload.get("apps/v1", "Deployment", "cert-manager", "cert-manager")
    assert kept.state_values["services"]["releases"][-1]["installed"] is True

    removed = run_apply(clusters, disabled, force_remove=True)
    assert removed.synced == ("cert-manager",)
    assert {p.name: p.action for p in removed.plan}["cert-manager"] == "remove"
    assert "cert-manager" not in clusters.released()
    assert clusters.workload.get("apps/v1", "Deployment", "cert-manager", "cert-manager") is None
    assert "cert-manager" not in clusters.revisions()
    assert list(private_tmp.glob("scs-templates-workload-*")) == []


def test_apply_refuses_a_cni_switch_unless_allowed(clusters: Clusters, chart_mirror: Path) -> None:
    from scs_templates._services.deploy import CniSwitchError

    run_apply(clusters, services_settings("docker", chartMirror=str(chart_mirror)))
    calico = services_settings("docker", chartMirror=str(chart_mirror), cni={"type": "calico"})
    with pytest.raises(CniSwitchError) as refused:
        run_apply(clusters, calico)
    assert refused.value.exit_code == 2
    message = str(refused.value)
    assert "pods lose networking" in message and "restart" in message
    assert "maintenance window" in message
    assert "tigera-operator" not in clusters.released()
    assert clusters.workload.get("apps/v1", "DaemonSet", "kube-system", "cilium") is not None

    switched = run_apply(clusters, calico, allow_cni_switch=True)
    plans = {p.name: p.action for p in switched.plan}
    assert plans["cilium"] == "remove" and plans["tigera-operator"] == "install"
    assert "cilium" not in clusters.released() and "tigera-operator" in clusters.released()
    assert clusters.workload.get("apps/v1", "DaemonSet", "kube-system", "cilium") is None
    operator = ("apps/v1", "Deployment", "tigera-operator", "tigera-operator")
    assert clusters.workload.get(*operator) is not None
    namespace = clusters.workload.get("v1", "Namespace", "", "tigera-operator")
    assert namespace is not None  # labelled before the sync (fix 1)
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


def test_cli_apply_dry_run_and_cni_refusal(
    clusters: Clusters,
    chart_mirror: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_helmfile: type[WaitDroppingHelmfile],
) -> None:
    from scs_templates._cli.main import main

    def write(path: Path, **services: Any) -> str:
        settings = services_settings("docker", chartMirror=str(chart_mirror), **services)
        path.write_text(
            json.dumps(settings.model_dump(by_alias=True, exclude_none=True, exclude_unset=True))
        )
        return str(path)

    plain = write(tmp_path / "plain.yaml")
    base = ["apply", "--kubeconfig", str(clusters.mgmt_kubeconfig), "--services-only"]
    assert main([*base, "--dry-run", "--poll-interval", "0.1", plain]) == 0
    out = capsys.readouterr().out
    cilium = service_info("cilium").version
    assert f"would install   kube-system/cilium (cilium-{cilium})" in out
    assert clusters.revisions() == {}  # a dry run changes nothing
    assert clusters.released() == set()
    assert cli_helmfile.syncs == []

    assert main([*base, "--poll-interval", "0.1", plain]) == 0
    assert (
        "services: synced cilium, kubelet-csr-approver, metrics-server" in capsys.readouterr().out
    )
    assert clusters.released() == {"cilium", "kubelet-csr-approver", "metrics-server"}
    assert cli_helmfile.syncs and all("--wait" in sync for sync in cli_helmfile.syncs)
    assert main([*base, "--poll-interval", "0.1", plain]) == 0
    assert "services: nothing to change" in capsys.readouterr().out

    calico = write(tmp_path / "calico.yaml", cni={"type": "calico"})
    assert main([*base, "--poll-interval", "0.1", calico]) == 2
    err = capsys.readouterr().err
    assert "refused" in err and "pods lose networking" in err
    # no workload credential in any output (the client key of its kubeconfig Secret)
    config = json.loads(clusters.workload_kubeconfig.read_text())
    key = config["users"][0]["user"]["client-key-data"]
    assert key[:40] not in out + err


def test_apply_stops_on_a_local_mirror_without_the_chart(
    clusters: Clusters, chart_mirror: Path, tmp_path: Path
) -> None:
    """A mirror folder holding only the REAL cilium package (the others missing)."""
    sparse = tmp_path / "sparse"
    sparse.mkdir()
    shutil.copy(chart_mirror / f"cilium-{service_info('cilium').version}.tgz", sparse)
    settings = services_settings("docker", chartMirror=str(sparse))
    metrics_server = re.escape(service_info("metrics-server").version)
    with pytest.raises(InputError, match=rf"metrics-server-{metrics_server}\.tgz"):
        run_apply(clusters, settings)
    assert clusters.revisions() == {} and clusters.released() == set()  # nothing half-done


def test_apply_installs_the_cluster_release_first(
    clusters: Clusters, chart_mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lifecycle.install`` is replaced by a recording SPY (a test double): installing the
    cluster chart for real needs the Cluster API CRDs and controllers (the session plane,
    test_plane_lifecycle.py); here only the order and the arguments are the question."""
    from scs_templates import _lifecycle as lifecycle
    from scs_templates._services.deploy import apply

    calls: list[dict[str, Any]] = []

    def fake_install(settings: ClusterSettings, **options: Any) -> None:
        calls.append({"name": settings.name, "released": clusters.released(), **options})

    monkeypatch.setattr(lifecycle, "install", fake_install)
    settings = services_settings("docker", chartMirror=str(chart_mirror))
    result = apply(
        settings,
        kubeconfig=str(clusters.mgmt_kubeconfig),
        context="testenv",
        secrets={"clouds.yaml": "x"},
        wait=False,
        helmfile=NoHooksHelmfile(),
        poll_interval=0.1,
        kubeconfig_timeout=5,
        api_timeout=5,
    )
    assert len(calls) == 1
    call = calls[0]
    assert call["name"] == "demo" and call["released"] == set()  # before any service
    assert (call["kubeconfig"], call["context"], call["wait"]) == (
        str(clusters.mgmt_kubeconfig),
        "testenv",
        False,
    )
    assert call["secrets"] == {"clouds.yaml": "x"}
    assert "cilium" in result.synced
    assert "cilium" in clusters.released()

    dry = apply(settings, kubeconfig=str(clusters.mgmt_kubeconfig), dry_run=True)
    assert len(calls) == 1  # a dry run installs nothing
    assert {p.action for p in dry.plan} == {"unchanged"}


def test_cli_apply_prints_the_templates_the_cluster_install_pruned(
    clusters: Clusters,
    chart_mirror: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    cli_helmfile: type[WaitDroppingHelmfile],
) -> None:
    """``apply`` reports the superseded machine templates its cluster install pruned as
    ``install`` does: each on the progress stream as it goes, and the summary line on stdout.
    Before, apply called install without its progress and printed only the release, so an
    operator of apply never learnt what was removed. ``lifecycle.install`` is a SPY (a test
    double, for the reason above: the real chart needs Cluster API's CRDs and controllers)
    that prunes only through the progress it is given, with the real prune's words
    (scs_templates._lifecycle.template_prune); the real prune after a rollout is proven with the
    real
    Cluster API in test_plane_inmemory.py (test_scaling_changes_only_replicas)."""
    from scs_templates import _lifecycle as lifecycle
    from scs_templates._cli.main import main
    from scs_templates._tools.helm import ReleaseInfo

    pruned = [
        "DockerMachineTemplate default/demo-md-0-0a1b2c3d",
        "KubeadmConfigTemplate default/demo-md-0-4e5f6a7b",
    ]

    def fake_install(settings: ClusterSettings, **options: Any) -> lifecycle.InstallResult:
        say = options.get("progress")
        if say is not None:  # what prune_templates says for each template it deletes
            for ref in pruned:
                say(f"pruned the superseded {ref}")
        release = ReleaseInfo("demo", "default", 2, "deployed", "scs-cluster", "", "")
        return lifecycle.InstallResult(
            lifecycle.target_of(settings), release, "1.36.3", "1.36.3", None, list(pruned)
        )

    monkeypatch.setattr(lifecycle, "install", fake_install)
    path = tmp_path / "cluster.yaml"
    settings = services_settings("docker", chartMirror=str(chart_mirror))
    path.write_text(
        json.dumps(settings.model_dump(by_alias=True, exclude_none=True, exclude_unset=True))
    )
    assert main(["apply", "--kubeconfig", str(clusters.mgmt_kubeconfig), str(path)]) == 0
    captured = capsys.readouterr()
    assert "cluster release demo in namespace default: revision 2, deployed" in captured.out
    assert (
        "pruned 2 superseded template(s) no machine uses any more: " + ", ".join(pruned)
        in captured.out.splitlines()
    )
    for ref in pruned:
        assert f"pruned the superseded {ref}" in captured.err
    assert "services: synced cilium" in captured.out
    assert "cilium" in clusters.released()


def test_apply_copies_cloud_conf_into_the_workload_cluster(
    clusters: Clusters, tmp_path: Path
) -> None:
    """OCCM and Cinder CSI read kube-system/cloud-config: copied API to API, idempotently."""
    from scs_templates._tools.kube import KubeClient
    from scs_templates.providers.openstack.workload import sync_cloud_config

    settings = services_settings("openstack")
    management = KubeClient(str(clusters.mgmt_kubeconfig))
    workload = KubeClient(str(clusters.workload_kubeconfig))

    note = sync_cloud_config(settings, management, workload)
    assert "has no cloud.conf" in note
    assert clusters.workload.get("v1", "Secret", "kube-system", "cloud-config") is None

    conf = '[Global]\nauth-url="https://keystone.invalid/v3"\n'
    clusters.management.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "capi-demo-cloud-config", "namespace": "default"},
            "data": {
                "cloud.conf": base64.b64encode(conf.encode()).decode(),
                "cacert": base64.b64encode(b"PEM").decode(),
                "clouds.yaml": base64.b64encode(b"clouds: {}").decode(),
            },
        }
    )
    assert sync_cloud_config(settings, management, workload) == ""
    copied = workload.secret_data("kube-system", "cloud-config")
    # not clouds.yaml; cloud.conf names the CA copied next to it (OCCM mounts /etc/config)
    assert copied == {"ca.crt": "PEM", "cloud.conf": conf + "ca-file=/etc/config/ca.crt\n"}
    written = clusters.workload.get("v1", "Secret", "kube-system", "cloud-config")
    assert written is not None
    assert sync_cloud_config(settings, management, workload) == ""  # unchanged: no write
    again = clusters.workload.get("v1", "Secret", "kube-system", "cloud-config")
    assert again is not None
    assert again["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]
    assert (
        sync_cloud_config(
            services_settings("openstack", cinderCSI={"enabled": False}), management, workload
        )
        == ""
    )
    management.close()
    workload.close()


# --------------------------------------------------------------------------- defects (issue 14)
# Each test below failed on the code before the fix it names.


# --------------------------------------------------------------------------- autoscaler, ingress


def test_apply_installs_the_autoscaler_on_the_management_cluster(
    clusters: Clusters, chart_mirror: Path
) -> None:
    """The REAL autoscaler chart goes to the management cluster's namespace of the Cluster
    (its Deployment there), the rest to the workload cluster."""
    settings = autoscaled("docker", chartMirror=str(chart_mirror))
    result = run_apply(clusters, settings)
    assert "demo-cluster-autoscaler" in result.synced
    assert set(clusters.management_releases()) == {"demo-cluster-autoscaler"}
    assert clusters.management_released() == {"demo-cluster-autoscaler"}
    assert clusters.management.get("apps/v1", "Deployment", "default", "demo-autoscaler")
    assert "demo-cluster-autoscaler" not in clusters.revisions()  # not in the workload
    assert "demo-cluster-autoscaler" not in clusters.released()
    again = run_apply(clusters, settings)
    assert again.synced == ()  # idempotent on both clusters
    off = services_settings(
        "docker", chartMirror=str(chart_mirror), clusterAutoscaler={"enabled": False}
    )
    kept = run_apply(clusters, off)
    assert {p.name: p.action for p in kept.plan}["demo-cluster-autoscaler"] == "keep"
    removed = run_apply(clusters, off, force_remove=True)
    assert removed.synced == ("demo-cluster-autoscaler",)
    assert clusters.management_releases() == {}
    assert clusters.management_released() == set()
