"""Install, inspect, diff and delete a cluster on the management cluster.

The CLI commands ``install``, ``status``, ``diff`` and ``delete`` are thin layers over the
functions here; see ``docs/install.md`` for the user's view.

* :func:`install` runs ``helm upgrade --install`` (namespace created, rolled back on
  failure) after the Kubernetes version guard: a release may move to the same or the next
  minor version only, never skip one and never go back. With ``wait`` it follows the
  Cluster's v1beta2 conditions until ``Available`` is True.
* :func:`status` reports the release and the Cluster's phase and conditions.
* :func:`diff` compares the rendered manifests with the installed release's manifest, object
  by object (keyed by kind/namespace/name), without the helm-diff plugin. Secret values are
  never compared or shown.
* :func:`delete` removes the Cluster object FIRST and waits until Cluster API has torn the
  infrastructure down (the object is gone); only then does it uninstall the release and
  remove what helm keeps (templates with ``helm.sh/resource-policy: keep``) and the
  credentials Secret. The templates and the credentials are needed by the controllers while
  they delete machines: removing them earlier could strand machines in the cloud.
"""

from __future__ import annotations

import difflib
import io
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from scs_templates.errors import InputError, ToolError
from scs_templates.settings.versions import KubernetesVersion, resolve_version
from scs_templates.values import CLUSTER_LABEL

if TYPE_CHECKING:
    from scs_templates.helm import Helm, ReleaseInfo
    from scs_templates.kube import ClusterState, KubeClient, ObjectRef
    from scs_templates.providers import CloudOptions
    from scs_templates.settings.model import ClusterSettings

__all__ = [
    "CLUSTER_LABEL",
    "DeleteIncomplete",
    "DeleteResult",
    "DiffResult",
    "InstallResult",
    "ObjectChange",
    "StatusResult",
    "Target",
    "check_api_port_change",
    "check_version_change",
    "delete",
    "diff",
    "install",
    "installed_kubernetes_version",
    "status",
    "store_credentials",
    "target_of",
    "wait_for_cluster",
]

KEEP_ANNOTATION = "helm.sh/resource-policy"
#: Kinds the library chart keeps across upgrades (immutable templates with hashed names),
#: besides the provider's machine templates: after the Cluster is gone they are found by
#: :data:`CLUSTER_LABEL` and removed.
KEPT_KINDS: tuple[tuple[str, str], ...] = (
    ("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"),
)
DEFAULT_WAIT_TIMEOUT = 1800.0
DEFAULT_POLL_INTERVAL = 5.0

Progress = Callable[[str], None]

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """Where a settings file lives on the management cluster."""

    release: str
    namespace: str
    cluster: str


def target_of(settings: ClusterSettings) -> Target:
    """Release name and namespace are the settings' ``metadata``; the Cluster has its name."""
    return Target(settings.metadata.name, settings.metadata.namespace, settings.name)


def _helm(helm: Helm | None, kubeconfig: str | None, context: str | None) -> Helm:
    if helm is not None:
        return helm
    from scs_templates.helm import Helm

    return Helm(kubeconfig=kubeconfig, kube_context=context)


def _kube(kube: KubeClient | None, kubeconfig: str | None, context: str | None) -> KubeClient:
    if kube is not None:
        return kube
    from scs_templates.kube import KubeClient

    return KubeClient(kubeconfig, context)


def _objects(manifest: str) -> list[dict[str, Any]]:
    from scs_templates.render import split_documents

    try:
        return split_documents(manifest)[1]
    except ValueError as error:
        raise ToolError(f"cannot read the release's manifest: {error}") from None


def _cluster_ref(objects: list[dict[str, Any]], target: Target) -> ObjectRef:
    """The Cluster object of a manifest, else the settings' cluster name in v1beta2."""
    from scs_templates.kube import ObjectRef
    from scs_templates.kube.client import CLUSTER_API_VERSION

    for obj in objects:
        api_version = str(obj.get("apiVersion", ""))
        if obj.get("kind") == "Cluster" and api_version.startswith("cluster.x-k8s.io/"):
            return ObjectRef.of(obj, target.namespace)
    return ObjectRef(CLUSTER_API_VERSION, "Cluster", target.namespace, target.cluster)


