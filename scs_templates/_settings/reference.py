"""Generate ``docs/settings.md``, the settings reference, from the model (jinja2).

The reference is never edited by hand: ``python -m scs_templates._settings.reference --write``
regenerates it and a test fails when the committed file is stale.
"""

from __future__ import annotations

import argparse
import json
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from scs_templates._settings.model import nested_model, settings_model
from scs_templates._settings.plugins import installed_providers, shipped_providers
from scs_templates._versions import table

TEMPLATE = Path(__file__).with_name("settings.md.j2")
DOC_PATH = Path("docs") / "settings.md"


@dataclass(frozen=True)
class Row:
    path: str
    type: str
    default: str
    description: str
    deprecated: bool


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (types.UnionType, typing.Union):
        names = [_type_name(a) for a in args if a is not type(None)]
        return " | ".join(names) + (" (optional)" if type(None) in args else "")
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return "mapping"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    return {str: "string", int: "integer", bool: "boolean", object: "any"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


def _field_type(info: FieldInfo) -> str:
    """A field's type; a choice validated elsewhere (``spec.provider``) by its schema enum."""
    for item in info.metadata:
        schema = getattr(item, "json_schema", None)
        if isinstance(schema, dict) and "enum" in schema:
            return " \\| ".join(f"`{choice}`" for choice in schema["enum"])
    return _type_name(info.annotation)


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if isinstance(value, BaseModel):
        return ""
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        value = [item.model_dump(mode="json", exclude_defaults=True) for item in value]
    if value is None:
        return "empty"
    return f"`{json.dumps(value)}`"


def rows(model: type[BaseModel] | None = None, prefix: str = "") -> list[Row]:
    """Every field, depth first, in declaration order (default: the shipped providers'
    settings model, as docs/settings.md documents it)."""
    if model is None:
        model = settings_model(shipped=True)
    found: list[Row] = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        path = f"{prefix}{key}"
        found.append(
            Row(
                path=path,
                type=_field_type(info),
                default=_default(info),
                description=(info.description or "").replace("|", "\\|"),
                deprecated=bool(info.deprecated),
            )
        )
        nested = nested_model(info.annotation)
        if nested is not None:
            is_list = typing.get_origin(info.annotation) is list
            found.extend(rows(nested, f"{path}[]." if is_list else f"{path}."))
    return found


def render_reference(*, shipped: bool = True) -> str:
    """docs/settings.md: the shipped providers' settings (``shipped=False``: with the section
    of every installed provider, plug-ins too)."""
    import jinja2  # deferred: jinja2

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE.parent)),
        autoescape=False,  # noqa: S701 - Markdown, not HTML
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    versions_table = table()
    default = versions_table.default_minor
    versions = [
        (
            release.name,
            release.patch_version,
            versions_table.status(release) + (" (default)" if release is default else ""),
        )
        for release in versions_table.minors
    ]
    providers = shipped_providers() if shipped else installed_providers()
    notes = [
        (provider.name, [(path, note.replace("|", "\\|")) for path, note in provider.field_notes])
        for provider in providers
        if provider.field_notes
    ]
    return environment.get_template(TEMPLATE.name).render(
        rows=rows(settings_model(shipped=shipped)), versions=versions, provider_notes=notes
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help=f"write {DOC_PATH}")
    parser.add_argument(
        "--installed",
        action="store_true",
        help="document every installed provider's section (plug-ins too), not only the shipped",
    )
    args = parser.parse_args(argv)
    if args.write and args.installed:
        parser.error(f"--write writes {DOC_PATH}: the shipped providers only")
    text = render_reference(shipped=not args.installed)
    if args.write:
        DOC_PATH.write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
