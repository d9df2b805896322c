"""Infrastructure providers: the plug-in interface, and the one way to find a provider.

:class:`Provider` (in :mod:`.interface`) names every difference between providers; the
shipped ones, :mod:`.openstack` and :mod:`.docker`, implement it, and a separate
distribution adds one by declaring its :class:`Provider` object under the entry-point group
``scs_templates.providers`` (:mod:`scs_templates._settings.plugins` finds them; a provider's
own commands under ``scs_templates.commands``). Nothing outside this package compares
``spec.provider`` with a name: it asks the cluster's provider (:func:`provider_of`). See
docs/architecture.md, "Adding a provider". The names below are imported on first use
(:mod:`scs_templates._core.lazy`): a provider's command module, imported by ``--help``, pays
for none of them.
"""

from __future__ import annotations

from scs_templates._core.lazy import exports

TYPE_CHECKING = False  # not typing's: --help imports no typing
if TYPE_CHECKING:
    from scs_templates.providers.interface import (
        CloudOptions,
        Finding,
        Management,
        Progress,
        Provider,
    )
    from scs_templates.providers.registry import (
        provider,
        provider_names,
        provider_of,
        providers,
        registered_provider,
        shipped_providers,
    )

_LAZY = {
    "interface": ("CloudOptions", "Finding", "Management", "Progress", "Provider"),
    "registry": (
        "provider",
        "provider_names",
        "provider_of",
        "providers",
        "registered_provider",
        "shipped_providers",
    ),
}

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

__getattr__, __dir__ = exports(__name__, _LAZY)
