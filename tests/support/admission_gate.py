"""Hold one request of a client at the real kube-apiserver's admission: a chosen moment.

A test that stops the API server "while helm writes" must know helm is mid-request. Polling
for helm's release record and then stopping the server races helm: once, in CI, helm had
applied everything and the CLI had moved on to its next helm call (a new connection, which
ended in helm's own TLS handshake timeout instead of the user's wall clock).

The gate is a validating admission webhook (a loopback HTTPS server registered with a
ValidatingWebhookConfiguration for one namespace) that answers every request at once except
the first CREATE or UPDATE of the named object: that one it holds until the test releases it.
While it is held, the API server has the client's request and the client waits on its open
connection; :attr:`Gate.arrived` says when. Only the webhook is ours; the API server, its
admission chain and the client are real.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support import answer_json, serving_tls_in_thread

if TYPE_CHECKING:
    from testenv import Plane

#: Seconds the gate holds its request at most (the test releases it sooner).
HOLD_LIMIT = 300.0
#: The ConfigMap the gate is probed with (a dry run) until the API server calls it.
PROBE = "admission-gate-probe"


class Gate:
    """What the webhook saw: ``arrived`` is set once the named object's request is held."""

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        self.arrived = threading.Event()
        self.released = threading.Event()
        self.probed = threading.Event()
        self._lock = threading.Lock()
        self._held = False

    def release(self) -> None:
        self.released.set()

    def answer(self, request: dict[str, Any]) -> None:
        """Decide one admission request: hold the first one for the object, pass the rest."""
        kind = str(request.get("kind", {}).get("kind", ""))
        name = str(
            request.get("name") or (request.get("object") or {}).get("metadata", {}).get("name", "")
        )
        if kind == "ConfigMap" and name == PROBE:
            self.probed.set()
            return
        if kind != self.kind or name != self.name:
            return
        with self._lock:
            first, self._held = not self._held, True
        if first:
            self.arrived.set()
            self.released.wait(HOLD_LIMIT)


def _handler(gate: Gate) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            review = json.loads(self.rfile.read(length))
            request = review.get("request") or {}
            gate.answer(request)
            response = {"uid": request.get("uid", ""), "allowed": True}
            body = {"apiVersion": review.get("apiVersion"), "kind": "AdmissionReview",
                    "response": response}  # fmt: skip
            with suppress(OSError):  # the API server may have given up on the held request
                answer_json(self, 200, json.dumps(body).encode())

        def log_message(self, format: str, *args: Any) -> None:
            del format, args

    return Handler


def _configuration(
    name: str, namespace: str, url: str, ca: bytes, group: str, resource: str
) -> dict[str, Any]:
    rules = [
        {"apiGroups": [group], "apiVersions": ["*"], "resources": [resource],
         "operations": ["CREATE", "UPDATE"]},
        {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
         "operations": ["CREATE"]},
    ]  # fmt: skip
    webhook = {
        "name": "gate.tests.scs.community",
        "clientConfig": {"url": url, "caBundle": base64.b64encode(ca).decode()},
        "rules": rules,
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "failurePolicy": "Ignore",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 30,
    }
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [webhook],
    }


def _wait_until_called(plane: Plane, gate: Gate, namespace: str) -> None:
    """Dry-run the probe ConfigMap until the API server calls the webhook (its webhook
    configurations are read from a watch, so a new one takes effect a moment later)."""
    probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": PROBE}}
    deadline = time.monotonic() + 60
    while not gate.probed.is_set():
        if time.monotonic() > deadline:
            pytest.fail("the API server did not call the admission gate within 60 s")
        plane.api.create(probe, namespace=namespace, dry_run=True)
        gate.probed.wait(0.2)


@contextmanager
def holding(
    plane: Plane,
    namespace: str,
    directory: Path,
    *,
    group: str,
    resource: str,
    kind: str,
    name: str,
) -> Iterator[Gate]:
    """A gate that holds the first CREATE/UPDATE of ``kind`` ``name`` (API group ``group``,
    plural ``resource``) in ``namespace`` until released; removed when the block ends."""
    gate = Gate(kind, name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(gate))
    with serving_tls_in_thread(server, "admission-gate", directory / "gate-ca") as (base, ca):
        config_name = f"gate-{namespace}"
        configuration = _configuration(config_name, namespace, f"{base}/gate", ca, group, resource)
        path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
        plane.api.request("POST", path, configuration)
        try:
            _wait_until_called(plane, gate, namespace)
            yield gate
        finally:
            gate.release()  # before the server shuts down: it waits for the held request
            with suppress(Exception):  # the API server may be gone: the test reports that
                plane.api.request("DELETE", f"{path}/{config_name}")