# --------------------------------------------------------------------------- version guard


def _parse_installed(text: Any) -> KubernetesVersion | None:
    match = _VERSION.match(str(text or "").strip())
    if not match:
        return None
    return KubernetesVersion(int(match[1]), int(match[2]), int(match[3]))


def installed_kubernetes_version(
    helm: Helm,
    target: Target,
    manifest_objects: list[dict[str, Any]] | None = None,
    values: Mapping[str, Any] | None = None,
) -> KubernetesVersion | None:
    """The Kubernetes version of the installed release, or None when not installed.

    Read from the release's values (``kubernetes.version``, what scs-templates resolved at
    install time); for a release whose values lack it, from the KubeadmControlPlane's
    ``spec.version`` in the installed manifest.
    """
    if values is None:
        values = helm.get_values(target.release, namespace=target.namespace)
    section = values.get("kubernetes")
    if isinstance(section, Mapping):
        found = _parse_installed(section.get("version"))
        if found is not None:
            return found
    objects = (
        manifest_objects
        if manifest_objects is not None
        else _objects(helm.get_manifest(target.release, namespace=target.namespace))
    )
    for obj in objects:
        if obj.get("kind") == "KubeadmControlPlane":
            spec = obj.get("spec")
            if isinstance(spec, Mapping):
                return _parse_installed(spec.get("version"))
    return None


#: The template whose clusters are Cluster API topologies (a ClusterClass owns their objects).
TOPOLOGY_TEMPLATE = "clusterclass"


def check_template_change(installed_values: Mapping[str, Any], wanted: str, release: str) -> None:
    """Refuse to switch an installed cluster between a classic template and ``clusterclass``.

    The two own the same machines through different objects (classic: the release's
    KubeadmControlPlane and MachineDeployments; topology: the ones the topology controller
    creates from the ClusterClass). An upgrade of one into the other would delete the running
    control plane and build a new one. Switching between ``simple`` and ``multi-md`` is fine.
    """
    section = installed_values.get("cluster")
    installed = section.get("template") if isinstance(section, Mapping) else None
    if not isinstance(installed, str) or not installed:
        return
    if (installed == TOPOLOGY_TEMPLATE) != (wanted == TOPOLOGY_TEMPLATE):
        raise InputError(
            f"refusing to switch {release} from template {installed!r} to {wanted!r}: a "
            "cluster cannot move between the clusterclass template and the classic ones "
            f"(spec.template); keep {installed!r} or create a new cluster"
        )


def check_class_change(
    installed_values: Mapping[str, Any], values: Mapping[str, Any], release: str, *, rebase: bool
) -> str | None:
    """Refuse to move a topology cluster onto another ClusterClass unless asked (``rebase``).

    Each scs-templates release whose chart changed ships a ClusterClass of a new name; an
    ``install`` with that release would otherwise move every topology cluster it touches onto
    the new class at once. A rebase is an operator's decision (the topology controller rolls
    whatever the new class renders differently), so it needs ``--rebase-class``. Returns
    the new class's name when this install rebases, else None.
    """

    def class_of(section: Any) -> str | None:
        if not isinstance(section, Mapping) or section.get("template") != TOPOLOGY_TEMPLATE:
            return None
        name = section.get("className")
        return name if isinstance(name, str) and name else None

    installed, wanted = class_of(installed_values.get("cluster")), class_of(values.get("cluster"))
    if installed is None or wanted is None or installed == wanted:
        return None
    if rebase:
        return wanted
    raise InputError(
        f"refusing to move {release} from ClusterClass {installed!r} to {wanted!r} (this "
        "scs-templates release ships the new class): pass --rebase-class to rebase it (the "
        "topology controller rolls what the new class changes), or install with the "
        f"scs-templates release of {installed!r}"
    )


#: Label of the ClusterClass and its templates (charts/scs-cluster-common/_topology.tpl).
CLASS_LABEL = "scs.community/cluster-class"
#: Seconds to wait for Cluster API to reconcile a new ClusterClass before a rebase.
CLASS_RECONCILE_TIMEOUT = 120.0


