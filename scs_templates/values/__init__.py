"""Values builders: pure functions settings -> helm values (INTERFACE STUB, to be built).

Contract used by the render engine:
    build_values(settings: ClusterSettings, *, secrets: Mapping[str, str] | None = None)
        -> dict[str, Any]      # JSON-serialisable, deterministic key order
    REDACTED: str               # placeholder used for secret values when secrets is None
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scs_templates.settings.model import ClusterSettings

REDACTED = "<redacted>"


def build_values(
    settings: ClusterSettings, *, secrets: Mapping[str, str] | None = None
) -> dict[str, Any]:
    raise NotImplementedError
