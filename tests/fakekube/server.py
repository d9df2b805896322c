"""FakeKubeAPI: a FAKE Kubernetes API server for tests (a test double, NOT a cluster).

It runs in a thread of the test process, over plain http on 127.0.0.1, and serves what the
real helm 3.15 / helm 4.1 binaries and the ``kubernetes`` Python client need to install,
upgrade, inspect and uninstall releases: discovery, an empty OpenAPI v2 document, CRUD with
proper ``Status`` bodies, label/field selectors, merge / strategic-merge (approximated as merge)
/ server-side apply (approximated as create-or-replace) patches, ``dryRun``, watches with the
initial-events bookmark, and helm 4's protobuf-encoded Secrets.

No controllers run: nothing becomes ready, nothing is garbage-collected, and objects are not
validated against schemas. Tests drive status changes through the hooks (:meth:`set_status`,
:meth:`delay_deletion`, :meth:`fail_next`) and inspect :attr:`requests` and :meth:`objects`.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakekube import protobuf
from tests.fakekube.resources import ResourceType, default_resources
from tests.fakekube.selectors import SelectorError, field_matcher, label_matcher

JSON = "application/json"
# Go's mime parser rejects the "@" of the name client-go asks for; this spelling parses.
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"

Obj = dict[str, Any]


class ApiError(Exception):
    """An error answered with a Kubernetes ``Status`` body."""

    def __init__(self, code: int, reason: str, message: str, details: Obj | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details or {}

    def status(self) -> Obj:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "details": self.details,
            "code": self.code,
        }


@dataclass(frozen=True)
class RequestRecord:
    """One request the fake answered, for ordering assertions in tests."""

    method: str
    path: str
    query: dict[str, str]
    verb: str  # get, list, watch, create, update, patch, delete, discovery
    kind: str  # "" for discovery
    namespace: str
    name: str
    content_type: str
    code: int
    seq: int
    started: float  # time.monotonic() when the request arrived
    duration: float  # seconds spent answering it


@dataclass
class _Failure:
    verb: str
    kind: str
    name: str | None
    code: int
    message: str
    remaining: int


@dataclass
class _Deletion:
    gets: int | None  # None: held until finish_deletion()


@dataclass
class _Event:
    rv: int
    type: str
    resource: ResourceType
    obj: Obj


@dataclass
class _Route:
    resource: ResourceType
    namespace: str  # "" for cluster-scoped or all namespaces
    name: str
    subresource: str


@dataclass
class _State:
    resources: list[ResourceType] = field(default_factory=list)
    # (group, plural) -> {(namespace, name): object}
    store: dict[tuple[str, str], dict[tuple[str, str], Obj]] = field(default_factory=dict)
    events: list[_Event] = field(default_factory=list)
    failures: list[_Failure] = field(default_factory=list)
    deletions: dict[str, _Deletion] = field(default_factory=dict)
    deletion_gets: dict[tuple[str, str, str], int] = field(default_factory=dict)
    requests: list[RequestRecord] = field(default_factory=list)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch; ``$``-directives of strategic merge patches are dropped."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result: Obj = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


class FakeKubeAPI:
    """A FAKE Kubernetes API server (test double) on ``http://127.0.0.1:PORT``.

    Use as a context manager, or call :meth:`start`/:meth:`stop`. :meth:`write_kubeconfig`
    writes a 0600 kubeconfig (context ``fake``) pointing at it.
    """

    def __init__(
        self,
        *,
        resources: list[ResourceType] | None = None,
        kube_version: tuple[int, int, int] = (1, 33, 0),
        namespaces: tuple[str, ...] = ("default", "kube-system", "kube-public"),
    ) -> None:
        self.kube_version = kube_version
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._state = _State(resources=list(resources or default_resources()))
        self._rv = itertools.count(1)
        self._last_rv = 0
        self._seq = itertools.count(1)
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        for namespace in namespaces:
            self.add_object(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            )

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeKubeAPI:
        """Start serving in a daemon thread; returns self."""
        handler = type("FakeKubeHandler", (_Handler,), {"api": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name="fake-kube-api",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (open watches end within a fraction of a second)."""
        self._stopping.set()
        with self._changed:
            self._changed.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeKubeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "FakeKubeAPI not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def write_kubeconfig(
        self, path: str | os.PathLike[str], *, contexts: tuple[str, ...] = ("fake",)
    ) -> Path:
        """Write a kubeconfig (mode 0600) whose contexts all point at this fake server.

        The first context is the current one; every context uses namespace ``default``.
        """
        target = Path(path)
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": "fake-token"}}],
            "contexts": [
                {
                    "name": name,
                    "context": {"cluster": "fake", "user": "fake", "namespace": "default"},
                }
                for name in contexts
            ],
            "current-context": contexts[0],
        }
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as stream:
            json.dump(config, stream, indent=2)  # JSON is YAML: every kubeconfig reader takes it
        target.chmod(0o600)
        return target

    # ------------------------------------------------------------------ test hooks

    def resource_for_kind(self, kind: str) -> ResourceType:
        """The registered type of ``kind`` (``Cluster``, ``Secret``...); KeyError if unknown."""
        with self._lock:
            found = [r for r in self._state.resources if r.kind == kind]
        if not found:
            raise KeyError(f"kind {kind!r} is not registered in the fake API")
        return found[0]

    def register(self, resource: ResourceType) -> None:
        """Serve one more kind (as if its CRD had been installed)."""
        with self._lock:
            if not any(
                r.group == resource.group
                and r.version == resource.version
                and r.kind == resource.kind
                for r in self._state.resources
            ):
                self._state.resources.append(resource)

    def objects(self, kind: str, namespace: str | None = None) -> list[Obj]:
        """Copies of the stored objects of ``kind`` (optionally in one namespace), by name."""
        resource = self.resource_for_kind(kind)
        with self._lock:
            bucket = self._state.store.get((resource.group, resource.plural), {})
            found = [
                copy.deepcopy(obj)
                for (ns, _), obj in sorted(bucket.items())
                if namespace is None or ns == namespace
            ]
        return found

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        """A copy of one stored object, or None."""
        resource = self.resource_for_kind(kind)
        with self._lock:
            obj = self._bucket(resource).get((namespace if resource.namespaced else "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def add_object(self, obj: Obj) -> Obj:
        """Store an object directly (as a controller would create it); returns the copy."""
        resource = self.resource_for_kind(obj["kind"])
        meta = obj.setdefault("metadata", {})
        namespace = meta.get("namespace", "default") if resource.namespaced else ""
        with self._lock:
            return copy.deepcopy(
                self._create(resource, namespace, copy.deepcopy(obj), dry_run=False)
            )

    def set_status(self, kind: str, namespace: str, name: str, status: Obj) -> None:
        """Replace an object's ``status`` (what a controller would do); KeyError if absent."""
        resource = self.resource_for_kind(kind)
        key = (namespace if resource.namespaced else "", name)
        with self._lock:
            obj = self._bucket(resource).get(key)
            if obj is None:
                raise KeyError(f"{kind} {namespace}/{name} not found in the fake API")
            obj["status"] = copy.deepcopy(status)
            self._touch(resource, obj, "MODIFIED")

    def fail_next(
        self,
        verb: str,
        kind: str,
        *,
        name: str | None = None,
        code: int = 500,
        message: str = "injected failure",
        times: int = 1,
    ) -> None:
        """Make the next ``times`` requests of ``verb`` (create, update, patch, delete, get,
        list) on ``kind`` (optionally one ``name``) fail with ``code``."""
        self.resource_for_kind(kind)
        with self._lock:
            self._state.failures.append(_Failure(verb, kind, name, code, message, times))

    def delay_deletion(self, kind: str, *, gets: int | None) -> None:
        """Simulate a finalizer: a deleted ``kind`` object gets a deletionTimestamp and stays
        for ``gets`` more single-object GETs, then disappears. ``gets=None`` holds it until
        :meth:`finish_deletion`."""
        self.resource_for_kind(kind)
        with self._lock:
            self._state.deletions[kind] = _Deletion(gets)

    def finish_deletion(self, kind: str, namespace: str, name: str) -> None:
        """Remove an object held by :meth:`delay_deletion` (the controller finished)."""
        resource = self.resource_for_kind(kind)
        with self._lock:
            self._remove(resource, (namespace if resource.namespaced else "", name))

    @property
    def requests(self) -> list[RequestRecord]:
        """A copy of the request log, in the order the requests arrived."""
        with self._lock:
            return sorted(self._state.requests, key=lambda record: record.seq)

    def clear_requests(self) -> None:
        with self._lock:
            self._state.requests.clear()

    # ------------------------------------------------------------------ storage internals

    def _bucket(self, resource: ResourceType) -> dict[tuple[str, str], Obj]:
        return self._state.store.setdefault((resource.group, resource.plural), {})

    def _next_rv(self) -> int:
        self._last_rv = next(self._rv)
        return self._last_rv

    def _touch(self, resource: ResourceType, obj: Obj, event: str) -> None:
        rv = self._next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        self._state.events.append(_Event(rv, event, resource, copy.deepcopy(obj)))
        self._changed.notify_all()

    def _remove(self, resource: ResourceType, key: tuple[str, str]) -> Obj | None:
        obj = self._bucket(resource).pop(key, None)
        if obj is not None:
            self._state.deletion_gets.pop((resource.kind, *key), None)
            self._touch(resource, obj, "DELETED")
        return obj

    def _stamp(self, resource: ResourceType, obj: Obj) -> None:
        obj["apiVersion"] = resource.group_version
        obj["kind"] = resource.kind

    def _create(self, resource: ResourceType, namespace: str, obj: Obj, *, dry_run: bool) -> Obj:
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
            else:
                raise ApiError(
                    422, "Invalid", f"{resource.kind} is invalid: metadata.name: Required value"
                )
        name = meta["name"]
        if resource.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and namespace and body_ns != namespace:
                raise ApiError(
                    400,
                    "BadRequest",
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request",
                )
            namespace = namespace or body_ns or "default"
            if resource.kind != "Namespace" and ("", namespace) not in self._bucket(
                self.resource_for_kind("Namespace")
            ):
                raise ApiError(
                    404,
                    "NotFound",
                    f'namespaces "{namespace}" not found',
                    {"name": namespace, "kind": "namespaces"},
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
            namespace = ""
        key = (namespace, name)
        if key in self._bucket(resource):
            raise ApiError(
                409,
                "AlreadyExists",
                f'{resource.plural} "{name}" already exists',
                {"name": name, "group": resource.group, "kind": resource.plural},
            )
        self._stamp(resource, obj)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta["creationTimestamp"] = _now()
        meta["generation"] = 1
        meta.pop("resourceVersion", None)
        meta.pop("deletionTimestamp", None)
        if resource.kind == "Namespace":
            obj["status"] = {"phase": "Active"}
        if resource.kind == "CustomResourceDefinition":
            obj["status"] = {
                "conditions": [
                    {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
                    {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
                ],
                "acceptedNames": obj.get("spec", {}).get("names", {}),
            }
        if dry_run:
            meta["resourceVersion"] = str(self._last_rv)
            return obj
        self._bucket(resource)[key] = obj
        if resource.kind == "CustomResourceDefinition":
            self._register_crd(obj)
        self._touch(resource, obj, "ADDED")
        return obj

    def _register_crd(self, crd: Obj) -> None:
        spec = crd.get("spec", {})
        names = spec.get("names", {})
        for version in spec.get("versions", []):
            if version.get("served", True):
                self.register(
                    ResourceType(
                        spec["group"],
                        version["name"],
                        names["kind"],
                        names["plural"],
                        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                        has_status="status" in version.get("subresources", {}),
                    )
                )

    def _replace(
        self,
        resource: ResourceType,
        key: tuple[str, str],
        new: Obj,
        *,
        subresource: str,
        dry_run: bool,
        check_rv: bool = True,
    ) -> Obj:
        old = self._bucket(resource).get(key)
        if old is None:
            raise self._not_found(resource, key[1])
        meta = new.setdefault("metadata", {})
        if meta.get("name", key[1]) != key[1]:
            raise ApiError(
                400, "BadRequest", "the name of the object does not match the name on the URL"
            )
        wanted_rv = meta.get("resourceVersion")
        if check_rv and wanted_rv and wanted_rv != old["metadata"].get("resourceVersion"):
            raise ApiError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {resource.plural} "{key[1]}": the object has '
                "been modified; please apply your changes to the latest version and try again",
                {"name": key[1], "group": resource.group, "kind": resource.plural},
            )
        if subresource == "status":
            result = copy.deepcopy(old)
            result["status"] = copy.deepcopy(new.get("status"))
        else:
            result = new
            if resource.has_status and resource.kind not in ("Namespace",):
                # status is a subresource: writes to the main resource keep it.
                if "status" in old:
                    result["status"] = copy.deepcopy(old["status"])
                else:
                    result.pop("status", None)
            if resource.kind == "Namespace":
                result["status"] = copy.deepcopy(old.get("status", {"phase": "Active"}))
        self._stamp(resource, result)
        keep = ("uid", "creationTimestamp", "generation", "deletionTimestamp", "namespace", "name")
        for item in keep:
            if item in old["metadata"]:
                result["metadata"][item] = old["metadata"][item]
        if not resource.namespaced:
            result["metadata"].pop("namespace", None)
        if _spec_of(result) != _spec_of(old):
            result["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
        if dry_run:
            result["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            return result
        self._bucket(resource)[key] = result
        self._touch(resource, result, "MODIFIED")
        return result

    def _delete(self, resource: ResourceType, key: tuple[str, str], *, dry_run: bool) -> Obj:
        obj = self._bucket(resource).get(key)
        if obj is None:
            raise self._not_found(resource, key[1])
        if dry_run:
            return copy.deepcopy(obj)
        delayed = self._state.deletions.get(resource.kind)
        if delayed is not None and (delayed.gets is None or delayed.gets > 0):
            if "deletionTimestamp" not in obj["metadata"]:
                obj["metadata"]["deletionTimestamp"] = _now()
                obj["metadata"].setdefault("finalizers", ["fake.test/teardown"])
                self._state.deletion_gets[(resource.kind, *key)] = 0
                self._touch(resource, obj, "MODIFIED")
            return copy.deepcopy(obj)
        self._remove(resource, key)
        return copy.deepcopy(obj)

    def _after_get(self, resource: ResourceType, key: tuple[str, str]) -> None:
        """Count GETs of an object being deleted; remove it when its finalizer 'finishes'."""
        marker = (resource.kind, *key)
        if marker not in self._state.deletion_gets:
            return
        delayed = self._state.deletions.get(resource.kind)
        if delayed is None or delayed.gets is None:
            return
        self._state.deletion_gets[marker] += 1
        if self._state.deletion_gets[marker] >= delayed.gets:
            self._remove(resource, key)

    @staticmethod
    def _not_found(resource: ResourceType, name: str) -> ApiError:
        what = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
        return ApiError(
            404,
            "NotFound",
            f'{what} "{name}" not found',
            {"name": name, "group": resource.group, "kind": resource.plural},
        )

    def _take_failure(self, verb: str, resource: ResourceType, name: str) -> ApiError | None:
        for failure in self._state.failures:
            if (
                failure.verb == verb
                and failure.kind == resource.kind
                and failure.name in (None, name)
            ):
                failure.remaining -= 1
                if failure.remaining <= 0:
                    self._state.failures.remove(failure)
                reason = {
                    400: "BadRequest",
                    403: "Forbidden",
                    409: "Conflict",
                    422: "Invalid",
                    500: "InternalError",
                    503: "ServiceUnavailable",
                }.get(failure.code, "Unknown")
                return ApiError(failure.code, reason, failure.message)
        return None

    # ------------------------------------------------------------------ request handling

    def _routes(self) -> tuple[dict[str, list[ResourceType]], dict[str, list[str]]]:
        by_gv: dict[str, list[ResourceType]] = {}
        versions: dict[str, list[str]] = {}
        for resource in self._state.resources:
            by_gv.setdefault(resource.group_version, []).append(resource)
            if resource.group and resource.version not in versions.setdefault(resource.group, []):
                versions[resource.group].append(resource.version)
        return by_gv, versions

    def discovery(self, path: str) -> Obj | None:
        """Discovery documents (``/api``, ``/apis``, ``/api/v1``, ``/apis/G/V``, ``/version``)."""
        with self._lock:
            by_gv, versions = self._routes()
        if path == "/version":
            major, minor, patch = self.kube_version
            return {
                "major": str(major),
                "minor": str(minor),
                "gitVersion": f"v{major}.{minor}.{patch}",
                "gitCommit": "fake",
                "gitTreeState": "clean",
                "buildDate": "2025-01-01T00:00:00Z",
                "goVersion": "go1.24",
                "compiler": "gc",
                "platform": "linux/amd64",
            }
        if path == "/api":
            return {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}
                ],
            }
        if path == "/apis":
            groups = []
            for group, group_versions in versions.items():
                ordered = sorted(group_versions, reverse=True)  # v1beta2 before v1beta1
                entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in ordered]
                groups.append({"name": group, "versions": entries, "preferredVersion": entries[0]})
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
        group_version = path.removeprefix("/apis/") if path.startswith("/apis/") else None
        if path == "/api/v1":
            group_version = "v1"
        if group_version is not None and group_version in by_gv:
            resources = [entry for r in by_gv[group_version] for entry in r.discovery_entries()]
            return {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": group_version,
                "resources": resources,
            }
        if path.startswith("/apis/") and path.count("/") == 2:
            group = path.split("/")[2]
            if group in versions:
                entries = [
                    {"groupVersion": f"{group}/{v}", "version": v}
                    for v in sorted(versions[group], reverse=True)
                ]
                return {
                    "kind": "APIGroup",
                    "apiVersion": "v1",
                    "name": group,
                    "versions": entries,
                    "preferredVersion": entries[0],
                }
        return None

    def route(self, path: str) -> _Route | None:
        """Map a resource path to (type, namespace, name, subresource), or None."""
        parts = [p for p in path.split("/") if p]
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        with self._lock:
            candidates = {
                r.plural: r
                for r in self._state.resources
                if r.group == group and r.version == version
            }
        namespace = ""
        if (
            len(rest) >= 3
            and rest[0] == "namespaces"
            and rest[2] in candidates
            and candidates[rest[2]].namespaced
        ):
            namespace, rest = rest[1], rest[2:]
        if not rest or rest[0] not in candidates or len(rest) > 3:
            return None
        resource = candidates[rest[0]]
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        return _Route(resource, namespace, name, sub)

    def handle(
        self, method: str, path: str, query: dict[str, str], body: bytes, content_type: str
    ) -> tuple[int, str, bytes] | Iterator[bytes]:
        """Answer one resource request: (code, content type, body), or a watch stream."""
        route = self.route(path)
        if route is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        resource, namespace, name = route.resource, route.namespace, route.name
        dry_run = "dryRun" in query
        key = (namespace if resource.namespaced else "", name)
        verb = _verb(method, route, query)
        with self._lock:
            injected = self._take_failure(verb, resource, name or _body_name(body, content_type))
        if injected is not None:
            raise injected
        if verb == "watch":
            return self._watch(route, query)
        with self._lock:
            if verb == "list":
                return 200, JSON, _dumps(self._list(route, query))
            if verb == "get":
                obj = self._bucket(resource).get(key)
                if obj is None:
                    raise self._not_found(resource, name)
                answer = copy.deepcopy(obj)
                self._after_get(resource, key)
                return 200, JSON, _dumps(answer)
            if verb == "create":
                created = self._create(
                    resource, namespace, _decode(body, content_type, resource), dry_run=dry_run
                )
                return 201, JSON, _dumps(created)
            if verb == "update":
                new = _decode(body, content_type, resource)
                return (
                    200,
                    JSON,
                    _dumps(
                        self._replace(
                            resource, key, new, subresource=route.subresource, dry_run=dry_run
                        )
                    ),
                )
            if verb == "patch":
                return self._patch(route, key, body, content_type, query, dry_run)
            if verb == "delete":
                deleted = self._delete(resource, key, dry_run=dry_run)
                return 200, JSON, _dumps(deleted)
            if verb == "deletecollection":
                matcher = label_matcher(query.get("labelSelector"))
                for item_key, obj in list(self._bucket(resource).items()):
                    if (not namespace or item_key[0] == namespace) and matcher(
                        obj["metadata"].get("labels") or {}
                    ):
                        self._delete(resource, item_key, dry_run=dry_run)
                return (
                    200,
                    JSON,
                    _dumps(
                        {"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}}
                    ),
                )
        raise ApiError(405, "MethodNotAllowed", f"method {method} not allowed by the fake")

    def _list(self, route: _Route, query: dict[str, str]) -> Obj:
        resource = route.resource
        try:
            labels = label_matcher(query.get("labelSelector"))
            fields = field_matcher(query.get("fieldSelector"))
        except SelectorError as error:
            raise ApiError(400, "BadRequest", str(error)) from None
        items = [
            copy.deepcopy(obj)
            for (ns, _), obj in sorted(self._bucket(resource).items())
            if (not route.namespace or ns == route.namespace)
            and labels(obj["metadata"].get("labels") or {})
            and fields(obj)
        ]
        return {
            "kind": f"{resource.kind}List",
            "apiVersion": resource.group_version,
            "metadata": {"resourceVersion": str(self._last_rv)},
            "items": items,
        }

    def _patch(
        self,
        route: _Route,
        key: tuple[str, str],
        body: bytes,
        content_type: str,
        query: dict[str, str],
        dry_run: bool,
    ) -> tuple[int, str, bytes]:
        resource = route.resource
        existing = self._bucket(resource).get(key)
        kind = content_type.split(";")[0].strip()
        if kind == "application/apply-patch+yaml":
            applied = _load_apply_body(body)
            if not isinstance(applied, dict):
                raise ApiError(400, "BadRequest", "apply patch must be an object")
            applied.setdefault("metadata", {})["name"] = key[1]
            if existing is None:
                created = self._create(resource, route.namespace, applied, dry_run=dry_run)
                return 201, JSON, _dumps(created)
            # create-or-replace: fields not in the applied configuration are dropped (the
            # fake has a single field manager); labels/annotations of others are not kept.
            applied["metadata"].pop("resourceVersion", None)
            if route.subresource == "status":
                return (
                    200,
                    JSON,
                    _dumps(
                        self._replace(resource, key, applied, subresource="status", dry_run=dry_run)
                    ),
                )
            return (
                200,
                JSON,
                _dumps(
                    self._replace(
                        resource, key, applied, subresource="", dry_run=dry_run, check_rv=False
                    )
                ),
            )
        if existing is None:
            raise self._not_found(resource, key[1])
        if kind not in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            raise ApiError(
                415, "UnsupportedMediaType", f"the fake does not support patch type {kind!r}"
            )
        patch = json.loads(body or b"{}")
        patched = merge_patch(existing, patch)
        if route.subresource != "status" and "status" in patch and resource.has_status:
            patched["status"] = copy.deepcopy(existing.get("status"))
        return (
            200,
            JSON,
            _dumps(
                self._replace(
                    resource, key, patched, subresource=route.subresource, dry_run=dry_run
                )
            ),
        )

    def _watch(self, route: _Route, query: dict[str, str]) -> Iterator[bytes]:
        """Stream watch events as JSON lines until ``timeoutSeconds`` or the fake stops."""
        resource = route.resource
        try:
            labels = label_matcher(query.get("labelSelector"))
            fields = field_matcher(query.get("fieldSelector"))
        except SelectorError as error:
            raise ApiError(400, "BadRequest", str(error)) from None
        deadline = time.monotonic() + float(query.get("timeoutSeconds") or 1800)

        def matches(obj: Obj) -> bool:
            ns = obj["metadata"].get("namespace", "")
            return (
                (not route.namespace or ns == route.namespace)
                and labels(obj["metadata"].get("labels") or {})
                and fields(obj)
            )

        def line(event_type: str, obj: Obj) -> bytes:
            return json.dumps({"type": event_type, "object": obj}).encode() + b"\n"

        def stream() -> Iterator[bytes]:
            with self._lock:
                start = self._last_rv
                initial = [copy.deepcopy(o) for o in self._bucket(resource).values() if matches(o)]
            if query.get("sendInitialEvents", "").lower() == "true":
                for obj in initial:
                    yield line("ADDED", obj)
                bookmark = {
                    "kind": resource.kind,
                    "apiVersion": resource.group_version,
                    "metadata": {
                        "resourceVersion": str(start),
                        "annotations": {INITIAL_EVENTS_END: "true"},
                    },
                }
                yield line("BOOKMARK", bookmark)
            else:
                requested = query.get("resourceVersion", "")
                if requested.isdigit() and int(requested) > 0:
                    start = int(requested)
                elif not requested or requested == "0":
                    for obj in initial:  # "any" resource version: start with the current state
                        yield line("ADDED", obj)
            seen = start
            while not self._stopping.is_set() and time.monotonic() < deadline:
                with self._changed:
                    pending = [
                        e
                        for e in self._state.events
                        if e.rv > seen and e.resource.kind == resource.kind
                    ]
                    if not pending:
                        self._changed.wait(timeout=0.2)
                        continue
                for event in pending:
                    seen = event.rv
                    if matches(event.obj):
                        yield line(event.type, event.obj)

        return stream()

    def log(self, record: RequestRecord) -> None:
        with self._lock:
            self._state.requests.append(record)

    def next_seq(self) -> int:
        return next(self._seq)


def _spec_of(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _verb(method: str, route: _Route, query: dict[str, str]) -> str:
    if method == "GET":
        if not route.name:
            return "watch" if query.get("watch", "").lower() in ("true", "1") else "list"
        return "get"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if route.name else "deletecollection"
    return method.lower()


def _load_apply_body(body: bytes) -> Any:
    """An apply patch is YAML; client-go sends JSON (a subset), other clients may not."""
    try:
        return json.loads(body or b"{}")
    except ValueError:
        from ruamel.yaml import YAML

        try:
            return YAML(typ="safe", pure=True).load(body.decode()) or {}
        except Exception as error:
            raise ApiError(400, "BadRequest", f"invalid apply patch: {error}") from None


def _body_name(body: bytes, content_type: str) -> str:
    try:
        if "protobuf" in content_type:
            return str(protobuf.decode_object(body).get("metadata", {}).get("name", ""))
        data = json.loads(body) if body else {}
    except ValueError:
        return ""
    return str(data.get("metadata", {}).get("name", "")) if isinstance(data, dict) else ""


def _decode(body: bytes, content_type: str, resource: ResourceType) -> Obj:
    if "protobuf" in content_type:
        try:
            obj = protobuf.decode_object(body)
        except ValueError as error:
            raise ApiError(415, "UnsupportedMediaType", f"fake protobuf decoder: {error}") from None
    else:
        try:
            obj = json.loads(body) if body else {}
        except ValueError as error:
            raise ApiError(400, "BadRequest", f"invalid JSON body: {error}") from None
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", "the request body is not an object")
    obj.setdefault("apiVersion", resource.group_version)
    obj.setdefault("kind", resource.kind)
    return obj


def _dumps(obj: Obj) -> bytes:
    return json.dumps(obj).encode()


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 handler; the ``api`` class attribute is set by :meth:`FakeKubeAPI.start`."""

    api: FakeKubeAPI
    protocol_version = "HTTP/1.1"
    server_version = "FakeKubeAPI/1"
    # headers and body are separate writes: without TCP_NODELAY, Nagle's algorithm and the
    # client's delayed ACK add ~40 ms to every answer.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr line."""

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, code: int, content_type: str, payload: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _dispatch(self) -> None:
        seq = self.api.next_seq()  # at arrival: the log's order is the clients' order
        started = time.monotonic()
        split = urlsplit(self.path)
        path = split.path.rstrip("/") or "/"
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        body = self._body()
        content_type = self.headers.get("Content-Type", "")
        api = self.api
        verb, kind, namespace, name = "discovery", "", "", ""

        def log(code: int) -> None:
            # logged BEFORE the answer is sent, so a client that got its answer finds it here
            api.log(
                RequestRecord(
                    self.command,
                    path,
                    query,
                    verb,
                    kind,
                    namespace,
                    name,
                    content_type,
                    code,
                    seq,
                    started,
                    time.monotonic() - started,
                )
            )

        answer: tuple[int, str, bytes] | Iterator[bytes]
        try:
            if self.command == "GET" and path.startswith("/openapi/v2"):
                answer = (200, OPENAPI_V2_PROTOBUF, b"")  # an empty (valid) protobuf Document
            elif self.command == "GET" and (doc := api.discovery(path)) is not None:
                answer = (200, JSON, _dumps(doc))
            else:
                route = api.route(path)
                if route is not None:
                    verb = _verb(self.command, route, query)
                    kind, namespace, name = route.resource.kind, route.namespace, route.name
                    if verb == "create":
                        name = _body_name(body, content_type)
                answer = api.handle(self.command, path, query, body, content_type)
        except ApiError as error:
            answer = (error.code, JSON, _dumps(error.status()))
        try:
            if isinstance(answer, tuple):
                log(answer[0])
                self._send(*answer)
            else:
                log(200)  # a watch: it may stay open until the fake stops
                self._stream(answer)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _stream(self, chunks: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", JSON)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        try:
            for chunk in chunks:
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = _dispatch
    do_POST = _dispatch
    do_PUT = _dispatch
    do_PATCH = _dispatch
    do_DELETE = _dispatch
