"""The OpenStack provider (CAPO): everything OpenStack-specific in Python, in one place.

* :data:`OPENSTACK` (:mod:`.provider`): the provider itself, its settings rules, its part of
  the values (:mod:`.values`, its typed models :mod:`.values_model`) and the workload
  set-up (:mod:`.workload`);
* the cloud side, the library's OpenStack building blocks: per-cluster application
  credentials (:mod:`.appcred`) and the Secret holding them (:mod:`.credentials_secret`),
  preflight checks (:mod:`.preflight`), server groups (:mod:`.servergroups`), rotation
  (:mod:`.rotation`, :mod:`.capo_fence`), cleanup (:mod:`.cleanup`, :mod:`.leftovers`),
  what install and delete do with them (:mod:`.provision`).

Importing this package is cheap (render imports it through the catalogue): the building
blocks below are loaded on first use, and openstacksdk only when a function talks to a
cloud.

Typical use::

    from scs_templates.providers.openstack import (
        open_cloud, ensure_cluster_credentials, credentials_secret_data, run_preflight,
    )

    conn = open_cloud(settings.spec.openstack.cloud)
    report = run_preflight(conn, settings)
    creds = ensure_cluster_credentials(conn, settings, existing=current_secret_data_or_None)
    data = credentials_secret_data(creds, settings)  # {"clouds.yaml": Secret, ...}
    report = rotate_credentials(conn, settings, management_kube_client)  # a new credential
"""

from __future__ import annotations

import importlib

from scs_templates.providers.openstack.provider import OPENSTACK, OpenStackProvider

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from typing import Any

    from scs_templates.providers.openstack.appcred import (
        AppCredential,
        ClusterCredentials,
        EnsuredCredential,
        create_app_credential,
        credential_authenticates,
        credential_names,
        delete_app_credential,
        delete_cluster_credentials,
        ensure_app_credential,
        ensure_cluster_credentials,
        find_app_credential,
    )
    from scs_templates.providers.openstack.capo_names import (
        capo_network_name,
        capo_security_group_names,
    )
    from scs_templates.providers.openstack.cleanup import CleanupReport, cleanup_cluster_network
    from scs_templates.providers.openstack.connection import (
        CloudAccess,
        Secret,
        cloud_access,
        has_service,
        open_cloud,
        redact,
    )
    from scs_templates.providers.openstack.credentials_secret import (
        StoredCredential,
        cloud_conf_from_clouds_yaml,
        credentials_secret_data,
        credentials_secret_name,
        parse_credentials_secret,
        read_secret_manifest,
        render_cloud_conf,
        render_clouds_yaml,
        secret_manifest,
        write_secret_manifest,
    )
    from scs_templates.providers.openstack.preflight import (
        CheckResult,
        PreflightReport,
        run_preflight,
    )
    from scs_templates.providers.openstack.rotation import RotationReport, rotate_credentials
    from scs_templates.providers.openstack.servergroups import (
        ServerGroupAction,
        delete_server_groups,
        ensure_server_groups,
        wanted_server_groups,
    )

_EXPORTS: dict[str, str] = {
    # connection
    "CloudAccess": "connection",
    "Secret": "connection",
    "cloud_access": "connection",
    "has_service": "connection",
    "open_cloud": "connection",
    "redact": "connection",
    # application credentials
    "AppCredential": "appcred",
    "ClusterCredentials": "appcred",
    "EnsuredCredential": "appcred",
    "create_app_credential": "appcred",
    "credential_authenticates": "appcred",
    "credential_names": "appcred",
    "delete_app_credential": "appcred",
    "delete_cluster_credentials": "appcred",
    "ensure_app_credential": "appcred",
    "ensure_cluster_credentials": "appcred",
    "find_app_credential": "appcred",
    # the credentials Secret's content
    "StoredCredential": "credentials_secret",
    "cloud_conf_from_clouds_yaml": "credentials_secret",
    "credentials_secret_data": "credentials_secret",
    "credentials_secret_name": "credentials_secret",
    "parse_credentials_secret": "credentials_secret",
    "read_secret_manifest": "credentials_secret",
    "render_cloud_conf": "credentials_secret",
    "render_clouds_yaml": "credentials_secret",
    "secret_manifest": "credentials_secret",
    "write_secret_manifest": "credentials_secret",
    # CAPO's names
    "capo_network_name": "capo_names",
    "capo_security_group_names": "capo_names",
    # preflight
    "CheckResult": "preflight",
    "PreflightReport": "preflight",
    "run_preflight": "preflight",
    # rotation
    "RotationReport": "rotation",
    "rotate_credentials": "rotation",
    # cleanup
    "CleanupReport": "cleanup",
    "cleanup_cluster_network": "cleanup",
    # server groups
    "ServerGroupAction": "servergroups",
    "delete_server_groups": "servergroups",
    "ensure_server_groups": "servergroups",
    "wanted_server_groups": "servergroups",
}

__all__ = [
    "OPENSTACK",
    "AppCredential",
    "CheckResult",
    "CleanupReport",
    "CloudAccess",
    "ClusterCredentials",
    "EnsuredCredential",
    "OpenStackProvider",
    "PreflightReport",
    "RotationReport",
    "Secret",
    "ServerGroupAction",
    "StoredCredential",
    "capo_network_name",
    "capo_security_group_names",
    "cleanup_cluster_network",
    "cloud_access",
    "cloud_conf_from_clouds_yaml",
    "create_app_credential",
    "credential_authenticates",
    "credential_names",
    "credentials_secret_data",
    "credentials_secret_name",
    "delete_app_credential",
    "delete_cluster_credentials",
    "delete_server_groups",
    "ensure_app_credential",
    "ensure_cluster_credentials",
    "ensure_server_groups",
    "find_app_credential",
    "has_service",
    "open_cloud",
    "parse_credentials_secret",
    "read_secret_manifest",
    "redact",
    "render_cloud_conf",
    "render_clouds_yaml",
    "rotate_credentials",
    "run_preflight",
    "secret_manifest",
    "wanted_server_groups",
    "write_secret_manifest",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
