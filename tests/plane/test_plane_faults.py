"""The REAL kube-apiserver stops answering or dies while ``scs-templates`` talks to it.

No double: the module's own plane (conftest ``webhook_plane``: etcd, the real kube-apiserver,
the real Cluster API and CAPO webhooks, controllers that reconcile nothing; not the session's
plane, which other modules share) and its kube-apiserver process is SIGSTOPped (its sockets
stay open and nothing answers: a hung or overloaded server) or SIGKILLed (a crash
mid-request), then resumed or started again on the same port and etcd
(:meth:`testenv.process.Daemon.pause` / ``kill`` / ``restart``). The CLI runs as a user
runs it, in a process of its own, with the OpenStack example on the real chart
(``--skip-openstack --clouds-yaml``: no cloud is touched; the credentials hold a canary).

What the user sees, every time: the command ends within the wall clock they set
(``--timeout``), helm's whole process group is gone, stderr holds ONE error line and no
traceback, the exit code is 1, the canary is in no output, no temporary file is left, and
what was not done is not half done (delete removed nothing after the Cluster; the next
command after the fault completes the job).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support import REPO, admission_gate, helm_tool

if TYPE_CHECKING:
    from testenv import Plane
    from testenv.process import Daemon


CLI = "import sys; from scs_templates._cli.main import main; sys.exit(main(sys.argv[1:]))"
CAPI = "cluster.x-k8s.io/v1beta2"
HOLD = "tests.scs.community/hold"
CANARY = "S3CR3T-FAULT-CANARY-7f3a"
CLOUDS = (
    "clouds:\n  openstack:\n    auth:\n      auth_url: https://keystone.invalid/v3\n"
    "      application_credential_id: app-cred-id\n"
    f"      application_credential_secret: {CANARY}\n"
)
#: The wall clock the tests set (the CLI's global ``--timeout``).
KNOB = 20.0
#: What a loaded 2-core machine may add to it (interpreter start, helm's SIGTERM grace).
SLACK = 25.0


@pytest.fixture(scope="module")
def apiserver(webhook_plane: Plane) -> Iterator[Daemon]:
    """The module plane's kube-apiserver, running and answering again after each test."""
    daemon = webhook_plane.component("kube-apiserver")
    yield daemon
    with contextlib.suppress(ProcessLookupError):
        daemon.resume()


@pytest.fixture
def ns(webhook_plane: Plane, apiserver: Daemon) -> str:
    _answering(webhook_plane, apiserver)
    return webhook_plane.namespace("faults")


def _answering(plane: Plane, daemon: Daemon) -> None:
    """Resume / restart ``daemon`` if a test left it stopped or dead; wait for /readyz."""
    with contextlib.suppress(ProcessLookupError):
        daemon.resume()
    if not daemon.running():
        daemon.restart()
    deadline = time.monotonic() + 180
    while not _healthy(plane):
        if time.monotonic() > deadline:
            pytest.fail("the kube-apiserver did not answer again within 180 s")
        time.sleep(0.5)


def _healthy(plane: Plane) -> bool:
    try:
        return bool(plane.api.healthy())
    except Exception:
        return False


def settings_file(tmp_path: Path, ns: str, name: str) -> Path:
    text = (REPO / "examples" / "openstack-minimal.yaml").read_text()
    text = text.replace("  name: demo\n", f"  name: {name}\n  namespace: {ns}\n")
    assert f"namespace: {ns}" in text
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


@dataclass
class Run:
    """One CLI process and every helm process it started (pid, process group, argv)."""

    process: subprocess.Popen[str]
    started: float
    tmp: Path
    helms: dict[int, tuple[int, str]] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0

    @property
    def code(self) -> int | None:
        return self.process.returncode


