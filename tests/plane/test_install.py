"""install / status / diff / delete with the REAL helm 4 against the REAL plane.

The management cluster is the session's real plane (testenv/: kube-apiserver, etcd, the
Cluster API, kubeadm and CAPD controllers). The docker example is installed on the test-only
provider ``inmemory`` (tests/support/inmemory.py: the docker provider's values, CAPD's in-memory
backend, registered in the catalogue while a test runs): the real controllers provision,
roll and delete those clusters. OpenStack settings keep their real chart (CAPO's webhooks
admit them; nothing can provision them without a cloud).

Failures are made with real mechanisms, not with a double of the API server:
a finalizer of the test holds a Cluster's deletion, a ValidatingAdmissionPolicy of the
real API server refuses a write, a port nobody listens on is an unreachable API server.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates._cli.main import main
from scs_templates._cli.run.lifecycle import ProgressLine
from scs_templates._clikit.arguments import parse_duration
from scs_templates._core.errors import InputError, ToolError
from scs_templates._render.render import render
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient
from scs_templates._tools.toolchain.resolve import Tool
from scs_templates._versions.kubernetes import KubernetesVersion, ResolvedVersion, resolve_version
from tests.support import REPO, helm_tool, inmemory, settings_from_text
from tests.support.inmemory import BOOTSTRAP, CAPI, INFRA, KCP_API

if TYPE_CHECKING:
    from testenv import Plane


POLICY = "admissionregistration.k8s.io/v1"
#: The finalizer with which a test holds a Cluster's deletion (as a stuck controller would).
HOLD = "tests.scs.community/hold"
DOCKER = (REPO / "examples" / "docker-dev.yaml").read_text()
OPENSTACK = (REPO / "examples" / "openstack-minimal.yaml").read_text()
CLOUDS = (
    "clouds:\n  openstack:\n    auth:\n      auth_url: https://keystone.invalid/v3\n"
    "      application_credential_id: app-cred-id\n"
    "      application_credential_secret: S3CR3T-VALUE-42\n"
)
SECRETS = {"clouds.yaml": CLOUDS, "cacert": ""}


def cluster_version(text: str) -> str:
    """What a cluster of ``text`` runs, per this release's versions table."""
    return str(resolve_version(text, inmemory.INMEMORY.kind_node_images).version)


@pytest.fixture
def vm_startup() -> str:
    """How long the in-memory machines take to start; a test that needs a cluster which
    stays Provisioning parametrizes this with ``inmemory.NEVER``."""
    return inmemory.VM_STARTUP


@pytest.fixture(autouse=True)
def _inmemory_provider(vm_startup: str) -> Iterator[None]:
    with inmemory.registered(vm_startup):
        yield


@pytest.fixture
def ns(plane: Plane) -> str:
    """A fresh namespace on the real plane."""
    return plane.namespace("install")


@pytest.fixture
def kubeconfig(plane: Plane, tmp_path: Path) -> str:
    return inmemory.write_kubeconfig(plane, tmp_path / "kubeconfig", contexts=("mgmt",))


@pytest.fixture
def helm_as_env(monkeypatch: pytest.MonkeyPatch) -> Tool:
    """The pinned helm, also as SCS_TEMPLATES_HELM (what the CLI's Helm() runs)."""
    tool = helm_tool()
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(tool.path))
    return tool


@pytest.fixture
def helm(helm_as_env: Tool, kubeconfig: str, tmp_path: Path) -> Helm:
    return Helm(helm_as_env, kubeconfig=kubeconfig, home=tmp_path / "helm")


@pytest.fixture
def kube(kubeconfig: str) -> Iterator[KubeClient]:
    with KubeClient(kubeconfig, "mgmt") as client:
        yield client


def docker_text(ns: str, version: str = "1.34.x", replicas: int = 1) -> str:
    """The docker example on the in-memory provider, in ``ns``."""
    text = DOCKER.replace("version: 1.36.x", f"version: {version}")
    assert f"version: {version}" in text
    text = text.replace("name: md-0\n      replicas: 1", f"name: md-0\n      replicas: {replicas}")
    return inmemory.as_inmemory(text, ns)


