"""install / status / diff / delete with the REAL helm 3 and helm 4 binaries against the FAKE
Kubernetes API (tests/fakekube: a test double, not a cluster; no controllers run, so the
tests play Cluster API themselves by setting status and finishing deletions)."""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scs_templates import lifecycle
from scs_templates.cli.cmd_lifecycle import ProgressLine, parse_duration
from scs_templates.cli.main import main
from scs_templates.errors import InputError, ToolError
from scs_templates.helm import Helm
from scs_templates.kube import KubeClient
from scs_templates.providers import CloudOptions
from scs_templates.render import render
from scs_templates.settings.versions import KubernetesVersion, ResolvedVersion, resolve_version
from tests.fakekube import FakeKubeAPI
from tests.support import REPO, helm_tool, settings_from_text

pytestmark = [
    pytest.mark.fakekube,
    pytest.mark.filterwarnings("ignore:HTTPResponse.getheaders:DeprecationWarning"),
]

DOCKER = (REPO / "examples" / "docker-dev.yaml").read_text()
OPENSTACK = (REPO / "examples" / "openstack-minimal.yaml").read_text()
CLOUDS = (
    "clouds:\n  openstack:\n    auth:\n      auth_url: https://keystone.invalid/v3\n"
    "      application_credential_id: app-cred-id\n"
    "      application_credential_secret: S3CR3T-VALUE-42\n"
)
SECRETS = {"clouds.yaml": CLOUDS, "cacert": ""}


def docker_version(text: str) -> str:
    """What a Docker cluster of ``text`` runs, per this release's versions table."""
    return str(resolve_version(text, "docker").version)


def docker_text(version: str = "1.34.x", replicas: int = 1) -> str:
    text = DOCKER.replace("version: 1.36.x", f"version: {version}")
    assert f"version: {version}" in text
    return text.replace("name: md-0\n      replicas: 1", f"name: md-0\n      replicas: {replicas}")


@pytest.fixture
def fake() -> Iterator[FakeKubeAPI]:
    with FakeKubeAPI() as api:
        yield api


@pytest.fixture
def kubeconfig(fake: FakeKubeAPI, tmp_path: Path) -> str:
    return str(fake.write_kubeconfig(tmp_path / "kubeconfig", contexts=("fake", "mgmt")))


@pytest.fixture(params=[3, 4], ids=["helm3", "helm4"])
def major(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    tool = helm_tool(request.param)
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(tool.path))  # what the CLI's Helm() runs
    return int(request.param)


@pytest.fixture
def helm(major: int, kubeconfig: str, tmp_path: Path) -> Helm:
    return Helm(helm_tool(major), kubeconfig=kubeconfig, home=tmp_path / "helm")


@pytest.fixture
def kube(kubeconfig: str) -> Iterator[KubeClient]:
    with KubeClient(kubeconfig, "mgmt") as client:
        yield client


