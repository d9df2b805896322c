"""What a migration from earlier SCS cluster tooling gives, and what it is called with.

A migration belongs to the provider whose clusters the old tooling made (KaaS v1 made
OpenStack clusters), so it lives in that provider's package; its distribution declares it
under the entry-point group :data:`GROUP` and :mod:`scs_templates._migrate` (behind
``api.migrate_kaas_v1``) calls it by its name there. This file is the contract between the
two: the options and their defaults, and the result a caller may read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

#: The entry-point group migrations are declared in.
GROUP = "scs_templates.migrations"
#: The name of the KaaS v1 ``clusterctl.yaml`` migration in :data:`GROUP`.
KAAS_V1 = "kaas-v1"
#: KaaS v1's own defaults of the cluster name and the resource prefix.
DEFAULT_NAME = "testcluster"
DEFAULT_PREFIX = "capi"


class MigrationResult(Protocol):
    """The migrated document (commented, parsed), its YAML text, and one report line per
    input key, then the notes (docs/library.md, ``api.migrate_kaas_v1``)."""

    @property
    def document(self) -> Any: ...
    @property
    def text(self) -> str: ...
    @property
    def report(self) -> Sequence[Any]: ...
    @property
    def notes(self) -> Sequence[str]: ...
    @property
    def report_lines(self) -> list[str]: ...


class KaasV1Migration(Protocol):
    """The call of the KaaS v1 migration (:data:`KAAS_V1`)."""

    def __call__(
        self,
        text: str,
        *,
        name: str = ...,
        prefix: str = ...,
        file: str = ...,
        proxy_profile: str | None = ...,
        proxy_file: str = ...,
    ) -> MigrationResult: ...
