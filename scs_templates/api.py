"""The public library API: what other tools import instead of shelling out to the CLI.

Everything here is stable within a minor release; modules not re-exported here are internal.
The CLI is a thin layer over exactly these functions, so a tool that imports them gets the
same validation, the same values and byte-identical manifests. See ``docs/library.md``.

Typical use::

    from scs_templates import api

    loaded = api.load_settings("cluster.yaml")      # raises api.SettingsError
    result = api.render(loaded.settings)            # raises api.HelmError
    api.write_manifests(result, "out/")
"""

from __future__ import annotations

from scs_templates.charts import ChartRef, chart_for
from scs_templates.errors import InputError, ScsTemplatesError, ToolError, ToolNotFoundError
from scs_templates.helm import Helm, HelmError, HelmTimeout, ReleaseInfo, TemplateJob
from scs_templates.render import (
    RenderResult,
    kube_version_of,
    render,
    render_many,
    split_documents,
    write_manifests,
)
from scs_templates.settings import (
    ClusterSettings,
    LoadedSettings,
    Problem,
    SettingsError,
    load_settings,
    parse_settings_text,
    validate_data,
)
from scs_templates.values import REDACTED, build_values

__all__ = [
    "REDACTED",
    "ChartRef",
    "ClusterSettings",
    "Helm",
    "HelmError",
    "HelmTimeout",
    "InputError",
    "LoadedSettings",
    "Problem",
    "ReleaseInfo",
    "RenderResult",
    "ScsTemplatesError",
    "SettingsError",
    "TemplateJob",
    "ToolError",
    "ToolNotFoundError",
    "build_values",
    "chart_for",
    "kube_version_of",
    "load_settings",
    "parse_settings_text",
    "render",
    "render_many",
    "split_documents",
    "validate_data",
    "write_manifests",
]
