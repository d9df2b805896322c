"""The Flux objects of one cluster: its chart's HelmRelease, one HelmRelease per service and,
for a topology cluster, the HelmRelease of its ClusterClass (shared by the namespace's
clusters of that class; the cluster's release ``dependsOn`` it).

Pure functions of the settings and the options: the cluster release carries the same values
``scs-templates render`` uses (credentials only by Secret name, never inline); each service
release carries the values ``scs-templates apply`` would give helmfile and reaches the
workload cluster through Cluster API's kubeconfig Secret (``spec.kubeConfig.secretRef``),
so helm-controller on the management cluster installs it remotely and keeps its release
history in the workload cluster. ``dependsOn`` mirrors helmfile's ``needs``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import InputError
from scs_templates._core.labels import (
    CLASS_LABEL,
    CLUSTER_LABEL,
    COMPONENT_LABEL,
    MANAGED_BY_LABEL,
    MANAGER,
    SERVICE_LABEL,
)
from scs_templates._core.naming import kubeconfig_secret, per_cluster
from scs_templates._gitops import crds
from scs_templates._render.charts import provider_chart_version
from scs_templates._render.encryption import secret_name
from scs_templates._render.values import build_values
from scs_templates._render.values.class_release import class_release_of, cluster_release_values
from scs_templates.providers.registry import (
    provider_of,
)

if TYPE_CHECKING:
    from scs_templates._gitops.crds import RepoLocation, ServerSideRenderer
    from scs_templates._gitops.sources import ChartSourceSpec
    from scs_templates._render.values.class_release import ClassRelease
    from scs_templates._services.releases import Repository, ServiceRelease
    from scs_templates._settings.model import ClusterSettings

__all__ = [
    "HELM_API",
    "ClusterObjects",
    "GitopsOptions",
    "cluster_objects",
]

HELM_API = "helm.toolkit.fluxcd.io/v2"
SOURCE_API = "source.toolkit.fluxcd.io/v1"
ADDONS_API = "addons.cluster.x-k8s.io/v1beta2"
#: Flux's kustomize-controller never deletes an object with this annotation when it
#: disappears from the repository: a cluster is deleted on purpose (``scs-templates delete``
#: or removing the annotation first), never because a file went missing.
PRUNE_ANNOTATION = "kustomize.toolkit.fluxcd.io/prune"
#: How soon helm-controller retries a failed cluster upgrade (never rolled back).
UPGRADE_RETRY_INTERVAL = "1m"
#: Key of Cluster API's kubeconfig Secret ``<cluster>-kubeconfig``.
KUBECONFIG_KEY = "value"
#: Key of the workload ``cloud-config`` Secret manifest in the ClusterResourceSet's Secret.
CLOUD_CONFIG_RESOURCE_KEY = "cloud-config.yaml"


@dataclass(frozen=True)
class GitopsOptions:
    """What the user decides about the repository: chart source and reconcile interval."""

    chart_source: ChartSourceSpec
    interval: str = "10m"
    services: bool = True
    #: Move topology clusters onto the ClusterClass of this scs-templates release
    #: (``--rebase-class``, as ``install``); without it such a run is refused.
    rebase_class: bool = False
    #: Where the charts rendered here (server-side releases) are read (``--chart-mirror``:
    #: ``file:///DIR`` keeps gitops offline); None: the release's own source.
    render_mirror: str | None = None


@dataclass(frozen=True)
class ClusterObjects:
    """One cluster's objects: file stem -> object, plus the shared sources it needs and
    the Secrets the operator creates on the management cluster (names only, never content;
    ``<cluster>-kubeconfig`` is Cluster API's own and not listed)."""

    namespace: str
    name: str
    objects: dict[str, dict[str, Any]]
    sources: dict[str, dict[str, Any]]
    required_secrets: tuple[str, ...]
    #: CRD folders (``DIR/crds/FOLDER``: stem -> object) the cluster's Kustomizations apply.
    crds: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    #: Objects applied only after the CRDs (``DIR/staged/NS/NAME``: stem -> object).
    staged: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: A topology cluster's ClusterClass release, shared by the clusters of the namespace
    #: that use the class (``DIR/clusters/NS/_classes``: stem -> HelmRelease).
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)


def _labels(settings: ClusterSettings, component: str) -> dict[str, str]:
    return {
        MANAGED_BY_LABEL: MANAGER,
        COMPONENT_LABEL: component,
        CLUSTER_LABEL: settings.name,
    }


