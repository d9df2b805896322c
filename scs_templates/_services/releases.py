"""Settings -> the service releases and the helmfile state values that describe them.

:func:`service_releases` lists the releases the settings ask for, each with its chart
source, version and final values. :func:`services_state_values` adds what is currently
installed in the workload cluster (kept unless removal is forced) and produces the state
values ``helmfile.d/10-services.yaml.gotmpl`` reads. The template copies these values; it
decides nothing itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from scs_templates._core import naming
from scs_templates._core.errors import InputError
from scs_templates._core.version_numbers import exact
from scs_templates._render.charts import charts_dir
from scs_templates._services.catalogue import CATALOGUE, ServiceInfo, default_version, service_info
from scs_templates._services.values import deep_merge
from scs_templates._settings.keys import name_for
from scs_templates._settings.model import ClusterSettings, Service
from scs_templates._versions.kubernetes import resolve_version
from scs_templates.providers.registry import provider_of

__all__ = [
    "MIRROR_REPOSITORY",
    "STATE_KEY",
    "ChartSource",
    "Repository",
    "ServiceRelease",
    "autoscaler_enabled",
    "chart_source",
    "check_local_mirror",
    "deployed_name",
    "helm_releases",
    "local_mirror_dir",
    "management_release_name",
    "namespace_labels",
    "normalize_version",
    "release_needs",
    "service_releases",
    "services_state_values",
    "state_of",
]

#: Top-level key of the state values (the cluster release's helmfile uses other keys).
STATE_KEY = "services"
#: helmfile repository name of a chart mirror (OCI registry or helm repository).
MIRROR_REPOSITORY = "scs-chart-mirror"
#: Per-release helm timeout in seconds (a CNI or CSI can take minutes to become ready).
RELEASE_TIMEOUT_SECONDS = 600
#: helm refuses release names longer than this.
HELM_RELEASE_NAME_LIMIT = 53

SourceKind = Literal["upstream", "oci-mirror", "repo-mirror", "local-mirror", "package"]


@dataclass(frozen=True)
class Repository:
    """A helmfile ``repositories:`` entry."""

    name: str
    url: str
    oci: bool = False

    def to_state(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "url": self.url}
        if self.oci:
            entry["oci"] = True
        return entry


@dataclass(frozen=True)
class ChartSource:
    """Where a release's chart comes from: the ``chart:`` reference and its repository."""

    kind: SourceKind
    chart: str
    repository: Repository | None


@dataclass(frozen=True)
class ServiceRelease:
    """One standard-service release as helmfile will handle it.

    ``chart`` is the helmfile chart reference (``repo/name``, or the path of a packaged
    chart in a local mirror); ``chart_name`` the chart's own name; ``installed`` is
    helmfile's flag (False = uninstall it); ``needs`` the releases (``namespace/name``)
    that must be synced first.
    """

    name: str
    namespace: str
    chart: str
    chart_name: str
    version: str
    values: dict[str, Any] = field(repr=False)
    installed: bool = True
    needs: tuple[str, ...] = ()
    source: ChartSource | None = None
    setting: str | None = None
    catalogue: str = ""
    target: str = "workload"

    @property
    def info(self) -> ServiceInfo:
        """The catalogue row this release comes from."""
        return service_info(self.catalogue or self.name)

    @property
    def key(self) -> str:
        """``namespace/name``, as helmfile's ``needs:`` refers to a release."""
        return f"{self.namespace}/{self.name}"

    @property
    def chart_label(self) -> str:
        """``NAME-VERSION`` as ``helm list`` shows it in its ``chart`` column."""
        return f"{self.chart_name}-{self.version}"

    def to_state(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "chart": self.chart,
            "version": self.version,
            "installed": self.installed,
            "needs": list(self.needs),
            "timeout": RELEASE_TIMEOUT_SECONDS,
            "labels": {"component": "services", "service": self.setting or self.name},
            "values": self.values,
        }


# --------------------------------------------------------------------------- settings access


def _section(settings: ClusterSettings, camel: str) -> Any:
    return getattr(settings.spec.services, name_for(camel))


