# One module: ``apply`` and its steps read top to bottom in the order they run, next to the
# comparison and the workload listing they share; split, each part would need the others.
"""``apply``: the cluster release, then the standard services of the workload cluster.

Plan (see ``docs/services.md``):

1. install/upgrade the cluster release on the management cluster
   (:func:`scs_templates._lifecycle.install`, without waiting for ``Available``: nodes only
   become Ready once the CNI below runs; it prunes the superseded machine templates an
   earlier rollout left, reported through ``progress`` and in ``ApplyResult.cluster``);
2. wait for Cluster API's Secret ``<cluster>-kubeconfig`` and write it to a private 0600
   temporary file, removed at the end (never printed);
3. read the releases deployed in the workload cluster (``helm list``), refuse a CNI switch
   unless allowed, compute the state values (:func:`services_state_values`) and compare
   each wanted release with what is deployed (chart, version, status and the values from
   ``helm get values``); then ``helmfile sync`` ONLY the releases to install, upgrade or
   remove (``--selector name=...``). A sync of an unchanged release would still create a
   new helm revision, so unchanged releases are skipped and a second ``apply`` with the
   same settings changes nothing.

Disabled services that are deployed stay (``installed: true``) and are left untouched
unless ``force_remove`` (then ``installed: false``: helmfile uninstalls them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from scs_templates import _lifecycle as lifecycle
from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.naming import kubeconfig_secret
from scs_templates._core.progress import Progress, quiet
from scs_templates._lifecycle.target import target_of
from scs_templates._services import serverside
from scs_templates._services.catalogue import CATALOGUE
from scs_templates._services.releases import (
    STATE_KEY,
    ServiceRelease,
    check_local_mirror,
    helm_releases,
    management_release_name,
    namespace_labels,
    plan_releases,
    state_of,
)
from scs_templates._tools.helm import Helm, HelmError
from scs_templates._tools.helm.runner import _release_from_row
from scs_templates._tools.kube import KubeClient
from scs_templates._tools.kube.config import check_kubeconfig
from scs_templates._tools.kube.wait import poll
from scs_templates._tools.kube.workload_kubeconfig import (
    private_kubeconfig,
    read_workload_kubeconfig,
    wait_for_workload_kubeconfig,
)
from scs_templates._tools.toolchain.resolve import (
    find_helm,
)
from scs_templates.providers.operations import operations_of
from scs_templates.providers.registry import provider_of

if TYPE_CHECKING:
    from scs_templates._lifecycle import InstallResult
    from scs_templates._services.runner import ServicesHelmfile
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.helm import ReleaseInfo
    from scs_templates.providers.interface import CloudOptions

__all__ = [
    "CNI_RELEASES",
    "CNI_SWITCH_RISK",
    "ApplyResult",
    "CniSwitchError",
    "ReleasePlan",
    "apply",
    "plan_actions",
]

Action = Literal["install", "upgrade", "unchanged", "keep", "remove"]

#: CNI release of each ``cni.type``.
CNI_RELEASES: dict[str, str] = {"cilium": "cilium", "calico": "tigera-operator"}
CNI_SWITCH_RISK = (
    "switching the CNI of a running cluster disrupts it: pods lose networking until every "
    "node has been restarted with the new CNI, and leftovers of the old CNI (interfaces, "
    "routes, BPF programs, iptables rules) stay on the nodes until then. Plan a maintenance "
    "window, then rerun with --allow-cni-switch (the old CNI release is uninstalled and the "
    "new one installed) and restart (or replace) all nodes"
)


class CniSwitchError(InputError):
    """The settings ask for another CNI than the one deployed (exit 2)."""


@dataclass(frozen=True)
class ReleasePlan:
    """What ``apply`` does (or, with ``dry_run``, would do) with one release."""

    name: str
    namespace: str
    chart: str
    version: str
    action: Action
    reason: str = ""

    @classmethod
    def of(cls, release: ServiceRelease, action: Action, reason: str = "") -> ReleasePlan:
        return cls(
            release.name, release.namespace, release.chart_name, release.version, action, reason
        )

    def line(self) -> str:
        text = f"{self.action:<9} {self.namespace}/{self.name} ({self.chart}-{self.version})"
        return f"{text}: {self.reason}" if self.reason else text


@dataclass(frozen=True)
class ApplyResult:
    """The outcome of :func:`apply`."""

    plan: tuple[ReleasePlan, ...]
    synced: tuple[str, ...]
    dry_run: bool
    cluster: InstallResult | None = None
    state_values: dict[str, Any] = field(default_factory=dict, repr=False)
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.synced)


# --------------------------------------------------------------------------- comparison


def _normalized(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def plan_actions(
    releases: list[ServiceRelease],
    deployed: Mapping[str, ReleaseInfo],
    deployed_values: Callable[[ServiceRelease], Mapping[str, Any]],
    wanted: set[str],
) -> list[ReleasePlan]:
    """Decide per release: install, upgrade, unchanged, keep (disabled, left alone), remove.

    ``deployed``: the workload cluster's catalogue releases by name. ``deployed_values``
    reads a deployed release's user-supplied values (``helm get values``); it is called
    only when chart, version and status already match.
    """
    plans: list[ReleasePlan] = []
    for release in releases:
        current = deployed.get(release.name)

        def plan(action: Action, reason: str = "", release: ServiceRelease = release) -> None:
            plans.append(ReleasePlan.of(release, action, reason))

        if not release.installed:
            plan("remove", "disabled, removal forced" if current else "")
        elif release.name not in wanted and release.info.crds_only:
            plan("keep", "CRDs: never removed by apply (every object of these kinds would go)")
        elif release.name not in wanted:
            plan("keep", "disabled in the settings but deployed: kept (see --force-remove)")
        elif current is None:
            plan("install")
        elif current.chart != release.chart_label:
            plan("upgrade", f"chart {current.chart} -> {release.chart_label}")
        elif current.status != "deployed":
            plan("upgrade", f"status {current.status}")
        elif _normalized(deployed_values(release)) != _normalized(release.values):
            plan("upgrade", "values changed")
        else:
            plan("unchanged")
    return plans


# --------------------------------------------------------------------------- workload access


def _deployed_releases(
    helm: Helm, *, timeout: float, poll_interval: float, progress: Progress | None
) -> dict[str, ReleaseInfo]:
    """Catalogue releases deployed in the workload cluster (retries while the API is down)."""

    args = ["list", "--all-namespaces", "--max", "10000", "-o", "json"]  # helm 4: every status
    if helm.kubeconfig is not None:
        args += ["--kubeconfig", helm.kubeconfig]

    def attempt() -> str | HelmError:
        try:
            return helm.run(args, what="helm list (workload cluster)").stdout
        except HelmError as error:
            return error

    def waiting(_: str | HelmError, waited: float) -> None:
        if progress is not None and waited < timeout:  # no line for the read that timed out
            progress(f"waiting for the workload cluster's API [{int(waited)}s]")

    answer, _, _ = poll(
        attempt,
        lambda value: isinstance(value, str),
        timeout=timeout,
        poll_interval=poll_interval,
        waiting=waiting,
    )
    if not isinstance(answer, str):
        raise ToolError(f"the workload cluster's API did not answer within {timeout:g} s: {answer}")
    rows = json.loads(answer or "[]") or []
    known = {(info.release, info.namespace) for info in CATALOGUE if info.target == "workload"}
    found: dict[str, ReleaseInfo] = {}
    for row in rows:
        if isinstance(row, dict):
            info = _release_from_row(row, str(row.get("namespace", "")))
            if (info.name, info.namespace) in known:
                found[info.name] = info
    return found


def _cni_switch(settings: ClusterSettings, deployed: Mapping[str, ReleaseInfo]) -> set[str]:
    wanted = CNI_RELEASES[settings.spec.services.cni.type]
    return {name for name in CNI_RELEASES.values() if name in deployed and name != wanted}


# --------------------------------------------------------------------------- apply


def apply(
    settings: ClusterSettings,
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    secrets: Mapping[str, str] | None = None,
    cloud: CloudOptions | None = None,
    cloud_progress: Progress | None = None,
    force_remove: bool = False,
    allow_cni_switch: bool = False,
    dry_run: bool = False,
    install_cluster: bool = True,
    wait: bool = True,
    kubeconfig_timeout: float = 1800.0,
    api_timeout: float = 900.0,
    poll_interval: float = 5.0,
    helmfile: ServicesHelmfile | None = None,
    kube: KubeClient | None = None,
    progress: Progress | None = None,
) -> ApplyResult:
    """Install/upgrade the cluster, then sync its standard services (see the module doc).

    ``kubeconfig``/``context``: the MANAGEMENT cluster. ``secrets``: the cluster release's
    secrets (OpenStack clouds.yaml/cacert); without them the provider prepares the cluster
    as ``cloud`` allows (``cloud``, ``cloud_progress`` as in :func:`lifecycle.install`).
    ``install_cluster=False`` skips step 1 (services only). ``dry_run`` changes nothing:
    no install, no sync; the plan is computed from what is deployed (all ``install`` when
    the workload cluster does not exist yet). ``wait`` passes ``--wait`` to helmfile.
    Raises :class:`CniSwitchError` (exit 2) on a refused CNI switch, InputError for a
    local mirror that lacks charts, ToolError/HelmError/HelmfileError (exit 1) otherwise.
    """

    say = progress or quiet
    if kube is None:  # a missing kubeconfig fails here, before anything is said or done
        check_kubeconfig(kubeconfig, context)
    options = (force_remove, allow_cni_switch, dry_run, wait, api_timeout, poll_interval)
    run = _Apply(settings, kubeconfig, context, *options, say)
    if install_cluster and not dry_run:
        run.cluster = _install_cluster(run, secrets, cloud, cloud_progress, progress)
    client = kube if kube is not None else KubeClient(kubeconfig, context)
    text = _workload_kubeconfig(run, client, kubeconfig_timeout)
    wanted = {r.name for r in plan_releases(settings, frozenset(), False)}
    if text is None:  # dry run before the cluster exists
        run.notes.append(
            "the workload cluster does not exist yet: every service would be installed"
        )
        releases = plan_releases(settings, frozenset(), force_remove)
        plans = plan_actions(releases, {}, lambda release: {}, wanted)
        state = {STATE_KEY: state_of(releases)}
        return ApplyResult(tuple(plans), (), True, run.cluster, state, tuple(run.notes))
    with private_kubeconfig(text) as path:
        return _apply_services(run, client, str(path), wanted, helmfile)


@dataclass
class _Apply:
    """One apply's choices and what its steps learned, handed from step to step."""

    settings: ClusterSettings
    """With what the cluster's release recorded, once the services are planned."""
    kubeconfig: str | None
    context: str | None
    force_remove: bool
    allow_cni_switch: bool
    dry_run: bool
    wait: bool
    api_timeout: float
    poll_interval: float
    say: Progress
    notes: list[str] = field(default_factory=list)
    cluster: InstallResult | None = None


