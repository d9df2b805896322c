"""Every OpenStack call has a wall clock (issue #41, finding 3).

A Keystone behind an authenticating proxy answers ``GET /v3`` with 401: keystoneauth then
re-authenticated inside its discovery and took its own non-reentrant lock again, and
``openstack preflight`` and ``appcred create`` hung for ever, whatever ``--timeout`` said.
Now the login and every later call run where a stuck call can be abandoned: a fault is exit
1 with one line naming the endpoint, within the timeout. A server that trickles a byte at a
time never trips a per-request read timeout: only the wall clock ends that call.

The cloud is :class:`FaultyKeystone`, a named fault-injection double on loopback that
answers every request with 401, with 500, never, or a byte at a time for ever (``trickle``);
or, with ``after_login``, serves the login (discovery and a token whose catalog points at
itself) and injects the fault into every later call. The CLI runs in a subprocess so that a
hang (the bug) is a failed test, not a stuck suite. tests/cloud/test_openstack_timeouts_real.py
proves the same against the real Keystone and Neutron.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support import answer_json, answer_trickling, serving_in_thread

pytest.importorskip("openstack", reason="openstacksdk is not installed")

TIMEOUT = 1  # --timeout of the runs (the shortest): the test stays fast
#: --timeout where the login must succeed first: a second more for it on a loaded machine.
AFTER_LOGIN_TIMEOUT = 2
#: A hang that the fix would have ended long before this is the bug itself.
HANG = 30


def _token(base: str) -> bytes:
    """A Keystone v3 token of user ``u-demo`` in project ``p-demo`` whose catalog puts
    identity and network on this server (``base``)."""

    def service(kind: str, url: str) -> dict[str, object]:
        endpoint = {"id": f"e-{kind}", "interface": "public", "region": "RegionOne"}
        return {
            "type": kind,
            "id": f"s-{kind}",
            "name": kind,
            "endpoints": [{**endpoint, "region_id": "RegionOne", "url": url}],
        }

    domain = {"id": "default", "name": "Default"}
    token = {
        "methods": ["password"],
        "user": {"id": "u-demo", "name": "demo", "domain": domain},
        "project": {"id": "p-demo", "name": "demo", "domain": domain},
        "roles": [{"id": "r-member", "name": "member"}],
        "audit_ids": ["a-demo"],
        "issued_at": "2026-01-01T00:00:00.000000Z",
        "expires_at": "2099-01-01T00:00:00.000000Z",
        "is_domain": False,
        "catalog": [service("identity", f"{base}/v3"), service("network", f"{base}/network")],
    }
    return json.dumps({"token": token}).encode()


def _discovery(base: str) -> bytes:
    """Keystone's ``GET /v3``: the identity API v3."""
    version = {
        "id": "v3.14",
        "status": "stable",
        "updated": "2020-04-07T00:00:00Z",
        "links": [{"rel": "self", "href": f"{base}/v3/"}],
        "media-types": [
            {"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}
        ],
    }
    return json.dumps({"version": version}).encode()


class FaultyKeystone(BaseHTTPRequestHandler):
    """FAULT-INJECTION DOUBLE of Keystone: every request gets the server's ``fault``:
    ``401`` (an authenticating proxy in front), ``500`` (a broken service), ``never``
    (accepts the connection and never answers) or ``trickle`` (headers, then the body a
    byte at a time, never the last: ``answer_trickling``). With ``after_login`` the login
    is served (discovery and a token, :func:`_token`) and every other request gets the
    fault."""

    fault = "401"
    after_login = False
    released = threading.Event()

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        base = f"http://{self.headers.get('Host')}"
        path = self.path.rstrip("/")
        if self.after_login and path == "/v3" and self.command == "GET":
            return answer_json(self, 200, _discovery(base))
        if self.after_login and path == "/v3/auth/tokens" and self.command == "POST":
            return answer_json(self, 201, _token(base), [("X-Subject-Token", "t-demo")])
        if self.fault == "never":
            self.released.wait(HANG)
            return None
        if self.fault == "trickle":
            return answer_trickling(self, self.released, HANG)
        status = int(self.fault)
        body = b'{"error": {"code": %d, "message": "injected fault", "title": "Fault"}}' % status
        extra = [("WWW-Authenticate", f'Keystone uri="{base}"')] if status == 401 else []
        return answer_json(self, status, body, extra)

    do_GET = do_POST = do_HEAD = _answer

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test output is not the place for its request log."""


@pytest.fixture(params=["401", "500", "never", "trickle"])
def keystone(request: pytest.FixtureRequest) -> Iterator[str]:
    """The ``auth_url`` of a :class:`FaultyKeystone` with the parametrized fault (``FAULT``
    or ``FAULT-after-login``)."""
    chosen, _, login = str(request.param).partition("-")

    class Faulty(FaultyKeystone):
        fault = chosen
        after_login = bool(login)
        released = threading.Event()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Faulty)
    server.daemon_threads = True
    try:
        with serving_in_thread(server, "faulty-keystone") as url:
            yield f"{url}/v3"
    finally:
        Faulty.released.set()


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


COMMANDS = pytest.mark.parametrize(
    "command", [["openstack", "preflight"], ["openstack", "appcred", "create"]],
    ids=["preflight", "appcred-create"],
)  # fmt: skip


def _run_bounded(
    env: dict[str, str], settings_file: Path, command: list[str], timeout: int = TIMEOUT
) -> tuple[subprocess.CompletedProcess[str], float]:
    """The CLI with ``--timeout timeout``, and the seconds it took (a hang fails the test)."""
    argv = [sys.executable, "-m", "scs_templates._cli.main", "--timeout", str(timeout)]
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*argv, *command, str(settings_file)],
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(command)} hung for {HANG} s despite --timeout {timeout}")
    return done, time.monotonic() - started


@COMMANDS
def test_finding3_openstack_calls_are_bounded_by_timeout(
    cloud_env: dict[str, str], settings_file: Path, keystone: str, command: list[str]
) -> None:
    done, took = _run_bounded(cloud_env, settings_file, command)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert len(lines) == 1, lines
    assert keystone.rsplit("/", 1)[0] in lines[0], lines
    assert "not-a-real-pass" not in done.stdout + done.stderr
    assert took < TIMEOUT * 4 + 20, took  # the timeout (per call) and the start of Python


@COMMANDS
@pytest.mark.parametrize("keystone", ["never-after-login", "trickle-after-login"], indirect=True)
def test_finding3_every_call_after_the_login_is_bounded_by_timeout(
    cloud_env: dict[str, str], settings_file: Path, keystone: str, command: list[str]
) -> None:
    """The login succeeds; the first call after it (Neutron's discovery for the preflight,
    the listing of application credentials for ``appcred create``) never ends or trickles a
    byte at a time, which the per-request read timeout alone never ended: the wall clock
    ends it, exit 1, one line naming the URL it waited for, the preflight stopped there."""
    done, took = _run_bounded(cloud_env, settings_file, command, AFTER_LOGIN_TIMEOUT)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert len(lines) == 1, lines
    assert lines[0].startswith("scs-templates: error: cloud 'faulty': GET "), lines  # its cloud
    assert f"{keystone.rsplit('/', 1)[0]}/" in lines[0], lines
    assert f"no answer within {AFTER_LOGIN_TIMEOUT} s (--timeout)" in lines[0], lines
    assert "login" not in lines[0], lines  # a later call, not the login
    assert "not-a-real-pass" not in done.stdout + done.stderr
    assert took < AFTER_LOGIN_TIMEOUT + 15, took  # one call's wall clock and Python's start
