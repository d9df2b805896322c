"""The standardized cluster settings: model, loading, validation, JSON Schema.

The names below are loaded on first use (PEP 562): importing a submodule that needs none
of them (``naming``, ``versions``, the happy path of ``validate``) must not import pydantic
and build the model classes (docs/performance.md).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from typing import Any

    from scs_templates.settings.model import API_VERSION, KIND, ClusterSettings
    from scs_templates.settings.problems import Problem, SettingsError
    from scs_templates.settings.validate import (
        LoadedSettings,
        load_settings,
        parse_settings_text,
        validate_data,
    )

_HOMES = {
    "API_VERSION": "scs_templates.settings.model",
    "KIND": "scs_templates.settings.model",
    "ClusterSettings": "scs_templates.settings.model",
    "Problem": "scs_templates.settings.problems",
    "SettingsError": "scs_templates.settings.problems",
    "LoadedSettings": "scs_templates.settings.validate",
    "load_settings": "scs_templates.settings.validate",
    "parse_settings_text": "scs_templates.settings.validate",
    "validate_data": "scs_templates.settings.validate",
}

__all__ = [
    "API_VERSION",
    "KIND",
    "ClusterSettings",
    "LoadedSettings",
    "Problem",
    "SettingsError",
    "load_settings",
    "parse_settings_text",
    "validate_data",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
