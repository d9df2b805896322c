"""``install``: the provider's preparation, the version guard, the Secrets the release needs
(credentials, registry mirrors, encryption key), ``helm upgrade --install``, the wait.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.progress import Progress, quiet
from scs_templates._lifecycle.class_step import install_class, remove_class_if_unused
from scs_templates._lifecycle.prune_step import prune_superseded_templates
from scs_templates._lifecycle.target import Target, helm_of, kube_of, target_of
from scs_templates._lifecycle.version_guard import (
    check_api_port_change,
    check_class_change,
    check_template_change,
    check_version_change,
    installed_kubernetes_version,
    values_kubernetes_version,
)
from scs_templates._render import encryption
from scs_templates._render.charts import chart_for
from scs_templates._render.values import build_values
from scs_templates._render.values.class_release import class_release_of, cluster_release_values
from scs_templates._tools.kube import ObjectRef
from scs_templates._tools.kube.client import CLUSTER_API_VERSION
from scs_templates._tools.kube.wait import (
    DEFAULT_POLL_INTERVAL,
    DEFAULT_WAIT_TIMEOUT,
    wait_for_cluster,
)
from scs_templates.providers.credentials import store_credentials
from scs_templates.providers.interface import CloudOptions, Management
from scs_templates.providers.operations import operations_of
from scs_templates.providers.registry import provider_of

if TYPE_CHECKING:
    from scs_templates._render.charts import ChartRef
    from scs_templates._render.values.class_release import ClassRelease
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.helm import Helm, ReleaseInfo
    from scs_templates._tools.kube import ClusterState, KubeClient
    from scs_templates._versions.kubernetes import KubernetesVersion

__all__ = [
    "InstallResult",
    "check_node_credentials",
    "check_not_pending",
    "ensure_release_secrets",
    "install",
]


@dataclass(frozen=True)
class InstallResult:
    target: Target
    release: ReleaseInfo
    kubernetes_version: str
    previous_version: str | None
    cluster: ClusterState | None = None
    pruned: list[str] = field(default_factory=list)
    """Superseded templates removed after the rollout
    (:mod:`scs_templates._lifecycle.template_prune`)."""


def install(
    settings: ClusterSettings,
    *,
    helm: Helm | None = None,
    kube: KubeClient | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    secrets: Mapping[str, str] | None = None,
    wait: bool = False,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    helm_timeout: float | None = None,
    progress: Progress | None = None,
    cloud: CloudOptions | None = None,
    cloud_progress: Progress | None = None,
    rebase_class: bool = False,
    prune: bool = True,
) -> InstallResult:
    """Install or upgrade the cluster's release; optionally wait until it is Available.

    Without ``secrets`` the settings' provider prepares the cluster first, as
    ``scs-templates install`` does (OpenStack: the preflight checks, a per-cluster
    application credential - reused while it works - and the server groups), touching the
    cloud as ``cloud`` allows (default :class:`CloudOptions`: yes, with the settings' cloud
    entry; ``touch=False`` is ``--skip-openstack``).
    ``cloud_progress`` receives what the provider did (default: ``progress``).

    Then, in order: the version guard (:func:`_plan`; ``rebase_class`` lets a topology
    cluster move onto another ClusterClass), the Secrets the release needs
    (:func:`_store_cloud_secret`, :func:`ensure_release_secrets`), the class release and helm
    (:func:`_upgrade_install`), the class the cluster left (:func:`_leave_class`), the wait,
    and - with ``prune`` - the superseded templates nothing uses any more
    (:func:`~scs_templates._lifecycle.prune_step.prune_superseded_templates`).

    Raises InputError (exit 2) when the version guard refuses the change or when the
    credentials Secret is missing, HelmError/ToolError (exit 1) when helm or the API fails,
    and ToolError when ``wait`` times out. ``helm_timeout`` is helm's own ``--timeout``.
    """

    if kube is None and kubeconfig is None and helm is not None:
        # the API of the management cluster that the given helm installs into
        kubeconfig, context = helm.kubeconfig, context or helm.kube_context
    if secrets is None:
        secrets = _prepare(settings, cloud, kube, kubeconfig, context, cloud_progress or progress)
    run = _plan(settings, helm, kube, kubeconfig, context, wait=wait, rebase_class=rebase_class)
    if run.cloud_secret is not None and run.client is not None:
        _store_cloud_secret(run, run.client, run.cloud_secret, secrets, progress)
    chart = chart_for(provider_of(run.settings))
    release = _upgrade_install(run, chart, secrets, helm_timeout, poll_interval, progress)
    if run.old_class is not None and run.client is not None:
        _leave_class(run.client, run.runner, run.old_class, progress)
    state = None
    if run.client is not None and wait:
        state = _wait(run, timeout, poll_interval, progress)
    pruned = (
        _prune(run, run.client or kube_of(kube, kubeconfig, context), progress) if prune else []
    )
    previous = str(run.previous) if run.previous is not None else None
    return InstallResult(run.target, release, str(run.wanted), previous, state, pruned)


@dataclass
class _Plan:
    """What an install decided before it changes anything, handed to its later steps."""

    target: Target
    runner: Helm
    client: KubeClient | None
    settings: ClusterSettings
    """With what the installed release recorded."""
    values: dict[str, Any]
    shared: ClassRelease | None
    """A topology cluster's class release."""
    cloud_secret: str | None
    wanted: KubernetesVersion
    """Resolved once, by the values builder."""
    previous: KubernetesVersion | None = None
    old_class: ClassRelease | None = None
    """The class a rebase leaves, uninstalled after helm when no other Cluster uses it."""


