"""A compiled check of a chart's ``values.schema.json``: a GATE in front of helm's own check.

Why: in a fleet batch helm checks every alias's values against the chart's schema with
gojsonschema, compiling the schema anew for each alias: about a third of helm's CPU per
cluster in a batch (bench case 4b). ``render-fleet`` checks the values here instead (the
schema compiled once per process, well under a millisecond per cluster) and gives helm the
chart without its schema, but ONLY for values this check accepts. Values it refuses go to
helm with the schema, which decides and words the error. So the check may refuse more than
helm (a slower render, the same output), never accept what helm refuses; the schema stays
the one source of the rules (it is generated, :mod:`scs_templates._render.values.schema`):

* draft-07 keywords as the JSON Schema specification defines them, each applying to its
  own instance type; a keyword (or ``$schema``, or a ``$ref`` form) it does not know turns
  the gate off for that chart (:func:`values_gate` returns None);
* ``pattern`` with Python's ``re`` in ASCII mode, where ``\\d``, ``\\w`` and ``\\s`` are
  ASCII classes as in Go's RE2 (Python's ASCII ``\\s`` also holds the vertical tab, which
  only makes it refuse more); a pattern with ``$`` refuses text with a line break (Python's
  ``$`` also matches before a final newline, Go's does not);
* numbers compared as JSON numbers (``1`` equals ``1.0``, a boolean is never a number), as
  gojsonschema compares the values helm read from JSON.

``tests/unit/test_values_gate.py`` proves it: every example's and benchmark cluster's values pass,
and for generated near-misses what the gate accepts, both the ``jsonschema`` package and
the real helm accept.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["Check", "Unsupported", "compile_gate", "values_gate"]

Check = Callable[[Any], bool]

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples", "definitions"}
)
_TYPES: dict[str, Check] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "number": lambda v: type(v) in (int, float) and math.isfinite(v),
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
}


class Unsupported(Exception):
    """The schema uses something the gate does not decide exactly: no gate for it."""


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, booleans only equal booleans."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _pattern(text: str) -> Check:
    compiled = re.compile(text, re.ASCII)
    anchored_end = "$" in text
    return lambda v: not (anchored_end and "\n" in v) and compiled.search(v) is not None


class _Gate:
    def __init__(self, root: dict[str, Any]) -> None:
        self.definitions: dict[str, Any] = root.get("definitions", {})
        self.compiled: dict[str, Check] = {}

    def ref(self, ref: Any) -> Check:
        prefix = "#/definitions/"
        if not isinstance(ref, str) or not ref.startswith(prefix):
            raise Unsupported(f"$ref {ref!r}")
        name = ref[len(prefix) :]
        if name not in self.definitions:
            raise Unsupported(f"$ref {ref!r}")
        if name not in self.compiled:
            slot: list[Check] = []
            self.compiled[name] = lambda v: slot[0](v)  # recursion-safe
            slot.append(self.schema(self.definitions[name]))
        return self.compiled[name]

    def schema(self, node: Any) -> Check:
        if node is True:
            return lambda v: True
        if node is False:
            return lambda v: False
        if not isinstance(node, dict):
            raise Unsupported(f"schema {node!r}")
        rest = {k: v for k, v in node.items() if k not in _ANNOTATIONS}
        if ("then" in rest or "else" in rest) and "if" not in rest:
            raise Unsupported("then/else without if")
        if "patternProperties" in rest:
            raise Unsupported("patternProperties")
        checks: list[Check] = []
        if "properties" in rest or "additionalProperties" in rest:
            checks.append(
                self.members(rest.pop("properties", {}), rest.pop("additionalProperties", True))
            )
        checks += [self.keyword(rest, key) for key in sorted(rest) if key not in ("then", "else")]
        return _all(checks)

    def members(self, properties: Any, additional: Any) -> Check:
        """``properties`` with ``additionalProperties`` (a schema, or true/false)."""
        if not isinstance(properties, dict):
            raise Unsupported(f"properties {properties!r}")
        known = {name: self.schema(s) for name, s in properties.items()}
        extra = self.schema(additional)

        def check(value: dict[str, Any]) -> bool:
            for key, item in value.items():
                member = known.get(key)
                if not (member(item) if member is not None else extra(item)):
                    return False
            return True

        return _on(dict, check)

    def keyword(self, node: dict[str, Any], key: str) -> Check:
        value = node[key]
        if key == "$ref":
            return self.ref(value)
        if key == "type":
            kinds = value if isinstance(value, list) else [value]
            if not kinds or any(k not in _TYPES for k in kinds):
                raise Unsupported(f"type {value!r}")
            tests = [_TYPES[k] for k in kinds]
            if len(tests) == 1:
                return tests[0]
            return lambda v: any(t(v) for t in tests)
        if key in ("enum", "const"):
            allowed = list(value) if key == "enum" else [value]
            return lambda v: any(_equal(v, item) for item in allowed)
        if key in ("allOf", "oneOf", "anyOf"):
            if not isinstance(value, list) or not value:
                raise Unsupported(f"{key} {value!r}")
            parts = [self.schema(part) for part in value]
            if key == "allOf":
                return _all(parts)
            if key == "anyOf":
                return lambda v: any(p(v) for p in parts)
            return lambda v: sum(1 for p in parts if p(v)) == 1
        if key == "not":
            inner = self.schema(value)
            return lambda v: not inner(v)
        if key == "if":
            condition = self.schema(value)
            then = self.schema(node.get("then", True))
            otherwise = self.schema(node.get("else", True))
            return lambda v: then(v) if condition(v) else otherwise(v)
        return self.typed(key, value)

    def typed(self, key: str, value: Any) -> Check:
        """Keywords that apply to one instance type and accept every other type."""
        if key == "required":
            names = list(value)
            return _on(dict, lambda v: all(n in v for n in names))
        if key in ("minProperties", "maxProperties", "minItems", "maxItems"):
            bound = int(value)
            kind: type = dict if key.endswith("Properties") else list
            if key.startswith("min"):
                return _on(kind, lambda v: len(v) >= bound)
            return _on(kind, lambda v: len(v) <= bound)
        if key == "items":
            if not isinstance(value, dict | bool):
                raise Unsupported("items as a list")
            item = self.schema(value)
            return _on(list, lambda v: all(item(x) for x in v))
        if key in ("minLength", "maxLength"):
            length = int(value)
            if key == "minLength":
                return _on(str, lambda v: len(v) >= length)
            return _on(str, lambda v: len(v) <= length)
        if key == "pattern":
            return _on(str, _pattern(value))
        if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if not _is_number(value) or type(value) is bool:
                raise Unsupported(f"{key} {value!r}")
            bound_number = value
            compare: Callable[[Any], bool] = {
                "minimum": lambda v: v >= bound_number,
                "maximum": lambda v: v <= bound_number,
                "exclusiveMinimum": lambda v: v > bound_number,
                "exclusiveMaximum": lambda v: v < bound_number,
            }[key]
            return lambda v: type(v) is bool or not _is_number(v) or compare(v)
        raise Unsupported(f"keyword {key!r}")


def _all(checks: list[Check]) -> Check:
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    return lambda v: all(check(v) for check in checks)


def _on(kind: type, check: Check) -> Check:
    return lambda v: type(v) is not kind or check(v)


def compile_gate(schema: dict[str, Any]) -> Check:
    """The gate of a whole values document (raises :class:`Unsupported`)."""
    if schema.get("$schema") != DRAFT_07:
        raise Unsupported(f"$schema {schema.get('$schema')!r}")
    return _Gate(schema).schema(schema)


@lru_cache(maxsize=32)
def values_gate(chart: Path) -> Check | None:
    """The gate for the values of the chart in folder ``chart``; None without a schema or
    when the schema uses something the gate does not decide exactly."""
    file = chart / "values.schema.json"
    if not file.is_file():
        return None
    try:
        return compile_gate(json.loads(file.read_text(encoding="utf-8")))
    except (Unsupported, ValueError, re.error):
        return None