def _install_cluster(
    run: _Apply,
    secrets: Mapping[str, str] | None,
    cloud: CloudOptions | None,
    cloud_progress: Progress | None,
    progress: Progress | None,
) -> InstallResult:
    """Step 1: the cluster release, without waiting for ``Available`` (nodes only become
    Ready once the CNI the services bring runs)."""

    run.say(f"installing/upgrading the cluster release {run.settings.metadata.name}")
    return lifecycle.install(
        run.settings,
        kubeconfig=run.kubeconfig,
        context=run.context,
        secrets=secrets,
        cloud=cloud,
        cloud_progress=cloud_progress,
        wait=False,
        progress=progress,  # what it did, the templates it pruned among it
    )


def _workload_kubeconfig(run: _Apply, client: KubeClient, timeout: float) -> str | None:
    """Step 2: the workload cluster's kubeconfig Cluster API wrote; waited for, unless a dry
    run (None: the workload cluster does not exist yet)."""

    settings, say = run.settings, run.say
    namespace = settings.metadata.namespace
    if run.dry_run:
        return read_workload_kubeconfig(client, namespace, settings.name)
    say(f"reading the workload kubeconfig Secret {namespace}/{kubeconfig_secret(settings.name)}")
    return wait_for_workload_kubeconfig(
        client,
        namespace,
        settings.name,
        timeout=timeout,
        poll_interval=run.poll_interval,
        progress=say,
    )


