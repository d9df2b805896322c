# One module: the rotation is one ordered procedure (the Order below) whose safety is in that
# order; its steps and the consumer restarts they end with read top to bottom as they run.
"""``openstack appcred rotate``: a new per-cluster credential, switched in, the old one deleted.

Order, so that no consumer is ever left with a deleted credential:

1. A new RESTRICTED application credential per kind (Cluster API's, and the in-cluster one
   when ``separateWorkload``), the next generation of the cluster's credentials
   (:func:`~.appcred.generation_name`: Keystone keeps names unique per
   user and never renames, so old and new live side by side under numbered names).
2. The cluster's credentials Secret on the management cluster is rewritten through the
   Kubernetes API (as ``install`` writes it: never a helm value, never in release history).
3. The consumers are made to use it:

   - CAPO reads the Secret from the API server at every reconcile (Secrets are not cached by
     its manager: ``DisableFor: Secret`` in CAPO v0.14.7's main.go) and keys its client cache
     by the credential content (pkg/scope/provider.go), so its next reconcile uses the new
     credential without a restart. The cluster's OpenStackCluster and OpenStackMachines are
     annotated (:data:`ROTATED_ANNOTATION`) so that the next reconcile happens now, and the
     OpenStackCluster's Ready condition is set False as a fence
     (:mod:`~scs_templates.providers.openstack.capo_fence`): CAPO sets it True again only at the end
     of a successful reconcile that read the new Secret, which is the evidence waited for.
   - OCCM and Cinder CSI read ``cloud.conf`` once, at start (cloud-provider-openstack issues
     #2284 and #2629: a changed Secret is not reloaded). The workload cluster's
     ``kube-system/cloud-config`` is rewritten, every Deployment, DaemonSet and StatefulSet in
     kube-system that mounts it is restarted (its pod template annotated with the new
     credential's ID) and the rollouts are waited for.

4. Only when CAPO has reconciled with the new credential and the restarts have finished
   are the old credentials deleted (with the parent credential: a restricted one cannot
   delete credentials). A CAPO that does not reconcile in time (not running, the cluster
   paused, the new credential refused) keeps the old credential: exit 1, run again.

A run that stops half way is finished by running it again: older generations next to the
one the Secret holds mean the switch happened, so no further credential is made, the
consumers are restarted (a no-op when they already run with it) and the old ones deleted;
a newer generation that the Secret does not hold was made by a run that never stored it
(its secret is lost): it was never used and is deleted first. ``dry_run`` changes nothing and
reports every step. Secrets are never printed, logged or put into an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.labels import CREDENTIAL_ID_ANNOTATION
from scs_templates._core.progress import Progress, quiet
from scs_templates._tools.kube import KubeClient, ObjectRef
from scs_templates._tools.kube.wait import elapsed, poll
from scs_templates._tools.kube.workload_kubeconfig import private_kubeconfig
from scs_templates.providers.credentials import store_credentials
from scs_templates.providers.openstack import capo_fence
from scs_templates.providers.openstack.appcred import (
    CLUSTER_SUFFIX,
    WORKLOAD_SUFFIX,
    KnownCredential,
    cluster_credentials_in_keystone,
    create_app_credential,
    delete_app_credential,
    generation_name,
)
from scs_templates.providers.openstack.capo_fence import CLUSTER_NAME_LABEL, INFRA_API_VERSION
from scs_templates.providers.openstack.cloud_config import CLOUD_CONFIG_SECRET
from scs_templates.providers.openstack.connection import cloud_access
from scs_templates.providers.openstack.credential_records import (
    AppCredential,
    ClusterCredentials,
    EnsuredCredential,
)
from scs_templates.providers.openstack.credentials_secret import (
    StoredCredential,
    credentials_secret_data,
    credentials_secret_name,
    parse_credentials_secret,
)
from scs_templates.providers.openstack.provision import manages_credentials
from scs_templates.providers.openstack.section import section
from scs_templates.providers.openstack.values import CLOUD_CONF_KEY, CLOUDS_YAML_KEY
from scs_templates.providers.openstack.workload import sync_cloud_config

if TYPE_CHECKING:
    from openstack.connection import Connection

    from scs_templates._settings.model import ClusterSettings

#: The annotation that carries the credential ID now in use (written once in labels.py).
ROTATED_ANNOTATION = CREDENTIAL_ID_ANNOTATION
CONSUMER_KINDS = ("Deployment", "DaemonSet", "StatefulSet")
DEFAULT_TIMEOUT = 600.0
DEFAULT_POLL_INTERVAL = 5.0


@dataclass
class RotationReport:
    """What a rotation did (dry run: would do). Names and IDs only, never a secret."""

    dry_run: bool
    created: list[KnownCredential] = field(default_factory=list)
    deleted: list[KnownCredential] = field(default_factory=list)
    secret: str = ""
    reconcile: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    """The OpenStackClusters CAPO reconciled with the new credential (dry run: would wait)."""
    workload_secret: str = ""
    restarted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        def verb(present: str, past: str) -> str:
            return f"would {present}" if self.dry_run else past

        def credential(c: KnownCredential) -> str:
            return f"application credential {c.name}" + (f" (ID {c.id})" if c.id else "")

        out = [f"{verb('create', 'created')} {credential(c)}" for c in self.created]
        if self.secret:
            out.append(f"{verb('write', 'wrote')} the credentials Secret {self.secret}")
        out += [f"{verb('ask', 'asked')} CAPO to reconcile {r}" for r in self.reconcile]
        if self.workload_secret:
            out.append(f"{verb('write', 'wrote')} the workload cluster's {self.workload_secret}")
        out += [f"{verb('restart', 'restarted')} {r}" for r in self.restarted]
        out += [
            f"would wait for CAPO to reconcile {r} with the new credential"
            if self.dry_run
            else f"CAPO reconciled {r} with the new credential"
            for r in self.confirmed
        ]
        out += [f"{verb('delete', 'deleted')} {credential(c)}" for c in self.deleted]
        out += [f"note: {note}" for note in self.notes]
        return out


@dataclass(frozen=True)
class _KindPlan:
    suffix: str
    current: KnownCredential | None
    stored: StoredCredential | None
    orphans: list[KnownCredential]
    old: list[KnownCredential]
    new_generation: int | None
    """None: finish an interrupted rotation (the Secret already holds the newest)."""


def _plan_kind(
    members: list[KnownCredential], stored: StoredCredential | None, suffix: str
) -> _KindPlan:
    current = next((m for m in members if stored is not None and m.id == stored.id), None)
    if current is None:
        # the Secret's credential is gone from Keystone (or was never one of ours): a new one,
        # and every generation there is goes after the switch
        top = max((m.generation for m in members), default=0)
        return _KindPlan(suffix, None, stored, [], list(members), top + 1)
    orphans = [m for m in members if m.generation > current.generation]
    older = [m for m in members if m.generation < current.generation]
    if older:
        return _KindPlan(suffix, current, stored, orphans, older, None)
    return _KindPlan(suffix, current, stored, orphans, [current], current.generation + 1)


def rotate_credentials(
    conn: Connection,
    settings: ClusterSettings,
    kube: KubeClient,
    *,
    workload: KubeClient | None = None,
    dry_run: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    progress: Progress = quiet,
) -> RotationReport:
    """Rotate the cluster's per-cluster application credential(s) (see the module doc).

    ``kube`` is the management cluster; ``workload`` the workload cluster (default: opened
    from the ``<cluster>-kubeconfig`` Secret when OCCM or Cinder CSI is enabled). InputError
    (exit 2) when scs-templates does not own the credential or the Secret is missing;
    ToolError (exit 1) when OpenStack or an API fails or a restart does not finish in
    ``timeout`` seconds; then the old credential is kept and a re-run finishes the rotation.
    """
    rotation = _Rotation(conn, settings, kube, dry_run, timeout, poll_interval, progress)
    stored = _stored_credentials(settings, kube)
    held = frozenset(credential.id for credential in stored.values())
    family = cluster_credentials_in_keystone(conn, settings, held)
    kinds = [(CLUSTER_SUFFIX, CLOUDS_YAML_KEY)]
    if section(settings).application_credential.separate_workload:
        kinds.append((WORKLOAD_SUFFIX, CLOUD_CONF_KEY))
    plans = [_plan_kind(family[suffix], stored.get(key), suffix) for suffix, key in kinds]
    # 0. orphans of a run that never stored them (their secrets are lost): never used
    rotation.delete_orphans(plans)
    # 1. the new credentials
    chosen = rotation.create_credentials(plans)
    # 2. the Secret
    rotation.write_secret(chosen)
    # 3. the consumers
    fenced = rotation.switch_consumers(chosen, workload)
    # CAPO's evidence: a successful reconcile that read the new Secret
    rotation.confirm_capo(fenced)
    # 4. the old credentials
    rotation.delete_old(plans)
    return rotation.report


def _stored_credentials(settings: ClusterSettings, kube: KubeClient) -> dict[str, StoredCredential]:
    """The credentials the cluster's Secret holds, by key; refused (exit 2) when scs-templates
    does not manage them, the Secret is missing, or it holds no application credential."""

    namespace = settings.metadata.namespace
    where = f"{namespace}/{credentials_secret_name(settings)}"
    if not manages_credentials(settings):
        raise InputError(
            "spec.openstack: the cluster's credential is not one scs-templates manages "
            "(applicationCredential.perCluster is false or credentialsSecret is set): "
            "rotate it yourself and update the Secret"
        )
    data = kube.secret_data(namespace, credentials_secret_name(settings))
    if data is None:
        raise InputError(
            f"the credentials Secret {where} does not exist on the management cluster: "
            "nothing to rotate (install the cluster first)"
        )
    stored = parse_credentials_secret(data, section(settings).cloud)
    if CLOUDS_YAML_KEY not in stored:
        raise InputError(
            f"the credentials Secret {where} holds no application credential in "
            f"{CLOUDS_YAML_KEY} (written from --clouds-yaml?): nothing scs-templates can rotate"
        )
    return stored


@dataclass
class _Rotation:
    """One rotation: where it works, how long it waits, what it says; its steps in order."""

    conn: Connection
    settings: ClusterSettings
    kube: KubeClient
    dry_run: bool
    timeout: float
    poll_interval: float
    progress: Progress
    report: RotationReport = field(init=False)

    def __post_init__(self) -> None:
        self.report = RotationReport(self.dry_run)

    @property
    def where(self) -> str:
        """The credentials Secret, ``namespace/name``."""
        return f"{self.settings.metadata.namespace}/{credentials_secret_name(self.settings)}"

    def delete_orphans(self, plans: list[_KindPlan]) -> None:
        """Step 0: newer generations a run made but never stored (their secrets are lost)."""
        dry_run = self.dry_run
        for plan in plans:
            for orphan in plan.orphans:
                self.report.notes.append(
                    f"{'would delete' if dry_run else 'deleted'} {orphan.name} (ID {orphan.id}): "
                    "made by an earlier rotation that did not store it, never used"
                )
                if not dry_run:
                    delete_app_credential(self.conn, orphan.name)
        if all(plan.new_generation is None for plan in plans):
            self.report.notes.append(
                "an earlier rotation switched the Secret but did not finish: finishing it"
            )

    def create_credentials(self, plans: list[_KindPlan]) -> dict[str, AppCredential]:
        """Step 1: the next generation of each kind (the Secret's one when a run that stopped
        half way already switched it), by suffix."""
        settings = self.settings
        purpose = f"cluster {settings.metadata.namespace}/{settings.metadata.name}"
        chosen: dict[str, AppCredential] = {}
        for plan in plans:
            if plan.new_generation is None:
                assert plan.current is not None and plan.stored is not None
                chosen[plan.suffix] = AppCredential(
                    plan.current.id, plan.current.name, plan.stored.secret, "", True
                )
                continue
            name = generation_name(settings, plan.suffix, plan.new_generation)
            if self.dry_run:
                self.report.created.append(KnownCredential(plan.new_generation, name, ""))
                continue
            what = "Cluster API" if plan.suffix == CLUSTER_SUFFIX else "in-cluster OCCM/CSI"
            credential = create_app_credential(
                self.conn,
                name,
                description=f"scs-templates: {what} credential of {purpose} (restricted)",
            )
            chosen[plan.suffix] = credential
            self.report.created.append(KnownCredential(plan.new_generation, name, credential.id))
            self.progress(f"created application credential {name} (ID {credential.id})")
        return chosen

    def write_secret(self, chosen: dict[str, AppCredential]) -> None:
        """Step 2: the credentials Secret on the management cluster, as install writes it."""
        self.report.secret = self.where
        if self.dry_run:
            return
        access = cloud_access(self.conn)

        def ensured(suffix: str) -> EnsuredCredential | None:
            credential = chosen.get(suffix)
            return EnsuredCredential(credential, True, "rotated") if credential else None

        cluster = ensured(CLUSTER_SUFFIX)
        assert cluster is not None
        credentials = ClusterCredentials(
            section(self.settings).cloud, access, cluster, ensured(WORKLOAD_SUFFIX)
        )
        content = credentials_secret_data(credentials, self.settings)

        revealed = {k: v.reveal() for k, v in sorted(content.items())}
        store_credentials(self.kube, self.settings, revealed)
        self.progress(f"wrote the credentials Secret {self.where}")

    def switch_consumers(
        self, chosen: dict[str, AppCredential], workload: KubeClient | None
    ) -> list[ObjectRef]:
        """Step 3: CAPO asked to reconcile (and fenced: the objects returned), OCCM and
        Cinder CSI restarted with the new cloud.conf."""
        kube, settings, dry_run = self.kube, self.settings, self.dry_run
        cluster_id = chosen[CLUSTER_SUFFIX].id if CLUSTER_SUFFIX in chosen else ""
        self.report.reconcile = _request_reconcile(kube, settings, cluster_id, dry_run=dry_run)
        fenced = capo_fence.cluster_objects(kube, settings)
        if not dry_run:
            fenced = [ref for ref in fenced if capo_fence.set_fence(kube, ref, cluster_id)]
        services = settings.spec.services
        if services.cloud_controller_manager.enabled or services.cinder_csi.enabled:
            workload_id = chosen.get(WORKLOAD_SUFFIX) or chosen.get(CLUSTER_SUFFIX)
            with _workload_client(kube, settings, workload, dry_run=dry_run) as client:
                self.restart_workload(client, workload_id.id if workload_id else "")
        return fenced

    def restart_workload(self, client: KubeClient | None, credential_id: str) -> None:
        """The workload cluster's cloud-config rewritten and what mounts it restarted; one that
        cannot be reached keeps the old credential (exit 1)."""
        settings = self.settings
        if client is None:
            if not self.dry_run:
                raise ToolError(
                    f"the workload cluster {settings.name} cannot be reached (no usable "
                    f"Secret {settings.metadata.namespace}/{settings.name}-kubeconfig): OCCM "
                    "and Cinder CSI still use the old credential, so it is kept; run the "
                    "rotation again when the cluster is reachable"
                )
            self.report.notes.append(
                "the workload cluster cannot be reached: its cloud-config and restarts "
                "are not listed"
            )
            return

        self.report.workload_secret = f"kube-system/{CLOUD_CONFIG_SECRET}"
        self.report.restarted = _restart_consumers(
            client,
            settings,
            self.kube,
            credential_id,
            dry_run=self.dry_run,
            timeout=self.timeout,
            poll_interval=self.poll_interval,
            progress=self.progress,
        )

    def confirm_capo(self, fenced: list[ObjectRef]) -> None:
        """CAPO's evidence: a successful reconcile that read the new Secret lifts the fence."""
        if not self.dry_run and fenced:
            capo_fence.wait_for_capo(
                self.kube,
                fenced,
                timeout=self.timeout,
                poll_interval=self.poll_interval,
                progress=self.progress,
            )
            for ref in fenced:
                self.progress(f"CAPO reconciled {ref} with the new credential")
        self.report.confirmed = [str(ref) for ref in fenced]

    def delete_old(self, plans: list[_KindPlan]) -> None:
        """Step 4, only after the switch: the old generations."""
        for plan in plans:
            for old in plan.old:
                if not self.dry_run:
                    delete_app_credential(self.conn, old.name)
                    self.progress(f"deleted application credential {old.name} (ID {old.id})")
                self.report.deleted.append(old)


