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

from typing import TYPE_CHECKING, Any

from scs_templates.services.catalogue import CATALOGUE, ServiceInfo, service_catalogue
from scs_templates.services.releases import (
    STATE_KEY,
    ChartSource,
    Repository,
    ServiceRelease,
    service_releases,
    services_state_values,
)
from scs_templates.services.values import deep_merge

if TYPE_CHECKING:
    from scs_templates.services.deploy import ApplyResult, CniSwitchError, apply

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


def __getattr__(name: str) -> Any:
    """Import the apply machinery (kubernetes client, helmfile runner) only when used."""
    if name in ("apply", "ApplyResult", "CniSwitchError"):
        from scs_templates.services import deploy as _deploy_module

        return getattr(_deploy_module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
