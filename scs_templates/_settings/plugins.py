"""The provider registry: every installed provider, found through one entry-point group.

A provider is a plug-in: a distribution declares an object implementing
:class:`scs_templates.providers.interface.Provider` under the entry-point group :data:`GROUP`
(``scs-templates`` itself declares OpenStack and Docker in its pyproject.toml), and this
module finds it by name. The settings layer looks a provider up here, by the name in
``spec.provider``, without importing any provider module: the entry point is loaded at run
time, so the import graph stays one-way (settings never imports a provider). What settings
validation asks of a provider is ``rules.SettingsProvider``; everything else is the full
interface in :mod:`scs_templates.providers`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

from scs_templates._core.entry_points import entry_points, load
from scs_templates._core.errors import InputError

if TYPE_CHECKING:
    from typing import Any

#: The entry-point group providers are declared in.
GROUP = "scs_templates.providers"
#: The distribution whose providers are the shipped ones (published in the JSON Schema).
DISTRIBUTION = "scs-templates"


@cache
def _points() -> tuple[tuple[bool, str, str], ...]:
    """(shipped, name, object reference) of every entry point of :data:`GROUP`."""
    return tuple(
        (distribution == DISTRIBUTION, point, reference)
        for distribution, point, reference in entry_points(GROUP)
    )


_loaded: dict[str, Any] = {}


def _provider_at(point: str, reference: str) -> Any:
    """The provider an entry point names, loaded on first use (a plug-in's module is
    imported only when its provider is asked for, so it costs no other command anything)."""
    provider = _loaded.get(point)
    if provider is None:
        provider = load(reference)
        name = getattr(provider, "name", None)
        if name != point:
            raise RuntimeError(f"entry point {point!r} of {GROUP} loads provider {name!r}")
        _loaded[point] = provider
    return provider


@cache
def shipped_providers() -> tuple[Any, ...]:
    """The providers ``scs-templates`` ships (the published schema lists these), in their
    ``catalogue_order`` (the first is the default ``spec.provider``). Loaded and ordered
    once: every provider lookup starts here."""
    found = [_provider_at(point, ref) for shipped, point, ref in _points() if shipped]
    return tuple(sorted(found, key=lambda provider: (provider.catalogue_order, provider.name)))


def _plugin_points() -> list[tuple[str, str]]:
    """(name, reference) of the other distributions' providers, by name."""
    return sorted((point, ref) for shipped, point, ref in _points() if not shipped)


_extra: list[Any] = []


def installed_providers() -> tuple[Any, ...]:
    """Every provider: the shipped ones, the other installed plug-ins (by name), those
    registered with :func:`registered_provider`."""
    plugins = (_provider_at(point, ref) for point, ref in _plugin_points())
    return (*shipped_providers(), *plugins, *_extra)


def provider_names() -> tuple[str, ...]:
    """The names of :func:`installed_providers`, loading no plug-in."""
    return (
        *(provider.name for provider in shipped_providers()),
        *(point for point, _ in _plugin_points()),
        *(provider.name for provider in _extra),
    )


def provider_named(name: str) -> Any:
    """The provider called ``name`` (loading no other plug-in); InputError naming the known
    ones otherwise."""
    for candidate in (*shipped_providers(), *_extra):
        if candidate.name == name:
            return candidate
    for point, reference in _plugin_points():
        if point == name:
            return _provider_at(point, reference)
    raise InputError(f"unknown provider {name!r}; known: {', '.join(provider_names())}")


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
