"""Docker's section of the settings (``spec.docker``), composed into the settings model."""

from __future__ import annotations

from pydantic import Field

from scs_templates.providers.sections import NonEmptyStr, SettingsModel


class Docker(SettingsModel):
    node_image_repository: NonEmptyStr = Field(
        default="kindest/node",
        description="Repository of the kind node images; the tag is the Kubernetes version.",
    )
