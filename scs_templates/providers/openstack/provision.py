"""The OpenStack side of install and delete, for the CLI and other tools.

``install`` needs the content of the cluster's credentials Secret (clouds.yaml for CAPO,
cloud.conf for the in-cluster cloud controller manager and Cinder CSI, the CA bundle) and
the anti-affinity server groups CAPO only references. ``delete`` must, once Cluster API has
torn the cluster down, remove what we created: the restricted per-cluster application
credential(s) (with the parent credential: a restricted one cannot delete itself), the
server groups, and any leftover ports that keep the cluster's network alive.

Every value returned here may be a credential: never print or log it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.progress import Progress, quiet
from scs_templates._tools.kube import KubeClient
from scs_templates.providers.openstack.appcred import (
    cluster_credentials_in_keystone,
    delete_cluster_credentials,
    ensure_cluster_credentials,
    kept_legacy_credentials,
)
from scs_templates.providers.openstack.cleanup import cleanup_cluster_network
from scs_templates.providers.openstack.connection import open_cloud
from scs_templates.providers.openstack.credentials_secret import (
    cloud_conf_from_clouds_yaml,
    credentials_secret_data,
    credentials_secret_name,
    single_cloud_clouds_yaml,
)
from scs_templates.providers.openstack.leftovers import (
    block_storage_api,
    clean_project_leftovers,
    load_balancer_api,
)
from scs_templates.providers.openstack.preflight import run_preflight
from scs_templates.providers.openstack.section import section
from scs_templates.providers.openstack.servergroups import (
    delete_server_groups,
    ensure_server_groups,
)
from scs_templates.providers.openstack.values import CACERT_KEY, CLOUD_CONF_KEY, CLOUDS_YAML_KEY

if TYPE_CHECKING:
    from openstack.connection import Connection

    from scs_templates._settings.model import ClusterSettings
    from scs_templates.providers.interface import Management


def manages_credentials(settings: ClusterSettings) -> bool:
    """True when scs-templates creates the cluster's credentials (and must delete them)."""
    os_settings = section(settings)
    return os_settings.application_credential.per_cluster and os_settings.credentials_secret is None


def cluster_secrets_via(
    settings: ClusterSettings,
    management: Management,
    *,
    os_cloud: str | None = None,
    progress: Progress = quiet,
) -> dict[str, str]:
    """:func:`cluster_secrets` with the management cluster's client of ``management``
    (its own, or one of its kubeconfig and context, closed afterwards)."""
    if management.kube is not None:
        return cluster_secrets(settings, kube=management.kube, os_cloud=os_cloud, progress=progress)
    with KubeClient(management.kubeconfig, management.context) as kube:
        return cluster_secrets(settings, kube=kube, os_cloud=os_cloud, progress=progress)


def cluster_secrets(
    settings: ClusterSettings,
    *,
    kube: KubeClient,
    os_cloud: str | None = None,
    progress: Progress = quiet,
) -> dict[str, str]:
    """Preflight, then the per-cluster credential(s) and server groups; return the Secret's
    content.

    The preflight checks run first: a missing external network or flavor, or a node CIDR
    that collides, fails here with the check's own message (InputError when the settings are
    at fault, ToolError when the cloud is), before anything is created. The current
    credentials Secret on the management cluster is read so a credential that still
    authenticates is reused (no churn, no new secret on every install).
    """

    existing = kube.secret_data(settings.metadata.namespace, credentials_secret_name(settings))
    conn = open_cloud(os_cloud or section(settings).cloud)
    try:
        report = run_preflight(conn, settings)
        for result in report.results:
            progress(f"preflight {result.line}")
        if not report.ok:
            first = report.failed[0]
            error = InputError if report.exit_code == 2 else ToolError
            raise error(
                f"preflight check {first.name} failed: {first.message} "
                f"({len(report.failed)} failed; `scs-templates openstack preflight` lists them)"
            )
        credentials = ensure_cluster_credentials(conn, settings, existing=existing)
        for ensured in (credentials.cluster, credentials.workload):
            if ensured is not None:
                progress(f"application credential {ensured.credential.name}: {ensured.reason}")
        for kept in credentials.kept:
            progress(kept.line())
        data = credentials_secret_data(credentials, settings)
        for action in ensure_server_groups(conn, settings):
            progress(str(action))
    finally:
        conn.close()
    return {key: value.reveal() for key, value in sorted(data.items())}


