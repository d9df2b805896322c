"""The published JSON Schema of the settings file, generated from the model.

``schemas/cluster-settings.schema.json`` is the committed copy (a test keeps it in sync);
editors use it through the ``# yaml-language-server: $schema=...`` line. Cross-field rules
(:mod:`.rules`) cannot be expressed in JSON Schema: the schema is necessary, not sufficient;
``scs-templates validate`` is the authority.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from scs_templates._settings.model import (
    API_VERSION,
    ClusterSettings,
    nested_model,
    settings_model,
)

SCHEMA_ID = (
    "https://github.com/SovereignCloudStack/scs-templates/raw/main/schemas/"
    "cluster-settings.schema.json"
)


def settings_schema(*, shipped: bool = False) -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of a ClusterSettings document: with the section
    of every installed provider, or (``shipped``) of the providers scs-templates ships, as
    published in schemas/."""
    model = settings_model(shipped=shipped)
    schema = _drop_generated_titles(model.model_json_schema(by_alias=True, mode="validation"))
    _factory_defaults(schema, model)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"scs-templates ClusterSettings ({API_VERSION})",
        **{key: value for key, value in schema.items() if key != "title"},
    }


def schema_text(*, shipped: bool = False) -> str:
    """The schema as stable, pretty JSON text with a trailing newline."""
    return json.dumps(settings_schema(shipped=shipped), indent=2, sort_keys=True) + "\n"


def _factory_defaults(schema: dict[str, Any], model: type[ClusterSettings]) -> None:
    """Give every field whose default comes from a factory its ``default`` too.

    pydantic leaves such defaults out of the schema; with them the schema documents every
    default, and the happy path of the CLI (:mod:`.plain`) builds settings from the schema
    alone. A default is written as the data that builds it: a model default only with the
    keys its factory set (``{}`` for ``Kubernetes()``, ``[{"name": "workers"}]`` for the
    default worker group), so that reading it back sets the same fields as the factory.
    """
    pending: list[type[BaseModel]] = [model]
    seen: set[type[BaseModel]] = set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        node = schema if cls is model else schema["$defs"][cls.__name__]
        for name, info in cls.model_fields.items():
            nested = nested_model(info.annotation)
            if nested is not None:
                pending.append(nested)
            if info.default_factory is not None:
                value = info.default_factory()  # type: ignore[call-arg]
                node["properties"][info.alias or name]["default"] = _as_data(value)


def _as_data(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, list):
        return [_as_data(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_data(item) for key, item in value.items()}
    return value


def _drop_generated_titles(node: Any) -> Any:
    """Remove pydantic's auto titles ("Controlplane"): descriptions say it better."""
    if isinstance(node, dict):
        return {
            key: _drop_generated_titles(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_drop_generated_titles(item) for item in node]
    return node