def _children(pid: int) -> Iterator[tuple[int, int, str]]:
    """(pid, pgid, argv) of the direct children of ``pid`` (from /proc)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if int(fields[1]) == pid:
            yield int(entry.name), int(fields[2]), argv


def _watch(run: Run) -> None:
    while run.process.poll() is None:
        for pid, pgid, argv in _children(run.process.pid):
            if "helm" in argv.split(" ", 1)[0]:
                run.helms.setdefault(pid, (pgid, argv))
        time.sleep(0.02)


def start_cli(tmp_path: Path, *argv: str) -> tuple[Run, threading.Thread]:
    tmp = tmp_path / f"tmp-{time.monotonic_ns()}"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    env.pop("SCS_TEMPLATES_TIMEOUT", None)
    process = subprocess.Popen(
        [sys.executable, "-c", CLI, "--timeout", f"{KNOB:g}s", *argv],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    run = Run(process, time.monotonic(), tmp)
    watcher = threading.Thread(target=_watch, args=(run,), daemon=True)
    watcher.start()
    return run, watcher


def finish(run: Run, watcher: threading.Thread, limit: float = 600) -> Run:
    try:
        run.stdout, run.stderr = run.process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        run.process.kill()
        run.stdout, run.stderr = run.process.communicate()
        pytest.fail(f"the CLI ran past {limit:.0f} s: {run.stderr[-2000:]}")
    run.seconds = time.monotonic() - run.started
    watcher.join(5)
    return run


def cli(tmp_path: Path, *argv: str) -> Run:
    return finish(*start_cli(tmp_path, *argv))


def assert_clean_failure(run: Run) -> None:
    """Exit 1, one error line, no traceback, no canary, helm's groups gone, no temp file."""
    assert run.code == 1, (run.code, run.stderr)
    assert "Traceback" not in run.stderr, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("scs-templates: ")]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("scs-templates: error: "), run.stderr
    assert CANARY not in run.stdout + run.stderr
    for pid, (pgid, argv) in run.helms.items():
        with pytest.raises(ProcessLookupError):
            os.killpg(pgid, 0)  # nothing of helm's group is left (pid, pgid, argv in the id)
        assert pid == pgid, f"helm {argv} did not lead its own process group"
    assert not list(run.tmp.iterdir()), f"temporary files left: {list(run.tmp.iterdir())}"


def install(tmp_path: Path, settings: Path, kubeconfig: Path) -> Run:
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(CLOUDS)
    clouds.chmod(0o600)
    return cli(
        tmp_path,
        "install",
        str(settings),
        "--kubeconfig",
        str(kubeconfig),
        "--skip-openstack",
        "--clouds-yaml",
        str(clouds),
    )


def release_listed(kubeconfig: Path, ns: str, name: str, home: Path) -> bool:
    """Whether helm lists the release (in any state)."""
    from scs_templates._tools.helm import Helm

    return (
        Helm(helm_tool(), kubeconfig=str(kubeconfig), home=home).status(name, namespace=ns)
        is not None
    )


def set_hold(plane: Plane, ns: str, name: str, *, held: bool) -> None:
    """Add or remove the test's finalizer on the Cluster (it holds its deletion)."""
    cluster = plane.api.get(CAPI, "Cluster", ns, name)
    assert cluster is not None
    finalizers = [f for f in cluster["metadata"].get("finalizers") or [] if f != HOLD]
    if held:
        finalizers.append(HOLD)
    patch = {"metadata": {"finalizers": finalizers}}
    path = plane.api.path(CAPI, "Cluster", ns, name)
    plane.api.request("PATCH", path, patch, content_type="application/merge-patch+json")