def _request_reconcile(
    kube: KubeClient, settings: ClusterSettings, credential_id: str, *, dry_run: bool
) -> list[str]:
    """Annotate the cluster's OpenStackCluster and OpenStackMachines: an update makes CAPO
    reconcile them now, and each reconcile reads the Secret afresh."""

    namespace = settings.metadata.namespace
    selector = f"{CLUSTER_NAME_LABEL}={settings.name}"
    touched = []
    for kind in ("OpenStackCluster", "OpenStackMachine"):
        if not kube.serves(INFRA_API_VERSION, kind):
            continue
        for obj in kube.list(INFRA_API_VERSION, kind, namespace, label_selector=selector):
            name = str(obj["metadata"]["name"])
            touched.append(f"{kind} {namespace}/{name}")
            if not dry_run:
                kube.merge_patch(
                    ObjectRef(INFRA_API_VERSION, kind, namespace, name),
                    {"metadata": {"annotations": {ROTATED_ANNOTATION: credential_id}}},
                )
    return sorted(touched)


@contextmanager
def _workload_client(
    kube: KubeClient, settings: ClusterSettings, given: KubeClient | None, *, dry_run: bool
) -> Iterator[KubeClient | None]:
    if given is not None:
        yield given
        return

    text = kube.cluster_kubeconfig(settings.metadata.namespace, settings.name)
    if text is None:
        yield None
        return
    with private_kubeconfig(text) as path:
        try:
            opened = KubeClient(str(path))
        except InputError:
            yield None
            return
        with opened:
            yield opened


