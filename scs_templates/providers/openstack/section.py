"""``spec.openstack`` typed: the composed settings model adds OpenStack's section to ``spec``
(:meth:`~scs_templates.providers.openstack.provider.OpenStackProvider.settings_section`), which
the neutral model's type does not know. Light: the render path imports it without pydantic."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates.providers.openstack.settings import OpenStack


def section(settings: ClusterSettings) -> OpenStack:
    """``spec.openstack`` of ``settings``."""
    found: OpenStack = settings.spec.openstack  # type: ignore[attr-defined]
    return found
