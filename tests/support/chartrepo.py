"""A helm chart repository over HTTP on loopback, holding real packaged upstream charts.

Flux's source-controller reads a ``HelmRepository`` (the service charts of ``gitops``, here
through ``spec.services.chartMirror``) from a real helm repository: an ``index.yaml`` and the
packages. The packages are the real upstream charts of ../shared/charts (copied, never
changed); ``index.yaml`` is written by the pinned helm (``helm repo index``); Python's
``http.server`` only hands out the files. Nothing of the repository format is reimplemented.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support import helm_tool, real_charts


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        del format, args


@contextmanager
def serving(directory: Path, packages: Iterable[str]) -> Iterator[str]:
    """Serve ``packages`` (file names in ../shared/charts) from ``directory`` on loopback as a
    helm repository; yield its URL ``http://127.0.0.1:PORT``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in packages:
        shutil.copy2(real_charts() / name, directory / name)
    handler = functools.partial(_Quiet, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    url = f"http://127.0.0.1:{server.server_address[1]}"
    subprocess.run(
        [str(helm_tool().path), "repo", "index", str(directory), "--url", url],
        check=True,
        capture_output=True,
        timeout=120,
    )
    thread = threading.Thread(target=server.serve_forever, name="chart-repo", daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()
