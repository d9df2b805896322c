"""Typed values models, and the JSON Schema written from them.

The cluster charts' values contract is written once, as Python types: ``TypedDict`` classes
(closed objects: helm refuses a key the model does not have), ``Literal`` for choices,
``list``/``dict`` for arrays and maps, and ``Annotated`` for what a type alone cannot say
(:class:`S`: JSON Schema keywords such as ``pattern`` or ``minimum``; :class:`Definition`:
a shared definition, written once under ``definitions``; :data:`OPEN`: an object that
takes keys the model does not name). An object's schema ``description`` is the paragraph of
its class docstring that starts with ``Schema:``. The values builders return these
types, so mypy checks them against the same contract that helm checks the values against;
:func:`json_schema` writes each chart's ``values.schema.json`` from them
(:mod:`scs_templates._render.values.schema`).

A ``TypedDict`` is a plain ``dict`` at run time: the models cost render nothing and leave
the values byte for byte as the builders make them.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, Required, get_args, get_origin, is_typeddict

from scs_templates._core.records import record

__all__ = ["OPEN", "Also", "Definition", "S", "ValuesModel", "json_schema", "object_part"]


class S:
    """JSON Schema keywords of the annotated type, added to what the type says (a mapping
    for keywords that are no Python names: ``S({"if": ..., "then": ...})``)."""

    def __init__(self, keywords: Mapping[str, Any] | None = None, /, **more: Any) -> None:
        self.keywords: dict[str, Any] = {**(keywords or {}), **more}


class Also:
    """A further schema the value must match besides its type's (``allOf``), e.g. a shared
    definition with one more required key."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = dict(schema)


class Definition:
    """The annotated type is the shared definition ``name``: written once under
    ``definitions`` and referenced (``$ref``) wherever it is used."""

    def __init__(self, name: str) -> None:
        self.name = name


class _Open:
    """The annotated ``TypedDict`` object takes keys the model does not name (a document the
    chart passes on whole, such as an audit policy): no ``additionalProperties: false``."""


OPEN = _Open()

_SCALARS: dict[object, str] = {str: "string", int: "integer", bool: "boolean", float: "number"}


def json_schema(model: object, definitions: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema (draft-07) of ``model``; shared definitions are added to
    ``definitions`` (name -> schema) and referenced."""
    marks: tuple[object, ...] = ()
    if get_origin(model) is typing.Annotated:
        model, *rest = get_args(model)
        marks = tuple(rest)
    # nested Annotated are flattened into one: the marks before a Definition are the
    # definition's own, those after it the place of use's
    named = [index for index, mark in enumerate(marks) if isinstance(mark, Definition)]
    if named:
        at = named[0]
        name = typing.cast(Definition, marks[at]).name
        own, marks = marks[:at], marks[at + 1 :]
        schema: dict[str, Any] = {"$ref": f"#/definitions/{name}"}
        if name not in definitions:
            definitions[name] = {}  # taken (recursion), filled below
            target = typing.Annotated[(model, *own)] if own else model
            definitions[name] = json_schema(target, definitions)
    else:
        schema = _bare(model, definitions, open_object=any(mark is OPEN for mark in marks))
    for mark in marks:
        if isinstance(mark, S):
            schema.update(mark.keywords)
    also = [mark.schema for mark in marks if isinstance(mark, Also)]
    if also:
        return {"allOf": [_ordered(schema), *also]}
    return _ordered(schema)


def _ordered(schema: dict[str, Any]) -> dict[str, Any]:
    """An array's ``items`` after its own constraints (JSON Schema ignores the order; the
    generated files read better, and stay as they were written by hand)."""
    if "items" not in schema:
        return schema
    return {
        **{key: value for key, value in schema.items() if key != "items"},
        "items": schema["items"],
    }


def object_part(model: type, definitions: dict[str, Any]) -> dict[str, Any]:
    """``properties`` and ``required`` of a ``TypedDict``: a provider's keys of an object
    the common contract defines (``controlPlane``, ``workers[]``, ``network``)."""
    schema = json_schema(model, definitions)
    part = {"properties": schema["properties"]}
    if schema.get("required"):
        part["required"] = schema["required"]
    return part


def _bare(model: object, definitions: dict[str, Any], *, open_object: bool) -> dict[str, Any]:
    if model is Any:
        return {}
    if model in _SCALARS:
        return {"type": _SCALARS[model]}
    if is_typeddict(model):
        return _object(model, definitions, open_object=open_object)
    origin = get_origin(model)
    args = get_args(model)
    if origin is Literal:
        return {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
    if origin is list:
        items = args[0] if args else Any
        return {
            "type": "array",
            **({"items": json_schema(items, definitions)} if items is not Any else {}),
        }
    if origin is dict:
        value = args[1] if args else Any
        extra = {} if value is Any else {"additionalProperties": json_schema(value, definitions)}
        return {"type": "object", **extra}
    if origin in (typing.Union, types.UnionType):
        raise TypeError(f"values models take no unions (one type per key): {model!r}")
    raise TypeError(f"no JSON Schema for {model!r}")


def _object(model: Any, definitions: dict[str, Any], *, open_object: bool) -> dict[str, Any]:
    hints = typing.get_type_hints(model, include_extras=True)
    required: list[str] = []
    properties: dict[str, Any] = {}
    for key, hint in hints.items():
        wrapper = get_origin(hint)
        if wrapper in (NotRequired, Required):
            hint = get_args(hint)[0]
        # from the hint, not __required_keys__: Python 3.11 misses a NotRequired that is a
        # string annotation (``from __future__ import annotations``)
        if wrapper is Required or (wrapper is not NotRequired and model.__total__):
            required.append(key)
        properties[key] = json_schema(hint, definitions)
    schema: dict[str, Any] = {}
    description = _description(model.__doc__ or "")
    if description:
        schema["description"] = description
    schema["type"] = "object"
    if required:
        schema["required"] = required
    if not open_object:
        schema["additionalProperties"] = False
    schema["properties"] = properties
    return schema


def _description(doc: str) -> str:
    """A model's schema description: its docstring's paragraph after ``Schema:`` (the rest
    of the docstring is for the code's readers)."""
    for paragraph in doc.split("\n\n"):
        text = " ".join(paragraph.split())
        if text.startswith("Schema: "):
            return text.removeprefix("Schema: ")
    return ""


@record
class ValuesModel:
    """A provider's part of the values contract: its keys of ``controlPlane``, of every
    ``workers[]`` entry and of ``network`` (``TypedDict`` classes whose keys are added to the
    common objects), and its own top-level sections (a ``TypedDict``, one key per section).
    The default, no part, is a provider whose chart takes only the common values."""

    control_plane: type | None = None
    worker: type | None = None
    network: type | None = None
    sections: type | None = None
