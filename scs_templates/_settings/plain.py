"""Settings objects without pydantic, for the happy path of ``render``, ``values``,
``validate`` and ``render-fleet``.

Importing pydantic and building the model classes costs more than helm's own render of a
cluster (docs/performance.md). A command that only reads the settings of a VALID file does
not need them: it takes this path.

1. The document is checked by the published JSON Schema, compiled by fastjsonschema
   (:mod:`.fastpath`; the schema is generated from the model, tests keep the file and the
   compiled check in sync). A document the check does not accept goes to pydantic, which
   decides and words the errors (FILE:LINE:COL and the field, as always).
2. The objects are instances of classes built (once per process) from the same schema: one
   class per ``$defs`` entry with the schema's keys as attributes (the field names are the
   keys read back by :func:`.keys.name_for`), each default taken from the schema's
   ``default``, derived values from the mixins of :mod:`.derived` that the model classes
   inherit too. Nothing here repeats a field, a default or a rule of the model.

The objects answer what the values builders and the cross-field rules read (attributes,
``model_fields_set``, ``type(x).model_fields``), compare equal field by field and are
immutable; they are not pydantic models (no ``model_dump``): the library's
:func:`~scs_templates._settings.validate.load_settings` keeps returning model instances, only the
commands above ask for these. ``tests/unit/test_settings_plain.py`` proves that they build the
same values, rule findings and fields-set as the model instances, for the examples, the
benchmark fleet and generated documents, and that the path imports no pydantic.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING

from scs_templates._settings import fastpath
from scs_templates._settings.derived import MIXINS
from scs_templates._settings.keys import KIND, name_for

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar

    Convert = Callable[[Any], Any]
    #: (attribute, key, convert, default data or _REQUIRED) of every field of a class
    _Field = tuple[str, str, Convert, Any]

_REQUIRED = object()
_ROOT = "#"


class PlainSettings:
    """Base of the plain classes: immutable, equal by value, ``model_fields_set`` as pydantic."""

    #: ``_provider_cache``: the document's provider, once resolved (derived.py)
    __slots__ = ("_fields_set", "_provider_cache")
    _fields_set: frozenset[str]
    #: attribute name -> YAML key, in the schema's (sorted) order, not the model's; nothing on
    #: the happy path depends on it (problems are sorted by position). pydantic: FieldInfo
    model_fields: ClassVar[dict[str, str]] = {}

    @property
    def model_fields_set(self) -> set[str]:
        """The fields the document gave (not filled by a default), as in pydantic."""
        return set(self._fields_set)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable ({name})")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.model_fields)

    def __hash__(self) -> int:
        return hash(
            (type(self).__name__, *(_hashable(getattr(self, n)) for n in self.model_fields))
        )

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.model_fields)
        return f"{type(self).__name__}({fields})"


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((key, _hashable(item)) for key, item in value.items()))
    return value


class _Builder:
    """Classes and construction plans from the schema (see the module doc)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.plans: dict[str, list[_Field]] = {}
        self.classes: dict[str, type[PlainSettings]] = {}

    def node_of(self, name: str) -> dict[str, Any]:
        node = self.schema if name == _ROOT else self.schema.get("$defs", {}).get(name)
        if not isinstance(node, dict) or node.get("type") != "object" or "properties" not in node:
            raise fastpath.Unsupported(f"{name}: not an object with properties")
        return node

    def cls(self, name: str) -> type[PlainSettings]:
        if name not in self.classes:
            node = self.node_of(name)
            attributes = {key: name_for(key) for key in node["properties"]}
            if len(set(attributes.values())) != len(attributes):
                raise fastpath.Unsupported(f"{name}: two keys with one field name")
            class_name = KIND if name == _ROOT else name
            mixin = MIXINS.get(class_name)
            bases = (mixin, PlainSettings) if mixin is not None else (PlainSettings,)
            self.classes[name] = type(
                class_name,
                bases,
                {
                    "__slots__": tuple(attributes.values()),
                    "__module__": __name__,
                    "model_fields": {field: key for key, field in attributes.items()},
                },
            )
            self.plans[name] = []  # recursion-safe: filled below, read only when building
            self.plans[name].extend(self.field(node, key) for key in node["properties"])
        return self.classes[name]

    def field(self, node: dict[str, Any], key: str) -> _Field:
        prop = node["properties"][key]
        convert = self.converter(prop)
        if key in node.get("required", ()):
            default = _REQUIRED
        elif "default" in prop:
            default = prop["default"]
        else:
            raise fastpath.Unsupported(f"{key}: optional without a default in the schema")
        return (name_for(key), key, convert, default)

    def converter(self, prop: dict[str, Any]) -> Convert:
        """What pydantic stores for a checked value: nested objects built, lists and
        mappings copied, everything else as it is (the check admits exact types only)."""
        if "$ref" in prop:
            ref = prop["$ref"]
            if not ref.startswith("#/$defs/"):
                raise fastpath.Unsupported(f"$ref {ref!r}")
            name = ref[len("#/$defs/") :]
            self.cls(name)
            return lambda value: self.build(name, value)
        if "anyOf" in prop:
            other = [b for b in prop["anyOf"] if b != {"type": "null"}]
            if len(other) != 1 or len(prop["anyOf"]) != 2:
                raise fastpath.Unsupported(f"anyOf {prop['anyOf']!r}")
            inner = self.converter(other[0])
            return lambda value: None if value is None else inner(value)
        kind = prop.get("type")
        if kind == "array":
            item = self.converter(prop.get("items", {}))
            return lambda value: [item(x) for x in value]
        if kind == "object":
            for sub in (
                *prop.get("patternProperties", {}).values(),
                prop.get("additionalProperties"),
            ):
                if isinstance(sub, dict) and self.converter(sub) is not _same:
                    raise fastpath.Unsupported("a mapping of objects")
            return dict
        return _same

    def build(self, name: str, data: dict[str, Any]) -> PlainSettings:
        obj = object.__new__(self.classes[name])
        given = []
        for attribute, key, convert, default in self.plans[name]:
            if key in data:
                value = convert(data[key])
                given.append(attribute)
            elif default is _REQUIRED:
                raise AssertionError(f"{key}: a required field was missing after the check")
            else:
                value = convert(_copy(default))
            _set(obj, attribute, value)
        _set(obj, "_fields_set", frozenset(given))
        return obj


_set = object.__setattr__


def _same(value: Any) -> Any:
    return value


def _copy(value: Any) -> Any:
    """A default's data, fresh for every object (defaults are JSON: dicts, lists, scalars)."""
    if isinstance(value, list):
        return [_copy(item) for item in value]
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    return value


@cache
def _builder() -> _Builder | None:
    try:
        schema = json.loads(fastpath.schema_file().read_text(encoding="utf-8"))
        builder = _Builder(schema)
        builder.cls(_ROOT)
    except fastpath.Unsupported:
        return None
    return builder


def why_disabled() -> str | None:
    """None when the plain path is on, else the reason (for the test that keeps it on)."""
    try:
        schema = json.loads(fastpath.schema_file().read_text(encoding="utf-8"))
        _Builder(schema).cls(_ROOT)
    except fastpath.Unsupported as error:
        return str(error)
    return None


def validate(data: Any) -> Any | None:
    """Plain settings of ``data`` when the compiled check accepts it, else None (then the
    caller asks pydantic, which decides and words the errors)."""
    builder = _builder()
    if builder is None or not fastpath.check(data):
        return None
    return builder.build(_ROOT, data)
