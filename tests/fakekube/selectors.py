"""Label and field selectors for the FAKE Kubernetes API (test double).

Supports the label selector grammar helm and client-go send: ``k=v``, ``k==v``, ``k!=v``,
``k in (a,b)``, ``k notin (a,b)``, ``k`` (exists) and ``!k`` (does not exist), joined by
commas. Field selectors: ``metadata.name`` and ``metadata.namespace`` with ``=``/``==``/``!=``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Matcher = Callable[[Mapping[str, str]], bool]

_SET_RE = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_OP_RE = re.compile(r"^\s*([^\s!=(),]+)\s*(==|=|!=)\s*([^\s,]*)\s*$")
_EXISTS_RE = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*$")


class SelectorError(ValueError):
    """The selector text cannot be parsed (the fake answers 400 BadRequest)."""


def _split_requirements(text: str) -> list[str]:
    """Split on commas that are not inside ``( ... )``."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part for part in parts if part.strip()]


def _requirement(text: str) -> Matcher:
    if match := _SET_RE.match(text):
        key, operator, raw = match.groups()
        values = {value.strip() for value in raw.split(",") if value.strip()}
        if operator == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if match := _OP_RE.match(text):
        key, operator, value = match.groups()
        if operator == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if match := _EXISTS_RE.match(text):
        negate, key = match.groups()
        if negate:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise SelectorError(f"unable to parse requirement: {text!r}")


def label_matcher(selector: str | None) -> Matcher:
    """A predicate over a labels mapping; an empty selector matches everything."""
    if not selector:
        return lambda labels: True
    requirements = [_requirement(part) for part in _split_requirements(selector)]
    return lambda labels: all(requirement(labels) for requirement in requirements)


def field_matcher(selector: str | None) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate over an object for ``metadata.name``/``metadata.namespace`` selectors."""
    if not selector:
        return lambda obj: True
    checks: list[Callable[[Mapping[str, Any]], bool]] = []
    for part in _split_requirements(selector):
        match = _OP_RE.match(part)
        if not match:
            raise SelectorError(f"unable to parse field selector: {part!r}")
        path, operator, value = match.groups()
        if path not in ("metadata.name", "metadata.namespace"):
            raise SelectorError(f"field label not supported by the fake: {path!r}")
        field_name = path.split(".", 1)[1]

        def check(
            obj: Mapping[str, Any],
            field_name: str = field_name,
            operator: str = operator,
            value: str = value,
        ) -> bool:
            actual = str(obj.get("metadata", {}).get(field_name, ""))
            return actual != value if operator == "!=" else actual == value

        checks.append(check)
    return lambda obj: all(check(obj) for check in checks)