def secrets_from_files(
    settings: ClusterSettings, clouds_yaml: str, cacert: str | None = None
) -> dict[str, str]:
    """The Secret's content from the user's own clouds.yaml (and CA bundle), for
    ``--clouds-yaml``: only the entry spec.openstack.cloud is kept (the user's other clouds
    and their passwords never reach the Secret or the release values); cloud.conf is derived
    from the same entry."""

    os_settings = section(settings)
    own_entry = single_cloud_clouds_yaml(clouds_yaml, os_settings.cloud)
    conf = cloud_conf_from_clouds_yaml(
        own_entry or "",
        os_settings.cloud,
        load_balancer_provider=os_settings.load_balancer_provider,
        floating_network_id=os_settings.external_network_id,
    )
    if own_entry is None or conf is None:
        raise InputError(
            f"--clouds-yaml: no usable entry {os_settings.cloud!r} (spec.openstack.cloud) with "
            "auth.auth_url in it"
        )
    secrets = {CLOUDS_YAML_KEY: own_entry, CLOUD_CONF_KEY: conf.reveal()}
    if cacert is not None:
        secrets[CACERT_KEY] = cacert
    return secrets


def release_cluster_resources(
    settings: ClusterSettings,
    *,
    os_cloud: str | None = None,
    progress: Progress = quiet,
    dry_run: bool = False,
    keep_volumes: bool = False,
    conn: Connection | None = None,
    held: frozenset[str] = frozenset(),
) -> list[str]:
    """After the cluster is gone, step (c) of delete: the cluster's load balancers, floating
    IPs, OCCM security groups, volumes and snapshots (:mod:`.leftovers`), leftover ports and
    the network (:mod:`.cleanup`), server groups, credentials. Every removal (dry run: every
    one that would happen) and everything kept is reported through ``progress``.

    ``held``: the application credential IDs the cluster's credentials Secret held (delete
    reads them before it removes the Secret): a credential with the cluster's legacy name is
    the cluster's when the Secret held it, as install and rotate take it, even when its
    description does not name the cluster. Without them such a credential cannot be told
    from KaaS v1's or another's: it is kept and reported with the command that deletes it.

    Returns problems (empty when everything is clean). Idempotent: a second run finds
    nothing to do. ``conn`` defaults to a connection to ``os_cloud``.
    """

    own = conn is None
    if conn is None:
        conn = open_cloud(os_cloud or section(settings).cloud)
    try:
        problems = _release_project(conn, settings, progress, dry_run, keep_volumes)
        for action in delete_server_groups(conn, settings, dry_run=dry_run):
            progress(str(action))
        if manages_credentials(settings):
            _release_credentials(conn, settings, held, progress, dry_run)
    finally:
        if own:
            conn.close()
    return problems


def _release_project(
    conn: Connection, settings: ClusterSettings, progress: Progress, dry_run: bool, keep: bool
) -> list[str]:
    """What the workload cluster's controllers left in the project (:mod:`.leftovers`), then
    the leftover ports and the network (:mod:`.cleanup`); returns the problems of both.
    ``keep``: the volumes and snapshots are kept."""

    leftovers = clean_project_leftovers(
        conn,
        settings,
        load_balancers=load_balancer_api(conn),
        block_storage=block_storage_api(conn),
        keep_volumes=keep,
        dry_run=dry_run,
    )
    for line in leftovers.lines():
        progress(line)
    report = cleanup_cluster_network(conn, settings, dry_run=dry_run)
    for line in report.lines():
        progress(line)
    return leftovers.problems + [problem.describe() for problem in report.problems]


def _release_credentials(
    conn: Connection,
    settings: ClusterSettings,
    held: frozenset[str],
    progress: Progress,
    dry_run: bool,
) -> None:
    """The cluster's application credentials (a legacy-named one only when ``held``); the
    legacy ones that cannot be told to be the cluster's are reported, kept."""

    if dry_run:
        for members in cluster_credentials_in_keystone(conn, settings, held).values():
            for member in members:
                progress(f"would delete application credential {member.name}")
    else:
        deleted = delete_cluster_credentials(conn, settings, held)
        for name, gone in sorted(deleted.items()):
            progress(f"application credential {name}: {'deleted' if gone else 'absent'}")
    for kept in kept_legacy_credentials(conn, settings, held):
        progress(kept.line())