def _class_release(
    settings: ClusterSettings, options: GitopsOptions, chart: str, shared: ClassRelease
) -> dict[str, Any]:
    """The HelmRelease of a ClusterClass: the same for every cluster of the namespace using
    the class (the values are the class's name and namespace, the chart the provider's of
    the version the class is named after)."""
    return {
        "apiVersion": HELM_API,
        "kind": "HelmRelease",
        "metadata": {
            "name": shared.release,
            "namespace": shared.namespace,
            "labels": {
                MANAGED_BY_LABEL: MANAGER,
                COMPONENT_LABEL: "cluster-class",
                CLASS_LABEL: shared.class_name,
            },
            "annotations": {PRUNE_ANNOTATION: "disabled"},
        },
        "spec": {
            "interval": options.interval,
            "releaseName": shared.release,
            **options.chart_source.release_chart(
                chart, _chart_version(settings), shared.namespace, options.interval
            ),
            "install": {"remediation": {"retries": 3}},
            "upgrade": {"remediation": {"retries": 3}},
            "values": shared.values,
        },
    }


def _cluster_release(
    settings: ClusterSettings,
    options: GitopsOptions,
    chart: str,
    values: dict[str, Any],
    shared: ClassRelease | None,
) -> dict[str, Any]:
    namespace = settings.metadata.namespace
    # a topology cluster's ClusterClass has its own release, installed first
    depends = {"dependsOn": [{"name": shared.release}]} if shared is not None else {}
    return {
        "apiVersion": HELM_API,
        "kind": "HelmRelease",
        "metadata": {
            "name": settings.metadata.name,
            "namespace": namespace,
            "labels": _labels(settings, "cluster"),
            "annotations": {PRUNE_ANNOTATION: "disabled"},
        },
        "spec": {
            "interval": options.interval,
            "releaseName": settings.metadata.name,
            **options.chart_source.release_chart(
                chart, _chart_version(settings), namespace, options.interval
            ),
            **depends,
            "install": {"remediation": {"retries": 3}},
            # A failed cluster upgrade is never rolled back (Cluster API may already be
            # replacing machines) but retried as it is: an upgrade that moves a topology
            # cluster onto a new ClusterClass creates the class and is refused by the
            # Cluster webhook until Cluster API has reconciled it; the retry then succeeds
            # (tests/plane/test_plane_flux.py, docs/gitops.md).
            "upgrade": {
                "strategy": {"name": "RetryOnFailure", "retryInterval": UPGRADE_RETRY_INTERVAL}
            },
            "values": values,
        },
    }


def _repository_source(repository: Repository, namespace: str, interval: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"interval": interval, "url": repository.url}
    if repository.oci:
        spec = {"interval": interval, "type": "oci", "url": f"oci://{repository.url}"}
    return {
        "apiVersion": SOURCE_API,
        "kind": "HelmRepository",
        "metadata": {"name": repository.name, "namespace": namespace},
        "spec": spec,
    }


def _service_name(settings: ClusterSettings, release: ServiceRelease) -> str:
    if release.target == "management":  # already <cluster>-<release>
        return release.name
    return per_cluster(settings.metadata.name, release.name)


def _service_release(
    settings: ClusterSettings,
    options: GitopsOptions,
    release: ServiceRelease,
    by_key: dict[str, ServiceRelease],
) -> dict[str, Any]:
    namespace = settings.metadata.namespace
    depends = [{"name": settings.metadata.name}] + [
        {"name": _service_name(settings, by_key[key])}
        for key in release.needs
        if not by_key[key].info.server_side  # its Kustomization stages this release
    ]
    # Workload services go through the cluster's kubeconfig Secret; a management-side
    # service (the cluster-autoscaler) is installed where Flux runs, next to the Cluster.
    target: dict[str, Any] = {}
    if release.target == "workload":
        target["kubeConfig"] = _kubeconfig(settings)
    return {
        "apiVersion": HELM_API,
        "kind": "HelmRelease",
        "metadata": {
            "name": _service_name(settings, release),
            "namespace": namespace,
            "labels": {**_labels(settings, "services"), SERVICE_LABEL: release.name},
        },
        "spec": {
            "interval": options.interval,
            "releaseName": release.name,
            "targetNamespace": release.namespace,
            "storageNamespace": release.namespace,
            **target,
            **_service_chart(release, options, namespace),
            "dependsOn": depends,
            "install": {"createNamespace": True, "remediation": {"retries": 3}},
            "upgrade": {"remediation": {"retries": 3}},
            "timeout": "10m",
            "values": release.values,
        },
    }


