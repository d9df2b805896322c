"""Standard services of the workload cluster, installed with helmfile.

Library API:

* :func:`service_catalogue` - every service release with its chart, repository and tested
  default version;
* :func:`service_releases` - settings -> the wanted releases (chart source, version, values);
* :func:`services_state_values` - the state values of ``helmfile.d/10-services.yaml.gotmpl``;
* :func:`apply` - cluster release, workload kubeconfig, then ``helmfile sync`` of the services.

See ``docs/services.md``.
"""

from __future__ import annotations

from scs_templates._core.lazy import exports
from scs_templates._services.catalogue import CATALOGUE, ServiceInfo, service_catalogue

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from scs_templates._services.deploy import ApplyResult, CniSwitchError, apply
    from scs_templates._services.releases import (
        STATE_KEY,
        ChartSource,
        Repository,
        ServiceRelease,
        service_releases,
        services_state_values,
    )
    from scs_templates._services.values import deep_merge

__all__ = [
    "CATALOGUE",
    "STATE_KEY",
    "ApplyResult",
    "ChartSource",
    "CniSwitchError",
    "Repository",
    "ServiceInfo",
    "ServiceRelease",
    "apply",
    "deep_merge",
    "service_catalogue",
    "service_releases",
    "services_state_values",
]


_LAZY = {
    "deploy": ("ApplyResult", "CniSwitchError", "apply"),
    "releases": (
        "STATE_KEY",
        "ChartSource",
        "Repository",
        "ServiceRelease",
        "service_releases",
        "services_state_values",
    ),
    "values": ("deep_merge",),
}
# The releases, values and apply machinery (the settings model, the kubernetes client, the
# helmfile runner) is imported only when used: the catalogue alone is asked by the settings
# rules on the CLI's pydantic-free happy path.
if not TYPE_CHECKING:  # type checkers read the names from the imports above
    __getattr__, __dir__ = exports(__name__, _LAZY)
