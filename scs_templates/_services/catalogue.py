"""The catalogue of standard cluster services: charts, repositories and default versions.

One row per helm release that ``scs-templates apply`` can install into a WORKLOAD cluster.
The default chart version comes from the versions table (:mod:`scs_templates._versions`): the
newest real release that supports the cluster's Kubernetes minor, per minor
(:func:`default_version`); :attr:`ServiceInfo.version` is the default for new clusters (the
table's default minor). ``docs/services.md`` has the same table; ``tests/render/test_services.py``
keeps both in step. A settings file may pin another version per service
(``spec.services.<service>.version``).

Which setting switches a release on is recorded in :attr:`ServiceInfo.setting`; several
releases can belong to one setting (Cinder CSI brings the snapshot controller). A release
with neither a setting nor a companion is always there: kubelet-csr-approver, because every
kubelet requests a serving certificate (``serverTLSBootstrap``) and without an approver none
is ever issued, which breaks ``kubectl logs/exec/port-forward``, not only metrics-server.

:attr:`ServiceInfo.pod_security` is the least strict Pod Security level the release's Pods
need (measured on the real charts' Pods; ``None``: they pass ``restricted``); ``apply``
labels the namespace with it when the cluster's default is stricter (see
:func:`scs_templates._services.releases.namespace_labels`).
"""

from __future__ import annotations

from collections.abc import Callable

from scs_templates._core.records import record
from scs_templates._render.charts import chart_version
from scs_templates._services import values as builders
from scs_templates._versions import table
from scs_templates.providers.openstack import metadata_policy

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from typing import Any

    from scs_templates._settings.model import ClusterSettings

__all__ = [
    "CATALOGUE",
    "ServiceInfo",
    "default_version",
    "service_catalogue",
    "service_info",
]


def _default(release: str) -> str:
    versions = table()
    return versions.service_version(release, versions.default_minor.minor)


#: Calico's CRD chart and the operator chart are one Calico release: same version.
CALICO_CRDS_SINCE = "v3.32.0"

#: The ``repository`` of a chart of our own, shipped inside the package (``charts/NAME``):
#: ``apply`` and ``services render`` take it from there, ``gitops`` from the cluster
#: chart's source (``--chart-source``), never from a chart mirror.
PACKAGED = "scs-templates"


@record
class ServiceInfo:
    """One release of a standard service.

    ``release``: helm release name (unique, also the catalogue key). ``namespace``: where it
    goes in the workload cluster. ``chart``: the chart's real name (also the file name stem
    ``CHART-VERSION.tgz`` in a local mirror, and the last path element in an OCI mirror).
    ``repository``: the upstream chart repository (``https://`` helm repository or
    ``oci://`` registry path). ``version``: the default chart version for new clusters
    (:func:`default_version` gives it per Kubernetes minor). ``setting``:
    the ``spec.services`` key (camelCase, as in the settings file) that enables it and whose
    ``version``/``values`` apply to it; ``None`` for companion releases that follow another
    service's switch. ``providers``: where it applies (empty = every provider). ``cni``: the
    CNI it belongs to or needs (``cilium``/``calico``), if any. ``pod_security``: the Pod
    Security level its Pods need (None = ``restricted`` is fine). ``crds_only``: a release
    of CRDs that ``--force-remove`` never uninstalls (that would delete every object of
    those kinds in the cluster). ``server_side``: a ``crds_only`` release that is NOT a
    helm release: ``apply`` renders the chart (helm template, same values) and applies its
    objects server-side (field manager :attr:`field_manager`), because helm cannot store
    the release (the Gateway API CRD chart makes a release record larger than the 1 MiB a
    Secret may hold). ``target``: ``workload`` (installed into the workload
    cluster) or ``management`` (installed next to the Cluster on the management cluster,
    in the cluster's namespace, as ``<cluster>-<release>``; ``namespace`` is empty then).
    ``enabled_by``: for a release without a ``spec.services`` switch, the predicate of the
    settings that switches it (a provider's own setting). A ``repository`` of
    :data:`PACKAGED` is a chart of ours (:attr:`packaged`).
    """

    release: str
    namespace: str
    chart: str
    repository: str
    version: str
    setting: str | None
    values: Callable[[ClusterSettings], dict[str, Any]]
    description: str
    providers: tuple[str, ...] = ()
    cni: str | None = None
    companion_of: str | None = None
    pod_security: str | None = None
    crds_only: bool = False
    server_side: bool = False
    target: str = "workload"
    needs: tuple[str, ...] = ()
    before_cni: bool = False
    version_of: str | None = None
    since: str | None = None
    enabled_by: Callable[[ClusterSettings], bool] | None = None

    @property
    def packaged(self) -> bool:
        """A chart of our own, shipped inside the package (``charts/<chart>``)."""
        return self.repository == PACKAGED

    @property
    def field_manager(self) -> str:
        """The server-side apply field manager of a ``server_side`` release's objects (how
        ``apply`` finds them again: no helm release records them)."""
        return f"scs-templates/{self.release}"

    @property
    def repository_is_oci(self) -> bool:
        return self.repository.startswith("oci://")


