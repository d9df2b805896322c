"""Every OpenStack call has a wall clock, against the REAL Keystone and Neutron (issue #41,
finding 3; tests/render/test_openstack_timeouts.py proves it against a fault-injection double).

The real service is what hangs or refuses:

- the real Keystone behind :class:`AuthenticatingProxy`, a named fault-injection proxy that
  answers ``GET /v3`` with 401 (a service behind an authenticating proxy) and passes every
  other request through: keystoneauth's discovery re-authenticated and took its own lock
  again, and ``openstack preflight`` and ``appcred create`` hung for ever;
- the real Keystone or Neutron process stopped (SIGSTOP: it accepts connections and answers
  nothing) before the command, right after its login, or right before a later call
  (tests/support/stop_during.py picks the moment; ``Stack.paused`` resumes the service in a
  ``finally``, so the shared stack lives on for the other modules).

Each run is the CLI in a subprocess with ``--timeout`` small: exit 1 within the timeout and a
margin for Python's start, one line naming the endpoint, no traceback, no secret; a hang (the
bug) fails the test instead of stopping the suite.
"""

from __future__ import annotations

import http.client
import subprocess
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support import REPO, openstack_settings_text, serving_in_thread
from tests.support.openstack_fixtures import OCTAVIA_CINDER_NOVA_API, Tenant, make_tenant
from tests.support.openstack_stack import Stack

#: The shared stack of this configuration (tests/cloud/conftest.py): only Keystone and
#: Neutron are used; the other services make it the stack three other modules share.
STACK = OCTAVIA_CINDER_NOVA_API
TIMEOUT = 4  # --timeout of the runs
#: Python's start, the imports of openstacksdk and the calls before the stuck one, on a
#: loaded machine: the run must end within TIMEOUT + MARGIN.
MARGIN = 12
#: A run still going after this is the bug itself.
HANG = 60
STOP_DURING = REPO / "tests" / "support" / "stop_during.py"
OPEN_CLOUD = "scs_templates.providers.openstack.connection:open_cloud"


@pytest.fixture(scope="module")
def stack(shared_stack: Stack) -> Stack:
    return shared_stack


@pytest.fixture(scope="module")
def tenant(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    """This module's project, user and application credential (``timeouts``), and the
    user's password entry (``timeouts-password``: the generic password plugin, which
    discovers the identity API at ``auth_url`` first)."""
    return make_tenant(stack, tmp_path_factory.mktemp("timeouts-cloud"), "timeouts")


class AuthenticatingProxy(BaseHTTPRequestHandler):
    """FAULT-INJECTION PROXY in front of the real Keystone (``upstream``): ``GET /v3``
    answers 401 with a ``WWW-Authenticate`` header, as an authenticating proxy in front of a
    service does; every other request goes to Keystone and its answer back unchanged."""

    upstream = ""

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if self.command == "GET" and self.path.rstrip("/") == "/v3":
            refusal = b'{"error": {"code": 401, "message": "proxy authentication required"}}'
            return self._send(401, refusal, [("WWW-Authenticate", 'Basic realm="proxy"')])
        target = urlsplit(self.upstream)
        upstream = http.client.HTTPConnection(target.netloc, timeout=HANG)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            upstream.request(self.command, self.path, body=body, headers=headers)
            answer = upstream.getresponse()
            passed = [(k, v) for k, v in answer.getheaders() if k.lower() != "transfer-encoding"]
            return self._send(answer.status, answer.read(), passed)
        finally:
            upstream.close()

    def _send(self, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
        self.send_response(status)
        for name, value in headers:
            if name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_HEAD = do_DELETE = do_PATCH = do_PUT = _forward

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test output is not the place for its request log."""


@pytest.fixture
def proxy(stack: Stack) -> Iterator[str]:
    """The ``auth_url`` of an :class:`AuthenticatingProxy` in front of the stack's Keystone."""

    class Proxy(AuthenticatingProxy):
        upstream = f"http://127.0.0.1:{stack.keystone_port}"

    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    server.daemon_threads = True
    with serving_in_thread(server, "authenticating-proxy") as url:
        yield f"{url}/v3"


def _clouds(tenant: Tenant, directory: Path, auth_url: str) -> Path:
    """The tenant's clouds.yaml with its password entry's ``auth_url`` replaced (0600)."""
    path = directory / "clouds-proxied.yaml"
    path.write_text(tenant.clouds_yaml.read_text().replace(tenant.auth_url, auth_url))
    path.chmod(0o600)
    return path


def _settings(directory: Path, cloud: str) -> Path:
    path = directory / "settings.yaml"
    text = openstack_settings_text("timeouts", "10.71.0.0/20").replace(
        "cloud: demo", f"cloud: {cloud}"
    )
    path.write_text(text)
    return path


def _run(
    tenant: Tenant,
    clouds: Path,
    args: list[str],
    *,
    stop: tuple[int, str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], float]:
    """The CLI with ``--timeout TIMEOUT`` and ``clouds``; with ``stop`` = (process group,
    ``before``/``after``, MODULE:FUNCTION) through tests/support/stop_during.py."""
    import os

    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=str(clouds))
    env.pop("OS_CLOUD", None)
    cli = ["--timeout", str(TIMEOUT), *args]
    if stop is None:
        argv = [sys.executable, "-m", "scs_templates._cli.main", *cli]
    else:
        group, when, target = stop
        argv = [sys.executable, str(STOP_DURING), str(group), when, target, "--", *cli]
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=HANG, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)} hung for {HANG} s despite --timeout {TIMEOUT}")
    return done, time.monotonic() - started


