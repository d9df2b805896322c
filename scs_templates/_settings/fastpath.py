"""The happy path of validation: a check compiled from the published JSON Schema.

Building pydantic's validators for every model class costs several bare helm renders at
import; a valid settings file does not need them. So the model classes are built with
``defer_build`` and a valid document takes this path instead:

1. :func:`check` runs a validator compiled (once per process, ~1 ms) from
   ``schemas/cluster-settings.schema.json``, the JSON Schema GENERATED from the model (a
   test keeps the file in sync). The compiled check is deliberately stricter than JSON
   Schema: exact Python types (no ``3.0`` for an integer, no ``true`` for ``1``), every key
   of a ``patternProperties`` mapping must match a pattern (as pydantic checks dict keys),
   patterns only on ASCII text without line breaks (where Python's and pydantic's regex
   engines agree). A keyword it does not know disables the fast path altogether.
2. :func:`construct` builds the model instances from the checked data with
   ``model_construct``, walking the model's own fields (their defaults and default
   factories), so the result equals what ``model_validate`` returns (tests prove it,
   ``model_fields_set`` included, for every example, the benchmark fleet and generated
   documents).

Anything the check does not accept goes to pydantic as before, which decides and words the
errors. So the check may refuse more than the model, never less: it is a gate, not a
second set of rules. The fast path is also off when the schema file and the model disagree
on any class's keys or required keys, or a model class has validators of its own (the JSON
Schema cannot express them); ``tests/unit/test_settings_fastpath.py`` fails when it is off.
"""

from __future__ import annotations

import json
import re
import types
from collections.abc import Callable
from functools import cache
from pathlib import Path

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:  # imported where the model is used: :mod:`.plain` needs only the check
    from typing import Any

    from pydantic import BaseModel

    Check = Callable[[Any], bool]
    Convert = Callable[[Any], Any]

SCHEMA_NAME = "cluster-settings.schema.json"
#: Keywords that only describe: they never change what is valid.
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "$comment",
        "title",
        "description",
        "default",
        "deprecated",
        "examples",
    }
)
#: Formats that pydantic does not check (they only document, e.g. ``json_schema_extra``).
_DOCUMENTING_FORMATS = frozenset({"cidr"})


class Unsupported(Exception):
    """The schema or the model uses something the fast path cannot mirror exactly."""


# --------------------------------------------------------------------------- the check


def _anything(value: Any) -> bool:
    return True


def schema_file() -> Path:
    """The published schema: in the wheel's data, or ``schemas/`` of a source checkout
    (:func:`scs_templates._core.shipped.shipped_dir`, the one lookup of both)."""
    from scs_templates._core.errors import ScsTemplatesError
    from scs_templates._core.shipped import shipped_dir

    try:
        return shipped_dir("schemas", "the published settings schema", SCHEMA_NAME) / SCHEMA_NAME
    except ScsTemplatesError as error:
        raise Unsupported(str(error)) from None