CATALOGUE: tuple[ServiceInfo, ...] = (
    ServiceInfo(
        release="gateway-api-crds",
        namespace="kube-system",
        chart="gateway-crds-helm",
        repository="oci://docker.io/envoyproxy",
        version=_default("gateway-api-crds"),
        setting="gatewayAPI",
        values=builders.gateway_api_crds_values,
        description="Gateway API CRDs (experimental channel: Cilium needs TLSRoute), applied "
        "server-side before Cilium so its operator finds them at start (not a helm release: "
        "too large for helm's release Secret).",
        cni="cilium",
        crds_only=True,
        server_side=True,
        before_cni=True,
    ),
    ServiceInfo(
        release="cilium",
        namespace="kube-system",
        chart="cilium",
        repository="https://helm.cilium.io",
        version=_default("cilium"),
        setting="cni",
        values=builders.cilium_values,
        description="Cilium CNI (default); Gateway API implementation when gatewayAPI is on.",
        cni="cilium",
        pod_security="privileged",
        needs=("gateway-api-crds",),
    ),
    ServiceInfo(
        release="calico-crds",
        namespace="kube-system",  # cluster-scoped CRDs only; a namespace that always exists
        chart="crd.projectcalico.org.v1",
        repository="https://docs.tigera.io/calico/charts",
        version=_default("tigera-operator"),
        setting=None,
        values=builders.calico_crds_values,
        description="Calico's CRDs (crd.projectcalico.org, operator.tigera.io), from Calico "
        "v3.32 a chart of their own, applied server-side before the operator as its README "
        "says (some exceed client-side apply's size limit); the operator chart's version.",
        cni="calico",
        companion_of="cni",
        crds_only=True,
        server_side=True,
        before_cni=True,
        version_of="tigera-operator",
        since=CALICO_CRDS_SINCE,
    ),
    ServiceInfo(
        release="tigera-operator",
        namespace="tigera-operator",
        chart="tigera-operator",
        repository="https://docs.tigera.io/calico/charts",
        version=_default("tigera-operator"),
        setting="cni",
        values=builders.calico_values,
        description="Calico CNI through the Tigera operator (cni.type: calico).",
        cni="calico",
        pod_security="privileged",
        needs=("calico-crds",),
    ),
    ServiceInfo(
        release="envoy-gateway",
        namespace="envoy-gateway-system",
        chart="gateway-helm",
        repository="oci://docker.io/envoyproxy",
        version=_default("envoy-gateway"),
        setting="gatewayAPI",
        values=builders.envoy_gateway_values,
        description="Envoy Gateway: the Gateway API implementation on Calico clusters, with "
        "the Gateway API CRDs (kept on uninstall: they are in the chart's crds/).",
        cni="calico",
        pod_security="baseline",
    ),
    ServiceInfo(
        release="openstack-cloud-controller-manager",
        namespace="kube-system",
        chart="openstack-cloud-controller-manager",
        repository="https://kubernetes.github.io/cloud-provider-openstack",
        version=_default("openstack-cloud-controller-manager"),
        setting="cloudControllerManager",
        values=builders.occm_values,
        description="OpenStack cloud controller manager: initializes nodes, creates Octavia "
        "load balancers for Services.",
        providers=("openstack",),
        pod_security="privileged",
    ),
    ServiceInfo(
        release="metadata-policy",
        namespace="kube-system",  # cluster-scoped policies only; a namespace that always exists
        chart="scs-metadata-policy",
        repository=PACKAGED,
        version=chart_version("scs-metadata-policy"),
        setting=None,
        values=metadata_policy.metadata_policy_values,
        description="Our chart: the CNI's cluster-wide policy that denies Pods the metadata "
        "service (node bootstrap data: join token, CA keys) but in kube-system and "
        "metadataService.allowedNamespaces (after the CNI: Cilium's operator creates "
        "the policy CRD at start).",
        providers=("openstack",),
        enabled_by=metadata_policy.metadata_policy_enabled,
    ),
    ServiceInfo(
        release="snapshot-controller",
        namespace="kube-system",
        chart="snapshot-controller",
        repository="https://piraeus.io/helm-charts",
        version=_default("snapshot-controller"),
        setting=None,
        values=builders.snapshot_controller_values,
        description="CSI snapshot controller and the VolumeSnapshot CRDs (with Cinder CSI).",
        providers=("openstack",),
        companion_of="cinderCSI",
        pod_security="baseline",
    ),
    ServiceInfo(
        release="openstack-cinder-csi",
        namespace="kube-system",
        chart="openstack-cinder-csi",
        repository="https://kubernetes.github.io/cloud-provider-openstack",
        version=_default("openstack-cinder-csi"),
        setting="cinderCSI",
        values=builders.cinder_csi_values,
        description="Cinder CSI driver, its StorageClasses (default: delete, bound where the "
        "Pod is scheduled) and a VolumeSnapshotClass.",
        providers=("openstack",),
        pod_security="privileged",
        needs=("snapshot-controller",),
    ),
    ServiceInfo(
        release="kubelet-csr-approver",
        namespace="kube-system",
        chart="kubelet-csr-approver",
        repository="https://postfinance.github.io/kubelet-csr-approver",
        version=_default("kubelet-csr-approver"),
        setting=None,
        values=builders.kubelet_csr_approver_values,
        description="Approves kubelet serving certificate requests (CSRs) after checking "
        "names and addresses (always: every kubelet requests a serving certificate).",
        pod_security="baseline",
    ),
    ServiceInfo(
        release="metrics-server",
        namespace="kube-system",
        chart="metrics-server",
        repository="https://kubernetes-sigs.github.io/metrics-server",
        version=_default("metrics-server"),
        setting="metricsServer",
        values=builders.metrics_server_values,
        description="metrics-server with verified TLS to kubelets (no --kubelet-insecure-tls).",
        needs=("kubelet-csr-approver",),
    ),
    ServiceInfo(
        release="ingress-nginx",
        namespace="ingress-nginx",
        chart="ingress-nginx",
        repository="https://kubernetes.github.io/ingress-nginx",
        version=_default("ingress-nginx"),
        setting="ingressNginx",
        values=builders.ingress_nginx_values,
        description="DEPRECATED (retired upstream, no security fixes since March 2026): "
        "ingress-nginx controller, default IngressClass; PROXY protocol on the Octavia load "
        "balancer when proxyProtocol is on. Use gatewayAPI.",
    ),
    ServiceInfo(
        release="cert-manager",
        namespace="cert-manager",
        chart="cert-manager",
        repository="https://charts.jetstack.io",
        version=_default("cert-manager"),
        setting="certManager",
        values=builders.cert_manager_values,
        description="cert-manager with its CRDs (kept on uninstall).",
    ),
    ServiceInfo(
        release="flux2",
        namespace="flux-system",
        chart="flux2",
        repository="https://fluxcd-community.github.io/helm-charts",
        version=_default("flux2"),
        setting="flux",
        values=builders.flux2_values,
        description="Flux GitOps controllers (flux2 community chart).",
    ),
    ServiceInfo(
        release="cluster-autoscaler",
        namespace="",
        chart="cluster-autoscaler",
        repository="https://kubernetes.github.io/autoscaler",
        version=_default("cluster-autoscaler"),
        setting="clusterAutoscaler",
        values=builders.cluster_autoscaler_values,
        description="cluster-autoscaler (Cluster API provider) on the MANAGEMENT cluster, "
        "one per cluster: scales the worker groups that have autoscaling.",
        target="management",
    ),
)


def service_catalogue() -> tuple[ServiceInfo, ...]:
    """Every release ``apply`` knows, in install order (CNI first, then the cloud)."""
    return CATALOGUE


def service_info(release: str) -> ServiceInfo:
    """The catalogue row of ``release``; KeyError when unknown."""
    for info in CATALOGUE:
        if info.release == release:
            return info
    raise KeyError(release)


def default_version(info: ServiceInfo, minor: tuple[int, int]) -> str:
    """The default chart version of ``info`` for a cluster on Kubernetes ``minor`` (a chart
    of ours: its own version, whatever the minor)."""
    if info.packaged:
        return info.version
    return table().service_version(info.version_of or info.release, minor)
