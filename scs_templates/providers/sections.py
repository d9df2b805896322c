"""What a provider's own settings section is built from (``spec.<provider>``).

A provider returns its section's class from ``Provider.settings_section()``; the class is a
:class:`SettingsModel` (unknown keys are errors, YAML keys are the camelCase form of the
field names, objects are immutable) whose fields use pydantic's ``Field`` and, where they
fit, the neutral model's types below. The settings model composes the section in
(``spec.<provider>``), documents it in the settings reference and publishes it in
``scs-templates schema``. This module imports pydantic: import it from the module that
defines the section, which the provider imports only inside ``settings_section``.
"""

from __future__ import annotations

from scs_templates._settings.model import (
    Cidr,
    Dns1123Label,
    MetadataText,
    NonEmptyStr,
    SettingsModel,
)

__all__ = ["Cidr", "Dns1123Label", "MetadataText", "NonEmptyStr", "SettingsModel"]