def _mounts_cloud_config(obj: Mapping[str, Any], secret: str) -> bool:
    pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    for volume in pod.get("volumes") or []:
        if (volume.get("secret") or {}).get("secretName") == secret:
            return True
        for source in (volume.get("projected") or {}).get("sources") or []:
            if (source.get("secret") or {}).get("name") == secret:
                return True
    return False


def rollout_done(obj: Mapping[str, Any]) -> bool:
    """The rollout of a Deployment, DaemonSet or StatefulSet has finished (as ``kubectl
    rollout status`` decides): the controller saw the latest spec, every replica runs the
    latest template and is available (no old one left)."""
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        return False
    kind = obj.get("kind")
    if kind == "DaemonSet":
        desired = int(status.get("desiredNumberScheduled") or 0)
        return (
            int(status.get("updatedNumberScheduled") or 0) == desired
            and int(status.get("numberAvailable") or 0) == desired
        )
    wanted = int(spec.get("replicas", 1) or 0)
    updated = int(status.get("updatedReplicas") or 0)
    if kind == "StatefulSet":
        return updated == wanted and int(status.get("readyReplicas") or 0) == wanted
    return (
        updated == wanted
        and int(status.get("replicas") or 0) == wanted
        and int(status.get("availableReplicas") or 0) == wanted
    )


