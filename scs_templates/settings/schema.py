"""The published JSON Schema of the settings file, generated from the model.

``schemas/cluster-settings.schema.json`` is the committed copy (a test keeps it in sync);
editors use it through the ``# yaml-language-server: $schema=...`` line. Cross-field rules
(:mod:`.rules`) cannot be expressed in JSON Schema: the schema is necessary, not sufficient;
``scs-templates validate`` is the authority.
"""

from __future__ import annotations

import json
from typing import Any

from scs_templates.settings.model import API_VERSION, ClusterSettings

SCHEMA_ID = (
    "https://github.com/SovereignCloudStack/scs-templates/raw/main/schemas/"
    "cluster-settings.schema.json"
)


def settings_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of a ClusterSettings document."""
    schema = _drop_generated_titles(
        ClusterSettings.model_json_schema(by_alias=True, mode="validation")
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"scs-templates ClusterSettings ({API_VERSION})",
        **{key: value for key, value in schema.items() if key != "title"},
    }


def schema_text() -> str:
    """The schema as stable, pretty JSON text with a trailing newline."""
    return json.dumps(settings_schema(), indent=2, sort_keys=True) + "\n"


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
