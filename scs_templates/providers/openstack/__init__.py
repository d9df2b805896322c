"""The OpenStack provider (CAPO): everything OpenStack-specific in Python, in one place.

* :data:`OPENSTACK` (:mod:`.provider`): the provider itself, its settings rules, its part of
  the values (:mod:`.values`, its typed models :mod:`.values_model`) and the workload
  set-up (:mod:`.workload`);
* the cloud side, the library's OpenStack building blocks: per-cluster application
  credentials (:mod:`.appcred`) and the Secret holding them (:mod:`.credentials_secret`),
  preflight checks (:mod:`.preflight`), server groups (:mod:`.servergroups`), rotation
  (:mod:`.rotation`, :mod:`.capo_fence`), cleanup (:mod:`.cleanup`, :mod:`.leftovers`, the
  lines both print: :mod:`.cloud_report`), what install and delete do with them
  (:mod:`.provision`).

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

from scs_templates._core.lazy import exports

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from scs_templates.providers.openstack.appcred import (
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
    from scs_templates.providers.openstack.credential_records import (
        AppCredential,
        ClusterCredentials,
        EnsuredCredential,
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
    from scs_templates.providers.openstack.provider import OPENSTACK, OpenStackProvider
    from scs_templates.providers.openstack.rotation import RotationReport, rotate_credentials
    from scs_templates.providers.openstack.servergroups import (
        ServerGroupAction,
        delete_server_groups,
        ensure_server_groups,
        wanted_server_groups,
    )

_LAZY = {
    "provider": ("OPENSTACK", "OpenStackProvider"),
    "connection": ("CloudAccess", "Secret", "cloud_access", "has_service", "open_cloud", "redact"),
    "credential_records": ("AppCredential", "ClusterCredentials", "EnsuredCredential"),
    "appcred": (  # application credentials
        "create_app_credential",
        "credential_authenticates",
        "credential_names",
        "delete_app_credential",
        "delete_cluster_credentials",
        "ensure_app_credential",
        "ensure_cluster_credentials",
        "find_app_credential",
    ),
    "credentials_secret": (  # the credentials Secret's content
        "StoredCredential",
        "cloud_conf_from_clouds_yaml",
        "credentials_secret_data",
        "credentials_secret_name",
        "parse_credentials_secret",
        "read_secret_manifest",
        "render_cloud_conf",
        "render_clouds_yaml",
        "secret_manifest",
        "write_secret_manifest",
    ),
    "capo_names": ("capo_network_name", "capo_security_group_names"),
    "preflight": ("CheckResult", "PreflightReport", "run_preflight"),
    "rotation": ("RotationReport", "rotate_credentials"),
    "cleanup": ("CleanupReport", "cleanup_cluster_network"),
    "servergroups": (
        "ServerGroupAction",
        "delete_server_groups",
        "ensure_server_groups",
        "wanted_server_groups",
    ),
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


if not TYPE_CHECKING:  # type checkers read the names from the imports above
    __getattr__, __dir__ = exports(__name__, _LAZY)
