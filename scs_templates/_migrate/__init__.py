"""Migrations from earlier SCS cluster tooling, found through the entry-point group of
:mod:`scs_templates._contract.migration` (each belongs to the provider whose clusters the
old tooling made; KaaS v1's is declared in this distribution's pyproject.toml)."""

from __future__ import annotations

from typing import cast

from scs_templates._contract.migration import (
    DEFAULT_NAME,
    DEFAULT_PREFIX,
    GROUP,
    KAAS_V1,
    KaasV1Migration,
    MigrationResult,
)
from scs_templates._core.entry_points import entry_points, load


def _migration(name: str) -> KaasV1Migration:
    """The migration an installed distribution declares as ``name`` (the first found)."""
    for _distribution, point, reference in entry_points(GROUP):
        if point == name:
            found = load(reference)
            if not callable(found):
                raise TypeError(f"{reference} (entry point {name!r} of {GROUP}) is not callable")
            return cast("KaasV1Migration", found)
    raise LookupError(f"no migration {name!r} is installed (entry-point group {GROUP})")


def migrate_kaas_v1(
    text: str,
    *,
    name: str = DEFAULT_NAME,
    prefix: str = DEFAULT_PREFIX,
    file: str = "clusterctl.yaml",
    proxy_profile: str | None = None,
    proxy_file: str = "proxy.sh",
) -> MigrationResult:
    """Migrate the text of a KaaS v1 ``clusterctl.yaml`` into a ClusterSettings document.

    ``proxy_profile`` is the text of the management host's ``/etc/profile.d/proxy.sh``
    (``proxy_file`` its name in messages): its proxy variables become
    ``spec.network.proxy``. Raises :class:`~scs_templates._core.errors.InputError` (exit
    code 2) when the text is not such a file, when a value of a known key has the wrong
    shape (``FILE:LINE: KEY: message``), or when the result would not validate. Secret
    values never appear in any message (docs/library.md).
    """
    migration = _migration(KAAS_V1)
    return migration(
        text,
        name=name,
        prefix=prefix,
        file=file,
        proxy_profile=proxy_profile,
        proxy_file=proxy_file,
    )
