"""CRDs and webhook configurations of the providers, prepared for managers on loopback.

Upstream ships kustomize trees (``config/``). Kustomize is not available here, so this
module does the few things the providers' kustomizations do that matter to the API server,
reading them from the kustomization files themselves rather than restating them:

- ``config/crd/kustomization.yaml``: the CRD files (``resources``), the contract labels
  (``labels`` pairs, e.g. ``cluster.x-k8s.io/v1beta2: v1beta2``; Cluster API refuses a
  referenced CRD without them) and the conversion-webhook patches (``patches``, only those
  listed: CAPO ships unlisted ones) -> ``spec.conversion`` pointing at the provider's local
  manager by URL, with the plane's CA as ``caBundle``.
- ``config/default/kustomization.yaml``: the provider label (``cluster.x-k8s.io/provider``).
- ``config/webhook/manifests.yaml``: the Mutating/ValidatingWebhookConfigurations, renamed per
  provider (upstream gives every provider the same names) and pointed at
  ``https://127.0.0.1:PORT/PATH`` with the ``caBundle`` (what controller-runtime's envtest does).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

try:
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # PyYAML without libyaml
    _Loader = yaml.SafeLoader

Obj = dict[str, Any]


def _documents(path: Path) -> Iterator[Obj]:
    """The YAML documents of ``path`` (parsed once: a JSON copy is kept next to it)."""
    parsed = path.with_name(f".{path.name}.json")
    if parsed.is_file() and parsed.stat().st_mtime >= path.stat().st_mtime:
        docs = json.loads(parsed.read_text())
    else:
        with path.open() as stream:
            loaded = yaml.load_all(stream, Loader=_Loader)
            docs = [d for d in loaded if isinstance(d, dict) and d]
        with contextlib.suppress(OSError):  # a read-only tree just parses every time
            tmp = parsed.with_name(f"{parsed.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(docs))
            tmp.replace(parsed)
    yield from docs


def _kustomization(directory: Path) -> Obj:
    path = directory / "kustomization.yaml"
    if not path.is_file():
        return {}
    docs = list(_documents(path))
    return docs[0] if docs else {}


def _label_pairs(kustomization: Obj) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for entry in kustomization.get("labels") or []:
        pairs.update({str(k): str(v) for k, v in (entry.get("pairs") or {}).items()})
    pairs.update({str(k): str(v) for k, v in (kustomization.get("commonLabels") or {}).items()})
    return pairs


def _client_config(port: int, path: str, ca_pem: bytes) -> Obj:
    return {
        "url": f"https://127.0.0.1:{port}{path}",
        "caBundle": base64.b64encode(ca_pem).decode(),
    }


def crds(
    config: Path, *, port: int | None, ca_pem: bytes, only: frozenset[str] | None = None
) -> list[Obj]:
    """The provider's CRDs with its labels and (if ``port``) conversion webhooks wired.

    ``only``: the CRD file names to take (default: every resource of the kustomization).
    """
    crd_dir = config / "crd"
    kustomization = _kustomization(crd_dir)
    labels = _label_pairs(_kustomization(config / "default")) | _label_pairs(kustomization)
    conversions: dict[str, Obj] = {}
    for patch in kustomization.get("patches") or []:
        patch_path = patch.get("path") if isinstance(patch, dict) else patch
        if not patch_path:
            continue
        for doc in _documents(crd_dir / str(patch_path)):
            conversion = (doc.get("spec") or {}).get("conversion")
            if conversion and conversion.get("strategy") == "Webhook":
                conversions[doc["metadata"]["name"]] = conversion
    result: list[Obj] = []
    for resource in kustomization.get("resources") or []:
        if only is not None and Path(str(resource)).name not in only:
            continue
        for crd in _documents(crd_dir / str(resource)):
            if crd.get("kind") != "CustomResourceDefinition":
                continue
            meta = crd.setdefault("metadata", {})
            meta["labels"] = {**(meta.get("labels") or {}), **labels}
            meta.pop("annotations", None)  # cert-manager injection hints only
            meta.pop("creationTimestamp", None)
            conversion = conversions.get(meta["name"])
            if conversion is not None and port is not None:
                webhook = conversion.get("webhook") or {}
                path = ((webhook.get("clientConfig") or {}).get("service") or {}).get(
                    "path", "/convert"
                )
                crd["spec"]["conversion"] = {
                    "strategy": "Webhook",
                    "webhook": {
                        "conversionReviewVersions": webhook.get("conversionReviewVersions")
                        or ["v1"],
                        "clientConfig": _client_config(port, path, ca_pem),
                    },
                }
            result.append(crd)
    return result


def webhook_configurations(config: Path, provider: str, *, port: int, ca_pem: bytes) -> list[Obj]:
    """The provider's webhook configurations, renamed and pointed at its local manager."""
    path = config / "webhook" / "manifests.yaml"
    if not path.is_file():
        return []
    result: list[Obj] = []
    for doc in _documents(path):
        if doc.get("kind") not in {
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        }:
            continue
        doc["metadata"] = {
            "name": f"testenv-{provider}-{doc['metadata']['name']}",
            "labels": {"scs-templates.scs.community/testenv": provider},
        }
        for webhook in doc.get("webhooks") or []:
            service = (webhook.get("clientConfig") or {}).get("service") or {}
            webhook["clientConfig"] = _client_config(port, str(service.get("path", "/")), ca_pem)
        result.append(doc)
    return result