def _service_chart(
    release: ServiceRelease, options: GitopsOptions, namespace: str
) -> dict[str, Any]:
    """The HelmRelease ``spec`` part naming the chart: a chart of ours (shipped in the
    package, which Flux cannot read) from the cluster chart's own source (``--chart-source``:
    the git checkout's ``charts/`` or the OCI registry it is pushed to), else the release's
    helm repository."""
    if release.info.packaged:
        return options.chart_source.release_chart(
            release.chart_name, release.version, namespace, options.interval
        )
    assert release.source is not None and release.source.repository is not None
    return {
        "chart": {
            "spec": {
                "chart": release.chart_name,
                "version": release.version,
                "interval": options.interval,
                "sourceRef": {
                    "kind": "HelmRepository",
                    "name": release.source.repository.name,
                    "namespace": namespace,
                },
            }
        }
    }


def _kubeconfig(settings: ClusterSettings) -> dict[str, Any]:
    """``spec.kubeConfig`` of an object that Flux applies into the workload cluster."""
    return {"secretRef": {"name": kubeconfig_secret(settings.name), "key": KUBECONFIG_KEY}}


def _cloud_config_resource_set(settings: ClusterSettings) -> tuple[dict[str, Any], str]:
    """A ClusterResourceSet that puts ``kube-system/cloud-config`` into the workload cluster.

    ``apply`` copies it API to API; under GitOps Cluster API does it from a Secret of type
    ``addons.cluster.x-k8s.io/resource-set`` that the operator creates (its content is a
    credential, so it is never written to the repository).
    """
    secret = per_cluster(settings.name, "workload-cloud-config")
    name = per_cluster(settings.name, "cloud-config")
    return (
        {
            "apiVersion": ADDONS_API,
            "kind": "ClusterResourceSet",
            "metadata": {
                "name": name,
                "namespace": settings.metadata.namespace,
                "labels": _labels(settings, "services"),
            },
            "spec": {
                "clusterSelector": {"matchLabels": {CLUSTER_LABEL: settings.name}},
                "strategy": "Reconcile",
                "resources": [{"kind": "Secret", "name": secret}],
            },
        },
        secret,
    )


def cluster_objects(
    settings: ClusterSettings,
    options: GitopsOptions,
    *,
    render: ServerSideRenderer | None = None,
    repo: RepoLocation | None = None,
) -> ClusterObjects:
    """Every Flux object of one cluster (same settings and options, same objects).

    A release that ``apply`` applies server-side (the Gateway API CRDs) becomes a CRD folder
    and a Kustomization (:mod:`scs_templates._gitops.crds`); ``render`` renders its objects
    (default: the pinned helmfile, as ``services render``), ``repo`` is where Flux finds DIR.
    """

    chart = provider_of(settings).chart
    values = build_values(settings)
    namespace = settings.metadata.namespace
    required = _required_secrets(settings)
    shared = class_release_of(values, settings.metadata.name)
    classes = {}
    if shared is not None:
        classes[f"helmrelease-{shared.release}"] = _class_release(settings, options, chart, shared)
    objects: dict[str, dict[str, Any]] = {
        # the values never hold a credential: the chart references the Secret by name
        f"helmrelease-{settings.metadata.name}": _cluster_release(
            settings, options, chart, cluster_release_values(values), shared
        )
    }
    source = options.chart_source.source_object(
        chart, _chart_version(settings), namespace, options.interval
    )
    sources = {f"{source['kind'].lower()}-{source['metadata']['name']}": source}
    found = _Collected(objects, sources, required)
    if options.services:
        _add_services(settings, options, found, render, repo)
    return ClusterObjects(
        namespace=namespace,
        name=settings.metadata.name,
        objects=found.objects,
        sources=found.sources,
        required_secrets=tuple(found.required),
        crds=found.crds,
        staged=found.staged,
        classes=classes,
    )


@dataclass
class _Collected:
    """The objects of one cluster as :func:`cluster_objects` collects them (see
    :class:`ClusterObjects`)."""

    objects: dict[str, dict[str, Any]]
    sources: dict[str, dict[str, Any]]
    required: list[str]
    crds: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    staged: dict[str, dict[str, Any]] = field(default_factory=dict)


