"""The providers as the rest of the package asks for them: typed as :class:`Provider`.

The registry itself (entry points, loading a plug-in on first use) is
:mod:`scs_templates._settings.plugins`, below the settings model that needs it; this module
checks what it loads against the full interface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._settings import plugins as _plugins
from scs_templates._settings.plugins import provider_names, registered_provider
from scs_templates.providers.interface import Provider

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings

__all__ = [
    "provider",
    "provider_names",
    "provider_of",
    "providers",
    "registered_provider",
    "shipped_providers",
]


def _checked(found: object) -> Provider:
    if not isinstance(found, Provider):
        raise TypeError(f"{found!r} (entry point group {_plugins.GROUP}) is no Provider")
    return found


def providers() -> tuple[Provider, ...]:
    """Every known provider: the shipped ones first (the first is the default), then other
    installed plug-ins, then those registered with :func:`registered_provider`."""
    return tuple(_checked(found) for found in _plugins.installed_providers())


def shipped_providers() -> tuple[Provider, ...]:
    """The providers scs-templates ships: the published schema and charts cover these."""
    return tuple(_checked(found) for found in _plugins.shipped_providers())


def provider(name: str) -> Provider:
    """The provider called ``name``; InputError naming the known ones otherwise."""
    return _checked(_plugins.provider_named(name))


def provider_of(settings: ClusterSettings) -> Provider:
    """The provider of a settings document (``spec.provider``), resolved once per document
    (``ClusterSettings.resolved_provider``)."""
    return _checked(settings.resolved_provider())