def _apply_services(
    run: _Apply, client: KubeClient, path: str, wanted: set[str], helmfile: ServicesHelmfile | None
) -> ApplyResult:
    """Step 3, while the workload kubeconfig is at ``path``: plan every release against what is
    deployed, then apply and sync only the changed ones."""
    from scs_templates._services.runner import ServicesHelmfile  # deferred: ruamel

    helm_tool = find_helm() if helmfile is None else helmfile.helm
    helm = Helm(helm_tool, kubeconfig=path)
    deployed = _deployed_releases(
        helm,
        timeout=0.0 if run.dry_run else run.api_timeout,
        poll_interval=run.poll_interval,
        progress=run.say,
    )
    old_cni = _check_cni_switch(run, deployed)
    management_helm = Helm(helm_tool, kubeconfig=run.kubeconfig, kube_context=run.context)
    run.settings = settings = _with_recorded(run.settings, management_helm)
    deployed.update(_management_releases(management_helm, settings))
    workload = KubeClient(path, check_api=False)  # Cluster API wrote it
    applied = serverside.present(workload)
    releases = plan_releases(settings, frozenset(deployed) | applied, run.force_remove, old_cni)
    state = {STATE_KEY: state_of(releases)}

    def values_of(release: ServiceRelease) -> Mapping[str, Any]:
        on = helm if release.target == "workload" else management_helm
        return on.get_values(release.name, namespace=release.namespace)

    runner = helmfile if helmfile is not None else ServicesHelmfile()
    side_plans, side_objects = _server_side_plans(settings, releases, wanted, workload, runner)
    plans = plan_actions(helm_releases(releases), deployed, values_of, wanted) + side_plans
    order = [r.name for r in releases]
    plans.sort(key=lambda p: order.index(p.name))
    selected = tuple(p.name for p in plans if p.action in ("install", "upgrade", "remove"))
    if run.dry_run or not selected:
        return ApplyResult(tuple(plans), (), run.dry_run, run.cluster, state, tuple(run.notes))
    check_local_mirror(
        [r for r in releases if r.name in selected], settings.spec.services.chart_mirror
    )
    for release in releases:  # before the sync: Cilium finds the Gateway API CRDs at start
        if release.name in selected and release.name in side_objects:
            objects = side_objects[release.name]
            run.say(f"server-side apply: {release.name} ({len(objects)} objects)")
            serverside.apply_objects(workload, release, objects)
    _sync(run, runner, releases, selected, path, (client, workload))
    return ApplyResult(tuple(plans), selected, False, run.cluster, state, tuple(run.notes))


