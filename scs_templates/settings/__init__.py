"""The standardized cluster settings: model, loading, validation, JSON Schema."""

from __future__ import annotations

from scs_templates.settings.model import API_VERSION, KIND, ClusterSettings
from scs_templates.settings.problems import Problem, SettingsError
from scs_templates.settings.validate import (
    LoadedSettings,
    load_settings,
    parse_settings_text,
    validate_data,
)

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