def _one_line_naming(
    done: subprocess.CompletedProcess[str], took: float, tenant: Tenant, endpoint: str
) -> str:
    """Exit 1, in time, one line on stderr naming ``endpoint``, no traceback, no secret."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert len(lines) == 1, lines
    assert endpoint in lines[0], lines
    assert f"no answer within {TIMEOUT} s (--timeout)" in lines[0], lines
    assert "Traceback" not in done.stdout + done.stderr
    for secret in (tenant.password, tenant.parent_secret):
        assert secret not in done.stdout + done.stderr
    assert took < TIMEOUT + MARGIN, took
    return lines[0]


def _alive(stack: Stack, tenant: Tenant) -> None:
    """The stack lives on after the freeze: Keystone logs the tenant in, Neutron lists."""
    conn: Any = tenant.connect()
    try:
        assert conn.identity.get_project(tenant.project_id).id == tenant.project_id
        list(conn.network.networks())
    finally:
        conn.close()


COMMANDS = pytest.mark.parametrize(
    "command", [["openstack", "preflight"], ["openstack", "appcred", "create"]],
    ids=["preflight", "appcred-create"],
)  # fmt: skip


@COMMANDS
def test_finding3_real_keystone_behind_an_authenticating_proxy_is_bounded(
    stack: Stack, tenant: Tenant, proxy: str, tmp_path: Path, command: list[str]
) -> None:
    """``GET /v3`` answers 401, the rest reaches the real Keystone: the login with the
    password (the generic plugin discovers the API first) never ended; now exit 1 within
    the timeout, one line naming the proxy's URL."""
    clouds = _clouds(tenant, tmp_path, proxy)
    settings = _settings(tmp_path, f"{tenant.cloud}-password")
    done, took = _run(tenant, clouds, [*command, str(settings)])
    line = _one_line_naming(done, took, tenant, proxy)
    assert "login" in line, line


def test_finding3_real_keystone_stopped_before_the_login_is_bounded(
    stack: Stack, tenant: Tenant, tmp_path: Path
) -> None:
    settings = _settings(tmp_path, tenant.cloud)
    with stack.paused("keystone"):
        done, took = _run(tenant, tenant.clouds_yaml, ["openstack", "preflight", str(settings)])
    _one_line_naming(done, took, tenant, stack.auth_url)
    _alive(stack, tenant)


def test_finding3_real_keystone_stopped_after_the_login_is_bounded(
    stack: Stack, tenant: Tenant, tmp_path: Path
) -> None:
    """The login succeeds, then Keystone freezes: the next call (openstacksdk's discovery of
    the identity API, then the listing of the user's application credentials) is abandoned
    after the timeout, naming its URL."""
    settings = _settings(tmp_path, tenant.cloud)
    with stack.paused("keystone", now=False) as group:
        done, took = _run(
            tenant,
            tenant.clouds_yaml,
            ["openstack", "appcred", "create", str(settings)],
            stop=(group, "after", OPEN_CLOUD),
        )
    line = _one_line_naming(done, took, tenant, f"GET {stack.auth_url}")
    assert "login" not in line, line
    _alive(stack, tenant)


def test_finding3_real_keystone_stopped_before_the_check_of_an_existing_credential(
    stack: Stack, tenant: Tenant, tmp_path: Path
) -> None:
    """``appcred create`` with an existing Secret logs in with that credential in a session
    of its own, which had no timeout at all: Keystone frozen right before that login hung
    the command for ever. Now it is abandoned after the timeout like every call."""
    settings = _settings(tmp_path, tenant.cloud)
    secret = tmp_path / "secret.yaml"
    args = ["openstack", "appcred", "create", "--write-secret", str(secret), str(settings)]
    created, _ = _run(tenant, tenant.clouds_yaml, args)
    assert created.returncode == 0, (created.stdout, created.stderr)
    target = "scs_templates.providers.openstack.appcred:credential_authenticates"
    with stack.paused("keystone", now=False) as group:
        done, took = _run(tenant, tenant.clouds_yaml, args, stop=(group, "before", target))
    line = _one_line_naming(done, took, tenant, f"{stack.auth_url}/auth/tokens")
    assert "POST" in line, line
    _alive(stack, tenant)


def test_finding3_real_neutron_stopped_after_the_login_is_bounded(
    stack: Stack, tenant: Tenant, tmp_path: Path
) -> None:
    """The login succeeds, then Neutron freezes: the preflight's first Neutron call is
    abandoned after the timeout and ends the preflight (no check after it runs), one line
    naming Neutron's URL."""
    settings = _settings(tmp_path, tenant.cloud)
    with stack.paused("neutron", now=False) as group:
        done, took = _run(
            tenant,
            tenant.clouds_yaml,
            ["openstack", "preflight", str(settings)],
            stop=(group, "after", OPEN_CLOUD),
        )
    assert done.stdout == "", done.stdout  # no check's line: the preflight stopped
    _one_line_naming(done, took, tenant, stack.neutron_url)
    _alive(stack, tenant)


def test_the_stack_lives_on_after_a_freeze(stack: Stack, tenant: Tenant) -> None:
    """``Stack.paused`` resumes the service whatever happens in its block."""
    with pytest.raises(RuntimeError), stack.paused("keystone"):
        raise RuntimeError("the block fails")
    started = time.monotonic()
    _alive(stack, tenant)
    assert time.monotonic() - started < 30
