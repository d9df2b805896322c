"""The standardized cluster settings: model, loading, validation, JSON Schema.

The names below are loaded on first use (PEP 562): importing a submodule that needs none
of them (``naming``, ``versions``, the happy path of ``validate``) must not import pydantic
and build the model classes (docs/performance.md).
"""

from __future__ import annotations

from scs_templates._core.lazy import exports

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from scs_templates._settings.model import API_VERSION, KIND, ClusterSettings
    from scs_templates._settings.problems import Problem, SettingsError
    from scs_templates._settings.validate import (
        LoadedSettings,
        load_settings,
        parse_settings_text,
        validate_data,
    )

_LAZY = {
    "model": ("API_VERSION", "KIND", "ClusterSettings"),
    "problems": ("Problem", "SettingsError"),
    "validate": ("LoadedSettings", "load_settings", "parse_settings_text", "validate_data"),
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


if not TYPE_CHECKING:  # type checkers read the names from the imports above
    __getattr__, __dir__ = exports(__name__, _LAZY)