def _plan(
    settings: ClusterSettings,
    helm: Helm | None,
    kube: KubeClient | None,
    kubeconfig: str | None,
    context: str | None,
    *,
    wait: bool,
    rebase_class: bool,
) -> _Plan:
    """The connections, the values, and the version guard on the installed release.

    An upgrade first puts what the installed release recorded into the settings
    (:meth:`~scs_templates.providers.interface.Provider.with_recorded`; OpenStack: the cloud
    cluster name its load balancers and volumes carry). A topology cluster (template
    ``clusterclass``) stays on its installed ClusterClass: an install that would move it onto
    another one is refused unless ``rebase_class`` (:func:`check_class_change`).
    """
    target = target_of(settings)
    encrypt = settings.spec.security.encryption_at_rest.enabled
    credentials = _reads_node_secrets(settings)
    cloud_secret = provider_of(settings).credentials_secret_name(settings)
    # with wait, a bad kubeconfig/context is found (exit 2) before anything is installed
    needs_api = wait or encrypt or credentials or cloud_secret is not None
    client = kube_of(kube, kubeconfig, context) if needs_api else None
    runner = helm_of(helm, kubeconfig, context)
    installed = runner.status(target.release, namespace=target.namespace)
    installed_values: dict[str, Any] = {}
    if installed is not None:
        check_not_pending(installed)
        installed_values = runner.get_values(target.release, namespace=target.namespace)
        # what the release recorded and an upgrade keeps (OpenStack: the cloud cluster name)
        settings = provider_of(settings).with_recorded(settings, installed_values)
    values = build_values(settings)
    shared = class_release_of(values, target.release)  # a topology cluster's class release
    if client is None and shared is not None:
        client = kube_of(kube, kubeconfig, context)
    wanted = values_kubernetes_version(values)
    run = _Plan(target, runner, client, settings, values, shared, cloud_secret, wanted)
    if installed is not None:
        _guard(run, installed_values, rebase_class)
    return run


def _guard(run: _Plan, installed_values: dict[str, Any], rebase_class: bool) -> None:
    """The version guard: refuse (exit 2) a change the installed cluster cannot take."""
    target = run.target
    check_template_change(installed_values, run.settings.spec.template, target.release)
    if check_class_change(installed_values, run.values, target.release, rebase=rebase_class):
        run.old_class = class_release_of(installed_values, target.release)
    run.previous = installed_kubernetes_version(run.runner, target, values=installed_values)
    check_version_change(run.previous, run.wanted)
    check_api_port_change(installed_values, run.values)


