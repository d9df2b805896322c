"""Every OpenStack call has a wall clock (issue #41, finding 3).

A Keystone behind an authenticating proxy answers ``GET /v3`` with 401: keystoneauth then
re-authenticated inside its discovery and took its own non-reentrant lock again, and
``openstack preflight`` and ``appcred create`` hung for ever, whatever ``--timeout`` said.
Now the login runs where a stuck call can be abandoned and every request has the timeout as
its read timeout: a fault is exit 1 with one line naming the endpoint, within the timeout.

The cloud is :class:`FaultyKeystone`, a named fault-injection double on loopback that
answers every request with 401, with 500, or never. The CLI runs in a subprocess so that a
hang (the bug) is a failed test, not a stuck suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support import serving_in_thread

pytest.importorskip("openstack", reason="openstacksdk is not installed")

TIMEOUT = 3  # --timeout of the runs: the test stays fast
#: A hang that the fix would have ended long before this is the bug itself.
HANG = 30


class FaultyKeystone(BaseHTTPRequestHandler):
    """FAULT-INJECTION DOUBLE of Keystone: every request gets the server's ``fault``:
    ``401`` (an authenticating proxy in front), ``500`` (a broken service) or ``never``
    (accepts the connection and never answers)."""

    fault = "401"
    released = threading.Event()

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.fault == "never":
            self.released.wait(HANG)
            return
        status = int(self.fault)
        body = b'{"error": {"code": %d, "message": "injected fault", "title": "Fault"}}' % status
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if status == 401:
            self.send_header("WWW-Authenticate", f'Keystone uri="{self.headers.get("Host")}"')
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_HEAD = _answer

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test output is not the place for its request log."""


@pytest.fixture(params=["401", "500", "never"])
def keystone(request: pytest.FixtureRequest) -> Iterator[str]:
    """The ``auth_url`` of a :class:`FaultyKeystone` with the parametrized fault."""
    handler = type("Faulty", (FaultyKeystone,), {"fault": request.param})
    handler.released = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    try:
        with serving_in_thread(server, "faulty-keystone") as url:
            yield f"{url}/v3"
    finally:
        handler.released.set()


@pytest.fixture
def cloud_env(tmp_path: Path, keystone: str) -> dict[str, str]:
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(
        "clouds:\n  faulty:\n    auth_type: password\n    auth:\n"
        f"      auth_url: {keystone}\n      username: demo\n      password: not-a-real-pass\n"
        "      project_name: demo\n      user_domain_name: Default\n"
        "      project_domain_name: Default\n    region_name: RegionOne\n"
    )
    clouds.chmod(0o600)
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=str(clouds))
    env.pop("OS_CLOUD", None)
    return env


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    path = tmp_path / "settings.yaml"
    path.write_text(
        "apiVersion: scs-templates.scs.community/v1alpha1\nkind: ClusterSettings\n"
        "metadata:\n  name: demo\nspec:\n  provider: openstack\n"
        "  controlPlane:\n    replicas: 1\n    machineType: m\n"
        "  workers:\n    - name: workers\n      replicas: 1\n      machineType: m\n"
        "  openstack:\n    cloud: faulty\n"
    )
    return path


@pytest.mark.parametrize(
    "command", [["openstack", "preflight"], ["openstack", "appcred", "create"]],
    ids=["preflight", "appcred-create"],
)  # fmt: skip
def test_finding3_openstack_calls_are_bounded_by_timeout(
    cloud_env: dict[str, str], settings_file: Path, keystone: str, command: list[str]
) -> None:
    argv = [sys.executable, "-m", "scs_templates._cli.main", "--timeout", str(TIMEOUT)]
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*argv, *command, str(settings_file)],
            env=cloud_env,
            capture_output=True,
            text=True,
            timeout=HANG,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(command)} hung for {HANG} s despite --timeout {TIMEOUT}")
    took = time.monotonic() - started
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert len(lines) == 1, lines
    assert keystone.rsplit("/", 1)[0] in lines[0], lines
    assert "not-a-real-pass" not in done.stdout + done.stderr
    assert took < TIMEOUT * 4 + 20, took  # the timeout (per call) and the start of Python