def write(tmp_path: Path, text: str, name: str = "cluster.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def cli(*args: str) -> int:
    return main(list(args))


def snapshot(fake: FakeKubeAPI, namespace: str = "default") -> dict[tuple[str, str], Any]:
    """Spec and generation of every cluster object (not the helm release Secrets)."""
    found = {}
    for kind in (
        "Cluster",
        "DockerCluster",
        "KubeadmControlPlane",
        "MachineDeployment",
        "MachineHealthCheck",
        "KubeadmConfigTemplate",
        "DockerMachineTemplate",
    ):
        for obj in fake.objects(kind, namespace):
            body = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
            found[(kind, obj["metadata"]["name"])] = (body, obj["metadata"]["generation"])
    return found


# --------------------------------------------------------------------------- full cycle


def test_install_upgrade_status_diff(
    fake: FakeKubeAPI,
    kubeconfig: str,
    major: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_file = write(tmp_path, docker_text())
    assert cli("install", settings_file, "--kubeconfig", kubeconfig) == 0
    out = capsys.readouterr().out
    v134 = docker_version("1.34.x")
    assert f"release dev in namespace default: revision 1, deployed (Kubernetes {v134})" in out
    assert [c["metadata"]["name"] for c in fake.objects("Cluster", "default")] == ["dev"]
    assert len(fake.objects("MachineDeployment", "default")) == 2

    assert cli("status", settings_file, "--kubeconfig", kubeconfig, "-o", "json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["release"]["revision"] == 1 and report["release"]["status"] == "deployed"
    assert report["kubernetesVersion"] == v134
    assert report["cluster"]["phase"] == "" and report["cluster"]["available"] is False

    fake.set_status(
        "Cluster",
        "default",
        "dev",
        {
            "phase": "Provisioned",
            "conditions": [{"type": "Available", "status": "True", "reason": "Available"}],
        },
    )
    assert cli("status", settings_file, "--kubeconfig", kubeconfig, "--context", "mgmt") == 0
    out = capsys.readouterr().out
    assert "Cluster dev: phase Provisioned; Available=True" in out

    assert cli("diff", settings_file, "--kubeconfig", kubeconfig, "--exit-code") == 0
    objects = len(render(settings_from_text(docker_text()), helm=Helm(helm_tool(major))).objects)
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith(f"0 to add, 0 to change, 0 to remove, {objects} unchanged")
    )

    # an upgrade without a change: a new revision, the objects stay as they were
    before = snapshot(fake)
    assert cli("install", settings_file, "--kubeconfig", kubeconfig) == 0
    assert "revision 2, deployed" in capsys.readouterr().out
    assert snapshot(fake) == before
    assert fake.get("Cluster", "default", "dev")["status"]["phase"] == "Provisioned"  # type: ignore[index]

    # a settings change shows in diff (exit 3 with --exit-code) and is applied by install
    changed = write(tmp_path, docker_text(replicas=4))
    assert cli("diff", changed, "--kubeconfig", kubeconfig, "--exit-code") == 3
    out = capsys.readouterr().out
    assert "changed: MachineDeployment/default/capi-dev-md-0" in out
    assert "-  replicas: 1\n+  replicas: 4\n" in out
    assert f"0 to add, 1 to change, 0 to remove, {objects - 1} unchanged" in out
    assert cli("diff", changed, "--kubeconfig", kubeconfig) == 0  # without --exit-code
    capsys.readouterr()
    assert cli("install", changed, "--kubeconfig", kubeconfig) == 0
    assert "revision 3, deployed" in capsys.readouterr().out
    md = fake.get("MachineDeployment", "default", "capi-dev-md-0")
    assert md is not None and md["spec"]["replicas"] == 4
    assert cli("diff", changed, "--kubeconfig", kubeconfig, "--exit-code") == 0


def test_status_and_diff_before_install(
    fake: FakeKubeAPI,
    kubeconfig: str,
    major: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_file = write(tmp_path, docker_text())
    assert cli("status", settings_file, "--kubeconfig", kubeconfig) == 0
    out = capsys.readouterr().out
    assert "release dev is not installed in namespace default" in out
    assert "Cluster dev: not found" in out
    assert cli("diff", settings_file, "--kubeconfig", kubeconfig, "--exit-code") == 3
    out = capsys.readouterr().out
    assert "added: Cluster/default/dev" in out
    assert re.search(r"not installed yet: \d+ to add, 0 to change, 0 to remove, 0 unchanged", out)


# --------------------------------------------------------------------------- delete


def test_delete_removes_the_cluster_first_then_release_templates_and_secret(
    fake: FakeKubeAPI,
    kubeconfig: str,
    helm: Helm,
    kube: KubeClient,
    tmp_path: Path,
) -> None:
    first = settings_from_text(OPENSTACK)
    lifecycle.install(first, helm=helm, kube=kube, secrets=SECRETS)
    # an upgrade that changes the machine templates: the old ones are kept by helm (and not
    # pruned here: delete must remove every generation, also those an install did not prune)
    second = settings_from_text(
        OPENSTACK.replace("replicas: 3", "replicas: 3\n      rootDiskGB: 30")
    )
    lifecycle.install(second, helm=helm, kube=kube, secrets=SECRETS, prune=False)
    templates = fake.objects("OpenStackMachineTemplate", "default")
    assert len(templates) == 3  # control plane + old and new worker template
    assert fake.get("Secret", "default", "capi-demo-cloud-config") is not None

    fake.delay_deletion("Cluster", gets=3)  # "CAPI" needs three more reads to tear down
    fake.clear_requests()
    lines: list[str] = []
    result = lifecycle.delete(
        second,
        helm=helm,
        kube=kube,
        poll_interval=0.01,
        progress=lines.append,
        cloud=CloudOptions(touch=False),  # no cloud here (tests/test_openstack.py has one)
    )
    assert result.cluster_deleted and result.release_uninstalled
    assert any("being deleted" in line for line in lines)
    assert "Cluster demo: deleted after" in lines[-1] or "Cluster demo: deleted" in " ".join(lines)

    for kind in (
        "Cluster",
        "OpenStackMachineTemplate",
        "KubeadmConfigTemplate",
        "MachineDeployment",
        "OpenStackCluster",
        "Secret",
    ):
        assert fake.objects(kind, "default") == [], kind

    log = fake.requests
    cluster_delete = next(r.seq for r in log if r.verb == "delete" and r.kind == "Cluster")
    cluster_gone = next(
        r.seq
        for r in log
        if r.verb == "get" and r.kind == "Cluster" and r.code == 404 and r.seq > cluster_delete
    )
    later_deletes = [r for r in log if r.verb == "delete" and r.kind != "Cluster"]
    assert later_deletes and all(r.seq > cluster_gone for r in later_deletes)
    # the Cluster stayed (deletionTimestamp) while "CAPI" worked: it was read several times
    reads = [
        r
        for r in log
        if r.kind == "Cluster" and r.verb == "get" and cluster_delete < r.seq <= cluster_gone
    ]
    assert len(reads) >= 3
    kept = [
        r
        for r in log
        if r.verb == "delete" and r.kind in ("OpenStackMachineTemplate", "KubeadmConfigTemplate")
    ]
    release = [
        r
        for r in log
        if r.verb == "delete" and r.kind == "Secret" and r.name.startswith("sh.helm.release")
    ]
    assert release and kept and max(r.seq for r in release) < min(r.seq for r in kept)
    assert any(r.name == "capi-demo-cloud-config" for r in later_deletes)

    # idempotent: a second delete finds nothing and succeeds
    again = lifecycle.delete(
        second, helm=helm, kube=kube, poll_interval=0.01, cloud=CloudOptions(touch=False)
    )
    assert not again.cluster_deleted and not again.release_uninstalled and again.removed == []


def test_delete_timeout_deletes_nothing_else(
    fake: FakeKubeAPI,
    kubeconfig: str,
    major: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_file = write(tmp_path, docker_text())
    assert cli("install", settings_file, "--kubeconfig", kubeconfig) == 0
    fake.delay_deletion("Cluster", gets=None)  # "CAPI" is stuck
    code = cli(
        "delete",
        settings_file,
        "--kubeconfig",
        kubeconfig,
        "--yes",
        "--timeout",
        "1",
        "--poll-interval",
        "0.05",
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "Cluster default/dev still exists after 1s" in err and "nothing else was deleted" in err
    cluster = fake.get("Cluster", "default", "dev")
    assert cluster is not None and "deletionTimestamp" in cluster["metadata"]
    assert fake.objects("DockerMachineTemplate", "default")
    assert any(
        s["metadata"]["name"].startswith("sh.helm.release")
        for s in fake.objects("Secret", "default")
    )

    fake.finish_deletion("Cluster", "default", "dev")  # "CAPI" finished after all
    assert (
        cli("delete", settings_file, "--kubeconfig", kubeconfig, "--yes", "--poll-interval", "0.05")
        == 0
    )
    assert "release dev uninstalled" in capsys.readouterr().out
    assert fake.objects("DockerMachineTemplate", "default") == []
    assert fake.objects("Secret", "default") == []


def test_delete_needs_yes_without_a_terminal(
    fake: FakeKubeAPI,
    kubeconfig: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli("delete", write(tmp_path, docker_text()), "--kubeconfig", kubeconfig) == 2
    assert "pass --yes" in capsys.readouterr().err
    assert fake.requests == []


# --------------------------------------------------------------------------- failures


def test_failed_upgrade_is_rolled_back(
    fake: FakeKubeAPI,
    kubeconfig: str,
    helm: Helm,
    major: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_file = write(tmp_path, docker_text())
    assert cli("install", settings_file, "--kubeconfig", kubeconfig) == 0
    fake.fail_next(
        "patch",
        "MachineDeployment",
        name="capi-dev-md-0",
        code=422,
        message="injected: MachineDeployment rejected",
    )
    assert (
        cli(
            "install",
            write(tmp_path, docker_text(replicas=5), "b.yaml"),
            "--kubeconfig",
            kubeconfig,
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "injected: MachineDeployment rejected" in err
    release = helm.status("dev", namespace="default")
    assert release is not None and release.status == "deployed" and release.revision == 3
    md = fake.get("MachineDeployment", "default", "capi-dev-md-0")
    assert md is not None and md["spec"]["replicas"] == 1


def test_failed_first_install_is_removed(
    fake: FakeKubeAPI,
    kubeconfig: str,
    helm: Helm,
    major: int,
    tmp_path: Path,
) -> None:
    # helm 3 creates with POST, helm 4 with a server-side apply PATCH
    fake.fail_next("create" if major == 3 else "patch", "KubeadmControlPlane", code=500)
    with pytest.raises(ToolError, match="injected failure"):
        lifecycle.install(settings_from_text(docker_text()), helm=helm)
    assert helm.status("dev", namespace="default") is None
    assert fake.objects("Cluster", "default") == []


def test_unreachable_api_and_bad_kubeconfig(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], major: int
) -> None:
    settings_file = write(tmp_path, docker_text())
    with FakeKubeAPI() as gone:
        config = str(gone.write_kubeconfig(tmp_path / "kc"))
    assert cli("install", settings_file, "--kubeconfig", config) == 1
    assert "kubernetes cluster unreachable" in capsys.readouterr().err.lower()
    assert cli("status", settings_file, "--kubeconfig", config, "--context", "nope") == 2
    assert "nope" in capsys.readouterr().err
    assert cli("install", settings_file, "--kubeconfig", config, "--context", "nope", "--wait") == 2
    assert cli("delete", settings_file, "--kubeconfig", str(tmp_path / "missing"), "--yes") == 2
    capsys.readouterr()
    with pytest.raises(InputError, match="nope"):
        KubeClient(config, "nope")


# --------------------------------------------------------------------------- version guard


def test_version_guard_on_a_cluster_of_an_older_versions_table(
    fake: FakeKubeAPI,
    kubeconfig: str,
    major: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A release installed by an older scs-templates (whose table said 1.33.x = v1.33.5, a
    patch this table does not even have a kind image for) still gets the one-minor-at-a-time
    rule and the downgrade refusal against what it RUNS, not against the new table."""
    import scs_templates.values

    def older_table(text: str, provider: str) -> ResolvedVersion:
        del text, provider
        return ResolvedVersion(KubernetesVersion(1, 33, 5))

    with monkeypatch.context() as patched:
        patched.setattr(scs_templates.values, "resolve_version", older_table)
        settings = write(tmp_path, docker_text("1.33.x"))
        assert cli("install", settings, "--kubeconfig", kubeconfig) == 0
    capsys.readouterr()
    kcp = fake.objects("KubeadmControlPlane", "default")[0]
    assert kcp["spec"]["version"] == "v1.33.5"

    assert (
        cli("install", write(tmp_path, docker_text("1.35.x"), "b.yaml"), "--kubeconfig", kubeconfig)
        == 2
    )
    err = capsys.readouterr().err
    v135, v134 = docker_version("1.35.x"), docker_version("1.34.x")
    assert f"refusing to upgrade Kubernetes from v1.33.5 to {v135}" in err
    assert "upgrade to 1.34.x first" in err
    assert fake.objects("KubeadmControlPlane", "default")[0]["spec"]["version"] == "v1.33.5"

    assert (
        cli("install", write(tmp_path, docker_text("1.34.x"), "c.yaml"), "--kubeconfig", kubeconfig)
        == 0
    )
    assert f"Kubernetes v1.33.5 -> {v134}" in capsys.readouterr().out
    assert (
        cli("install", write(tmp_path, docker_text("1.33.x"), "d.yaml"), "--kubeconfig", kubeconfig)
        == 2
    )
    v133 = docker_version("1.33.x")
    assert f"refusing to downgrade Kubernetes from {v134} to {v133}" in capsys.readouterr().err
    assert fake.objects("KubeadmControlPlane", "default")[0]["spec"]["version"] == v134


@pytest.mark.parametrize(
    ("installed", "wanted", "allowed"),
    [
        (None, (1, 35, 2), True),
        ((1, 33, 5), (1, 33, 5), True),
        ((1, 33, 4), (1, 33, 5), True),
        ((1, 33, 5), (1, 34, 1), True),
        ((1, 33, 5), (1, 35, 2), False),
        ((1, 34, 1), (1, 33, 5), False),
        ((1, 33, 5), (1, 33, 4), False),
    ],
)
def test_version_rules(
    installed: tuple[int, int, int] | None, wanted: tuple[int, int, int], allowed: bool
) -> None:
    old = KubernetesVersion(*installed) if installed else None
    if allowed:
        lifecycle.check_version_change(old, KubernetesVersion(*wanted))
    else:
        with pytest.raises(InputError, match="refusing to"):
            lifecycle.check_version_change(old, KubernetesVersion(*wanted))


# --------------------------------------------------------------------------- --wait


def _conditions(**states: str) -> list[dict[str, str]]:
    return [
        {"type": t, "status": s, "reason": "Fake" if s != "True" else t} for t, s in states.items()
    ]


def test_install_wait_follows_the_cluster_conditions(
    fake: FakeKubeAPI,
    kubeconfig: str,
    helm: Helm,
    kube: KubeClient,
) -> None:
    stop = threading.Event()

    def capi() -> None:  # plays the Cluster API controllers
        steps: list[dict[str, Any]] = [
            {"phase": "Provisioning", "conditions": _conditions(InfrastructureReady="False")},
            {
                "phase": "Provisioning",
                "conditions": _conditions(
                    InfrastructureReady="True", ControlPlaneAvailable="False", Available="False"
                ),
            },
            {
                "phase": "Provisioned",
                "observedGeneration": 1,
                "conditions": _conditions(
                    InfrastructureReady="True",
                    ControlPlaneAvailable="True",
                    WorkersAvailable="True",
                    Available="True",
                ),
            },
        ]
        # Each intermediate step is held until the installer has reported it: a fixed
        # sleep raced helm's own wait on a loaded machine (the Cluster went Available
        # before the first poll and the intermediate conditions were never seen).
        seen = ["InfrastructureReady=False (Fake)", "ControlPlaneAvailable=False", ""]
        while fake.get("Cluster", "default", "dev") is None and not stop.is_set():
            time.sleep(0.01)
        for step, marker in zip(steps, seen, strict=True):
            fake.set_status("Cluster", "default", "dev", step)
            deadline = time.monotonic() + 15
            while marker and not stop.is_set() and time.monotonic() < deadline:
                if any(marker in line for line in list(lines)):
                    break
                time.sleep(0.01)

    lines: list[str] = []
    thread = threading.Thread(target=capi)
    thread.start()
    try:
        result = lifecycle.install(
            settings_from_text(docker_text()),
            helm=helm,
            kube=kube,
            wait=True,
            timeout=20,
            poll_interval=0.02,
            progress=lines.append,
        )
    finally:
        stop.set()
        thread.join()
    assert result.cluster is not None and result.cluster.available
    assert result.cluster.phase == "Provisioned"
    assert any("InfrastructureReady=False (Fake)" in line for line in lines)
    assert any("ControlPlaneAvailable=False" in line for line in lines)
    assert lines[-1].startswith("Cluster dev: Available after")


def test_install_wait_timeout_reports_the_last_conditions(
    fake: FakeKubeAPI,
    kubeconfig: str,
    major: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_file = write(tmp_path, docker_text())
    assert cli("install", settings_file, "--kubeconfig", kubeconfig) == 0
    fake.set_status(
        "Cluster",
        "default",
        "dev",
        {
            "phase": "Provisioning",
            "conditions": [
                {
                    "type": "Available",
                    "status": "False",
                    "reason": "NotAvailable",
                    "message": "* ControlPlaneAvailable: control plane not yet initialized",
                }
            ],
        },
    )
    code = cli(
        "install",
        settings_file,
        "--kubeconfig",
        kubeconfig,
        "--wait",
        "--timeout",
        "1",
        "--poll-interval",
        "0.05",
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "Cluster default/dev is not Available after 1s: phase Provisioning" in err
    assert (
        "Available=False reason=NotAvailable: * ControlPlaneAvailable: control plane not yet" in err
    )
    # not a terminal: plain progress lines, no carriage returns
    assert "\r" not in err


def test_progress_line_rewrites_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, plain = Tty(), io.StringIO()
    for stream in (tty, plain):
        progress = ProgressLine(stream)
        progress("Cluster a: phase Pending [1s]")
        progress("Cluster a: phase Pending [2s]")
        progress("Cluster a: phase Provisioned [3s]")
        progress.done()
    assert tty.getvalue().count("\r") == 3 and tty.getvalue().endswith("\n")
    assert plain.getvalue().splitlines() == [
        "Cluster a: phase Pending [1s]",
        "Cluster a: phase Provisioned [3s]",
    ]


@pytest.mark.parametrize(
    ("text", "seconds"), [("30m", 1800), ("1h30m", 5400), ("90s", 90), ("45", 45)]
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


# --------------------------------------------------------------------------- secrets


def test_secrets_are_never_printed(
    fake: FakeKubeAPI,
    kubeconfig: str,
    helm: Helm,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings_file = write(tmp_path, OPENSTACK)
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(CLOUDS)
    # per-cluster application credential (the default), but the cloud entry does not exist
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tmp_path / "no-clouds.yaml"))
    assert cli("install", settings_file, "--kubeconfig", kubeconfig) == 2
    assert "cloud 'openstack'" in capsys.readouterr().err
    # told not to touch OpenStack, given no credentials, and no credentials Secret exists
    assert cli("install", settings_file, "--kubeconfig", kubeconfig, "--skip-openstack") == 2
    assert "credentials Secret default/capi-demo-cloud-config does not exist" in (
        capsys.readouterr().err
    )
    assert helm.status("demo", namespace="default") is None  # nothing was installed
    assert (
        cli("install", settings_file, "--kubeconfig", kubeconfig, "--clouds-yaml", str(clouds)) == 0
    )
    secret = fake.get("Secret", "default", "capi-demo-cloud-config")
    assert secret is not None
    data = secret.get("stringData") or {
        key: base64.b64decode(value).decode() for key, value in secret["data"].items()
    }
    assert sorted(data) == ["cloud.conf", "clouds.yaml"]  # no --cacert: no cacert key
    cloud_conf = data["cloud.conf"]
    assert 'application-credential-secret="S3CR3T-VALUE-42"' in cloud_conf
    for args in (("status",), ("diff",), ("status", "-o", "json")):
        assert cli(*args, settings_file, "--kubeconfig", kubeconfig) == 0
    assert (
        cli(
            "diff",
            write(tmp_path, OPENSTACK.replace("replicas: 3", "replicas: 2"), "b.yaml"),
            "--kubeconfig",
            kubeconfig,
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "S3CR3T-VALUE-42" not in captured.out + captured.err
    assert "Secret/default/capi-demo-cloud-config" not in captured.out  # keys equal: unchanged


def _release_texts(fake: FakeKubeAPI, namespace: str = "default") -> list[str]:
    """Every helm release revision stored in the namespace, decoded (helm's storage driver
    keeps each revision as a Secret: base64 of the gzipped JSON release, in Secret data)."""
    import gzip

    texts = []
    for secret in fake.objects("Secret", namespace):
        if secret.get("type") != "helm.sh/release.v1":
            continue
        stored = base64.b64decode(secret["data"]["release"])
        texts.append(gzip.decompress(base64.b64decode(stored)).decode())
    return texts


def test_no_release_revision_holds_credentials(
    fake: FakeKubeAPI, helm: Helm, kube: KubeClient, tmp_path: Path
) -> None:
    """install, upgrade and a credential rotation: the credentials Secret is written through
    the API (labelled for the cluster and clusterctl move), and no release Secret holds them."""
    first = {**SECRETS, "cloud.conf": '[Global]\napplication-credential-secret="S3CR3T-VALUE-42"'}
    rotated = {
        "clouds.yaml": CLOUDS.replace("S3CR3T-VALUE-42", "R0TATED-VALUE-43"),
        "cloud.conf": '[Global]\napplication-credential-secret="R0TATED-VALUE-43"',
        "cacert": "",
    }
    settings = settings_from_text(OPENSTACK)
    lifecycle.install(settings, helm=helm, kube=kube, secrets=first)  # install
    upgraded = settings_from_text(OPENSTACK.replace("replicas: 3", "replicas: 2"))
    lifecycle.install(upgraded, helm=helm, kube=kube, secrets=first)  # upgrade
    lifecycle.install(upgraded, helm=helm, kube=kube, secrets=rotated)  # rotation
    # the Secret exists: no secrets needed (and the cloud is not asked for a new credential)
    lifecycle.install(upgraded, helm=helm, kube=kube, cloud=CloudOptions(touch=False))

    releases = _release_texts(fake)
    assert len(releases) == 4
    for text in releases:
        for value in ("S3CR3T-VALUE-42", "R0TATED-VALUE-43", "app-cred-id", "[Global]"):
            assert value not in text
    secret = fake.get("Secret", "default", "capi-demo-cloud-config")
    assert secret is not None
    assert kube.secret_data("default", "capi-demo-cloud-config") == rotated
    meta = secret["metadata"]
    assert meta["labels"] == {
        "app.kubernetes.io/managed-by": "scs-templates",
        "clusterctl.cluster.x-k8s.io/move": "true",
        "scs.community/cluster": "demo",
    }
    assert meta["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert "kind: Secret" not in helm.get_manifest("demo", namespace="default")
    (cluster,) = fake.objects("OpenStackCluster", "default")
    assert cluster["spec"]["identityRef"]["name"] == "capi-demo-cloud-config"


# --------------------------------------------------------------------------- helm 4 waiting


@pytest.mark.parametrize(
    "major",
    [3, 4],
    ids=["helm3", "helm4"],
)
def test_upgrade_while_the_cluster_is_still_provisioning(
    fake: FakeKubeAPI,
    kubeconfig: str,
    tmp_path: Path,
    major: int,
) -> None:
    helm = Helm(helm_tool(major), kubeconfig=kubeconfig, home=tmp_path / "helm")
    lifecycle.install(settings_from_text(docker_text()), helm=helm)
    fake.set_status("Cluster", "default", "dev", {"observedGeneration": 0, "phase": "Provisioning"})
    lifecycle.install(settings_from_text(docker_text(replicas=2)), helm=helm, helm_timeout=1)
    md = fake.get("MachineDeployment", "default", "capi-dev-md-0")
    assert md is not None and md["spec"]["replicas"] == 2


def test_cluster_kubeconfig_secret_is_read(fake: FakeKubeAPI, kube: KubeClient) -> None:
    import base64

    assert kube.cluster_kubeconfig("default", "dev") is None
    value = base64.b64encode(b"apiVersion: v1\nkind: Config\n").decode()
    fake.add_object(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "dev-kubeconfig", "namespace": "default"},
            "data": {"value": value},
        }
    )
    assert kube.cluster_kubeconfig("default", "dev") == "apiVersion: v1\nkind: Config\n"
