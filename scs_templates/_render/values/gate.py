"""A compiled check of a chart's ``values.schema.json``: a GATE in front of helm's own check.

Why: in a fleet batch helm checks every alias's values against the chart's schema with
gojsonschema, compiling the schema anew for each alias: about a third of helm's CPU per
cluster in a batch (bench case 4b). ``render-fleet`` checks the values here instead (the
schema compiled once per process by fastjsonschema, well under a millisecond per cluster)
and gives helm the chart without its schema, but ONLY for values this check accepts. Values
it refuses go to helm with the schema, which decides and words the error. So the check may
refuse more than helm (a slower render, the same output), never accept what helm refuses;
the schema stays the one source of the rules (it is generated,
:mod:`scs_templates._render.values.schema`):

* draft-07 only, and only the keywords listed in :data:`_KEYWORDS`, whose meaning
  fastjsonschema and gojsonschema share; any other keyword (``format``,
  ``patternProperties``, ...), ``$schema`` or ``$ref`` form turns the gate off for that
  chart (:func:`values_gate` returns None);
* ``pattern`` in ASCII mode (``(?a)``), where ``\\d``, ``\\w`` and ``\\s`` are ASCII classes as
  in Go's RE2 (Python's ASCII ``\\s`` also holds the vertical tab); fastjsonschema reads its
  ``$`` as the end of the text, as Go does;
* numbers compared as JSON numbers (``1`` equals ``1.0``, a boolean is never a number), as
  fastjsonschema and gojsonschema both do;
* the values of a dependency (the key of a subchart, e.g. the library ``scs-cluster-common``)
  are checked by helm against the subchart's own schema, which the gate does not compile:
  it accepts there only what helm itself puts there in a plain render (``{"global": {}}``),
  or nothing.

``tests/unit/test_values_gate.py`` proves it: every example's and benchmark cluster's values pass,
and for generated near-misses what the gate accepts, both the ``jsonschema`` package and
the real helm accept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["Check", "Unsupported", "compile_gate", "dependency_keys", "values_gate"]

Check = Callable[[Any], bool]

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples"}
)
#: Keywords both validators implement alike (draft-07); "then"/"else" only beside "if".
_KEYWORDS = frozenset(
    {
        "$ref", "definitions", "type", "enum", "const", "properties", "additionalProperties",
        "required", "items", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
        "minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength",
        "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    }
)  # fmt: skip
_SCHEMA_MAPS = frozenset({"properties", "definitions"})


class Unsupported(Exception):
    """The schema uses something the gate does not decide exactly: no gate for it."""


def _as_go_reads_it(node: Any, *, keywords: bool = True) -> Any:
    """A copy of ``node`` whose patterns are ASCII-mode; raises :class:`Unsupported` for
    anything outside :data:`_KEYWORDS` (see the module doc)."""
    if isinstance(node, list):
        return [_as_go_reads_it(item) for item in node]
    if not isinstance(node, dict):
        return node
    if not keywords:
        return {key: _as_go_reads_it(value) for key, value in node.items()}
    unknown = set(node) - _KEYWORDS - _ANNOTATIONS
    if unknown:
        raise Unsupported(f"keywords {sorted(unknown)}")
    if ("then" in node or "else" in node) and "if" not in node:
        raise Unsupported("then/else without if")
    ref = node.get("$ref")
    if ref is not None and not (isinstance(ref, str) and ref.startswith("#/definitions/")):
        raise Unsupported(f"$ref {ref!r}")
    if isinstance(node.get("items"), list):
        raise Unsupported("items as a list")
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "pattern":
            out[key] = "(?a)" + value
        elif key == "const":
            out["enum"] = [value]  # the same; fastjsonschema words no const without details
        else:
            out[key] = _as_go_reads_it(value, keywords=key not in _SCHEMA_MAPS)
    return out


def compile_gate(schema: dict[str, Any]) -> Check:
    """The gate of a whole values document (raises :class:`Unsupported`)."""
    import fastjsonschema  # deferred: fastjsonschema

    if schema.get("$schema") != DRAFT_07:
        raise Unsupported(f"$schema {schema.get('$schema')!r}")
    try:
        validate = fastjsonschema.compile(
            _as_go_reads_it(schema),
            use_default=False,  # never fill the values in: helm sees them as given
            use_formats=False,
            detailed_exceptions=False,
        )
    except (fastjsonschema.JsonSchemaDefinitionException, re.error) as error:
        raise Unsupported(str(error)) from None

    def gate(values: Any) -> bool:
        try:
            validate(values)
        except fastjsonschema.JsonSchemaValueException:
            return False
        return True

    return gate


#: What helm puts under a subchart's key in a plain render: all the gate accepts there.
SUBCHART_VALUES: dict[str, Any] = {"global": {}}


def dependency_keys(chart: Path) -> frozenset[str]:
    """The values keys of the dependencies in ``chart``'s Chart.yaml (alias, else name);
    raises :class:`Unsupported` when Chart.yaml cannot be read as a chart's."""
    from ruamel.yaml import YAML  # deferred: ruamel.yaml
    from ruamel.yaml.error import YAMLError  # deferred: ruamel.yaml

    try:
        meta = YAML(typ="safe").load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    except (OSError, YAMLError) as error:
        raise Unsupported(f"Chart.yaml: {error}") from None
    dependencies = meta.get("dependencies") if isinstance(meta, dict) else None
    if not isinstance(dependencies or [], list):
        raise Unsupported("Chart.yaml: dependencies is not a list")
    keys = [d.get("alias") or d.get("name") for d in dependencies or [] if isinstance(d, dict)]
    names = [key for key in keys if isinstance(key, str)]
    if len(names) < len(keys):
        raise Unsupported("Chart.yaml: a dependency without a name")
    return frozenset(names)


def _without_subchart_values(check: Check, keys: frozenset[str]) -> Check:
    """``check``, refusing values that give a subchart more than helm itself does."""
    if not keys:
        return check

    def gate(values: Any) -> bool:
        if isinstance(values, dict) and any(
            key in values and values[key] != SUBCHART_VALUES for key in keys
        ):
            return False
        return check(values)

    return gate


@lru_cache(maxsize=32)
def values_gate(chart: Path) -> Check | None:
    """The gate for the values of the chart in folder ``chart``; None without a schema or
    when the schema uses something the gate does not decide exactly."""
    file = chart / "values.schema.json"
    if not file.is_file():
        return None
    try:
        check = compile_gate(json.loads(file.read_text(encoding="utf-8")))
        return _without_subchart_values(check, dependency_keys(chart))
    except (Unsupported, ValueError):
        return None
