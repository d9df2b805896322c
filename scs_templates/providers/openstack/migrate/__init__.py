"""Migration of settings from earlier SCS cluster tooling (KaaS v1 ``clusterctl.yaml``)."""

from __future__ import annotations

from scs_templates.providers.openstack.migrate.kaas_v1 import (
    KEY_TABLE,
    KeyInfo,
    KeyReport,
    MigrationResult,
    migrate_kaas_v1,
)

__all__ = ["KEY_TABLE", "KeyInfo", "KeyReport", "MigrationResult", "migrate_kaas_v1"]
