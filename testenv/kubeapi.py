"""A minimal HTTPS client for the plane's API server (standard library only).

The plane needs a handful of calls (readiness, server-side apply of CRDs and webhook
configurations, server-side dry-run of rendered objects, get/list/delete for tests) and must
start fast, so it talks HTTP itself instead of importing the ``kubernetes`` package.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

FIELD_MANAGER = "scs-templates-testenv"


class APIError(RuntimeError):
    """A non-2xx answer of the API server: ``status`` is the HTTP code, ``body`` its Status."""

    def __init__(self, status: int, body: dict[str, Any], what: str) -> None:
        self.status = status
        self.body = body
        self.reason = str(body.get("reason", ""))
        super().__init__(f"{what}: HTTP {status} {body.get('message', body)}")


@dataclass(frozen=True)
class Resource:
    plural: str
    namespaced: bool


class KubeAPI:
    """Talk to ``https://host:port`` with a client certificate; thread-safe (one conn per call)."""

    def __init__(self, host: str, port: int, *, ca: str, cert: str, key: str) -> None:
        self.host = host
        self.port = port
        self._ssl = ssl.create_default_context(cafile=ca)
        self._ssl.load_cert_chain(cert, key)
        self._resources: dict[tuple[str, str], Resource] = {}
        self._lock = threading.Lock()

    def request(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        *,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
        timeout: float = 60,
    ) -> dict[str, Any]:
        url = path + (f"?{urlencode(dict(params))}" if params else "")
        conn = http.client.HTTPSConnection(self.host, self.port, context=self._ssl, timeout=timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            headers = {"Accept": "application/json"}
            if data is not None:
                headers["Content-Type"] = content_type
            conn.request(method, url, body=data, headers=headers)
            answer = conn.getresponse()
            raw = answer.read()
        finally:
            conn.close()
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = {"message": raw.decode(errors="replace")}
        if not isinstance(parsed, dict):
            parsed = {"items": parsed}
        if answer.status >= 300:
            raise APIError(answer.status, parsed, f"{method} {path}")
        return parsed

    def healthy(self) -> bool:
        try:
            self.request("GET", "/readyz", timeout=5)
        except (OSError, APIError, ssl.SSLError):
            return False
        return True

    # --- objects by apiVersion/kind ---------------------------------------------------------

    def resource(self, api_version: str, kind: str, *, refresh: bool = False) -> Resource:
        """Plural and scope of a kind, from discovery (cached; ``refresh`` after new CRDs)."""
        with self._lock:
            found = None if refresh else self._resources.get((api_version, kind))
        if found is not None:
            return found
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        for item in self.request("GET", base).get("resources", []):
            if "/" not in item["name"]:
                with self._lock:
                    self._resources[(api_version, item["kind"])] = Resource(
                        item["name"], bool(item["namespaced"])
                    )
        with self._lock:
            found = self._resources.get((api_version, kind))
        if found is None:
            raise APIError(404, {"message": f"no kind {kind} in {api_version}"}, "discovery")
        return found

    def path(self, api_version: str, kind: str, namespace: str = "", name: str = "") -> str:
        res = self.resource(api_version, kind)
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        where = f"/namespaces/{quote(namespace)}" if res.namespaced and namespace else ""
        return f"{base}{where}/{res.plural}" + (f"/{quote(name)}" if name else "")

    def object_path(self, obj: Mapping[str, Any], namespace: str = "") -> str:
        meta = obj.get("metadata") or {}
        return self.path(
            str(obj["apiVersion"]),
            str(obj["kind"]),
            str(meta.get("namespace") or namespace),
            str(meta["name"]),
        )

    def apply(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str = "",
        dry_run: bool = False,
        manager: str = FIELD_MANAGER,
    ) -> dict[str, Any]:
        """Server-side apply (create or update); ``dry_run`` runs admission without storing."""
        body = dict(obj)
        res = self.resource(str(obj["apiVersion"]), str(obj["kind"]))
        if res.namespaced and namespace:
            body["metadata"] = {**dict(obj["metadata"]), "namespace": namespace}
        params = {"fieldManager": manager, "force": "true"}
        if dry_run:
            params["dryRun"] = "All"
        return self.request(
            "PATCH",
            self.object_path(body, namespace),
            body,
            params=params,
            content_type="application/apply-patch+yaml",
        )

    def create(
        self, obj: Mapping[str, Any], *, namespace: str = "", dry_run: bool = False
    ) -> dict[str, Any]:
        """POST the object (``dry_run``: admitted and defaulted, not stored)."""
        meta = obj.get("metadata") or {}
        path = self.path(
            str(obj["apiVersion"]), str(obj["kind"]), str(meta.get("namespace") or namespace)
        )
        params = {"fieldManager": FIELD_MANAGER}
        if dry_run:
            params["dryRun"] = "All"
        return self.request("POST", path, obj, params=params)

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self.request("GET", self.path(api_version, kind, namespace, name))
        except APIError as error:
            if error.status == 404:
                return None
            raise

    def list(
        self, api_version: str, kind: str, namespace: str = "", selector: str = ""
    ) -> list[dict[str, Any]]:
        params = {"labelSelector": selector} if selector else None
        items = self.request("GET", self.path(api_version, kind, namespace), params=params)
        return list(items.get("items", []))

    def delete(self, api_version: str, kind: str, namespace: str, name: str) -> bool:
        """Delete (foreground not forced); False if it was already gone."""
        try:
            self.request("DELETE", self.path(api_version, kind, namespace, name))
        except APIError as error:
            if error.status == 404:
                return False
            raise
        return True

    def patch_status(
        self, api_version: str, kind: str, namespace: str, name: str, status: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Merge-patch the status subresource (the test playing a controller)."""
        return self.request(
            "PATCH",
            self.path(api_version, kind, namespace, name) + "/status",
            {"status": dict(status)},
            content_type="application/merge-patch+json",
        )

    def ensure_namespace(self, name: str) -> None:
        try:
            self.request(
                "POST",
                "/api/v1/namespaces",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
            )
        except APIError as error:
            if error.status != 409:
                raise