def _required_secrets(settings: ClusterSettings) -> list[str]:
    """The Secrets the operator creates on the management cluster for the cluster release
    (names and what goes in them, never content)."""

    required: list[str] = []
    required.extend(provider_of(settings).gitops_secrets(settings))
    if settings.spec.security.encryption_at_rest.enabled:
        required.append(
            f"{secret_name(settings)} (encryption-at-rest key: `scs-templates encryption-key "
            "create`)"
        )
    from scs_templates._settings.node_secrets import node_secrets  # deferred: pydantic

    for secret in node_secrets(settings):
        required.append(f"{secret.name} ({secret.what}: keys {' and '.join(secret.keys)})")
    return required


def _add_services(
    settings: ClusterSettings,
    options: GitopsOptions,
    found: _Collected,
    render: ServerSideRenderer | None,
    repo: RepoLocation | None,
) -> None:
    """Add the service releases (those that need server-side CRDs staged after them), their
    sources and the ClusterResourceSet of the workload cloud-config Secret."""
    from scs_templates._services.releases import service_releases  # deferred: pydantic

    releases = service_releases(settings)
    by_key = {release.key: release for release in releases}
    location = repo or crds.RepoLocation()
    staged_after: set[str] = set()
    for release in releases:
        source_obj = _service_source(settings, options, release)  # refuses a local mirror
        if release.info.server_side:
            _add_server_side(settings, options, release, found, render, location)
            continue
        found.sources[f"{source_obj['kind'].lower()}-{source_obj['metadata']['name']}"] = source_obj
        obj = _service_release(settings, options, release, by_key)
        after = [
            _service_name(settings, by_key[key])
            for key in release.needs
            if by_key[key].info.server_side
        ]
        if after:
            found.staged[f"helmrelease-{obj['metadata']['name']}"] = obj
            staged_after.update(after)
        else:
            found.objects[f"helmrelease-{obj['metadata']['name']}"] = obj
    if found.staged:
        stage = crds.staged_kustomization(
            settings,
            sorted(staged_after),
            location,
            options.interval,
            _labels(settings, "services"),
        )
        found.objects[f"kustomization-{stage['metadata']['name']}"] = stage
    if any(release.info.workload_credentials for release in releases):
        resource_set, secret = _cloud_config_resource_set(settings)
        found.objects[f"clusterresourceset-{resource_set['metadata']['name']}"] = resource_set
        found.required.append(
            f"{secret} (type addons.cluster.x-k8s.io/resource-set, key "
            f"{CLOUD_CONFIG_RESOURCE_KEY}: the workload kube-system/cloud-config Secret)"
        )


def _service_source(
    settings: ClusterSettings, options: GitopsOptions, release: ServiceRelease
) -> dict[str, Any]:
    """The source object of a service release's chart: the cluster chart's source for a
    chart of ours, else the release's HelmRepository (a local mirror: refused)."""
    namespace = settings.metadata.namespace
    if release.info.packaged:
        ours: dict[str, Any] = options.chart_source.source_object(
            release.chart_name, release.version, namespace, options.interval
        )
        return ours
    if release.source is None or release.source.repository is None:
        raise InputError(
            "spec.services.chartMirror: Flux cannot read a local (file://) chart "
            "mirror; use an OCI registry or a helm repository mirror there (the "
            "charts gitops renders itself take --chart-mirror file:///DIR)"
        )
    return _repository_source(release.source.repository, namespace, options.interval)


def _add_server_side(
    settings: ClusterSettings,
    options: GitopsOptions,
    release: ServiceRelease,
    found: _Collected,
    render: ServerSideRenderer | None,
    location: RepoLocation,
) -> None:
    """Add a release ``apply`` applies server-side: its rendered objects as a CRD folder and
    the Kustomization that applies it."""
    # deferred: pydantic
    from scs_templates._services.releases import check_local_mirror, from_mirror

    local = from_mirror(release, options.render_mirror)
    check_local_mirror([local], options.render_mirror)
    rendered = (render or crds.render_server_side)(settings, local)
    folder, files = crds.crd_folder(release, rendered)
    found.crds[folder] = files
    kustomization = crds.crd_kustomization(
        settings,
        release,
        folder,
        location,
        options.interval,
        _labels(settings, "services"),
        _kubeconfig(settings),
    )
    found.objects[f"kustomization-{kustomization['metadata']['name']}"] = kustomization


def _chart_version(settings: ClusterSettings) -> str:
    """The version of the settings' provider chart, wherever the provider keeps its source."""

    return provider_chart_version(settings.resolved_provider())