def _check_cni_switch(run: _Apply, deployed: Mapping[str, ReleaseInfo]) -> set[str]:
    """The deployed CNI releases the settings switch away from; refused (exit 2) unless
    allowed, since a switch disrupts the running cluster (:data:`CNI_SWITCH_RISK`)."""
    old_cni = _cni_switch(run.settings, deployed)
    if old_cni and not run.allow_cni_switch:
        raise CniSwitchError(
            f"the workload cluster runs {', '.join(sorted(old_cni))} but the settings ask "
            f"for cni.type {run.settings.spec.services.cni.type!r}; refused: {CNI_SWITCH_RISK}"
        )
    if old_cni:
        run.notes.append(
            f"CNI switch allowed: {', '.join(sorted(old_cni))} is removed; restart all nodes now"
        )
    return old_cni


def _sync(
    run: _Apply,
    runner: ServicesHelmfile,
    releases: list[ServiceRelease],
    selected: tuple[str, ...],
    path: str,
    clients: tuple[KubeClient, KubeClient],
) -> None:
    """``helmfile sync`` of the selected releases: the workload cluster's (its namespaces
    labelled and the provider's preparation first), then the management cluster's.
    ``clients``: the management and the workload cluster."""
    client, workload = clients
    settings, say = run.settings, run.say
    on_workload = [r for r in helm_releases(releases) if r.target == "workload"]
    on_management = [r for r in releases if r.target == "management"]
    workload_selected = [r.name for r in on_workload if r.name in selected]
    management_selected = [r.name for r in on_management if r.name in selected]
    if workload_selected:
        for name, labels in namespace_labels(settings, releases).items():
            workload.put_namespace_labels(name, labels)
        note = operations_of(provider_of(settings)).prepare_workload(settings, client, workload)
        if note:
            run.notes.append(note)
        runner.kubeconfig = path
        runner.kube_context = None
        say("helmfile sync: " + ", ".join(workload_selected))
        runner.sync({STATE_KEY: state_of(on_workload)}, releases=workload_selected, wait=run.wait)
    if management_selected:
        # next to the Cluster, on the management cluster (cluster-autoscaler)
        runner.kubeconfig = run.kubeconfig or _default_kubeconfig()
        runner.kube_context = run.context
        say("helmfile sync (management cluster): " + ", ".join(management_selected))
        runner.sync(
            {STATE_KEY: state_of(on_management)}, releases=management_selected, wait=run.wait
        )