def _enabled(settings: ClusterSettings, info: ServiceInfo) -> bool:
    spec = settings.spec
    if info.providers and spec.provider not in info.providers:
        return False
    if info.cni is not None and spec.services.cni.type != info.cni:
        return False
    if info.since is not None and not _reaches(_version(settings, info), info.since):
        return False
    switch = info.setting or info.companion_of
    if switch is None:
        return info.enabled_by is None or info.enabled_by(settings)
    if switch == "cni":
        return True
    if switch == "clusterAutoscaler":
        return autoscaler_enabled(settings)
    section = _section(settings, switch)
    return bool(isinstance(section, Service) and section.enabled)


def autoscaler_enabled(settings: ClusterSettings) -> bool:
    """``clusterAutoscaler.enabled``, or (left empty) whether any worker group autoscales."""
    enabled = settings.spec.services.cluster_autoscaler.enabled
    if enabled is not None:
        return enabled
    return any(group.autoscaling is not None for group in settings.spec.workers)


def normalize_version(version: str, default: str) -> str:
    """Give a user's version the ``v`` prefix convention of the chart's own versions.

    cert-manager and tigera-operator publish ``v1.18.2``-style chart versions; OCI tags and
    local ``NAME-VERSION.tgz`` files must match exactly, so ``1.18.2`` becomes ``v1.18.2``
    for those charts and ``v3.13.0`` becomes ``3.13.0`` for the others.
    """
    bare = version[1:] if version.startswith("v") else version
    return f"v{bare}" if default.startswith("v") else bare


def _reaches(version: str, since: str) -> bool:
    """``version`` is ``since`` or newer (an unreadable version counts as newer: a user's
    pre-release of a chart that needs the companion)."""
    have, need = exact(version), exact(since)
    return have is None or need is None or have >= need


def _version(settings: ClusterSettings, info: ServiceInfo) -> str:
    if info.version_of is not None:  # one upstream release, two charts: the same version
        return _version(settings, service_info(info.version_of))
    spec = settings.spec
    minor = resolve_version(
        spec.kubernetes.version, provider_of(settings).kind_node_images
    ).version.minor_key
    default = default_version(info, minor)
    if info.setting is None:
        return default
    override = getattr(_section(settings, info.setting), "version", None)
    return normalize_version(override, default) if override else default


def _user_values(settings: ClusterSettings, info: ServiceInfo) -> Mapping[str, Any]:
    if info.setting is None:
        return {}
    values = getattr(_section(settings, info.setting), "values", None)
    return values if isinstance(values, Mapping) else {}


# --------------------------------------------------------------------------- chart sources


def _repo_name(url: str) -> str:
    parsed = urlparse(url)
    return re.sub(r"[^a-z0-9]+", "-", f"{parsed.netloc}{parsed.path}".lower()).strip("-")


def local_mirror_dir(mirror: str) -> Path | None:
    """The directory of a local chart mirror (``file:///DIR`` or ``/DIR``), else None."""
    if mirror.startswith("file://"):
        return Path(unquote(urlparse(mirror).path))
    if mirror.startswith("/"):
        return Path(mirror)
    return None


def check_local_mirror(releases: Iterable[ServiceRelease], mirror: str | None) -> None:
    """A local mirror must hold every chart that will be installed or upgraded (exit 2
    naming the missing ``NAME-VERSION.tgz`` files, before helmfile runs at all)."""
    if not mirror or local_mirror_dir(mirror) is None:
        return
    missing = [
        r.chart
        for r in releases
        if r.installed and not r.info.packaged and not Path(r.chart).is_file()
    ]
    if missing:
        raise InputError(
            "spec.services.chartMirror: missing packaged charts: " + ", ".join(missing)
        )


def chart_source(info: ServiceInfo, version: str, mirror: str | None) -> ChartSource:
    """The chart reference of ``info`` at ``version``, from upstream or from ``mirror``; a
    chart of ours is the package's own folder (``charts/<chart>``: no mirror holds it)."""
    if info.packaged:
        return ChartSource("package", str(charts_dir() / info.chart), None)
    if mirror:
        directory = local_mirror_dir(mirror)
        if directory is not None:
            path = directory / f"{info.chart}-{version}.tgz"
            return ChartSource("local-mirror", str(path), None)
        if mirror.startswith("oci://"):
            url = mirror.removeprefix("oci://").rstrip("/")
            repo = Repository(MIRROR_REPOSITORY, url, oci=True)
            return ChartSource("oci-mirror", f"{MIRROR_REPOSITORY}/{info.chart}", repo)
        repo = Repository(MIRROR_REPOSITORY, mirror.rstrip("/"))
        return ChartSource("repo-mirror", f"{MIRROR_REPOSITORY}/{info.chart}", repo)
    if info.repository_is_oci:
        url = info.repository.removeprefix("oci://").rstrip("/")
        repo = Repository(_repo_name(info.repository), url, oci=True)
    else:
        repo = Repository(_repo_name(info.repository), info.repository.rstrip("/"))
    return ChartSource("upstream", f"{repo.name}/{info.chart}", repo)


