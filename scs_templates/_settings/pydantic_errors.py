"""pydantic's refusal of a settings document, in the package's words: one message per field.

Only a document the plain path (:mod:`.plain`) does not accept gets here, so this module
imports pydantic and the model at the top and :mod:`.validate` imports it with them. Every
message is redacted (URL userinfo, registered secrets): pydantic's messages quote values.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from scs_templates._core.secrets import redact
from scs_templates._settings.model import (
    COMPACTION_RETENTION,
    DNS_LABEL,
    DNS_SUBDOMAIN,
    LABEL_KEY,
    LABEL_VALUE,
    NO_PROXY_ENTRY,
    ON_CALENDAR,
    PROXY_URL,
    REGISTRY_HOST,
    ClusterSettings,
    nested_model,
)
from scs_templates._settings.problems import Path
from scs_templates._settings.suggestions import did_you_mean

__all__ = ["translate"]


#: What a value that does not match a pattern of the model is told, by pattern.
_PATTERN_HELP: dict[str, str] = {
    DNS_SUBDOMAIN: (
        "must be a DNS-1123 subdomain: DNS labels (lower-case letters, digits and '-', "
        "at most 63 characters each) joined by '.'"
    ),
    LABEL_KEY: (
        "is not a label key: an optional DNS subdomain and '/', then at most 63 letters, "
        "digits, '-', '_' or '.', starting and ending with a letter or digit"
    ),
    LABEL_VALUE: (
        "is not a label value: empty or at most 63 letters, digits, '-', '_' or '.', "
        "starting and ending with a letter or digit"
    ),
    NO_PROXY_ENTRY: (
        "is not one NO_PROXY entry: one host, domain or CIDR per list item, without ',', "
        "blanks or quotes"
    ),
    COMPACTION_RETENTION: (
        "is not an etcd compaction retention: whole hours (8) or a Go duration such as "
        "8h, 90m or 1h30m"
    ),
    ON_CALENDAR: (
        "is not a systemd OnCalendar expression such as '*-*-* 02:30:00' (one line of "
        "ASCII letters, digits, blanks and * , . / : ~ -)"
    ),
    DNS_LABEL: (
        "must be a DNS-1123 label: lower-case letters, digits and '-', starting and "
        "ending with a letter or digit"
    ),
    REGISTRY_HOST: (
        "is not a registry host such as docker.io, registry.k8s.io or harbor.example:5000 "
        "(no scheme, path or '..')"
    ),
}


#: Patterns whose wrong values are never echoed (they may carry credentials), and what such a
#: value is told instead.
_UNECHOED_PATTERN_HELP: dict[str, str] = {
    PROXY_URL: (
        "must be an http:// or https:// URL without user information, e.g. "
        "http://proxy.example:3128 (credentials would be copied onto every node; the "
        "value is not shown)"
    ),
}


def translate(error: ValidationError) -> list[tuple[Path, str]]:
    """pydantic's errors as (path, message); every message redacted (URL userinfo,
    registered secrets) because messages quote the values."""
    return [(path, redact(message)) for path, message in _translate_raw(error)]


def _translate_raw(error: ValidationError) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for item in error.errors(include_url=False):
        loc = tuple(part for part in item["loc"] if part != "[key]")
        path: Path = tuple(p for p in loc if isinstance(p, str | int))
        kind = item["type"]
        value = item.get("input")
        ctx = item.get("ctx") or {}
        if kind == "extra_forbidden":
            known = _known_keys(path[:-1])
            key = str(path[-1])
            found.append((path, f"unknown key {key!r}{did_you_mean(key, known)}"))
            continue
        if kind == "missing":
            found.append((path, "required but missing"))
            continue
        if kind == "literal_error":
            expected = ctx.get("expected", "")
            hint = ""
            if isinstance(value, str):
                choices = [c.strip().strip("'") for c in expected.replace(" or ", ", ").split(",")]
                hint = did_you_mean(value, choices)
            found.append((path, f"{value!r} is not allowed; expected {expected}{hint}"))
            continue
        if kind == "string_pattern_mismatch" and str(ctx.get("pattern")) in _UNECHOED_PATTERN_HELP:
            found.append((path, _UNECHOED_PATTERN_HELP[str(ctx.get("pattern"))]))
            continue
        if kind == "string_pattern_mismatch":
            message = _PATTERN_HELP.get(str(ctx.get("pattern")), "has the wrong format")
            found.append((path, f"{value!r} {message}"))
            continue
        found.append((path, _message(kind, item["msg"], value)))
    return found


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


def _message(kind: str, msg: str, value: Any) -> str:
    expected = {
        "int_type": "a whole number",
        "bool_type": "true or false",
        "string_type": "a string",
        "model_type": "a mapping",
        "model_attributes_type": "a mapping",
        "dict_type": "a mapping",
        "list_type": "a list",
    }.get(kind)
    if expected:
        return f"expected {expected}, found {_describe(value)}"
    text = msg[0].lower() + msg[1:] if msg else kind
    return text.replace("input should be", "must be").replace("Value error, ", "")


def _known_keys(path: Path) -> list[str]:
    """The YAML keys allowed at ``path`` (for did-you-mean)."""
    model: Any = ClusterSettings
    for part in path:
        if isinstance(part, int):
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return []
        fields = {info.alias or name: info for name, info in model.model_fields.items()}
        info = fields.get(part)
        if info is None:
            return []
        model = nested_model(info.annotation)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return sorted(info.alias or name for name, info in model.model_fields.items())
    return []
