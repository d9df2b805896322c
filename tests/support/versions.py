"""The versions table as the tests read it (tests/unit/test_versions.py,
tests/render/test_versions_render.py, tests/plane/test_versions_upstream.py): the table, its raw
JSON and inputs, a settings text at a Kubernetes version, and the real packaged charts."""

from __future__ import annotations

import functools
import json
from typing import Any

from scs_templates._maintain import update_versions as maintainer
from scs_templates._services.catalogue import CATALOGUE
from scs_templates._versions import TABLE_PATH, table
from tests.support import SHARED, skip_or_fail

VERSIONS = table()
RAW: dict[str, Any] = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
INPUTS: dict[str, Any] = json.loads(maintainer.INPUTS_PATH.read_text(encoding="utf-8"))
#: The releases with a row of their own (the others take their ``version_of``'s version;
#: a chart of ours has its own version, no upstream release).
TABLE_RELEASES = [info for info in CATALOGUE if info.version_of is None and not info.packaged]


def settings_text(provider: str, version: str | None) -> str:
    """A minimal valid settings file of ``provider`` at Kubernetes ``version`` (the default
    when None)."""
    lines = [
        "apiVersion: scs-templates.scs.community/v1alpha1",
        "kind: ClusterSettings",
        "metadata:",
        "  name: demo",
        "spec:",
        f"  provider: {provider}",
    ]
    if version:
        lines += ["  kubernetes:", f"    version: {version}"]
    if provider == "openstack":
        lines += [
            "  controlPlane:",
            "    machineType: SCS-2V-4-20s",
            "  workers:",
            "    - name: md-0",
            "      machineType: SCS-2V-4-20s",
        ]
    return "\n".join(lines) + "\n"


@functools.cache
def _packages() -> list[maintainer.ChartPackage]:
    return maintainer.chart_packages(SHARED / "charts")


def chart_packages() -> list[maintainer.ChartPackage]:
    """The real packaged charts of ../shared/charts (read once), or skip (fail in CI)."""
    charts = SHARED / "charts"
    if not charts.is_dir():
        skip_or_fail(f"real charts not found at {charts}")
    return _packages()
