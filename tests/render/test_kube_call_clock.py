"""Every Kubernetes API call of the Python client has a wall clock (issue #41, item 2).

Its requests had a connect and a read timeout (capped by ``--timeout``), but a read timeout
is per read: a kube-apiserver (or a proxy in front of it) that keeps sending a byte never
trips it, and ``status`` hung for ever whatever ``--timeout`` said. Now each call is
abandoned one second after its longest socket timeout: exit 1, one line naming the API.

The server is :class:`TricklingApiServer`, a named fault-injection double; with
``after_version`` it answers ``GET /version`` as a kube-apiserver does and trickles every
later call. A silent or killed real kube-apiserver: tests/plane/test_plane_faults.py.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support import (
    REPO,
    answer_json,
    answer_trickling,
    serving_in_thread,
    token_kubeconfig,
)

TIMEOUT = 1  # --timeout of the runs (the shortest): the test stays fast
#: --timeout where ``GET /version`` must be answered first: a second more on a loaded machine.
AFTER_VERSION_TIMEOUT = 2
#: A run still going after this is the bug itself.
HANG = 30
VERSION = b'{"major": "1", "minor": "35", "gitVersion": "v1.35.4"}'


class TricklingApiServer(BaseHTTPRequestHandler):
    """FAULT-INJECTION DOUBLE of a kube-apiserver: every request gets a 200 whose body of a
    megabyte comes a byte at a time, never the last (``answer_trickling``); with
    ``after_version``, ``GET /version`` is answered first (a Kubernetes API,
    :meth:`KubeClient.check_api`)."""

    after_version = False
    released = threading.Event()

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.after_version and self.path.split("?")[0] == "/version":
            return answer_json(self, 200, VERSION)
        return answer_trickling(self, self.released, HANG)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test output is not the place for its request log."""


@pytest.fixture
def api_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a :class:`TricklingApiServer` (the ``/version`` call trickles, or with
    the parameter ``after-version`` a later one)."""

    class Trickling(TricklingApiServer):
        after_version = getattr(request, "param", "") == "after-version"
        released = threading.Event()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickling)
    server.daemon_threads = True
    try:
        with serving_in_thread(server, "trickling-api") as url:
            yield url
    finally:
        Trickling.released.set()


@pytest.fixture
def kubeconfig(api_server: str, tmp_path: Path) -> Path:
    return token_kubeconfig(tmp_path / "kubeconfig", api_server)


def test_a_kube_apiserver_that_trickles_is_abandoned_at_the_wall_clock(
    api_server: str, kubeconfig: Path
) -> None:
    """``status``: its first call (``GET /version``) trickles; exit 1, one line."""
    argv = [sys.executable, "-m", "scs_templates._cli.main", "--timeout", str(TIMEOUT)]
    argv += ["status", str(REPO / "examples" / "docker-dev.yaml"), "--kubeconfig", str(kubeconfig)]
    started = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=HANG, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"status hung for {HANG} s despite --timeout {TIMEOUT}")
    took = time.monotonic() - started
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert len(lines) == 1, lines
    assert api_server in lines[0], lines
    assert "not-a-real-token" not in done.stdout + done.stderr
    assert took < TIMEOUT + 1 + 12, took  # one call's wall clock and the start of Python


@pytest.mark.parametrize("api_server", ["after-version"], indirect=True)
def test_a_later_call_that_trickles_is_abandoned_at_the_wall_clock(
    api_server: str, kubeconfig: Path
) -> None:
    """The server is a Kubernetes API (``/version`` answers), then a read trickles: the
    client's call ends one second after ``--timeout`` with one ToolError naming the API
    and the call (in this process: without the wall clock it took the double's 30 s)."""
    from scs_templates._core import timeouts
    from scs_templates._core.errors import ToolError
    from scs_templates._tools.kube import KubeClient
    from scs_templates._tools.kube.client import ObjectRef

    timeouts.set_override(AFTER_VERSION_TIMEOUT)
    try:
        with KubeClient(str(kubeconfig)) as client:
            started = time.monotonic()
            with pytest.raises(ToolError) as failed:
                client.get(ObjectRef("v1", "Namespace", "", "default"))
            took = time.monotonic() - started
    finally:
        timeouts.set_override(None)
    assert api_server in str(failed.value)
    assert "no complete answer within" in str(failed.value)
    assert took < AFTER_VERSION_TIMEOUT + 1 + 3, took
