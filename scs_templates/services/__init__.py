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

from scs_templates.services.catalogue import CATALOGUE, ServiceInfo, service_catalogue

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from typing import Any

    from scs_templates.services.deploy import ApplyResult, CniSwitchError, apply
    from scs_templates.services.releases import (
        STATE_KEY,
        ChartSource,
        Repository,
        ServiceRelease,
        service_releases,
        services_state_values,
    )
    from scs_templates.services.values import deep_merge

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
    "apply": "deploy",
    "ApplyResult": "deploy",
    "CniSwitchError": "deploy",
    "STATE_KEY": "releases",
    "ChartSource": "releases",
    "Repository": "releases",
    "ServiceRelease": "releases",
    "service_releases": "releases",
    "services_state_values": "releases",
    "deep_merge": "values",
}


def __getattr__(name: str) -> Any:
    """Import the releases, values and apply machinery (the settings model, the kubernetes
    client, the helmfile runner) only when used: the catalogue alone is asked by the
    settings rules on the CLI's pydantic-free happy path."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"scs_templates.services.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
