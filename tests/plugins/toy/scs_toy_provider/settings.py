"""The toy provider's settings section, ``spec.toy``."""

from __future__ import annotations

from pydantic import Field

from scs_templates.providers.sections import SettingsModel


class Toy(SettingsModel):
    vm_startup: str = Field(
        default="2s",
        pattern="^([0-9]+(ns|us|ms|s|m|h))+$",
        description="How long a simulated machine takes to start (a Go duration).",
    )