def write(tmp_path: Path, text: str, name: str = "cluster.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def install_docker(tmp_path: Path, ns: str, kubeconfig: str) -> str:
    """The docker example (:func:`docker_text`) written into ``tmp_path`` and installed with
    ``scs-templates install``; returns the settings file."""
    settings_file = write(tmp_path, docker_text(ns))
    assert cli("install", settings_file, "--kubeconfig", kubeconfig) == 0
    return settings_file


def cli(*args: str) -> int:
    return main(list(args))


def delete_cli(
    settings_file: str, kubeconfig: str, *, timeout: float, poll_interval: float = 0.5
) -> int:
    """``scs-templates delete --yes`` with a timeout and poll interval."""
    timing = ("--timeout", f"{timeout:g}", "--poll-interval", f"{poll_interval:g}")
    return cli("delete", settings_file, "--kubeconfig", kubeconfig, "--yes", *timing)


def wait_until(plane: Plane, what: str, done: Callable[[], bool]) -> None:
    """Poll a condition of the real plane with a generous deadline (never a bare sleep)."""
    deadline = time.monotonic() + inmemory.STEP_TIMEOUT
    while not done():
        plane.check()
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.5)


def objects(plane: Plane, api_version: str, kind: str, ns: str) -> list[dict[str, Any]]:
    return plane.api.list(api_version, kind, ns)


def names(plane: Plane, api_version: str, kind: str, ns: str) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objects(plane, api_version, kind, ns))


def snapshot(plane: Plane, ns: str) -> dict[tuple[str, str], Any]:
    """Spec and generation of every cluster object we render (not helm's release Secrets)."""
    found = {}
    for api_version, kind in (
        (CAPI, "Cluster"),
        (INFRA, "DevCluster"),
        (KCP_API, "KubeadmControlPlane"),
        (CAPI, "MachineDeployment"),
        (CAPI, "MachineHealthCheck"),
        (BOOTSTRAP, "KubeadmConfigTemplate"),
        (INFRA, "DevMachineTemplate"),
    ):
        for obj in objects(plane, api_version, kind, ns):
            body = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
            found[(kind, obj["metadata"]["name"])] = (body, obj["metadata"]["generation"])
    return found


def cluster_condition(plane: Plane, ns: str, name: str, kind: str) -> str | None:
    """The status of the Cluster's condition ``kind`` ("True"/"False"/...), None if unset."""
    cluster = plane.api.get(CAPI, "Cluster", ns, name)
    for condition in ((cluster or {}).get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return str(condition.get("status"))
    return None


def set_finalizers(
    plane: Plane, ns: str, name: str, change: Callable[[list[str]], list[str]]
) -> None:
    """Change the Cluster's finalizers (read, modify, write with its resourceVersion)."""
    from testenv.kubeapi import APIError

    path = plane.api.path(CAPI, "Cluster", ns, name)
    while True:
        cluster = plane.api.get(CAPI, "Cluster", ns, name)
        assert cluster is not None
        meta = cluster["metadata"]
        patch = {
            "metadata": {
                "resourceVersion": meta["resourceVersion"],
                "finalizers": change(list(meta.get("finalizers") or [])),
            }
        }
        try:
            plane.api.request("PATCH", path, patch, content_type="application/merge-patch+json")
            return
        except APIError as error:
            if error.status != 409:  # a controller wrote in between: read again
                raise


def hold_deletion(plane: Plane, ns: str, name: str) -> None:
    wait_until(plane, "the Cluster", lambda: plane.api.get(CAPI, "Cluster", ns, name) is not None)
    set_finalizers(plane, ns, name, lambda f: [*f, HOLD])


def release_deletion(plane: Plane, ns: str, name: str) -> None:
    set_finalizers(plane, ns, name, lambda f: [x for x in f if x != HOLD])


def refuse(
    plane: Plane,
    ns: str,
    *,
    resource: str,
    operation: str,
    expression: str,
    message: str,
    probe: Callable[[], object],
) -> None:
    """A real ValidatingAdmissionPolicy (bound to ``ns``) that denies a write; waits until
    the API server enforces it (``probe`` is a dry-run of the write that must be denied)."""
    from testenv.kubeapi import APIError

    name = f"refuse-{ns}"
    plane.api.create(
        {
            "apiVersion": POLICY,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": ["*"],
                            "apiVersions": ["*"],
                            "operations": [operation],
                            "resources": [resource],
                        }
                    ]
                },
                "validations": [{"expression": expression, "message": message}],
            },
        }
    )
    plane.api.create(
        {
            "apiVersion": POLICY,
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
                "matchResources": {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": ns},
                    }
                },
            },
        }
    )

    def enforced() -> bool:
        try:
            probe()
        except APIError as error:
            return message in str(error)
        return False

    wait_until(plane, f"the API server to enforce {name}", enforced)