def _store_cloud_secret(
    run: _Plan,
    client: KubeClient,
    name: str,
    secrets: Mapping[str, str] | None,
    progress: Progress | None,
) -> None:
    """The provider's credentials Secret, written through the Kubernetes API before helm runs.

    ``secrets`` is the content of the cluster's credentials Secret (for example a
    clouds.yaml), written by :func:`store_credentials`; it is never a helm value, so no
    release revision holds it. Without ``secrets`` the Secret must already exist (created by
    an earlier install, or by the user as the provider's ``credentials_hint`` says).
    """
    namespace = run.target.namespace
    if secrets is not None:
        changed = store_credentials(client, run.settings, secrets)
        if progress:
            state_word = "written" if changed else "unchanged"
            progress(f"credentials Secret {namespace}/{name}: {state_word}")
    elif client.secret_data(namespace, name) is None:
        hint = provider_of(run.settings).credentials_hint
        raise InputError(f"the credentials Secret {namespace}/{name} does not exist: {hint}")


def _upgrade_install(
    run: _Plan,
    chart: ChartRef,
    secrets: Mapping[str, str] | None,
    helm_timeout: float | None,
    poll_interval: float,
    progress: Progress | None,
) -> ReleaseInfo:
    """The key and mirror Secrets, a topology cluster's class, then ``helm upgrade --install``.

    With encryption at rest (the default) the cluster's key Secret is created first: the
    control plane's bootstrap data reads the key from it. A topology cluster's class lives in
    a release of its own, shared by the Clusters of the namespace that use it
    (:mod:`scs_templates._render.values.class_release`): installed first (a rebase: the new
    class) and waited for until Cluster API has reconciled the class.
    """
    target, client, runner = run.target, run.client, run.runner
    if client is not None:
        # before the release: the control plane's bootstrap data reads the key from it
        ensure_release_secrets(client, run.settings, progress)
    handover = None
    if run.shared is not None:
        assert client is not None

        # the class first (a rebase: the new class), reconciled before the Cluster uses it
        handover = install_class(
            client,
            runner,
            run.shared,
            chart,
            cluster_release=target.release,
            kube_version=str(run.wanted),
            progress=progress,
            poll_interval=poll_interval,
        )
    release = runner.upgrade_install(
        target.release,
        chart.path,
        namespace=target.namespace,
        values=cluster_release_values(run.values),
        create_namespace=True,
        rollback_on_failure=True,
        timeout=helm_timeout,
        sensitive=tuple(secrets.values()) if secrets else (),
    )
    if handover is not None and client is not None:
        handover.finish(client, runner, chart, progress)
    return release


def _leave_class(
    client: KubeClient, runner: Helm, old_class: ClassRelease, progress: Progress | None
) -> None:
    """After a rebase, the class this cluster left, when no other Cluster of the namespace
    uses it (:mod:`scs_templates._lifecycle.class_step`)."""
    _, kept = remove_class_if_unused(client, runner, old_class, progress=progress)
    if kept and progress:
        progress(kept)


def _prune(run: _Plan, client: KubeClient, progress: Progress | None) -> list[str]:
    """After helm (and the wait), the cluster's superseded hashed machine and bootstrap
    templates that nothing uses any more; during a rollout the old ones are still used and
    stay."""
    return prune_superseded_templates(client, run.settings, run.runner, progress=progress).pruned


def _wait(
    run: _Plan, timeout: float, poll_interval: float, progress: Progress | None
) -> ClusterState:
    """Wait until the Cluster the values name is Available."""
    assert run.client is not None
    target = run.target
    cluster = run.values.get("cluster", {}).get("name") or target.cluster
    ref = ObjectRef(CLUSTER_API_VERSION, "Cluster", target.namespace, str(cluster))
    return wait_for_cluster(
        run.client, ref, timeout=timeout, poll_interval=poll_interval, progress=progress
    )


