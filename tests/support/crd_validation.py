"""Strict validation of rendered manifests against the upstream CRDs (test helper).

The API server silently PRUNES fields a CRD does not declare, so a misspelled field
(``allowedCidrs`` for ``allowedCIDRs``) applies fine and does nothing. kubeconform-style
checks that skip unknown kinds let exactly such bugs through. This module validates every
object of every kind strictly instead: the CRD's openAPIV3Schema is translated to draft-07
JSON Schema with every object schema that declares ``properties`` CLOSED, and the few core
kinds we render (Secret) get a small handwritten schema. An object of a kind we have no
schema for is an error, never skipped.

Translation (see ``/work/shared/crds/README.md``): ``x-kubernetes-int-or-string`` becomes
integer-or-string, ``nullable`` adds null, other ``x-kubernetes-*`` keys are dropped,
``metadata`` is an object, and required properties that have a default are not required
(the API server defaults them before validating).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft7Validator

from scs_templates._versions import table
from tests.support import SHARED

CRD_DIR = SHARED / "crds"
#: The CRD sets of the releases the versions table targets (and Flux's, for GitOps output):
#: strict validation is against exactly these, never against whatever else is in CRD_DIR.
FLUX_CRDS = "flux2-2.18.3"


def crd_sets() -> tuple[str, ...]:
    versions = table()
    return (versions.cluster_api.crds, versions.providers["openstack"].crds, FLUX_CRDS)


_SECRET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "v1"},
        "kind": {"const": "Secret"},
        "metadata": {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": {
                "name": {"type": "string"},
                "namespace": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "additionalProperties": False,
        },
        "type": {"type": "string"},
        "stringData": {
            "type": "object",
            "propertyNames": {"pattern": r"^[-._a-zA-Z0-9]+$"},
            "additionalProperties": {"type": "string"},
        },
    },
}

_METADATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "namespace"],
    "properties": {
        "name": {"type": "string", "maxLength": 253},
        "namespace": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "additionalProperties": False,
}


def crds_available() -> bool:
    return all((CRD_DIR / name).is_dir() for name in crd_sets())


def skip_or_fail_reason() -> str | None:
    """None when the CRDs are there; else why (tests skip, or fail when CI=true)."""
    if crds_available():
        return None
    return (
        f"upstream CRDs {', '.join(crd_sets())} not found in {CRD_DIR} (reference data next "
        "to the checkout)"
    )


def translate(schema: Any, *, top: bool = False) -> Any:
    """Translate one openAPIV3Schema node into draft-07, closing declared objects."""
    if isinstance(schema, list):
        return [translate(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key.startswith("x-kubernetes-") or key in ("description", "example", "default"):
            continue
        if key == "properties":
            out[key] = {name: translate(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            out[key] = translate(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [translate(item) for item in value]
        else:
            out[key] = value
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["type"] = ["integer", "string"]
    if schema.get("nullable"):
        out.pop("nullable", None)
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if "required" in schema and "properties" in schema:
        defaults = {n for n, sub in schema["properties"].items() if "default" in sub}
        required = [n for n in schema["required"] if n not in defaults]
        if required:
            out["required"] = required
        else:
            out.pop("required", None)
    if top:
        properties = out.setdefault("properties", {})
        properties["metadata"] = _METADATA_SCHEMA
        out["additionalProperties"] = False
    return out


@functools.cache
def _validators() -> dict[tuple[str, str], Draft7Validator]:
    """(apiVersion, kind) -> validator, for every served version of every CRD."""
    validators: dict[tuple[str, str], Draft7Validator] = {}
    paths = (path for name in crd_sets() for path in sorted((CRD_DIR / name).rglob("*.yaml")))
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            for crd in yaml.safe_load_all(handle):
                if not crd or crd.get("kind") != "CustomResourceDefinition":
                    continue
                group = crd["spec"]["group"]
                kind = crd["spec"]["names"]["kind"]
                for version in crd["spec"]["versions"]:
                    if not version.get("served"):
                        continue
                    schema = translate(version["schema"]["openAPIV3Schema"], top=True)
                    Draft7Validator.check_schema(schema)
                    validators[(f"{group}/{version['name']}", kind)] = Draft7Validator(schema)
    validators[("v1", "Secret")] = Draft7Validator(_SECRET_SCHEMA)
    return validators


def known_kinds() -> set[tuple[str, str]]:
    return set(_validators())


def errors(obj: dict[str, Any]) -> list[str]:
    """Every problem of one object, as 'Kind/name: path: message' lines."""
    key = (obj.get("apiVersion", ""), obj.get("kind", ""))
    name = f"{key[1]}/{obj.get('metadata', {}).get('name', '?')}"
    validator = _validators().get(key)
    if validator is None:
        return [f"{name}: no schema for apiVersion {key[0]!r} kind {key[1]!r}"]
    problems = []
    for error in sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in error.absolute_path) or "<root>"
        problems.append(f"{name}: {where}: {error.message}")
    return problems


def documents(text: str) -> Iterator[dict[str, Any]]:
    """The non-empty YAML documents of a helm template output."""
    for doc in yaml.safe_load_all(text):
        if doc:
            yield doc


def validate_all(objects: Iterable[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    for obj in objects:
        problems.extend(errors(obj))
    return problems


# --------------------------------------------------------------------------- rendering


def helm_template(
    helm: Path | str,
    chart: Path,
    values: dict[str, Any],
    *,
    release: str,
    namespace: str,
    kube_version: str,
) -> str:
    """`helm template` with JSON values on stdin; raises AssertionError with helm's stderr."""
    import json
    import subprocess

    result = subprocess.run(
        [
            str(helm),
            "template",
            release,
            str(chart),
            "-n",
            namespace,
            "--kube-version",
            kube_version,
            "-f",
            "-",
        ],
        input=json.dumps(values),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"helm template failed:\n{result.stderr}")
    return result.stdout
