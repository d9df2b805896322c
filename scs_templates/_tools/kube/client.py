"""A small, typed wrapper over the ``kubernetes`` client for the objects scs-templates manages.

Generic by design: any object is addressed by :class:`ObjectRef` (apiVersion, kind,
namespace, name) and fetched as plain JSON, so Cluster API kinds need no generated client.
Plural resource names come from the API's discovery documents (cached per client).
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.naming import kubeconfig_secret
from scs_templates._core.timeouts import abandonable, explicit
from scs_templates._tools.kube.cluster import ClusterState, cluster_state
from scs_templates._tools.kube.config import check_kubeconfig

if TYPE_CHECKING:
    from collections.abc import Iterable

#: The Cluster API group and version the charts render Clusters in.
CLUSTER_API_VERSION = "cluster.x-k8s.io/v1beta2"
#: Seconds to connect / to read one answer (each capped by the user's ``--timeout``).
REQUEST_TIMEOUT = (10.0, 60.0)
#: How often a request is sent again after a refused or reset connection (never after a
#: timeout: urllib3's default re-sends a GET that got no answer 3 times, so an API server
#: that stopped answering held each call 4 x 60 s, past every deadline of the caller).
CONNECT_RETRIES = 3
#: One call ends at the longer of its (connect, read) timeouts and this much more, however
#: its server answers: a server that trickles a byte now and then never trips a read
#: timeout (it is per read). A silent server still meets the read timeout first.
WALL_CLOCK_GRACE = 1.0


def request_timeout() -> tuple[float, float]:
    """(connect, read) seconds of one API request: :data:`REQUEST_TIMEOUT`, each at most
    the user's ``--timeout``/``SCS_TEMPLATES_TIMEOUT``
    (:func:`scs_templates._core.timeouts.explicit`)."""

    knob = explicit()
    if knob is None:
        return REQUEST_TIMEOUT
    return (min(REQUEST_TIMEOUT[0], knob), min(REQUEST_TIMEOUT[1], knob))


def _unreachable(error: BaseException, timeout: tuple[float, float]) -> str:
    """Why a request got no answer, in words (not urllib3's pool and object reprs)."""

    from urllib3.exceptions import MaxRetryError, NewConnectionError  # deferred: urllib3
    from urllib3.exceptions import TimeoutError as Urllib3Timeout  # deferred: urllib3

    reason: BaseException | None = error
    if isinstance(error, MaxRetryError) and error.reason is not None:
        reason = error.reason
    # urllib3's NewConnectionError (refused, unreachable) is a ConnectTimeoutError too
    if isinstance(reason, (Urllib3Timeout, TimeoutError)) and not isinstance(
        reason, NewConnectionError
    ):
        connect, read = timeout
        return (
            f"no answer in time ({connect:g} s to connect, {read:g} s per request; not sent again)"
        )
    text = re.sub(r"<[^<>]*>: ", "", str(reason)) or type(reason).__name__
    return re.sub(r"^HTTPS?ConnectionPool\([^)]*\): ", "", text)


@dataclass(frozen=True, order=True)
class ObjectRef:
    """Where an object lives: apiVersion, kind, namespace ("" if cluster-wide) and name."""

    api_version: str
    kind: str
    namespace: str
    name: str

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    @classmethod
    def of(cls, obj: Mapping[str, Any], default_namespace: str = "") -> ObjectRef:
        """The reference of a manifest object (namespace defaulted for namespaced objects)."""
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        return cls(
            str(obj.get("apiVersion", "")),
            str(obj.get("kind", "")),
            str(meta.get("namespace") or default_namespace),
            str(meta.get("name", "")),
        )


def _message(error: Any) -> str:
    """The ``message`` of a Status body, else the HTTP reason (never the request body)."""
    body = getattr(error, "body", None)
    try:
        data = json.loads(body) if body else None
    except (TypeError, ValueError):
        data = None
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    return str(getattr(error, "reason", "") or "no message")


class NotKubernetesAPI(ToolError):
    """The server answers, but is not a Kubernetes API (exit 1)."""


class KubeClient:
    """The management cluster's API, from a kubeconfig file and an optional context.

    ``kubeconfig`` defaults to ``$KUBECONFIG`` (may list several files) or
    ``~/.kube/config``; ``context`` to the kubeconfig's current context. ``check_api``: the
    first call checks that the server is a Kubernetes API (:meth:`check_api`).
    """

    def __init__(
        self, kubeconfig: str | None = None, context: str | None = None, *, check_api: bool = True
    ) -> None:
        from kubernetes import client, config  # deferred: kubernetes

        self._client_module = client

        path = kubeconfig or os.environ.get("KUBECONFIG") or str(Path.home() / ".kube" / "config")
        self.kubeconfig = path
        self.context = context
        check_kubeconfig(kubeconfig, context)
        from urllib3.util.retry import Retry  # deferred: urllib3

        self.timeout = request_timeout()
        # what config.new_client_from_config does, with retries that never re-send a
        # request that timed out (CONNECT_RETRIES)
        configuration = type.__call__(client.Configuration)
        configuration.retries = Retry(total=CONNECT_RETRIES, read=0)
        try:
            config.load_kube_config(
                config_file=path, context=context, client_configuration=configuration
            )
            self.api = client.ApiClient(configuration=configuration)
        except config.ConfigException as error:
            raise InputError(f"kubeconfig {path}: {error}") from None
        except OSError as error:
            raise InputError(f"kubeconfig {path}: {error.strerror or error}") from None
        except Exception as error:  # the loader's own bugs on odd files: still the input
            raise InputError(
                f"kubeconfig {path}: cannot be loaded ({type(error).__name__})"
            ) from None
        self._plurals: dict[tuple[str, str], tuple[str, bool]] = {}
        self._lock = threading.Lock()
        # a workload cluster's client passes False: Cluster API's in-memory workload API (the
        # test plane's) serves no /version, and its kubeconfig comes from Cluster API itself
        self._checked = not check_api

    def close(self) -> None:
        self.api.close()

    def __enter__(self) -> KubeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ raw calls

    def check_api(self) -> None:
        """Raise :class:`NotKubernetesAPI` (exit 1) unless ``GET /version`` answers a JSON
        object with a ``gitVersion``, as every kube-apiserver does: any other HTTP server
        (a proxy, a web page answering 200 to everything) would otherwise read as an empty
        cluster ("release not installed", "Cluster not found", exit 0; issue #41). Asked
        once per client."""
        with self._lock:
            if self._checked:
                return
        found = self._call("GET", "/version", what="reading the server version")
        version = found.get("gitVersion") if isinstance(found, dict) else None
        if not isinstance(version, str) or not version:
            host = self.api.configuration.host
            raise NotKubernetesAPI(
                f"{host} is not a Kubernetes API: GET /version answered without a gitVersion "
                "(check the server of the kubeconfig and its context)"
            )
        with self._lock:
            self._checked = True

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Iterable[tuple[str, str]] = (),
        body: Any = None,
        what: str,
        content_type: str = "application/json",
        none_on_conflict: bool = False,
    ) -> Any:
        """One API call returning the decoded JSON, or None for 404 (and for 409 when
        ``none_on_conflict``: a write that lost an optimistic-concurrency race). The first
        call of a client checks that the server is a Kubernetes API (:meth:`check_api`).
        The call is abandoned after :data:`WALL_CLOCK_GRACE` more than its longest socket
        timeout (:func:`~scs_templates._core.timeouts.abandonable`)."""
        from urllib3.exceptions import HTTPError as Urllib3Error  # deferred: urllib3

        if path != "/version":
            self.check_api()
        host = self.api.configuration.host
        limit = max(self.timeout) + WALL_CLOCK_GRACE

        def send() -> Any:
            return self.api.call_api(
                path,
                method,
                query_params=list(query),
                header_params={"Accept": "application/json", "Content-Type": content_type},
                body=body,
                response_type="object",
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
                _preload_content=True,
                _request_timeout=self.timeout,
            )

        def abandoned() -> ToolError:
            return ToolError(
                f"cannot reach the Kubernetes API at {host}: {what}: no complete answer "
                f"within {limit:g} s (--timeout); the call was abandoned"
            )

        try:
            return abandonable(send, limit, abandoned, "kubernetes-call")
        except self._client_module.ApiException as error:
            if error.status == 404 or (error.status == 409 and none_on_conflict):
                return None
            raise ToolError(
                f"Kubernetes API: {what} failed: {error.status} {_message(error)}"
            ) from None
        except (Urllib3Error, OSError) as error:
            reason = _unreachable(error, self.timeout)
            raise ToolError(f"cannot reach the Kubernetes API at {host}: {reason}") from None

    def resource(self, api_version: str, kind: str) -> tuple[str, bool]:
        """(plural, namespaced) of a kind, from discovery; ToolError when not served."""
        key = (api_version, kind)
        with self._lock:
            if key in self._plurals:
                return self._plurals[key]
        path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        listing = self._call("GET", path, what=f"discovery of {api_version}")
        for entry in (listing or {}).get("resources", []):
            if entry.get("kind") == kind and "/" not in str(entry.get("name", "")):
                found = (str(entry["name"]), bool(entry.get("namespaced")))
                with self._lock:
                    self._plurals[key] = found
                return found
        raise ToolError(
            f"the API does not serve {kind} in {api_version}; are the Cluster API providers "
            "installed on the management cluster?"
        )

    def group_version(self, group: str) -> str:
        """The version the API prefers for ``group`` (``apiGroup`` of a v1beta2 reference),
        as ``group/version``; ToolError when the group is not served."""
        if not group:
            return "v1"
        found = self._call("GET", f"/apis/{quote(group, safe='')}", what=f"discovery of {group}")
        preferred = (found or {}).get("preferredVersion") or {}
        if not isinstance(preferred, dict) or not preferred.get("groupVersion"):
            raise ToolError(f"the API does not serve the group {group}")
        return str(preferred["groupVersion"])

    def _path(self, api_version: str, kind: str, namespace: str, name: str = "") -> str:
        plural, namespaced = self.resource(api_version, kind)
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        if namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        path = f"{base}/{plural}"
        return f"{path}/{quote(name, safe='')}" if name else path

    # ------------------------------------------------------------------ objects

    def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        """The object, or None when it does not exist."""
        path = self._path(ref.api_version, ref.kind, ref.namespace, ref.name)
        found = self._call("GET", path, what=f"reading {ref}")
        return found if isinstance(found, dict) else None

    def ensure_namespace(self, name: str) -> bool:
        """Create the namespace unless it exists; True when created."""
        if self.get(ObjectRef("v1", "Namespace", "", name)) is not None:
            return False
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        self._call("POST", "/api/v1/namespaces", body=body, what=f"creating namespace {name}")
        return True

    def _patch(
        self,
        ref: ObjectRef,
        body: Mapping[str, Any],
        content_type: str,
        query: Iterable[tuple[str, str]] = (),
    ) -> dict[str, Any]:
        path = self._path(ref.api_version, ref.kind, ref.namespace, ref.name)
        found = self._call(
            "PATCH",
            path,
            query=query,
            body=dict(body),
            what=f"patching {ref}",
            content_type=content_type,
        )
        if not isinstance(found, dict):
            raise ToolError(f"{ref} does not exist")
        return found

    def merge_patch(self, ref: ObjectRef, patch: Mapping[str, Any]) -> dict[str, Any]:
        """JSON merge patch (RFC 7386) of an existing object; ToolError when it is missing."""
        return self._patch(ref, patch, "application/merge-patch+json")

    def merge_patch_status(
        self, ref: ObjectRef, patch: Mapping[str, Any], *, resource_version: str
    ) -> dict[str, Any] | None:
        """JSON merge patch of the object's ``status`` subresource, only while the object is
        at ``resource_version``; None when it changed meanwhile (read it again) or is gone."""
        path = self._path(ref.api_version, ref.kind, ref.namespace, ref.name) + "/status"
        body = {**patch, "metadata": {"resourceVersion": resource_version}}
        found = self._call(
            "PATCH",
            path,
            body=body,
            what=f"patching the status of {ref}",
            content_type="application/merge-patch+json",
            none_on_conflict=True,
        )
        return found if isinstance(found, dict) else None

    def server_side_apply(self, obj: Mapping[str, Any], field_manager: str) -> dict[str, Any]:
        """Server-side apply ``obj`` (create or update) as ``field_manager``, taking over
        fields another manager set (``force``: we are the source of truth for them)."""
        query = [("fieldManager", field_manager), ("force", "true")]
        return self._patch(ObjectRef.of(obj), obj, "application/apply-patch+yaml", query)

    def delete(self, ref: ObjectRef) -> bool:
        """Delete the object (background propagation); False when it was already gone."""
        path = self._path(ref.api_version, ref.kind, ref.namespace, ref.name)
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        return self._call("DELETE", path, body=body, what=f"deleting {ref}") is not None

    def list(
        self, api_version: str, kind: str, namespace: str, *, label_selector: str = ""
    ) -> list[dict[str, Any]]:
        """Objects of a kind in a namespace, optionally filtered by a label selector."""
        path = self._path(api_version, kind, namespace)
        query = [("labelSelector", label_selector)] if label_selector else []
        found = self._call("GET", path, query=query, what=f"listing {kind} in {namespace}")
        items = (found or {}).get("items", [])
        result = []
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", kind)
                result.append(item)
        return result

    def serves(self, api_version: str, kind: str) -> bool:
        """Whether the API serves ``kind`` (a server that is no Kubernetes API: an error)."""
        try:
            self.resource(api_version, kind)
        except NotKubernetesAPI:
            raise
        except ToolError:
            return False
        return True

    # ------------------------------------------------------------------ clusters

    def cluster(
        self, namespace: str, name: str, *, api_version: str = CLUSTER_API_VERSION
    ) -> ClusterState | None:
        """The Cluster object's state, or None when it does not exist."""
        found = self.get(ObjectRef(api_version, "Cluster", namespace, name))
        return cluster_state(found) if found is not None else None

    def cluster_kubeconfig(self, namespace: str, cluster: str) -> str | None:
        """The workload cluster's admin kubeconfig (Secret ``<cluster>-kubeconfig``, key
        ``value``), or None. It is a credential: never print or log it."""
        data = self.secret_data(namespace, kubeconfig_secret(cluster))
        return (data or {}).get("value") or None

    # ------------------------------------------------------------------ secrets

    def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """A Secret's decoded data (UTF-8 text values), or None when it does not exist.

        The values are credentials: callers must never print or log them.
        """

        found = self.get(ObjectRef("v1", "Secret", namespace, name))
        if found is None:
            return None
        data = found.get("data") or {}
        decoded: dict[str, str] = {}
        for key, value in sorted(data.items()) if isinstance(data, dict) else []:
            decoded[str(key)] = base64.b64decode(str(value or "")).decode("utf-8")
        return decoded

    def put_namespace_labels(self, name: str, labels: Mapping[str, str]) -> bool:
        """Make namespace ``name`` exist and carry ``labels`` (other labels are kept); True
        when it changed."""
        ref = ObjectRef("v1", "Namespace", "", name)
        current = self.get(ref)
        path = self._path("v1", "Namespace", "")
        if current is None:
            body = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": dict(sorted(labels.items()))},
            }
            self._call("POST", path, body=body, what=f"creating {ref}")
            return True
        metadata = current.setdefault("metadata", {})
        present = metadata.get("labels") or {}
        if all(present.get(key) == value for key, value in labels.items()):
            return False
        metadata["labels"] = {**present, **labels}
        self._call("PUT", f"{path}/{quote(name, safe='')}", body=current, what=f"labelling {ref}")
        return True

    def put_secret(
        self,
        namespace: str,
        name: str,
        string_data: Mapping[str, str],
        *,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> bool:
        """Create or replace an Opaque Secret; True when it changed. Values never logged.

        Replacing sets exactly ``labels`` and ``annotations`` (earlier ones, e.g. helm's
        ownership annotations, are dropped).
        """

        data = {k: base64.b64encode(v.encode()).decode() for k, v in sorted(string_data.items())}
        ref = ObjectRef("v1", "Secret", namespace, name)
        metadata: dict[str, Any] = {"name": name, "namespace": namespace}
        metadata["labels"] = dict(labels or {})
        if annotations:
            metadata["annotations"] = dict(annotations)
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": metadata,
            "data": data,
        }
        current = self.get(ref)
        path = self._path("v1", "Secret", namespace)
        if current is None:
            self._call("POST", path, body=body, what=f"creating {ref}")
            return True
        meta = current.get("metadata") or {}
        same_meta = (meta.get("labels") or {}) == metadata["labels"] and (
            meta.get("annotations") or {}
        ) == metadata.get("annotations", {})
        if (current.get("data") or {}) == data and same_meta:
            return False
        body["metadata"]["resourceVersion"] = (current.get("metadata") or {}).get("resourceVersion")
        self._call("PUT", f"{path}/{quote(name, safe='')}", body=body, what=f"updating {ref}")
        return True
