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

from scs_templates._contract.services import ServiceInfo, default_chart_version
from scs_templates._services import values as builders
from scs_templates._versions import table
from scs_templates.providers.operations import operations_of
from scs_templates.providers.registry import providers

__all__ = [
    "CATALOGUE",
    "ServiceInfo",
    "default_version",
    "service_catalogue",
    "service_info",
]


#: Calico's CRD chart and the operator chart are one Calico release: same version.
CALICO_CRDS_SINCE = "v3.32.0"


#: The CNI and what it needs: installed first.
_NETWORK: tuple[ServiceInfo, ...] = (
    ServiceInfo(
        release="gateway-api-crds",
        namespace="kube-system",
        chart="gateway-crds-helm",
        repository="oci://docker.io/envoyproxy",
        version=default_chart_version("gateway-api-crds"),
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
        version=default_chart_version("cilium"),
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
        version=default_chart_version("tigera-operator"),
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
        version=default_chart_version("tigera-operator"),
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
        version=default_chart_version("envoy-gateway"),
        setting="gatewayAPI",
        values=builders.envoy_gateway_values,
        description="Envoy Gateway: the Gateway API implementation on Calico clusters, with "
        "the Gateway API CRDs (kept on uninstall: they are in the chart's crds/).",
        cni="calico",
        pod_security="baseline",
    ),
)

#: The services of every cluster, after the CNI and the provider's own.
_COMMON: tuple[ServiceInfo, ...] = (
    ServiceInfo(
        release="kubelet-csr-approver",
        namespace="kube-system",
        chart="kubelet-csr-approver",
        repository="https://postfinance.github.io/kubelet-csr-approver",
        version=default_chart_version("kubelet-csr-approver"),
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
        version=default_chart_version("metrics-server"),
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
        version=default_chart_version("ingress-nginx"),
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
        version=default_chart_version("cert-manager"),
        setting="certManager",
        values=builders.cert_manager_values,
        description="cert-manager with its CRDs (kept on uninstall).",
    ),
    ServiceInfo(
        release="flux2",
        namespace="flux-system",
        chart="flux2",
        repository="https://fluxcd-community.github.io/helm-charts",
        version=default_chart_version("flux2"),
        setting="flux",
        values=builders.flux2_values,
        description="Flux GitOps controllers (flux2 community chart).",
    ),
    ServiceInfo(
        release="cluster-autoscaler",
        namespace="",
        chart="cluster-autoscaler",
        repository="https://kubernetes.github.io/autoscaler",
        version=default_chart_version("cluster-autoscaler"),
        setting="clusterAutoscaler",
        values=builders.cluster_autoscaler_values,
        description="cluster-autoscaler (Cluster API provider) on the MANAGEMENT cluster, "
        "one per cluster: scales the worker groups that have autoscaling.",
        target="management",
    ),
)


#: Every release ``apply`` knows, in install order: the CNI, each provider's own releases
#: (:meth:`scs_templates.providers.operations.Operations.services`, in the providers'
#: order), the rest.
CATALOGUE: tuple[ServiceInfo, ...] = (
    *_NETWORK,
    *(info for provider in providers() for info in operations_of(provider).services()),
    *_COMMON,
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