# --------------------------------------------------------------------------- full cycle


def test_install_upgrade_status_diff(
    plane: Plane,
    ns: str,
    kubeconfig: str,
    kube: KubeClient,
    helm_as_env: Tool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_file = install_docker(tmp_path, ns, kubeconfig)
    out = capsys.readouterr().out
    v134 = cluster_version("1.34.x")
    assert f"release dev in namespace {ns}: revision 1, deployed (Kubernetes {v134})" in out
    assert names(plane, CAPI, "Cluster", ns) == ["dev"]
    assert len(names(plane, CAPI, "MachineDeployment", ns)) == 2

    assert cli("status", settings_file, "--kubeconfig", kubeconfig, "-o", "json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["release"]["revision"] == 1 and report["release"]["status"] == "deployed"
    assert report["kubernetesVersion"] == v134
    assert isinstance(report["cluster"]["phase"], str)

    # the real controllers provision the cluster; status reports what they wrote
    wait_until(
        plane, "Available", lambda: cluster_condition(plane, ns, "dev", "Available") == "True"
    )
    assert cli("status", settings_file, "--kubeconfig", kubeconfig, "--context", "mgmt") == 0
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if line.startswith("Cluster dev: ")]
    assert line.startswith("Cluster dev: phase Provisioned; InfrastructureReady=True, "), line
    assert line.endswith(", Available=True"), line
    kubeconfig_of_cluster = kube.cluster_kubeconfig(ns, "dev")  # written by the real CAPI
    assert kubeconfig_of_cluster is not None and "clusters:" in kubeconfig_of_cluster

    assert cli("diff", settings_file, "--kubeconfig", kubeconfig, "--exit-code") == 0
    count = len(render(settings_from_text(docker_text(ns)), helm=Helm(helm_as_env)).objects)
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith(f"0 to add, 0 to change, 0 to remove, {count} unchanged")
    )

    # an upgrade without a change: a new revision, the objects stay exactly as they were
    before = snapshot(plane, ns)
    assert cli("install", settings_file, "--kubeconfig", kubeconfig) == 0
    assert "revision 2, deployed" in capsys.readouterr().out
    assert snapshot(plane, ns) == before
    assert (plane.api.get(CAPI, "Cluster", ns, "dev") or {})["status"]["phase"] == "Provisioned"

    # a settings change shows in diff (exit 3 with --exit-code) and is applied by install
    changed = write(tmp_path, docker_text(ns, replicas=4))
    assert cli("diff", changed, "--kubeconfig", kubeconfig, "--exit-code") == 3
    out = capsys.readouterr().out
    assert f"changed: MachineDeployment/{ns}/capi-dev-md-0" in out
    assert "-  replicas: 1\n+  replicas: 4\n" in out
    assert f"0 to add, 1 to change, 0 to remove, {count - 1} unchanged" in out
    assert cli("diff", changed, "--kubeconfig", kubeconfig) == 0  # without --exit-code
    capsys.readouterr()
    assert cli("install", changed, "--kubeconfig", kubeconfig) == 0
    assert "revision 3, deployed" in capsys.readouterr().out
    md = plane.api.get(CAPI, "MachineDeployment", ns, "capi-dev-md-0")
    assert md is not None and md["spec"]["replicas"] == 4
    assert cli("diff", changed, "--kubeconfig", kubeconfig, "--exit-code") == 0


