"""The public library API: what other tools import instead of shelling out to the CLI.

Everything here is stable within a minor release; modules not re-exported here are internal.
The CLI is a thin layer over exactly these functions, so a tool that imports them gets the
same validation, the same values and byte-identical manifests. See ``docs/library.md``.

Typical use::

    from scs_templates import api
    loaded = api.load_settings("cluster.yaml")      # raises api.SettingsError
    result = api.render(loaded.settings)            # raises api.HelmError
    api.write_manifests(result, "out/")
    api.install(loaded.settings, kubeconfig="mgmt.kubeconfig")  # credentials too
    # OpenStack: the credentials (clouds.yaml, cloud.conf, cacert) go into their Secret
    # through the Kubernetes API, never into helm values or release history.

``install`` and ``delete`` do all the commands do, the provider's cloud work included
(OpenStack: credentials, server groups, cleanup; ``cloud=CloudOptions(...)`` says how).
The OpenStack building blocks live in :mod:`scs_templates.providers.openstack` (imported on demand:
it pulls in openstacksdk).
"""

from __future__ import annotations

from scs_templates._core.errors import InputError, ScsTemplatesError, ToolError, ToolNotFoundError
from scs_templates._gitops import GitopsOptions, GitopsResult, parse_chart_source, write_gitops
from scs_templates._lifecycle import (
    DeleteIncomplete,
    DeleteResult,
    DiffResult,
    InstallResult,
    ObjectChange,
    StatusResult,
    Target,
    check_version_change,
    delete,
    diff,
    install,
    status,
    target_of,
)
from scs_templates._render.charts import ChartRef, chart_for
from scs_templates._render.render import (
    RenderResult,
    kube_version_of,
    render,
    render_many,
    split_documents,
    write_fleet,
    write_manifests,
)
from scs_templates._render.values import build_values
from scs_templates._services import apply as apply_services
from scs_templates._services import service_releases
from scs_templates._settings import (
    ClusterSettings,
    LoadedSettings,
    Problem,
    SettingsError,
    load_settings,
    parse_settings_text,
    validate_data,
)
from scs_templates._settings.dump import dump_settings
from scs_templates._settings.schema import settings_schema
from scs_templates._tools.helm import Helm, HelmError, HelmTimeout, ReleaseInfo
from scs_templates._tools.kube import ClusterState, Condition, KubeClient, ObjectRef
from scs_templates._tools.toolchain import find_helm
from scs_templates.providers import CloudOptions
from scs_templates.providers.openstack.migrate import MigrationResult, migrate_kaas_v1

__all__ = [
    "ChartRef",
    "CloudOptions",
    "ClusterSettings",
    "ClusterState",
    "Condition",
    "DeleteIncomplete",
    "DeleteResult",
    "DiffResult",
    "GitopsOptions",
    "GitopsResult",
    "Helm",
    "HelmError",
    "HelmTimeout",
    "InputError",
    "InstallResult",
    "KubeClient",
    "LoadedSettings",
    "MigrationResult",
    "ObjectChange",
    "ObjectRef",
    "Problem",
    "ReleaseInfo",
    "RenderResult",
    "ScsTemplatesError",
    "SettingsError",
    "StatusResult",
    "Target",
    "ToolError",
    "ToolNotFoundError",
    "apply_services",
    "build_values",
    "chart_for",
    "check_version_change",
    "delete",
    "diff",
    "dump_settings",
    "find_helm",
    "install",
    "kube_version_of",
    "load_settings",
    "migrate_kaas_v1",
    "parse_chart_source",
    "parse_settings_text",
    "render",
    "render_many",
    "service_releases",
    "settings_schema",
    "split_documents",
    "status",
    "target_of",
    "validate_data",
    "write_fleet",
    "write_gitops",
    "write_manifests",
]