def check_not_pending(release: ReleaseInfo) -> None:
    """Refuse, saying how to go on, when helm's last record of the release is ``pending-*``.

    helm stores ``pending-install``/``-upgrade``/``-rollback`` before it changes anything
    and refuses every later change while the record says so ("another operation
    (install/upgrade/rollback) is in progress"), also after the helm that wrote it was
    stopped: by our wall clock (``--timeout``), a signal, an API server that stopped
    answering (tests/plane/test_plane_faults.py). Whether a helm still runs cannot be told from
    here, so nothing is changed automatically; the line names the way out.
    """
    if not release.status.startswith("pending-"):
        return
    where = f"release {release.name} in namespace {release.namespace}"
    if release.status == "pending-install":
        way = (
            "once it does not, remove what the first install created with "
            "`scs-templates delete` on these settings, then install again"
        )
    else:
        way = (
            f"once it does not, `helm rollback {release.name} -n {release.namespace}` "
            "returns to the last deployed revision; then install again"
        )
    raise ToolError(
        f"{where} is {release.status} (revision {release.revision}): a helm run on it was "
        f"stopped before it finished, or one still runs, and helm refuses every change "
        f"until then; {way}"
    )


def ensure_release_secrets(
    client: KubeClient, settings: ClusterSettings, progress: Progress | None = None
) -> None:
    """What the cluster's release needs on the management cluster before it is installed,
    for every path that installs it (``install``, ``Helmfile.sync``): the Secrets the nodes'
    bootstrap data reads (registry mirrors', snapshot upload's credentials) complete
    (:func:`check_node_credentials`) and, with encryption at rest, the key Secret
    (:func:`scs_templates._render.encryption.ensure_secret`: created once, an existing one
    kept). Without the key Secret the bootstrap controller writes no bootstrap data for the
    control plane and the cluster never starts."""
    check_node_credentials(client, settings)
    created = settings.spec.security.encryption_at_rest.enabled and encryption.ensure_secret(
        client, settings
    )
    if created and progress:
        progress(f"created the encryption key Secret {encryption.secret_name(settings)}")


def _reads_node_secrets(settings: ClusterSettings) -> bool:
    """Whether the bootstrap data reads Secrets that :func:`check_node_credentials` checks."""
    from scs_templates._settings.node_secrets import node_secrets  # deferred: pydantic

    return bool(node_secrets(settings))


def check_node_credentials(client: KubeClient, settings: ClusterSettings) -> None:
    """Refuse (exit 2) when a Secret whose keys the bootstrap data copies onto the nodes (a
    registry mirror's ``credentialsSecret``, ``etcd.backupS3.credentialsSecret``:
    :func:`~scs_templates._settings.node_secrets.node_secrets`) is missing on the management
    cluster or lacks a key: without it the bootstrap controller writes no bootstrap data and
    the machines never start. Only key names are read into messages, never values."""
    from scs_templates._settings.node_secrets import node_secrets  # deferred: pydantic

    namespace = settings.metadata.namespace
    for secret in node_secrets(settings):
        data = client.secret_data(namespace, secret.name)
        if data is None:
            raise InputError(
                f"{secret.field}: Secret {namespace}/{secret.name} does not exist on the "
                f"management cluster; create it first (keys {' and '.join(secret.keys)}, "
                f"{secret.docs})"
            )
        missing = [key for key in secret.keys if not data.get(key)]
        if missing:
            raise InputError(
                f"{secret.field}: Secret {namespace}/{secret.name} has no "
                f"{' and no '.join(missing)}"
            )


def _prepare(
    settings: ClusterSettings,
    cloud: CloudOptions | None,
    kube: KubeClient | None,
    kubeconfig: str | None,
    context: str | None,
    progress: Progress | None,
) -> dict[str, str] | None:
    """The provider's preparation before install: the content of the values' secrets."""
    result: dict[str, str] | None = operations_of(provider_of(settings)).prepare(
        settings,
        cloud if cloud is not None else CloudOptions(),
        Management(kubeconfig, context, kube),
        progress or quiet,
    )
    return result
