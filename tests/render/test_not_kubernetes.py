"""Commands that read the management cluster refuse a server that is no Kubernetes API
(issue #41, finding 7).

Any HTTP server answering 200 to everything (a proxy's landing page, a wrong port) made
``status`` report "release is not installed ... Cluster not found" with exit 0. Now the first
API call of a client checks ``GET /version`` for a ``gitVersion``; helm is never asked before
that. The server here is a named fault-injection double.
"""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from scs_templates._cli.main import main
from scs_templates._core.errors import ToolError
from scs_templates._tools.kube import KubeClient
from tests.support import EXAMPLES, answer_json, serving_in_thread, token_kubeconfig


class AlwaysOkHandler(BaseHTTPRequestHandler):
    """FAULT-INJECTION DOUBLE: answers 200 with an empty JSON object to every request (helm
    then reads it as a cluster without releases; an HTML page at least fails helm)."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        answer_json(self, 200, b"{}")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test output is not the place for its request log."""


@pytest.fixture
def always_ok_server() -> Iterator[str]:
    """The URL of an :class:`AlwaysOkHandler` server on localhost."""
    with serving_in_thread(ThreadingHTTPServer(("127.0.0.1", 0), AlwaysOkHandler), "ok") as url:
        yield url


@pytest.fixture
def kubeconfig(tmp_path: Path, always_ok_server: str) -> Path:
    return token_kubeconfig(tmp_path / "kubeconfig", always_ok_server)


SETTINGS = next(path for path in EXAMPLES if path.stem == "openstack-minimal")


@pytest.mark.parametrize(
    "argv",
    [
        ["status", str(SETTINGS)],
        ["diff", str(SETTINGS)],
        ["delete", str(SETTINGS), "--yes"],
        ["encryption-key", "status", str(SETTINGS)],
    ],
    ids=["status", "diff", "delete", "encryption-key-status"],
)
def test_finding7_commands_fail_when_the_server_is_not_a_kubernetes_api(
    kubeconfig: Path,
    always_ok_server: str,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    code = main([*argv, "--kubeconfig", str(kubeconfig)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1, err
    assert len(err) == 1, err
    assert f"{always_ok_server} is not a Kubernetes API" in err[0]


def test_finding7_the_client_checks_version_before_any_read(
    kubeconfig: Path, always_ok_server: str
) -> None:
    from scs_templates._tools.kube import ObjectRef

    with KubeClient(str(kubeconfig)) as client, pytest.raises(ToolError) as caught:
        client.get(ObjectRef("v1", "Namespace", "", "default"))
    assert str(caught.value).startswith(f"{always_ok_server} is not a Kubernetes API")