def from_mirror(release: ServiceRelease, mirror: str | None) -> ServiceRelease:
    """``release`` with its chart read from ``mirror`` (unchanged without one): what
    ``gitops --chart-mirror`` renders itself, while Flux keeps the settings' source."""
    if not mirror:
        return release
    source = chart_source(release.info, release.version, mirror)
    return replace(release, chart=source.chart, source=source)


# --------------------------------------------------------------------------- releases


def _release(settings: ClusterSettings, info: ServiceInfo, *, installed: bool) -> ServiceRelease:
    version = _version(settings, info)
    source = chart_source(info, version, settings.spec.services.chart_mirror)
    values = deep_merge(info.values(settings), _user_values(settings, info))
    name, namespace = deployed_name(settings, info), info.namespace
    if info.target == "management":  # next to the Cluster object, one per cluster
        namespace = settings.metadata.namespace
    return ServiceRelease(
        name=name,
        namespace=namespace,
        chart=source.chart,
        chart_name=info.chart,
        version=version,
        values=values,
        installed=installed,
        source=source,
        setting=info.setting or info.companion_of,
        catalogue=info.release,
        target=info.target,
    )


def management_release_name(settings: ClusterSettings, info: ServiceInfo) -> str:
    """``<cluster>-<release>`` (fitted to 53, helm's limit): unique per cluster in a
    management namespace that holds several clusters."""
    return naming.per_cluster(settings.name, info.release, HELM_RELEASE_NAME_LIMIT)


def release_needs(
    name: str,
    present: Mapping[str, ServiceRelease],
    node_initializers: tuple[str, ...] = (),
) -> tuple[str, ...]:
    """What ``name`` waits for, among the ``present`` releases that stay installed.

    Its catalogue row says it (:attr:`ServiceInfo.needs`): Gateway API CRDs before Cilium,
    the snapshot controller before Cinder CSI, kubelet-csr-approver before metrics-server;
    and the CNI before everything else but ``before_cni`` releases, then the provider's
    ``node_initializers`` (OpenStack: the cloud controller manager, nodes stay
    uninitialized without it) before the rest.
    """
    info = service_info(present[name].catalogue)
    cnis = [n for n, r in present.items() if service_info(r.catalogue).setting == "cni"]
    if info.before_cni or info.setting == "cni":
        wanted = list(info.needs)
    elif name in node_initializers:
        wanted = [*cnis, *info.needs]
    else:
        wanted = [*cnis, *node_initializers, *info.needs]
    return tuple(
        present[n].key for n in wanted if n in present and n != name and present[n].installed
    )


def _with_needs(
    releases: Iterable[ServiceRelease], settings: ClusterSettings
) -> list[ServiceRelease]:
    ordered = list(releases)
    present = {release.name: release for release in ordered}
    initializers = provider_of(settings).node_initializers
    return [
        ServiceRelease(
            name=r.name,
            namespace=r.namespace,
            chart=r.chart,
            chart_name=r.chart_name,
            version=r.version,
            values=r.values,
            installed=r.installed,
            needs=(
                release_needs(r.name, present, initializers)
                if r.installed and r.target == "workload"
                else ()
            ),
            source=r.source,
            setting=r.setting,
            catalogue=r.catalogue,
            target=r.target,
        )
        for r in ordered
    ]


def service_releases(settings: ClusterSettings) -> list[ServiceRelease]:
    """The releases the settings ask for (all ``installed=True``), in install order."""
    chosen = [
        _release(settings, info, installed=True) for info in CATALOGUE if _enabled(settings, info)
    ]
    return _with_needs(chosen, settings)


