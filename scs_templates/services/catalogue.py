"""The catalogue of standard cluster services: charts, repositories and tested versions.

One row per helm release that ``scs-templates apply`` can install into a WORKLOAD cluster.
The default version of each chart is the version documented as tested
(``docs/services.md`` has the same table; ``tests/test_services.py`` keeps both in step).
A settings file may pin another version per service (``spec.services.<service>.version``).

Which setting switches a release on is recorded in :attr:`ServiceInfo.setting`; several
releases can belong to one setting (Cinder CSI brings the snapshot controller, metrics-server
brings kubelet-csr-approver, which approves the kubelet serving certificates it relies on).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CATALOGUE",
    "ServiceInfo",
    "service_catalogue",
    "service_info",
]


@dataclass(frozen=True)
class ServiceInfo:
    """One release of a standard service.

    ``release``: helm release name (unique, also the catalogue key). ``namespace``: where it
    goes in the workload cluster. ``chart``: the chart's real name (also the file name stem
    ``CHART-VERSION.tgz`` in a local mirror, and the last path element in an OCI mirror).
    ``repository``: the upstream chart repository (``https://`` helm repository or
    ``oci://`` registry path). ``version``: the tested default chart version. ``setting``:
    the ``spec.services`` key (camelCase, as in the settings file) that enables it and whose
    ``version``/``values`` apply to it; ``None`` for companion releases that follow another
    service's switch. ``providers``: where it applies (empty = every provider). ``cni``: the
    CNI it belongs to or needs (``cilium``/``calico``), if any.
    """

    release: str
    namespace: str
    chart: str
    repository: str
    version: str
    setting: str | None
    description: str
    providers: tuple[str, ...] = ()
    cni: str | None = None
    companion_of: str | None = None

    @property
    def repository_is_oci(self) -> bool:
        return self.repository.startswith("oci://")


CATALOGUE: tuple[ServiceInfo, ...] = (
    ServiceInfo(
        release="gateway-api-crds",
        namespace="kube-system",
        chart="gateway-crds-helm",
        repository="oci://docker.io/envoyproxy",
        version="v1.5.1",
        setting="gatewayAPI",
        description="Gateway API CRDs (v1.3.0, standard channel plus TLSRoute), installed "
        "before Cilium so its operator finds them at start.",
        cni="cilium",
    ),
    ServiceInfo(
        release="cilium",
        namespace="kube-system",
        chart="cilium",
        repository="https://helm.cilium.io",
        version="1.18.2",
        setting="cni",
        description="Cilium CNI (default); Gateway API implementation when gatewayAPI is on.",
        cni="cilium",
    ),
    ServiceInfo(
        release="tigera-operator",
        namespace="tigera-operator",
        chart="tigera-operator",
        repository="https://docs.tigera.io/calico/charts",
        version="v3.30.3",
        setting="cni",
        description="Calico CNI through the Tigera operator (cni.type: calico).",
        cni="calico",
    ),
    ServiceInfo(
        release="openstack-cloud-controller-manager",
        namespace="kube-system",
        chart="openstack-cloud-controller-manager",
        repository="https://kubernetes.github.io/cloud-provider-openstack",
        version="2.33.0",
        setting="cloudControllerManager",
        description="OpenStack cloud controller manager: initializes nodes, creates Octavia "
        "load balancers for Services.",
        providers=("openstack",),
    ),
    ServiceInfo(
        release="snapshot-controller",
        namespace="kube-system",
        chart="snapshot-controller",
        repository="https://piraeus.io/helm-charts",
        version="4.1.0",
        setting=None,
        description="CSI snapshot controller and the VolumeSnapshot CRDs (with Cinder CSI).",
        providers=("openstack",),
        companion_of="cinderCSI",
    ),
    ServiceInfo(
        release="openstack-cinder-csi",
        namespace="kube-system",
        chart="openstack-cinder-csi",
        repository="https://kubernetes.github.io/cloud-provider-openstack",
        version="2.33.0",
        setting="cinderCSI",
        description="Cinder CSI driver and its default StorageClass.",
        providers=("openstack",),
    ),
    ServiceInfo(
        release="kubelet-csr-approver",
        namespace="kube-system",
        chart="kubelet-csr-approver",
        repository="https://postfinance.github.io/kubelet-csr-approver",
        version="1.2.10",
        setting=None,
        description="Approves kubelet serving certificate requests (CSRs) after checking "
        "names and addresses, so metrics-server can verify kubelets (with metrics-server).",
        companion_of="metricsServer",
    ),
    ServiceInfo(
        release="metrics-server",
        namespace="kube-system",
        chart="metrics-server",
        repository="https://kubernetes-sigs.github.io/metrics-server",
        version="3.13.0",
        setting="metricsServer",
        description="metrics-server with verified TLS to kubelets (no --kubelet-insecure-tls).",
    ),
    ServiceInfo(
        release="ingress-nginx",
        namespace="ingress-nginx",
        chart="ingress-nginx",
        repository="https://kubernetes.github.io/ingress-nginx",
        version="4.13.3",
        setting="ingressNginx",
        description="ingress-nginx controller, default IngressClass; PROXY protocol on the "
        "Octavia load balancer when proxyProtocol is on.",
    ),
    ServiceInfo(
        release="cert-manager",
        namespace="cert-manager",
        chart="cert-manager",
        repository="https://charts.jetstack.io",
        version="v1.18.2",
        setting="certManager",
        description="cert-manager with its CRDs (kept on uninstall).",
    ),
    ServiceInfo(
        release="flux2",
        namespace="flux-system",
        chart="flux2",
        repository="https://fluxcd-community.github.io/helm-charts",
        version="2.16.4",
        setting="flux",
        description="Flux GitOps controllers (flux2 community chart).",
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