class _Compiler:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.compiled: dict[str, Check] = {}

    def ref(self, ref: str) -> Check:
        prefix = "#/$defs/"
        if not ref.startswith(prefix) or ref[len(prefix) :] not in self.defs:
            raise Unsupported(f"$ref {ref!r}")
        name = ref[len(prefix) :]
        if name not in self.compiled:
            slot: list[Check] = []
            self.compiled[name] = lambda value: slot[0](value)  # recursion-safe
            slot.append(self.node(self.defs[name]))
        return self.compiled[name]

    def node(self, schema: Any) -> Check:
        if not isinstance(schema, dict):
            raise Unsupported(f"schema {schema!r}")
        rest = {k: v for k, v in schema.items() if k not in _ANNOTATIONS}
        checks: list[Check] = []
        if "$ref" in rest:
            checks.append(self.ref(rest.pop("$ref")))
        if "anyOf" in rest:
            checks.append(self.optional(rest.pop("anyOf")))
        if "enum" in rest or "const" in rest:
            allowed = rest.pop("enum") if "enum" in rest else [rest.pop("const")]
            pairs = [(type(item), item) for item in allowed]
            checks.append(lambda v: any(type(v) is t and v == item for t, item in pairs))
        kind = rest.pop("type", None)
        if kind is not None:
            checks.append(self.typed(kind, rest))
        if rest:
            raise Unsupported(f"keywords {sorted(rest)}")
        if len(checks) == 1:
            return checks[0]
        return lambda v: all(check(v) for check in checks)

    def optional(self, branches: Any) -> Check:
        """``X | None``, the only union the model uses; pydantic's smart unions of several
        types may convert values, which the fast path does not mirror."""
        if not (isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches):
            raise Unsupported(f"anyOf {branches!r}")
        other = self.node(next(b for b in branches if b != {"type": "null"}))
        return lambda v: v is None or other(v)

    def typed(self, kind: Any, rest: dict[str, Any]) -> Check:
        if kind == "object":
            return self.mapping(rest)
        if kind == "array":
            return self.array(rest)
        if kind == "string":
            return self.string(rest)
        if kind == "integer":
            return self.integer(rest)
        if kind == "boolean":
            return lambda v: type(v) is bool
        if kind == "null":
            return lambda v: v is None
        raise Unsupported(f"type {kind!r}")

    def mapping(self, rest: dict[str, Any]) -> Check:
        properties = {k: self.node(v) for k, v in rest.pop("properties", {}).items()}
        required = frozenset(rest.pop("required", ()))
        patterns = [
            (self.pattern(p), self.node(s)) for p, s in rest.pop("patternProperties", {}).items()
        ]
        # No additionalProperties: open for a plain dict, closed for an object with properties.
        extra = rest.pop("additionalProperties", bool(patterns or not properties))
        names = self.string(rest.pop("propertyNames")) if "propertyNames" in rest else None
        extra_check: Check | None
        if extra is False:
            extra_check = None
        elif extra is True:
            # pydantic validates every key of a dict: with patterns, none may miss them all
            extra_check = None if patterns else _anything
        else:
            extra_check = self.node(extra)

        def check(value: Any) -> bool:
            if type(value) is not dict or not required.issubset(value):
                return False
            for key, item in value.items():
                if type(key) is not str or (names is not None and not names(key)):
                    return False
                known = properties.get(key)
                if known is not None:
                    if not known(item):
                        return False
                    continue
                if patterns:
                    matched = [s for p, s in patterns if p(key)]
                    if matched:
                        if not all(s(item) for s in matched):
                            return False
                        continue
                if extra_check is None or not extra_check(item):
                    return False
            return True

        return check

    def array(self, rest: dict[str, Any]) -> Check:
        items = self.node(rest.pop("items")) if "items" in rest else _anything
        low = rest.pop("minItems", 0)
        high = rest.pop("maxItems", None)
        return lambda v: (
            type(v) is list
            and len(v) >= low
            and (high is None or len(v) <= high)
            and all(items(item) for item in v)
        )

    def string(self, rest: dict[str, Any]) -> Check:
        low = rest.pop("minLength", 0)
        high = rest.pop("maxLength", None)
        fmt = rest.pop("format", None)
        if fmt is not None and fmt not in _DOCUMENTING_FORMATS:
            raise Unsupported(f"format {fmt!r}")
        pattern = self.pattern(rest.pop("pattern")) if "pattern" in rest else None
        return lambda v: (
            type(v) is str
            and len(v) >= low
            and (high is None or len(v) <= high)
            and (pattern is None or pattern(v))
        )

    @staticmethod
    def pattern(text: str) -> Check:
        """JSON Schema's unanchored ``pattern`` as pydantic checks it, on text where Python's
        ``re`` and pydantic's regex engine agree (ASCII, no line breaks: ``$`` then means the
        end, ``\\d``/``\\s``/``\\w`` the same characters). A pattern whose only ``$`` is its
        last character also takes text with line breaks (PEM certificates): as ``\\Z`` it
        means the end of the text in both engines. Compiled on first use: a settings file
        sets few of the schema's ~50 patterns, and compiling all of them cost ~1 ms of each
        ``validate`` and ``render`` (issue #19)."""
        if text.endswith("$") and not text.endswith("\\$") and text.count("$") == 1:
            ending = _Lazy(text[:-1] + r"\Z")
            return lambda v: v.isascii() and ending.search(v)
        compiled = _Lazy(text)
        return lambda v: v.isascii() and "\n" not in v and "\r" not in v and compiled.search(v)

    @staticmethod
    def integer(rest: dict[str, Any]) -> Check:
        low = rest.pop("minimum", None)
        high = rest.pop("maximum", None)
        above = rest.pop("exclusiveMinimum", None)
        below = rest.pop("exclusiveMaximum", None)
        return lambda v: (
            type(v) is int
            and (low is None or v >= low)
            and (high is None or v <= high)
            and (above is None or v > above)
            and (below is None or v < below)
        )