def _class_reconciled(obj: Mapping[str, Any] | None) -> bool:
    """Cluster API's own test (its Cluster webhook refuses a classRef to a class failing it):
    status.observedGeneration is the generation and VariablesReady is True."""
    if not obj:
        return False
    status = obj.get("status") or {}
    if status.get("observedGeneration") != (obj.get("metadata") or {}).get("generation"):
        return False
    return any(
        c.get("type") == "VariablesReady" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def prepare_class(
    client: KubeClient,
    objects: list[dict[str, Any]],
    class_name: str,
    release: str,
    namespace: str,
    *,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    timeout: float = CLASS_RECONCILE_TIMEOUT,
) -> None:
    """Create the new ClusterClass and its templates before the release moves a Cluster.

    Cluster API's Cluster webhook refuses a ``classRef`` to a class it has not reconciled
    yet, and helm would change the Cluster in the same step that creates the class (found
    with the real topology controller). So the class objects of the rendered release are
    applied first, with helm's ownership metadata so that the upgrade adopts them, and the
    install waits until Cluster API has reconciled the class.
    """
    from scs_templates.kube import ObjectRef

    chosen = [
        o for o in objects if (o["metadata"].get("labels") or {}).get(CLASS_LABEL) == class_name
    ]
    for obj in chosen:
        metadata = dict(obj["metadata"])
        metadata["annotations"] = {
            **(metadata.get("annotations") or {}),
            "meta.helm.sh/release-name": release,
            "meta.helm.sh/release-namespace": namespace,
        }
        client.server_side_apply(
            {**obj, "metadata": {**metadata, "namespace": namespace}}, "scs-templates"
        )
    ref = ObjectRef("cluster.x-k8s.io/v1beta2", "ClusterClass", namespace, class_name)
    deadline = time.monotonic() + timeout
    while not _class_reconciled(found := client.get(ref)):
        if time.monotonic() > deadline:
            state = ((found or {}).get("status") or {}).get("conditions") or "no status"
            raise ToolError(
                f"ClusterClass {namespace}/{class_name} is not reconciled by Cluster API after "
                f"{_elapsed(timeout)} ({state}); the cluster was not moved onto it"
            )
        time.sleep(poll_interval)


def check_version_change(installed: KubernetesVersion | None, wanted: KubernetesVersion) -> None:
    """Refuse to skip a minor version or to go back; InputError (exit 2) with the way out.

    Kubernetes (and kubeadm) upgrade one minor version at a time, and a control plane
    cannot be downgraded; Cluster API would start a rollout that can never succeed.
    """
    if installed is None:
        return
    if wanted < installed:
        raise InputError(
            f"refusing to downgrade Kubernetes from {installed} to {wanted}: the installed "
            "cluster cannot go back; set spec.kubernetes.version to "
            f"{installed.major}.{installed.minor}.x or newer"
        )
    if wanted.minor_key > (installed.major, installed.minor + 1):
        step = f"{installed.major}.{installed.minor + 1}.x"
        raise InputError(
            f"refusing to upgrade Kubernetes from {installed} to {wanted}: minor versions "
            f"cannot be skipped; upgrade to {step} first, then to "
            f"{wanted.major}.{wanted.minor}.x"
        )


def check_api_port_change(installed_values: Mapping[str, Any], values: Mapping[str, Any]) -> None:
    """Refuse to move the API server port of an installed cluster (InputError, exit 2).

    The port follows ``network.apiAccess`` on ``loadBalancerProvider: ovn`` (see
    :mod:`scs_templates.values.api_access`). CAPO's webhook refuses a change of
    ``OpenStackCluster.spec.apiServerPort`` and the control-plane endpoint is immutable, so
    helm would fail half-way; say so before anything is touched. Releases from before the
    field existed listen on 6443.
    """
    from scs_templates.values.api_access import DEFAULT_API_PORT

    def port(source: Mapping[str, Any]) -> int:
        network = source.get("network")
        found = network.get("apiServerPort") if isinstance(network, Mapping) else None
        return int(found) if isinstance(found, int) else DEFAULT_API_PORT

    before, after = port(installed_values), port(values)
    if before != after:
        raise InputError(
            f"spec.network.apiAccess: this change moves the API server port from {before} to "
            f"{after} (on loadBalancerProvider ovn a restricted API listens on another port "
            "than 6443), but the API endpoint of an existing cluster cannot change (CAPO "
            "refuses a new OpenStackCluster.spec.apiServerPort); for this cluster keep "
            "apiAccess.mode open, or restricted (internal/cidrs), as installed, and the "
            "loadBalancerProvider, or create a new cluster"
        )


# --------------------------------------------------------------------------- waiting


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def wait_for_cluster(
    kube: KubeClient,
    ref: ObjectRef,
    *,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    progress: Progress | None = None,
) -> ClusterState:
    """Poll the Cluster until its ``Available`` condition is True; return its state.

    ``progress`` receives one line per poll (the phase and the main conditions). On timeout
    a :class:`ToolError` names the last phase and every condition.
    """
    start = time.monotonic()
    last: ClusterState | None = None
    while True:
        last = kube.cluster(ref.namespace, ref.name, api_version=ref.api_version)
        waited = time.monotonic() - start
        if last is not None and last.available:
            if progress:
                progress(f"Cluster {ref.name}: Available after {_elapsed(waited)}")
            return last
        if progress:
            state = last.summary() if last is not None else "not found yet"
            progress(f"Cluster {ref.name}: {state} [{_elapsed(waited)}]")
        if waited >= timeout:
            detail = "the Cluster object does not exist"
            if last is not None:
                detail = last.summary()
                if last.details():
                    detail += "; conditions: " + " | ".join(last.details())
            raise ToolError(
                f"Cluster {ref.namespace}/{ref.name} is not Available after "
                f"{_elapsed(timeout)}: {detail}"
            )
        time.sleep(min(poll_interval, max(0.0, timeout - waited)) or poll_interval)


def _wait_until_gone(
    kube: KubeClient,
    ref: ObjectRef,
    *,
    timeout: float,
    poll_interval: float,
    progress: Progress | None,
) -> None:
    start = time.monotonic()
    while True:
        state = kube.cluster(ref.namespace, ref.name, api_version=ref.api_version)
        waited = time.monotonic() - start
        if state is None:
            if progress:
                progress(f"Cluster {ref.name}: deleted after {_elapsed(waited)}")
            return
        if progress:
            progress(f"Cluster {ref.name}: being deleted, {state.summary()} [{_elapsed(waited)}]")
        if waited >= timeout:
            raise ToolError(
                f"Cluster {ref.namespace}/{ref.name} still exists after {_elapsed(timeout)} "
                f"({state.summary()}); nothing else was deleted. Cluster API is still tearing "
                "the infrastructure down or is stuck: check the provider controllers' logs, "
                "then run delete again"
            )
        time.sleep(min(poll_interval, max(0.0, timeout - waited)) or poll_interval)


# --------------------------------------------------------------------------- install


@dataclass(frozen=True)
class InstallResult:
    target: Target
    release: ReleaseInfo
    kubernetes_version: str
    previous_version: str | None
    cluster: ClusterState | None = None


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
) -> InstallResult:
    """Install or upgrade the cluster's release; optionally wait until it is Available.

    Without ``secrets`` the settings' provider prepares the cluster first, as
    ``scs-templates install`` does (OpenStack: the preflight checks, a per-cluster
    application credential - reused while it works - and the server groups), touching the
    cloud as ``cloud`` allows (default :class:`~scs_templates.providers.CloudOptions`: yes,
    with the settings' cloud entry; ``touch=False`` is ``--skip-openstack``).
    ``cloud_progress`` receives what the provider did (default: ``progress``).

    A topology cluster (template ``clusterclass``) stays on its installed ClusterClass: an
    install that would move it onto another one is refused unless ``rebase_class``
    (:func:`check_class_change`).

    With encryption at rest (the default) the cluster's key Secret is created first
    (:func:`scs_templates.encryption.ensure_secret`; an existing one is kept), after the
    registry mirrors' credentials Secrets are found complete (:func:`check_registry_credentials`).

    OpenStack: ``secrets`` is the content of the cluster's credentials Secret (clouds.yaml,
    cloud.conf, cacert). It is written through the Kubernetes API (:func:`store_credentials`)
    before helm runs and is never a helm value, so no release revision holds it. Without
    ``secrets`` the Secret must already exist (created by an earlier install, or by the
    user from ``openstack appcred create --write-secret``).

    Raises InputError (exit 2) when the version guard refuses the change or when the
    credentials Secret is missing, HelmError/ToolError (exit 1) when helm or the API fails,
    and ToolError when ``wait`` times out. ``helm_timeout`` is helm's own ``--timeout``.
    """
    from scs_templates.charts import chart_for
    from scs_templates.values import build_values

    target = target_of(settings)
    if kube is None and kubeconfig is None and helm is not None:
        # the API of the management cluster that the given helm installs into
        kubeconfig, context = helm.kubeconfig, context or helm.kube_context
    if secrets is None:
        secrets = _prepare(settings, cloud, kube, kubeconfig, context, cloud_progress or progress)
    encrypt = settings.spec.security.encryption_at_rest.enabled
    credentials = any(m.credentials_secret for m in settings.spec.registry_mirrors)
    from scs_templates.catalogue import provider_of

    cloud_secret = provider_of(settings).credentials_secret_name(settings)
    # with wait, a bad kubeconfig/context is found (exit 2) before anything is installed
    needs_api = wait or encrypt or credentials or cloud_secret is not None
    client = _kube(kube, kubeconfig, context) if needs_api else None
    runner = _helm(helm, kubeconfig, context)
    wanted = resolve_version(settings.spec.kubernetes.version, settings.spec.provider).version
    values = build_values(settings)
    previous: KubernetesVersion | None = None
    new_class: str | None = None
    if runner.status(target.release, namespace=target.namespace) is not None:
        installed_values = runner.get_values(target.release, namespace=target.namespace)
        check_template_change(installed_values, settings.spec.template, target.release)
        new_class = check_class_change(
            installed_values, values, target.release, rebase=rebase_class
        )
        previous = installed_kubernetes_version(runner, target, values=installed_values)
        check_version_change(previous, wanted)
        check_api_port_change(installed_values, values)
    if cloud_secret is not None and client is not None:
        name = cloud_secret
        if secrets is not None:
            changed = store_credentials(client, settings, secrets)
            if progress:
                state_word = "written" if changed else "unchanged"
                progress(f"credentials Secret {target.namespace}/{name}: {state_word}")
        elif client.secret_data(target.namespace, name) is None:
            raise InputError(
                f"the credentials Secret {target.namespace}/{name} does not exist: let install "
                "create a per-cluster application credential (without --skip-openstack), "
                "pass --clouds-yaml, or apply the manifest of `scs-templates openstack "
                "appcred create --write-secret FILE` first"
            )
    chart = chart_for(settings.spec.provider)
    if client is not None:
        check_registry_credentials(client, settings)
    if client is not None and encrypt:
        from scs_templates import encryption

        # before the release: the control plane's bootstrap data reads the key from it
        if encryption.ensure_secret(client, settings) and progress:
            progress(f"created the encryption key Secret {encryption.secret_name(settings)}")
    if new_class is not None:
        from scs_templates.render import kube_version_of, split_documents

        manifests = runner.template(
            target.release,
            Path(chart.path),
            namespace=target.namespace,
            values=values,
            kube_version=kube_version_of(settings),
            sensitive=tuple(secrets.values()) if secrets else (),
        )
        if progress:
            progress(f"creating ClusterClass {new_class} before moving the cluster onto it")
        prepare_class(
            client or _kube(kube, kubeconfig, context),
            split_documents(manifests)[1],
            new_class,
            target.release,
            target.namespace,
            poll_interval=poll_interval,
        )
    release = runner.upgrade_install(
        target.release,
        chart.path,
        namespace=target.namespace,
        values=values,
        create_namespace=True,
        rollback_on_failure=True,
        timeout=helm_timeout,
        sensitive=tuple(secrets.values()) if secrets else (),
    )
    state = None
    if client is not None and wait:
        from scs_templates.kube import ObjectRef
        from scs_templates.kube.client import CLUSTER_API_VERSION

        cluster = values.get("cluster", {}).get("name") or target.cluster
        ref = ObjectRef(CLUSTER_API_VERSION, "Cluster", target.namespace, str(cluster))
        state = wait_for_cluster(
            client, ref, timeout=timeout, poll_interval=poll_interval, progress=progress
        )
    return InstallResult(
        target, release, str(wanted), str(previous) if previous is not None else None, state
    )