def _restart_consumers(
    client: KubeClient,
    settings: ClusterSettings,
    management: KubeClient,
    credential_id: str,
    *,
    dry_run: bool,
    timeout: float,
    poll_interval: float,
    progress: Progress,
) -> list[str]:
    """Rewrite ``kube-system/cloud-config``, restart what mounts it, wait for the rollouts."""

    consumers = [
        ObjectRef("apps/v1", kind, "kube-system", str(obj["metadata"]["name"]))
        for kind in CONSUMER_KINDS
        for obj in client.list("apps/v1", kind, "kube-system")
        if _mounts_cloud_config(obj, CLOUD_CONFIG_SECRET)
    ]
    described = [f"{ref.kind} {ref.namespace}/{ref.name}" for ref in consumers]
    if dry_run:
        return described
    note = sync_cloud_config(settings, management, client)
    if note:
        raise ToolError(f"{note}; the old credential is kept")
    progress(f"wrote the workload cluster's kube-system/{CLOUD_CONFIG_SECRET}")
    patch = {
        "spec": {"template": {"metadata": {"annotations": {ROTATED_ANNOTATION: credential_id}}}}
    }
    for ref, text in zip(consumers, described, strict=True):
        client.merge_patch(ref, patch)
        progress(f"restarting {text}")
    _wait_for_rollouts(client, consumers, described, timeout, poll_interval, progress)
    return described


def _wait_for_rollouts(
    client: KubeClient,
    consumers: list[ObjectRef],
    described: list[str],
    timeout: float,
    poll_interval: float,
    progress: Progress,
) -> None:
    """Until every restarted consumer's rollout has finished; on timeout the old credential
    is kept (exit 1): they may still use it."""

    def pending() -> list[str]:
        left = []
        for ref, text in zip(consumers, described, strict=True):
            found = client.get(ref)
            if found is not None and not rollout_done(found):
                left.append(text)
        return left

    def waiting(left: list[str], waited: float) -> None:
        progress(f"waiting for the restart of {', '.join(left)} [{elapsed(waited)}]")

    left, _, done = poll(
        pending,
        lambda left: not left,
        timeout=timeout,
        poll_interval=poll_interval,
        waiting=waiting,
    )
    if not done:
        raise ToolError(
            f"the restart of {', '.join(left)} did not finish within {int(timeout)} s: they "
            "may still use the old credential, so it is kept; run the rotation again once "
            "they run"
        )


__all__ = ["ROTATED_ANNOTATION", "RotationReport", "rollout_done", "rotate_credentials"]