def wait_until(what: str, done: Any, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_install_ends_at_the_wall_clock_when_the_api_server_stops_answering_mid_helm(
    webhook_plane: Plane, apiserver: Daemon, ns: str, tmp_path: Path
) -> None:
    """``scs-templates --timeout 20s install``: the API server stops answering (SIGSTOP)
    while it holds helm upgrade --install's write of the Cluster (an admission webhook of
    the test holds it: tests/support/admission_gate.py; polling for helm's release record
    raced helm, which had sometimes applied everything before the stop). The command ends
    at the user's 20 s with helm's group gone and one line naming helm and the limit.
    Before, the wall clock of ``helm upgrade --install`` was max(--timeout, helm's 300 s +
    60 s): 6 minutes whatever the user had set. helm's record of the release stays
    ``pending-install`` (it was stored before the stop): the next install refuses with one
    line naming the state and the way out (``scs-templates delete``), after which the
    install completes."""
    settings = settings_file(tmp_path, ns, "stalled")
    kubeconfig = webhook_plane.kubeconfig
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(CLOUDS)
    clouds.chmod(0o600)
    argv = ("install", str(settings), "--kubeconfig", str(kubeconfig), "--skip-openstack")
    gate = admission_gate.holding(webhook_plane, ns, tmp_path, group="cluster.x-k8s.io",
                                  resource="clusters", kind="Cluster", name="stalled")  # fmt: skip
    with gate as held:
        run, watcher = start_cli(tmp_path, *argv, "--clouds-yaml", str(clouds))
        # helm's write of the Cluster is at admission: helm is past its first requests (a new
        # connection would end in helm's own TLS handshake timeout) and waits on the one it holds
        wait_until(
            "helm writing the Cluster",
            lambda: held.arrived.is_set() or run.process.poll() is not None,
        )
        assert run.process.poll() is None, f"install ended before helm was held: {run.stderr}"
        try:
            apiserver.pause()
            stopped_at = time.monotonic()
            finish(run, watcher, limit=KNOB + 600)
            after_stop = time.monotonic() - stopped_at
        finally:
            apiserver.resume()
    assert_clean_failure(run)
    expected = f"helm upgrade --install stalled did not finish within {KNOB:g} s"
    assert expected in run.stderr, run.stderr
    assert after_stop <= KNOB + SLACK, f"{after_stop:.0f} s after the stop (wall clock {KNOB})"
    assert any("upgrade" in argv for _, argv in run.helms.values()), run.helms

    # helm's record of the stopped first install says pending-install: helm refuses every
    # change; the next install says so and how to go on (before: helm's "another operation
    # (install/upgrade/rollback) is in progress" and nothing else)
    _answering(webhook_plane, apiserver)
    refused = install(tmp_path, settings, kubeconfig)
    assert_clean_failure(refused)
    assert f"release stalled in namespace {ns} is pending-install" in refused.stderr
    assert "`scs-templates delete` on these settings" in refused.stderr
    removed = cli(tmp_path, "delete", str(settings), "--kubeconfig", str(kubeconfig), "--yes",
                  "--skip-openstack", "--poll-interval", "1")  # fmt: skip
    assert removed.code == 0, removed.stderr
    again = install(tmp_path, settings, kubeconfig)
    assert again.code == 0, again.stderr
    assert CANARY not in again.stdout + again.stderr
    assert "release stalled in namespace" in again.stdout and "deployed" in again.stdout


@pytest.mark.parametrize("fault", ["stopped", "killed"])
def test_delete_that_loses_the_api_server_while_waiting_deletes_nothing_more(
    webhook_plane: Plane, apiserver: Daemon, ns: str, tmp_path: Path, fault: str
) -> None:
    """``scs-templates --timeout 20s delete --yes`` waits for the Cluster (a finalizer of
    the test holds it, as a slow controller would) when the API server stops answering
    (SIGSTOP) or dies (SIGKILL). The command ends within the 20 s (before, each request
    that got no answer was sent 4 times with 60 s each: 4 minutes per poll) with one line
    saying the API cannot be reached and why, exit 1; NOTHING after the Cluster was
    deleted (release, credentials Secret). Once the API server answers again and the
    finalizer is gone, the same delete completes."""
    name = f"lost-{fault}"
    settings = settings_file(tmp_path, ns, name)
    kubeconfig = webhook_plane.kubeconfig
    first = install(tmp_path, settings, kubeconfig)
    assert first.code == 0, first.stderr
    secrets = webhook_plane.api.request("GET", f"/api/v1/namespaces/{ns}/secrets")
    names = sorted(s["metadata"]["name"] for s in secrets["items"])
    secret = next(n for n in names if n.endswith("cloud-config"))  # the credentials install wrote
    set_hold(webhook_plane, ns, name, held=True)

    def being_deleted() -> bool:
        cluster = webhook_plane.api.get(CAPI, "Cluster", ns, name)
        return cluster is not None and "deletionTimestamp" in cluster["metadata"]

    argv = ("delete", str(settings), "--kubeconfig", str(kubeconfig), "--yes", "--skip-openstack")
    run, watcher = start_cli(tmp_path, *argv, "--timeout", "10m", "--poll-interval", "1")
    try:
        wait_until("delete deleted the Cluster", being_deleted)
        time.sleep(1.5)  # the next poll goes over the connection the client keeps open
        if fault == "stopped":
            apiserver.pause()
        else:
            apiserver.kill()
        lost_at = time.monotonic()
        finish(run, watcher, limit=600)
        after_loss = time.monotonic() - lost_at
    finally:
        _answering(webhook_plane, apiserver)
    assert_clean_failure(run)
    assert "cannot reach the Kubernetes API at https://127.0.0.1:" in run.stderr, run.stderr
    assert "Pool(" not in run.stderr and "object at 0x" not in run.stderr, run.stderr
    if fault == "stopped":
        assert "no answer in time" in run.stderr, run.stderr
    assert after_loss <= KNOB + SLACK, f"{after_loss:.0f} s after the fault"
    # nothing after the Cluster was deleted
    assert release_listed(kubeconfig, ns, name, tmp_path / "helm")
    assert webhook_plane.api.request("GET", f"/api/v1/namespaces/{ns}/secrets/{secret}")
    assert webhook_plane.api.get(CAPI, "Cluster", ns, name) is not None

    set_hold(webhook_plane, ns, name, held=False)
    again = cli(tmp_path, *argv, "--poll-interval", "1")
    assert again.code == 0, again.stderr
    assert not release_listed(kubeconfig, ns, name, tmp_path / "helm")
    assert webhook_plane.api.get(CAPI, "Cluster", ns, name) is None
    assert CANARY not in again.stdout + again.stderr
