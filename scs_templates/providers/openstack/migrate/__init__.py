"""Migration of settings from earlier SCS cluster tooling (KaaS v1 ``clusterctl.yaml``).

The names are imported on first use (:mod:`scs_templates._core.lazy`): the ``migrate``
command's module (:mod:`.cli`), which ``--help`` imports, pays for none of them.
"""

from __future__ import annotations

from scs_templates._core.lazy import exports

TYPE_CHECKING = False  # not typing's: --help imports no typing
if TYPE_CHECKING:
    from scs_templates.providers.openstack.migrate.kaas_v1 import (
        KEY_TABLE,
        KeyInfo,
        KeyReport,
        MigrationResult,
        migrate_kaas_v1,
    )

_LAZY = {"kaas_v1": ("KEY_TABLE", "KeyInfo", "KeyReport", "MigrationResult", "migrate_kaas_v1")}

__all__ = ["KEY_TABLE", "KeyInfo", "KeyReport", "MigrationResult", "migrate_kaas_v1"]

__getattr__, __dir__ = exports(__name__, _LAZY)