def _server_side_plans(
    settings: ClusterSettings,
    releases: list[ServiceRelease],
    wanted: set[str],
    client: KubeClient,
    runner: ServicesHelmfile,
) -> tuple[list[ReleasePlan], dict[str, list[dict[str, Any]]]]:
    """The plans of the ``server_side`` releases (services/serverside.py): a wanted one is
    rendered and compared with its live objects; a disabled one is kept (CRDs). Returns the
    plans and the rendered objects of the wanted ones by release name."""
    plans: list[ReleasePlan] = []
    objects: dict[str, list[dict[str, Any]]] = {}
    for release in releases:
        if not release.info.server_side:
            continue
        if release.name not in wanted:
            plans += plan_actions([release], {}, lambda release: {}, wanted)
            continue
        check_local_mirror([release], settings.spec.services.chart_mirror)
        rendered = serverside.rendered_objects(settings, release, runner)
        action, reason = serverside.compare(client, release, rendered)
        plans.append(ReleasePlan.of(release, action, reason))
        objects[release.name] = rendered
    return plans, objects


def _default_kubeconfig() -> str:
    """The kubeconfig helm would use without --kubeconfig (the services runner never
    inherits KUBECONFIG, so the management cluster is named explicitly)."""
    return os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or str(
        Path.home() / ".kube" / "config"
    )


def _with_recorded(settings: ClusterSettings, management: Helm) -> ClusterSettings:
    """``settings`` with what the cluster's release on the management cluster recorded and
    the services must keep (OpenStack: the cloud cluster name of OCCM and Cinder CSI)."""

    target = target_of(settings)
    if management.status(target.release, namespace=target.namespace) is None:
        return settings
    installed = management.get_values(target.release, namespace=target.namespace)
    return provider_of(settings).with_recorded(settings, installed)


def _management_releases(helm: Helm, settings: ClusterSettings) -> dict[str, ReleaseInfo]:
    """This cluster's management-side service releases (cluster-autoscaler) that exist."""

    names = {
        management_release_name(settings, info) for info in CATALOGUE if info.target == "management"
    }
    namespace = settings.metadata.namespace
    args = ["list", "-n", namespace, "--max", "10000", "-o", "json"]  # helm 4: every status
    if helm.kubeconfig is not None:
        args += ["--kubeconfig", helm.kubeconfig]
    if helm.kube_context is not None:
        args += ["--kube-context", helm.kube_context]
    rows = json.loads(helm.run(args, what="helm list (management cluster)").stdout or "[]")
    found: dict[str, ReleaseInfo] = {}
    for row in rows or []:
        if isinstance(row, dict):
            info = _release_from_row(row, namespace)
            if info.name in names:
                found[info.name] = info
    return found
