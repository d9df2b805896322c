"""The public library API: what other tools import instead of shelling out to the CLI.

These names are the whole public surface, stable within a minor release; every other module
of the package is internal and may change without notice. The CLI runs exactly these
functions, so a tool that imports them gets the same validation, the same values and
byte-identical manifests. Every name is documented in ``docs/library.md``;
``tests/unit/test_public_api.py`` pins the list.

A name is public when a caller writes it: a function it calls, the settings and render
result it passes from one call to the next, an option it builds, an error it catches. What
a call returns and the caller only reads (``install``'s result, ``diff``'s changes) is
described field by field in ``docs/library.md``; its class stays internal.

Typical use::

    from scs_templates import api
    loaded = api.load_settings("cluster.yaml")      # raises api.SettingsError
    result = api.render(loaded.settings)            # raises api.ToolError
    api.write_manifests(result, "out/")
    api.install(loaded.settings, kubeconfig="mgmt.kubeconfig")

This module imports only the names it exports (no ``from __future__`` either), so
``dir(api)`` and ``from scs_templates.api import *`` give exactly ``__all__``.
"""

from scs_templates._core.errors import InputError, ScsTemplatesError, ToolError
from scs_templates._gitops import GitopsOptions, parse_chart_source, write_gitops
from scs_templates._lifecycle import DeleteIncomplete, delete, diff, install, status
from scs_templates._migrate import migrate_kaas_v1
from scs_templates._render.fleet import render_many
from scs_templates._render.render import (
    RenderResult,
    render,
    write_fleet,
    write_manifests,
)
from scs_templates._render.values import build_values
from scs_templates._services.deploy import apply as apply_services
from scs_templates._settings.model import ClusterSettings
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.schema import settings_schema
from scs_templates._settings.validate import load_settings, validate_data
from scs_templates.providers.interface import CloudOptions

__all__ = [
    "CloudOptions",
    "ClusterSettings",
    "DeleteIncomplete",
    "GitopsOptions",
    "InputError",
    "RenderResult",
    "ScsTemplatesError",
    "SettingsError",
    "ToolError",
    "apply_services",
    "build_values",
    "delete",
    "diff",
    "install",
    "load_settings",
    "migrate_kaas_v1",
    "parse_chart_source",
    "render",
    "render_many",
    "settings_schema",
    "status",
    "validate_data",
    "write_fleet",
    "write_gitops",
    "write_manifests",
]
