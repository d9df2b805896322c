"""The provider registry: every installed provider, found through one entry-point group.

A provider is a plug-in: a distribution declares an object implementing
:class:`scs_templates.providers.Provider` under the entry-point group :data:`GROUP`
(``scs-templates`` itself declares OpenStack and Docker in its pyproject.toml), and this
module finds it by name. The settings layer looks a provider up here, by the name in
``spec.provider``, without importing any provider module: the entry point is loaded at run
time, so the import graph stays one-way (settings never imports a provider). What settings
validation asks of a provider is :class:`SettingsProvider`; everything else is the full
interface in :mod:`scs_templates.providers`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from scs_templates._core.errors import InputError

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._settings.problems import Path as FieldPath

#: The entry-point group providers are declared in.
GROUP = "scs_templates.providers"
#: The distribution whose providers are the shipped ones (published in the JSON Schema).
DISTRIBUTION = "scs-templates"

Finding = tuple["FieldPath", str]


class SettingsProvider(Protocol):
    """What settings validation asks of a provider (the rest: ``providers.Provider``)."""

    name: str
    catalogue_order: int
    kind_node_images: bool
    node_name_note: str

    def errors(self, settings: ClusterSettings) -> Iterator[Finding]: ...

    def warnings(self, settings: ClusterSettings) -> Iterator[Finding]: ...

    def machine_owner_budget(self, cluster: str, machine_owner: str) -> int: ...

    def provider_images(self, settings: ClusterSettings) -> list[tuple[FieldPath, str | None]]: ...

    def proxy_protocol(self, settings: ClusterSettings) -> bool: ...

    def foreign_document(self, data: Mapping[str, Any]) -> tuple[str, str, str] | None: ...


@cache
def _declared() -> tuple[tuple[bool, Any], ...]:
    """(shipped, provider) of every entry point of :data:`GROUP`, in catalogue order."""
    from importlib.metadata import entry_points  # deferred: ~10 ms, only when a provider is asked

    found: list[tuple[bool, Any]] = []
    for point in entry_points(group=GROUP):
        provider = point.load()
        if provider.name != point.name:
            raise RuntimeError(
                f"entry point {point.name!r} of {GROUP} loads provider {provider.name!r}"
            )
        shipped = point.dist is not None and point.dist.name == DISTRIBUTION
        found.append((shipped, provider))
    found.sort(key=lambda item: (not item[0], item[1].catalogue_order, item[1].name))
    return tuple(found)


_extra: list[Any] = []


def shipped_providers() -> tuple[Any, ...]:
    """The providers ``scs-templates`` ships (the published schema lists these)."""
    return tuple(provider for shipped, provider in _declared() if shipped)


def installed_providers() -> tuple[Any, ...]:
    """Every provider: the shipped ones, the other installed plug-ins, those registered
    with :func:`registered_provider`."""
    return (*(provider for _, provider in _declared()), *_extra)


def provider_names() -> tuple[str, ...]:
    return tuple(provider.name for provider in installed_providers())


def provider_named(name: str) -> Any:
    """The provider called ``name``; InputError naming the known ones otherwise."""
    for candidate in installed_providers():
        if candidate.name == name:
            return candidate
    raise InputError(f"unknown provider {name!r}; known: {', '.join(provider_names())}")


def settings_provider(settings: ClusterSettings) -> SettingsProvider:
    """The provider of a settings document (``spec.provider``), as settings validation sees it."""
    provider: SettingsProvider = provider_named(settings.spec.provider)
    return provider


@contextmanager
def registered_provider(extra: Any) -> Iterator[Any]:
    """Make ``extra`` a known provider while the ``with`` block runs (tests)."""
    if extra.name in provider_names():
        raise ValueError(f"provider {extra.name!r} is registered already")
    _extra.append(extra)
    try:
        yield extra
    finally:
        _extra.remove(extra)
