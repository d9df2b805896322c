"""A local git server over HTTP: the real ``git http-backend`` behind a loopback WSGI server.

Flux's source-controller clones GitRepository URLs over http(s) or ssh only (its CRD's
pattern), with git's smart HTTP protocol. ``git http-backend`` is git's own implementation of
that protocol as a CGI program; this module only hands it each request (a subprocess per
request, CGI environment, body on stdin) and relays its answer. Nothing is reimplemented.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from tests.support import serving_in_thread

#: Seconds one git request may take (a clone of the project's charts is well under one).
REQUEST_TIMEOUT = 60.0


def _backend() -> str:
    done = subprocess.run(
        ["git", "--exec-path"], capture_output=True, text=True, timeout=30, check=True
    )
    return str(Path(done.stdout.strip()) / "git-http-backend")


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        del format, args


def _app(root: Path, backend: str) -> Any:
    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        env = {
            "GIT_PROJECT_ROOT": str(root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH": "/usr/bin:/bin",
            "REQUEST_METHOD": environ["REQUEST_METHOD"],
            "PATH_INFO": environ.get("PATH_INFO", ""),
            "QUERY_STRING": environ.get("QUERY_STRING", ""),
            "CONTENT_TYPE": environ.get("CONTENT_TYPE", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": environ.get("REMOTE_ADDR", "127.0.0.1"),
        }
        if environ.get("HTTP_CONTENT_ENCODING"):
            env["HTTP_CONTENT_ENCODING"] = environ["HTTP_CONTENT_ENCODING"]
        if environ.get("HTTP_GIT_PROTOCOL"):
            env["GIT_PROTOCOL"] = environ["HTTP_GIT_PROTOCOL"]
        done = subprocess.run(
            [backend], input=body, env=env, capture_output=True, timeout=REQUEST_TIMEOUT
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status = "200 OK"
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = value.strip()
            elif key:
                headers.append((key.strip(), value.strip()))
        if done.returncode != 0 and not head:
            status, headers, payload = "500 Internal Server Error", [], done.stderr
        start_response(status, headers)
        return [payload]

    return app


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """Serve every repository under ``root`` on loopback; yield ``http://127.0.0.1:PORT``."""
    server = make_server(
        "127.0.0.1", 0, _app(root, _backend()), server_class=_Server, handler_class=_Quiet
    )
    with serving_in_thread(server, "git-http") as url:
        yield url