def services_state_values(
    settings: ClusterSettings,
    *,
    installed: set[str] | frozenset[str] = frozenset(),
    force_remove: bool = False,
    remove: set[str] | frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The helmfile state values for the services of ``settings``.

    ``installed``: names of the catalogue releases currently deployed in the workload
    cluster. A deployed release the settings no longer ask for stays (``installed: true``,
    left untouched by ``apply``) unless ``force_remove`` is set, or it is named in
    ``remove`` (the old CNI of an allowed CNI switch): then it is ``installed: false`` and
    helmfile uninstalls it. A release of CRDs (``crds_only``) is never uninstalled: that
    would delete every object of its kinds (every Gateway and Route). Releases that are
    neither wanted nor deployed are left out.
    """
    return {STATE_KEY: state_of(plan_releases(settings, installed, force_remove, remove))}


def plan_releases(
    settings: ClusterSettings,
    installed: set[str] | frozenset[str],
    force_remove: bool,
    remove: set[str] | frozenset[str] = frozenset(),
) -> list[ServiceRelease]:
    """The releases of the state values (see :func:`services_state_values`), with needs."""
    wanted = {info.release for info in CATALOGUE if _enabled(settings, info)}
    chosen: list[ServiceRelease] = []
    for info in CATALOGUE:
        if info.release in wanted:
            chosen.append(_release(settings, info, installed=True))
        elif deployed_name(settings, info) in installed:
            keep = info.crds_only or (not force_remove and info.release not in remove)
            chosen.append(_release(settings, info, installed=keep))
    return _with_needs(chosen, settings)


def deployed_name(settings: ClusterSettings, info: ServiceInfo) -> str:
    """The helm release name of ``info`` for this cluster (``<cluster>-<release>`` on the
    management cluster, the catalogue name in the workload cluster)."""
    if info.target == "management":
        return management_release_name(settings, info)
    return info.release


def helm_releases(releases: Iterable[ServiceRelease]) -> list[ServiceRelease]:
    """``releases`` without the ``server_side`` ones (applied by ``apply`` itself, not by
    helmfile), and without the needs that point at them (helmfile refuses needs it does
    not know; ``apply`` applies them before the sync)."""
    ordered = list(releases)
    kept = [r for r in ordered if not r.info.server_side]
    gone = {r.key for r in ordered if r.info.server_side}
    return [
        r
        if not gone & set(r.needs)
        else replace(r, needs=tuple(n for n in r.needs if n not in gone))
        for r in kept
    ]


def state_of(releases: list[ServiceRelease]) -> dict[str, Any]:
    """The ``services`` state values of ``releases``: repositories (deduplicated) and releases."""
    repositories: dict[str, Repository] = {}
    for release in releases:
        if release.source is not None and release.source.repository is not None:
            repositories.setdefault(release.source.repository.name, release.source.repository)
    return {
        "repositories": [repo.to_state() for repo in repositories.values()],
        "releases": [release.to_state() for release in releases],
    }


#: Pod Security levels from the least to the most strict.
_POD_SECURITY_ORDER = ("privileged", "baseline", "restricted")
POD_SECURITY_ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"


def namespace_labels(
    settings: ClusterSettings, releases: Iterable[ServiceRelease]
) -> dict[str, dict[str, str]]:
    """The Pod Security labels ``apply`` puts on the namespaces of ``releases``.

    A release whose Pods need a less strict level than the cluster's default
    (``security.podSecurity.enforce``) gets its namespace labelled
    ``pod-security.kubernetes.io/enforce: <level>``, as upstream's own manifests do (Calico's
    ``tigera-operator`` namespace is ``privileged`` there); exempt namespaces need no label.
    Labelling rather than exempting keeps the admission configuration (and so the control
    plane machines) unchanged when a service or the CNI changes, and keeps ``warn``/``audit``
    working in those namespaces. Sorted by namespace.
    """
    pss = settings.spec.security.pod_security
    default = _POD_SECURITY_ORDER.index(pss.enforce)
    needed: dict[str, int] = {}
    for release in releases:
        level = release.info.pod_security
        if (
            release.target != "workload"
            or not release.installed
            or level is None
            or release.namespace in pss.exempt_namespaces
        ):
            continue
        rank = _POD_SECURITY_ORDER.index(level)
        if rank < default:
            needed[release.namespace] = min(rank, needed.get(release.namespace, rank))
    return {
        namespace: {POD_SECURITY_ENFORCE_LABEL: _POD_SECURITY_ORDER[rank]}
        for namespace, rank in sorted(needed.items())
    }