class _Lazy:
    """A regular expression compiled when it is first searched with."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> bool:
        if self._compiled is None:
            self._compiled = re.compile(self._source)
        return self._compiled.search(text) is not None


def compile_check(schema: dict[str, Any]) -> Check:
    """The check of a whole document, compiled from the schema (raises :class:`Unsupported`)."""
    return _Compiler(schema).node(schema)


# --------------------------------------------------------------------------- construct


def _plain(annotation: Any) -> Any:
    import typing  # here: only the pydantic side (construct, agreement) reads annotations

    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _converter(annotation: Any, models: dict[type[BaseModel], Any]) -> Convert:
    """How a checked value of this annotation becomes what pydantic would store."""
    import typing

    from pydantic import BaseModel

    annotation = _plain(annotation)
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1 or len(typing.get_args(annotation)) != 2:
            raise Unsupported(f"union {annotation!r}")
        inner = _converter(args[0], models)
        return lambda v: None if v is None else inner(v)
    if origin is list:
        (item,) = typing.get_args(annotation)
        convert_item = _converter(item, models)
        return lambda v: [convert_item(x) for x in v]
    if origin is dict:
        key, value = typing.get_args(annotation)
        for part in (key, value):
            if _converter(part, models) is not _same:
                raise Unsupported(f"dict of models {annotation!r}")
        return dict
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        plan = _plan(annotation, models)
        return lambda v: _build(annotation, plan, v)
    if origin is typing.Literal or annotation in (str, int, bool, object):
        return _same
    raise Unsupported(f"annotation {annotation!r}")


def _same(value: Any) -> Any:
    return value


if TYPE_CHECKING:
    _Field = tuple[str, str, Convert, Callable[[], Any]]


def _default(cls: type[BaseModel], name: str, models: dict[type[BaseModel], Any]) -> Any:
    from pydantic import BaseModel

    info = cls.model_fields[name]
    if info.is_required():
        return _required
    factory = info.default_factory
    if factory is None:
        return lambda: info.get_default()
    if isinstance(factory, type) and issubclass(factory, BaseModel):
        plan = _plan(factory, models)
        return lambda: _build(factory, plan, {})
    if factory in (dict, list) or (
        isinstance(factory, types.FunctionType) and factory.__code__.co_argcount == 0
    ):
        return factory
    raise Unsupported(f"{cls.__name__}.{name}: default factory {factory!r}")


def _required() -> Any:
    raise AssertionError("a required field was missing after the check")


def _plan(cls: type[BaseModel], models: dict[type[BaseModel], Any]) -> list[_Field]:
    """(name, key, convert, default) of every field of ``cls`` (cached per class)."""
    from pydantic import BaseModel

    if cls in models:
        return models[cls]  # type: ignore[no-any-return]
    decorators = cls.__pydantic_decorators__
    if (
        any(
            getattr(decorators, kind)
            for kind in ("validators", "field_validators", "root_validators", "model_validators")
        )
        or cls.model_post_init is not BaseModel.model_post_init
    ):
        raise Unsupported(f"{cls.__name__} has validators of its own")
    plan: list[_Field] = []
    models[cls] = plan
    for name, info in cls.model_fields.items():
        if info.validation_alias is not None and info.validation_alias != info.alias:
            raise Unsupported(f"{cls.__name__}.{name}: validation alias")
        plan.append(
            (
                name,
                info.alias or name,
                _converter(info.annotation, models),
                _default(cls, name, models),
            )
        )
    return plan


def _build(cls: type[BaseModel], plan: list[_Field], data: dict[str, Any]) -> Any:
    """What ``cls.model_construct(_fields_set=given, **values)`` does for a model without
    extra keys or private attributes, at a fraction of its cost (tests compare the two)."""
    values = {}
    given = set()
    for name, key, convert, default in plan:
        if key in data:
            values[name] = convert(data[key])
            given.add(name)
        else:
            values[name] = default()
    model = cls.__new__(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", given)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


_set = object.__setattr__


# --------------------------------------------------------------------------- agreement


def _classes(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    import typing

    from scs_templates._settings.model import nested_model

    found: dict[str, type[BaseModel]] = {}
    pending = [root]
    while pending:
        cls = pending.pop()
        if found.setdefault(cls.__name__, cls) is not cls:
            raise Unsupported(f"two model classes named {cls.__name__}")
        for info in cls.model_fields.values():
            for arg in (info.annotation, *typing.get_args(_plain(info.annotation))):
                nested = nested_model(arg)
                if nested is not None and nested.__name__ not in found:
                    pending.append(nested)
    return found


def _agree(schema: dict[str, Any], root: type[BaseModel]) -> None:
    """The schema file was generated from THIS model: same keys, same required keys."""
    defs = schema.get("$defs", {})
    for name, cls in _classes(root).items():
        node = schema if cls is root else defs.get(name)
        if not isinstance(node, dict) or node.get("additionalProperties") is not False:
            raise Unsupported(f"{name}: not in the schema as a closed object")
        keys = {info.alias or field for field, info in cls.model_fields.items()}
        required = {info.alias or f for f, info in cls.model_fields.items() if info.is_required()}
        if set(node.get("properties", {})) != keys or set(node.get("required", ())) != required:
            raise Unsupported(f"{name}: the schema file is out of date with the model")


# --------------------------------------------------------------------------- entry points


@cache
def _compiled() -> tuple[Check, Convert] | None:
    from scs_templates._settings.model import ClusterSettings

    try:
        schema = json.loads(schema_file().read_text(encoding="utf-8"))
        _agree(schema, ClusterSettings)
        check = compile_check(schema)
        plan = _plan(ClusterSettings, {})
    except Unsupported:
        return None
    return check, lambda data: _build(ClusterSettings, plan, data)


def why_disabled() -> str | None:
    """None when the fast path is on, else the reason (for the test that keeps it on)."""
    from scs_templates._settings.model import ClusterSettings

    try:
        schema = json.loads(schema_file().read_text(encoding="utf-8"))
        _agree(schema, ClusterSettings)
        compile_check(schema)
        _plan(ClusterSettings, {})
    except Unsupported as error:
        return str(error)
    return None


def validate(data: Any) -> Any | None:
    """The :class:`ClusterSettings` of ``data`` when the compiled check accepts it, else
    None (then pydantic decides)."""
    compiled = _compiled()
    if compiled is None:
        return None
    check, construct = compiled
    return construct(data) if check(data) else None