def test_status_and_diff_before_install(
    ns: str,
    kubeconfig: str,
    helm_as_env: Tool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_file = write(tmp_path, docker_text(ns))
    assert cli("status", settings_file, "--kubeconfig", kubeconfig) == 0
    out = capsys.readouterr().out
    assert f"release dev is not installed in namespace {ns}" in out
    assert "Cluster dev: not found" in out
    assert cli("diff", settings_file, "--kubeconfig", kubeconfig, "--exit-code") == 3
    out = capsys.readouterr().out
    assert f"added: Cluster/{ns}/dev" in out
    assert re.search(r"not installed yet: \d+ to add, 0 to change, 0 to remove, 0 unchanged", out)


# --------------------------------------------------------------------------- delete


def test_delete_removes_the_cluster_first_then_release_templates_and_secret(
    plane: Plane,
    ns: str,
    helm: Helm,
    kube: KubeClient,
) -> None:
    """While the real controllers tear the cluster down (held at the end by a finalizer),
    nothing else is deleted: the release, the kept templates and the Secrets stay."""
    first = settings_from_text(docker_text(ns))
    lifecycle.install(first, helm=helm)
    # an upgrade that changes a worker group's machine template: helm keeps the old one (and
    # it is not pruned here: delete must remove every generation, also those an install did
    # not prune)
    second = settings_from_text(docker_text(ns).replace("tier: batch", "tier: batch2"))
    lifecycle.install(second, helm=helm, prune=False)
    templates = names(plane, BOOTSTRAP, "KubeadmConfigTemplate", ns)
    assert len(templates) == 3  # md-0, old and new md-1
    encryption = plane.api.get("v1", "Secret", ns, "capi-dev-encryption")
    assert encryption is not None
    hold_deletion(plane, ns, "dev")

    lines: list[str] = []
    done: list[lifecycle.DeleteResult | BaseException] = []

    def run() -> None:
        try:
            done.append(
                lifecycle.delete(
                    second,
                    helm=helm,
                    kube=kube,
                    timeout=inmemory.STEP_TIMEOUT,
                    poll_interval=0.5,
                    progress=lines.append,
                )
            )
        except BaseException as error:  # reported by the test thread
            done.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        # the real controllers delete every descendant; only our finalizer is left
        wait_until(
            plane,
            "the Cluster's descendants deleted",
            lambda: (
                not objects(plane, CAPI, "Machine", ns)
                and not objects(plane, CAPI, "MachineDeployment", ns)
                and not objects(plane, KCP_API, "KubeadmControlPlane", ns)
                and not objects(plane, INFRA, "DevCluster", ns)
            ),
        )
        cluster = plane.api.get(CAPI, "Cluster", ns, "dev")
        assert cluster is not None and "deletionTimestamp" in cluster["metadata"]
        assert helm.status("dev", namespace=ns) is not None, "the release waits"
        assert names(plane, BOOTSTRAP, "KubeadmConfigTemplate", ns) == templates
        assert plane.api.get("v1", "Secret", ns, "capi-dev-encryption") is not None
        assert thread.is_alive()
    finally:
        release_deletion(plane, ns, "dev")
        thread.join(inmemory.STEP_TIMEOUT)
    (result,) = done
    assert isinstance(result, lifecycle.DeleteResult), result
    assert result.cluster_deleted and result.release_uninstalled
    assert any("being deleted" in line for line in lines)
    assert "Cluster dev: deleted" in " ".join(lines)
    for api_version, kind in (
        (CAPI, "Cluster"),
        (INFRA, "DevMachineTemplate"),
        (BOOTSTRAP, "KubeadmConfigTemplate"),
        (CAPI, "MachineDeployment"),
        (INFRA, "DevCluster"),
    ):
        assert objects(plane, api_version, kind, ns) == [], kind
    assert not [
        s["metadata"]["name"]
        for s in objects(plane, "v1", "Secret", ns)
        if s["metadata"]["name"].startswith(("sh.helm.release", "capi-dev-encryption"))
    ]

    # idempotent: a second delete finds nothing and succeeds
    again = lifecycle.delete(second, helm=helm, kube=kube, poll_interval=0.5)
    assert not again.cluster_deleted and not again.release_uninstalled and again.removed == []


def test_delete_timeout_deletes_nothing_else(
    plane: Plane,
    ns: str,
    kubeconfig: str,
    helm_as_env: Tool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_file = install_docker(tmp_path, ns, kubeconfig)
    hold_deletion(plane, ns, "dev")  # a controller that never finishes
    assert delete_cli(settings_file, kubeconfig, timeout=1, poll_interval=0.05) == 1
    err = capsys.readouterr().err
    assert f"Cluster {ns}/dev still exists after 1s" in err and "nothing else was deleted" in err
    cluster = plane.api.get(CAPI, "Cluster", ns, "dev")
    assert cluster is not None and "deletionTimestamp" in cluster["metadata"]
    assert objects(plane, INFRA, "DevMachineTemplate", ns)
    assert any(
        s["metadata"]["name"].startswith("sh.helm.release")
        for s in objects(plane, "v1", "Secret", ns)
    )

    release_deletion(plane, ns, "dev")  # the controller finished after all
    assert delete_cli(settings_file, kubeconfig, timeout=inmemory.STEP_TIMEOUT) == 0
    assert "release dev uninstalled" in capsys.readouterr().out
    assert objects(plane, INFRA, "DevMachineTemplate", ns) == []
    owned = ("sh.helm.release", "capi-dev", "dev-")
    assert [
        s["metadata"]["name"]
        for s in objects(plane, "v1", "Secret", ns)
        if s["metadata"]["name"].startswith(owned)
    ] == []


def test_delete_needs_yes_without_a_terminal(
    plane: Plane,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Refused before any API call: with an API server nobody answers at, a call would be
    exit 1 (unreachable), not the exit 2 of the refusal."""
    from testenv.ports import free_port

    nowhere = f"https://127.0.0.1:{free_port()}"
    config = inmemory.write_kubeconfig(plane, tmp_path / "kc", server=nowhere)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli("delete", write(tmp_path, docker_text("default")), "--kubeconfig", config) == 2
    assert "pass --yes" in capsys.readouterr().err


# --------------------------------------------------------------------------- failures


@pytest.mark.parametrize("vm_startup", [inmemory.NEVER])  # no machine needs to start
def test_failed_upgrade_is_rolled_back(
    plane: Plane,
    ns: str,
    kubeconfig: str,
    helm: Helm,
    helm_as_env: Tool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    install_docker(tmp_path, ns, kubeconfig)
    path = plane.api.path(CAPI, "MachineDeployment", ns, "capi-dev-md-0")
    refuse(
        plane,
        ns,
        resource="machinedeployments",
        operation="UPDATE",
        expression="object.spec.replicas != 5",
        message="injected: MachineDeployment rejected",
        probe=lambda: plane.api.request(
            "PATCH",
            path,
            {"spec": {"replicas": 5}},
            params={"dryRun": "All"},
            content_type="application/merge-patch+json",
        ),
    )
    assert (
        cli(
            "install",
            write(tmp_path, docker_text(ns, replicas=5), "b.yaml"),
            "--kubeconfig",
            kubeconfig,
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "injected: MachineDeployment rejected" in err
    release = helm.status("dev", namespace=ns)
    assert release is not None and release.status == "deployed" and release.revision == 3
    md = plane.api.get(CAPI, "MachineDeployment", ns, "capi-dev-md-0")
    assert md is not None and md["spec"]["replicas"] == 1


@pytest.mark.parametrize("vm_startup", [inmemory.NEVER])  # no machine needs to start
def test_failed_first_install_is_removed(
    plane: Plane,
    ns: str,
    helm: Helm,
    helm_as_env: Tool,
) -> None:
    settings = settings_from_text(docker_text(ns))
    (kcp,) = [o for o in render(settings, helm=helm).objects if o["kind"] == "KubeadmControlPlane"]
    # helm 4 creates with a server-side apply PATCH: admission sees a CREATE
    refuse(
        plane,
        ns,
        resource="kubeadmcontrolplanes",
        operation="CREATE",
        expression="false",
        message="injected failure",
        probe=lambda: plane.api.create(kcp, namespace=ns, dry_run=True),
    )
    with pytest.raises(ToolError, match="injected failure"):
        lifecycle.install(settings, helm=helm)
    assert helm.status("dev", namespace=ns) is None
    wait_until(plane, "the Cluster removed", lambda: not objects(plane, CAPI, "Cluster", ns))


def test_unreachable_api_and_bad_kubeconfig(
    plane: Plane, tmp_path: Path, capsys: pytest.CaptureFixture[str], helm_as_env: Tool
) -> None:
    from testenv.ports import free_port

    settings_file = write(tmp_path, docker_text("default"))
    nowhere = f"https://127.0.0.1:{free_port()}"  # nothing listens there
    config = inmemory.write_kubeconfig(plane, tmp_path / "kc", server=nowhere)
    assert cli("install", settings_file, "--kubeconfig", config) == 1
    # the server is asked for its version before helm runs (issue #41, finding 7)
    assert f"cannot reach the kubernetes api at {nowhere}" in capsys.readouterr().err.lower()
    assert cli("status", settings_file, "--kubeconfig", config, "--context", "nope") == 2
    assert "nope" in capsys.readouterr().err
    assert cli("install", settings_file, "--kubeconfig", config, "--context", "nope", "--wait") == 2
    assert cli("delete", settings_file, "--kubeconfig", str(tmp_path / "missing"), "--yes") == 2
    capsys.readouterr()
    with pytest.raises(InputError, match="nope"):
        KubeClient(config, "nope")


# --------------------------------------------------------------------------- version guard


@pytest.mark.parametrize("vm_startup", [inmemory.NEVER])  # no machine needs to start
def test_version_guard_on_a_cluster_of_an_older_versions_table(
    plane: Plane,
    ns: str,
    kubeconfig: str,
    helm_as_env: Tool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A release installed by an older scs-templates (whose table said 1.33.x = v1.33.5, a
    patch this table does not even have a kind image for) still gets the one-minor-at-a-time
    rule and the downgrade refusal against what it RUNS, not against the new table."""
    import scs_templates._render.values

    def older_table(text: str, provider: str) -> ResolvedVersion:
        del text, provider
        return ResolvedVersion(KubernetesVersion(1, 33, 5))

    def kcp_version() -> str:
        (kcp,) = objects(plane, KCP_API, "KubeadmControlPlane", ns)
        return str(kcp["spec"]["version"])

    with monkeypatch.context() as patched:
        patched.setattr(scs_templates._render.values, "resolve_version", older_table)
        settings = write(tmp_path, docker_text(ns, "1.33.x"))
        assert cli("install", settings, "--kubeconfig", kubeconfig) == 0
    capsys.readouterr()
    assert kcp_version() == "v1.33.5"

    assert (
        cli(
            "install",
            write(tmp_path, docker_text(ns, "1.35.x"), "b.yaml"),
            "--kubeconfig",
            kubeconfig,
        )
        == 2
    )
    err = capsys.readouterr().err
    v135, v134 = cluster_version("1.35.x"), cluster_version("1.34.x")
    assert f"refusing to upgrade Kubernetes from v1.33.5 to {v135}" in err
    assert "upgrade to 1.34.x first" in err
    assert kcp_version() == "v1.33.5"

    assert (
        cli(
            "install",
            write(tmp_path, docker_text(ns, "1.34.x"), "c.yaml"),
            "--kubeconfig",
            kubeconfig,
        )
        == 0
    )
    assert f"Kubernetes v1.33.5 -> {v134}" in capsys.readouterr().out
    assert (
        cli(
            "install",
            write(tmp_path, docker_text(ns, "1.33.x"), "d.yaml"),
            "--kubeconfig",
            kubeconfig,
        )
        == 2
    )
    v133 = cluster_version("1.33.x")
    assert f"refusing to downgrade Kubernetes from {v134} to {v133}" in capsys.readouterr().err
    assert kcp_version() == v134


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


def test_install_wait_follows_the_cluster_conditions(
    plane: Plane,
    ns: str,
    helm: Helm,
    kube: KubeClient,
) -> None:
    """The real controllers move the Cluster through its conditions to Available.

    What is certain to be seen between the release and Available: the in-memory machines
    take ``inmemory.VM_STARTUP`` to start, so the Cluster is not Available at the first
    poll. Whether InfrastructureReady was still False then is up to how fast CAPD answered
    (a race, never asserted): only that the line reports it."""
    lines: list[str] = []
    result = lifecycle.install(
        settings_from_text(docker_text(ns)),
        helm=helm,
        kube=kube,
        wait=True,
        timeout=inmemory.STEP_TIMEOUT,
        poll_interval=0.2,
        progress=lines.append,
    )
    assert result.cluster is not None and result.cluster.available
    assert result.cluster.phase == "Provisioned"
    assert lines[0] == "created the encryption key Secret capi-dev-encryption"
    waiting = lines[1:-1]
    assert waiting, "the Cluster is not Available at once"
    assert all(line.startswith("Cluster dev: phase ") for line in waiting), waiting
    assert any("InfrastructureReady=" in line for line in waiting), waiting
    assert any("Available=False (NotAvailable)" in line for line in waiting), waiting
    assert lines[-1].startswith("Cluster dev: Available after")


@pytest.mark.parametrize("vm_startup", [inmemory.NEVER])  # machines never finish starting
def test_install_wait_timeout_reports_the_last_conditions(
    plane: Plane,
    ns: str,
    kubeconfig: str,
    helm_as_env: Tool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_file = install_docker(tmp_path, ns, kubeconfig)
    wait_until(
        plane,
        "Available=False",
        lambda: cluster_condition(plane, ns, "dev", "Available") == "False",
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
    assert re.search(rf"Cluster {ns}/dev is not Available after 1s: phase \w+", err), err
    assert re.search(r"Available=False reason=\w+", err), err
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
    plane: Plane,
    ns: str,
    kubeconfig: str,
    helm: Helm,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The OpenStack chart as it is (admitted by the real CAPO webhooks)."""
    text = inmemory.in_namespace(OPENSTACK, ns)
    settings_file = write(tmp_path, text)
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(CLOUDS)
    # per-cluster application credential (the default), but the cloud entry does not exist
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tmp_path / "no-clouds.yaml"))
    assert cli("install", settings_file, "--kubeconfig", kubeconfig) == 2
    assert "cloud 'openstack'" in capsys.readouterr().err
    # told not to touch OpenStack, given no credentials, and no credentials Secret exists
    assert cli("install", settings_file, "--kubeconfig", kubeconfig, "--skip-openstack") == 2
    err = capsys.readouterr().err
    assert f"credentials Secret {ns}/capi-demo-cloud-config does not exist: let install" in err
    assert "--write-secret FILE` first" in err  # the provider's credentials_hint
    assert helm.status("demo", namespace=ns) is None  # nothing was installed
    assert (
        cli("install", settings_file, "--kubeconfig", kubeconfig, "--clouds-yaml", str(clouds)) == 0
    )
    secret = plane.api.get("v1", "Secret", ns, "capi-demo-cloud-config")
    assert secret is not None
    data = {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}
    assert sorted(data) == ["cloud.conf", "clouds.yaml"]  # no --cacert: no cacert key
    cloud_conf = data["cloud.conf"]
    assert 'application-credential-secret="S3CR3T-VALUE-42"' in cloud_conf
    for args in (("status",), ("diff",), ("status", "-o", "json")):
        assert cli(*args, settings_file, "--kubeconfig", kubeconfig) == 0
    assert (
        cli(
            "diff",
            write(tmp_path, text.replace("replicas: 3", "replicas: 2"), "b.yaml"),
            "--kubeconfig",
            kubeconfig,
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "S3CR3T-VALUE-42" not in captured.out + captured.err
    assert f"Secret/{ns}/capi-demo-cloud-config" not in captured.out  # keys equal: unchanged


# --------------------------------------------------------------------------- helm 4 waiting


@pytest.mark.parametrize("vm_startup", [inmemory.NEVER])  # machines never finish starting
def test_upgrade_while_the_cluster_is_still_provisioning(
    plane: Plane,
    ns: str,
    kubeconfig: str,
    tmp_path: Path,
    helm_as_env: Tool,
) -> None:
    """helm must not wait for the Cluster (helm 4's status watcher would, for an hour)."""
    helm = Helm(helm_as_env, kubeconfig=kubeconfig, home=tmp_path / "helm")
    lifecycle.install(settings_from_text(docker_text(ns)), helm=helm)
    wait_until(
        plane,
        "Available=False",
        lambda: cluster_condition(plane, ns, "dev", "Available") == "False",
    )
    lifecycle.install(settings_from_text(docker_text(ns, replicas=2)), helm=helm, helm_timeout=1)
    md = plane.api.get(CAPI, "MachineDeployment", ns, "capi-dev-md-0")
    assert md is not None and md["spec"]["replicas"] == 2


def test_cluster_kubeconfig_secret_is_read(plane: Plane, kube: KubeClient) -> None:
    namespace = plane.namespace("kubeconfig")
    assert kube.cluster_kubeconfig(namespace, "dev") is None
    value = base64.b64encode(b"apiVersion: v1\nkind: Config\n").decode()
    plane.api.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "dev-kubeconfig", "namespace": namespace},
            "data": {"value": value},
        }
    )
    assert kube.cluster_kubeconfig(namespace, "dev") == "apiVersion: v1\nkind: Config\n"