def check_registry_credentials(client: KubeClient, settings: ClusterSettings) -> None:
    """Refuse (exit 2) when a registry mirror's ``credentialsSecret`` is missing on the
    management cluster or lacks ``username``/``password``: without it the bootstrap
    controller writes no bootstrap data and the machines never start. Only key names are
    read into messages, never values."""
    namespace = settings.metadata.namespace
    for index, mirror in enumerate(settings.spec.registry_mirrors):
        name = mirror.credentials_secret
        if not name:
            continue
        where = f"spec.registryMirrors[{index}].credentialsSecret"
        data = client.secret_data(namespace, name)
        if data is None:
            raise InputError(
                f"{where}: Secret {namespace}/{name} does not exist on the management cluster; "
                "create it first (keys username and password, docs/cluster-features.md)"
            )
        missing = [key for key in ("username", "password") if not data.get(key)]
        if missing:
            raise InputError(
                f"{where}: Secret {namespace}/{name} has no {' and no '.join(missing)}"
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
    from scs_templates.catalogue import provider_of
    from scs_templates.providers import CloudOptions, Management

    result: dict[str, str] | None = provider_of(settings).prepare(
        settings,
        cloud if cloud is not None else CloudOptions(),
        Management(kubeconfig, context, kube),
        progress or _silent,
    )
    return result


def _silent(_: str) -> None:
    return None


def store_credentials(
    kube: KubeClient, settings: ClusterSettings, secrets: Mapping[str, str]
) -> bool:
    """Create or update the cluster's credentials Secret through the Kubernetes API.

    Labelled for the cluster (delete removes it after the Cluster is gone) and for
    ``clusterctl move``; annotated ``helm.sh/resource-policy: keep`` so that a release from
    before this scheme, whose manifest still holds the Secret, does not delete it when it is
    upgraded to a chart without it. True when the Secret changed. Values are never logged.
    """
    from scs_templates.providers.openstack.values import (
        credentials_secret_labels,
        credentials_secret_name,
    )

    namespace = settings.metadata.namespace
    kube.ensure_namespace(namespace)
    return kube.put_secret(
        namespace,
        credentials_secret_name(settings),
        secrets,
        labels=credentials_secret_labels(settings),
        annotations={KEEP_ANNOTATION: "keep"},
    )


# --------------------------------------------------------------------------- status


@dataclass(frozen=True)
class StatusResult:
    target: Target
    release: ReleaseInfo | None
    kubernetes_version: str | None = None
    cluster: ClusterState | None = None

    def to_dict(self) -> dict[str, Any]:
        release = None
        if self.release is not None:
            r = self.release
            release = {
                "name": r.name,
                "namespace": r.namespace,
                "revision": r.revision,
                "status": r.status,
                "chart": r.chart,
                "updated": r.updated,
            }
        return {
            "release": release,
            "kubernetesVersion": self.kubernetes_version,
            "cluster": self.cluster.to_dict() if self.cluster is not None else None,
        }


def status(
    settings: ClusterSettings,
    *,
    helm: Helm | None = None,
    kube: KubeClient | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> StatusResult:
    """The release (None if not installed) and the Cluster's phase and conditions."""
    target = target_of(settings)
    client = _kube(kube, kubeconfig, context)
    runner = _helm(helm, kubeconfig, context)
    release = runner.status(target.release, namespace=target.namespace)
    objects: list[dict[str, Any]] = []
    version = None
    if release is not None:
        objects = _objects(runner.get_manifest(target.release, namespace=target.namespace))
        found = installed_kubernetes_version(runner, target, objects)
        version = str(found) if found is not None else None
    ref = _cluster_ref(objects, target)
    cluster = None
    if client.serves(ref.api_version, "Cluster"):
        cluster = client.cluster(ref.namespace, ref.name, api_version=ref.api_version)
    return StatusResult(target, release, version, cluster)


# --------------------------------------------------------------------------- diff


@dataclass(frozen=True)
class ObjectChange:
    """One object that differs: ``added`` (only rendered), ``removed`` (only installed) or
    ``changed``; ``diff`` is a unified diff of the object's YAML (secret values hidden)."""

    kind: str
    namespace: str
    name: str
    change: Literal["added", "removed", "changed"]
    diff: str = ""
    note: str = ""

    @property
    def key(self) -> str:
        return (
            f"{self.kind}/{self.namespace}/{self.name}"
            if self.namespace
            else f"{self.kind}/{self.name}"
        )


@dataclass(frozen=True)
class DiffResult:
    target: Target
    installed: bool
    changes: list[ObjectChange] = field(default_factory=list)
    unchanged: int = 0

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    def summary(self) -> str:
        counts = {
            kind: sum(1 for c in self.changes if c.change == kind)
            for kind in ("added", "changed", "removed")
        }
        head = "" if self.installed else "not installed yet: "
        return (
            f"{head}{counts['added']} to add, {counts['changed']} to change, "
            f"{counts['removed']} to remove, {self.unchanged} unchanged"
        )


def _hide_secret(obj: dict[str, Any]) -> dict[str, Any]:
    """A Secret with every value replaced by a marker: only keys and metadata compare."""
    if obj.get("kind") != "Secret" or str(obj.get("apiVersion")) != "v1":
        return obj
    hidden = dict(obj)
    for section in ("data", "stringData"):
        content = obj.get(section)
        if isinstance(content, Mapping):
            hidden.pop(section)
            hidden.setdefault("keys", [])
            hidden["keys"] = sorted({*hidden["keys"], *(str(k) for k in content)})
    return hidden


def _yaml_text(obj: Mapping[str, Any]) -> str:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    stream = io.StringIO()
    yaml.dump(dict(obj), stream)
    return stream.getvalue()


def _index(
    objects: list[dict[str, Any]], namespace: str
) -> dict[tuple[str, str, str], dict[str, Any]]:
    from scs_templates.kube import ObjectRef

    index: dict[tuple[str, str, str], dict[str, Any]] = {}
    for obj in objects:
        ref = ObjectRef.of(obj, namespace if obj.get("kind") != "Namespace" else "")
        index[(ref.kind, ref.namespace, ref.name)] = _hide_secret(obj)
    return index


def _kept(obj: Mapping[str, Any]) -> bool:
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return isinstance(annotations, Mapping) and annotations.get(KEEP_ANNOTATION) == "keep"


def diff(
    settings: ClusterSettings,
    *,
    helm: Helm | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> DiffResult:
    """What an install of ``settings`` would change in the installed release's objects."""
    from scs_templates.render import render

    target = target_of(settings)
    runner = _helm(helm, kubeconfig, context)
    rendered = _index(list(render(settings, helm=runner).objects), target.namespace)
    installed_release = runner.status(target.release, namespace=target.namespace) is not None
    installed: dict[tuple[str, str, str], dict[str, Any]] = {}
    if installed_release:
        manifest = runner.get_manifest(target.release, namespace=target.namespace)
        installed = _index(_objects(manifest), target.namespace)
    changes: list[ObjectChange] = []
    unchanged = 0
    for key in sorted(set(rendered) | set(installed)):
        kind, namespace, name = key
        old, new = installed.get(key), rendered.get(key)
        note = "secret values are not compared" if kind == "Secret" else ""
        if old is None and new is not None:
            text = "".join(
                difflib.unified_diff(
                    [],
                    _yaml_text(new).splitlines(keepends=True),
                    "/dev/null",
                    f"rendered/{kind}/{name}",
                )
            )
            changes.append(ObjectChange(kind, namespace, name, "added", text, note))
        elif new is None and old is not None:
            if _kept(old):
                note = "kept by helm (helm.sh/resource-policy: keep) until the cluster is deleted"
            changes.append(ObjectChange(kind, namespace, name, "removed", "", note))
        elif old is not None and new is not None:
            before, after = _yaml_text(old), _yaml_text(new)
            if before == after:
                unchanged += 1
                continue
            text = "".join(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    f"installed/{kind}/{name}",
                    f"rendered/{kind}/{name}",
                )
            )
            changes.append(ObjectChange(kind, namespace, name, "changed", text, note))
    return DiffResult(target, installed_release, changes, unchanged)


# --------------------------------------------------------------------------- delete


@dataclass(frozen=True)
class DeleteResult:
    target: Target
    cluster_deleted: bool
    release_uninstalled: bool
    removed: list[str] = field(default_factory=list)


class DeleteIncomplete(ToolError):
    """The cluster and its objects are gone, but the provider could not release all of its
    cloud resources; ``result`` tells what was deleted (the message says what remains)."""

    def __init__(self, message: str, result: DeleteResult) -> None:
        super().__init__(message)
        self.result = result


def delete(
    settings: ClusterSettings,
    *,
    helm: Helm | None = None,
    kube: KubeClient | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    progress: Progress | None = None,
    cloud: CloudOptions | None = None,
    cloud_progress: Progress | None = None,
) -> DeleteResult:
    """Delete the cluster: the Cluster object first (and wait until it is gone), then the
    release, the kept templates and the credentials Secret; then the provider releases
    what it created in the cloud, as ``scs-templates delete`` does (OpenStack: leftover
    ports and networks, server groups, the per-cluster application credential), touching
    the cloud as ``cloud`` allows (default :class:`~scs_templates.providers.CloudOptions`).
    ``cloud_progress`` receives what the provider did (default: ``progress``).

    Idempotent: what is already gone is skipped. On timeout a ToolError is raised and
    NOTHING else has been deleted, so the controllers keep what they need to finish. When
    cloud resources remain, :class:`DeleteIncomplete` (a ToolError) carries the result.
    """
    from scs_templates.catalogue import provider_of
    from scs_templates.kube import ObjectRef
    from scs_templates.providers import CloudOptions

    target = target_of(settings)
    client = _kube(kube, kubeconfig, context)
    runner = _helm(helm, kubeconfig, context)
    release = runner.status(target.release, namespace=target.namespace)
    objects: list[dict[str, Any]] = []
    if release is not None:
        objects = _objects(runner.get_manifest(target.release, namespace=target.namespace))
    ref = _cluster_ref(objects, target)

    cluster_deleted = False
    if client.serves(ref.api_version, "Cluster") and client.get(ref) is not None:
        if progress:
            progress(f"deleting Cluster {ref.namespace}/{ref.name}")
        cluster_deleted = client.delete(ref)
        _wait_until_gone(
            client, ref, timeout=timeout, poll_interval=poll_interval, progress=progress
        )

    if release is not None:
        if progress:
            progress(f"uninstalling release {target.release}")
        runner.uninstall(target.release, namespace=target.namespace)

    # What helm keeps (and the credentials): the current manifest's kept objects by name, and
    # every object of the kept kinds (older template generations too) by the cluster label.
    leftovers: dict[ObjectRef, None] = {}
    for obj in objects:
        if _kept(obj):
            leftovers[ObjectRef.of(obj, target.namespace)] = None
    selector = f"{CLUSTER_LABEL}={target.cluster}"
    kept_kinds = (*KEPT_KINDS, *provider_of(settings).machine_template_kinds)
    kinds = dict.fromkeys([*kept_kinds, ("v1", "Secret")])
    for obj in objects:
        if _kept(obj):
            kinds[(str(obj.get("apiVersion")), str(obj.get("kind")))] = None
    for api_version, kind in kinds:
        if not client.serves(api_version, kind):
            continue
        for found in client.list(api_version, kind, target.namespace, label_selector=selector):
            leftovers[ObjectRef.of(found, target.namespace)] = None
    removed = []
    for leftover in sorted(leftovers):
        if client.delete(leftover):
            removed.append(str(leftover))
    result = DeleteResult(target, cluster_deleted, release is not None, removed)
    try:
        provider_of(settings).release(
            settings,
            cloud if cloud is not None else CloudOptions(),
            progress=cloud_progress or progress or _silent,
        )
    except ToolError as error:
        raise DeleteIncomplete(str(error), result) from None
    return result
