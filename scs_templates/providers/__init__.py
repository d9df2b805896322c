"""Infrastructure providers: the plug-in interface, and the one way to find a provider.

:class:`Provider` (in :mod:`.interface`) names every difference between providers; the
shipped ones, :mod:`.openstack` and :mod:`.docker`, implement it, and a separate
distribution adds one by declaring its :class:`Provider` object under the entry-point group
``scs_templates.providers`` (:mod:`scs_templates._settings.plugins` finds them). Nothing
outside this package compares ``spec.provider`` with a name: it asks the cluster's provider
(:func:`provider_of`). See docs/architecture.md, "Adding a provider".
"""

from __future__ import annotations

from scs_templates._settings import plugins as _plugins
from scs_templates._settings.plugins import provider_names, registered_provider
from scs_templates.providers.interface import (
    CloudOptions,
    Finding,
    Management,
    Progress,
    Provider,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings

__all__ = [
    "CloudOptions",
    "Finding",
    "Management",
    "Progress",
    "Provider",
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
    """The provider of a settings document (``spec.provider``)."""
    return provider(settings.spec.provider)
