"""Pure values builders: settings -> the helm values of each standard service release.

Python decides everything here (the helmfile template only copies the result): which
features are on, which provider specifics apply, and the user's ``values`` from the settings
file, deep-merged over ours (:func:`deep_merge`: mappings merge key by key, anything else,
lists included, is replaced by the user's value).

Decisions worth knowing (see ``docs/services.md``):

* Cilium uses ``ipam.mode: kubernetes`` (kubeadm assigns each node a pod CIDR out of
  ``network.podCIDR``). Its Gateway API needs kube-proxy replacement from Cilium 1.20 on
  (the operator switches Gateway API off without it, and ``nodePort.enabled`` is gone), so
  ``gatewayAPI.enabled`` turns on ``kubeProxyReplacement``; without Gateway API it stays
  off (kubeadm's kube-proxy serves Services). ``k8sServiceHost`` stays unset: Cilium reaches
  the API server through the ``kubernetes`` Service, which kube-proxy serves on every
  kubeadm node; ``auto`` would read kubeadm's ``cluster-info`` with helm's ``lookup``,
  which finds nothing in an offline render (the chart then fails). The GatewayClass
  ``cilium`` is created explicitly (``gatewayClass.create: "true"``), not by the chart's
  ``auto`` (whether the API server has the Gateway API CRDs), because ``apply`` installs
  those CRDs first: ``auto`` would create it on ``apply`` but not in ``services render``.
* ``network.mtu`` is the MTU of the node network. Cilium's ``MTU`` means exactly that; Calico's
  ``calicoNetwork.mtu`` is the MTU of the pod interfaces and the VXLAN device, so it gets
  ``network.mtu - 50`` (the VXLAN-over-IPv4 overhead).
* metrics-server verifies kubelet serving certificates (never ``--kubelet-insecure-tls``):
  kubelets request serving certificates (``serverTLSBootstrap``) and kubelet-csr-approver
  approves only requests whose host name matches the cluster's node names and, on
  OpenStack, whose addresses lie in ``network.nodeCIDR``. On Docker, CAPD names a node
  ``<cluster>-<machine>`` unless the machine name already starts with the cluster name.
* ingress-nginx gets the PROXY protocol (the provider's load-balancer annotations plus nginx
  ``use-proxy-protocol``) only with ``proxyProtocol: true`` and where the provider's load
  balancers speak it (OpenStack: Octavia's amphora provider; its OVN provider cannot, and
  nginx waiting for a PROXY header that never comes would break every connection).
* A provider's own releases (OpenStack: the cloud controller manager, Cinder CSI and the
  snapshot controller) have their builders in the provider's package
  (:meth:`scs_templates.providers.operations.Operations.services`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING

from scs_templates._core import naming
from scs_templates._versions import table
from scs_templates._versions.kubernetes import resolve_version
from scs_templates.providers.operations import operations_of
from scs_templates.providers.registry import provider_of

if TYPE_CHECKING:
    from typing import Any

    from scs_templates._settings.model import ClusterSettings

__all__ = [
    "METRICS_SERVER_ARGS",
    "calico_crds_values",
    "calico_values",
    "cert_manager_values",
    "cilium_values",
    "cluster_autoscaler_values",
    "deep_merge",
    "envoy_gateway_values",
    "flux2_values",
    "gateway_api_crds_values",
    "gateway_proxy_protocol_active",
    "ingress_nginx_values",
    "kubelet_csr_approver_values",
    "metrics_server_values",
    "proxy_protocol_active",
]

#: metrics-server arguments: the chart's defaults, stated explicitly so that none of them
#: can ever be ``--kubelet-insecure-tls``.
METRICS_SERVER_ARGS: tuple[str, ...] = (
    "--cert-dir=/tmp",
    "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
    "--kubelet-use-node-status-port",
    "--metric-resolution=15s",
)

#: Bytes the VXLAN encapsulation (IPv4) adds to each packet: Calico's pod MTU is this much
#: less than the node network's.
VXLAN_OVERHEAD = 50

if TYPE_CHECKING:
    Values = dict[str, Any]


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> Values:
    """``override`` merged over ``base`` into a new dict (neither input is modified).

    Mappings are merged key by key; any other value (lists included) in ``override``
    replaces the one in ``base``. A ``None`` in ``override`` is kept: helm then deletes
    that key of the chart's defaults, which is how a user removes one of ours.
    """
    result: Values = copy.deepcopy(dict(base))
    for key, value in override.items():
        current = result.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            result[key] = deep_merge(current, value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def proxy_protocol_active(settings: ClusterSettings) -> bool:
    """PROXY protocol on the ingress load balancer: switched on, and the provider's load
    balancers speak it (OpenStack with amphora)."""
    return _lb_proxy_protocol(settings, settings.spec.services.ingress_nginx.proxy_protocol)


def _lb_proxy_protocol(settings: ClusterSettings, wanted: bool) -> bool:
    """``wanted`` and the provider's load balancers speak the PROXY protocol (OpenStack:
    Octavia's amphora provider, not OVN; Docker: no load balancers)."""
    return wanted and provider_of(settings).proxy_protocol(settings)


# --------------------------------------------------------------------------- builders


def cilium_values(settings: ClusterSettings) -> Values:
    spec = settings.spec
    gateway = spec.services.gateway_api.enabled
    values: Values = {
        "ipam": {"mode": "kubernetes"},
        "kubeProxyReplacement": False,
        "gatewayAPI": {"enabled": gateway},
        "operator": {"replicas": 1 if spec.control_plane.replicas == 1 else 2},
        # Hubble's TLS certificates from Cilium's certgen job in the cluster, not from
        # helm's genCA: a render must not hold a private key (nor a new one on every
        # upgrade, which would rotate the CA each time), and must be deterministic.
        "hubble": {"tls": {"auto": {"method": "cronJob"}}},
    }
    if gateway:
        values["kubeProxyReplacement"] = True
        values["gatewayAPI"]["gatewayClass"] = {"create": "true"}
        if gateway_proxy_protocol_active(settings):
            values["gatewayAPI"]["enableProxyProtocol"] = True
    if spec.network.mtu:
        values["MTU"] = spec.network.mtu
    return values


def calico_values(settings: ClusterSettings) -> Values:
    net = settings.spec.network
    calico_network: Values = {
        "bgp": "Disabled",
        "ipPools": [
            {
                "cidr": net.pod_cidr,
                "blockSize": 26,
                "encapsulation": "VXLAN",
                "natOutgoing": "Enabled",
                "nodeSelector": "all()",
            }
        ],
    }
    if net.mtu:
        calico_network["mtu"] = net.mtu - VXLAN_OVERHEAD
    return {
        "installation": {
            "enabled": True,
            "cni": {"type": "Calico"},
            "calicoNetwork": calico_network,
        }
    }


def calico_crds_values(settings: ClusterSettings) -> Values:
    del settings
    # The chart takes no values: it is Calico's CRDs, nothing else.
    return {}


def gateway_api_crds_values(settings: ClusterSettings) -> Values:
    del settings
    # Cilium's Gateway API needs TLSRoute, which is in the experimental channel only.
    return {
        "crds": {
            "gatewayAPI": {"enabled": True, "channel": "experimental"},
            "envoyGateway": {"enabled": False},
        }
    }


def gateway_proxy_protocol_active(settings: ClusterSettings) -> bool:
    """PROXY protocol on the Gateway listeners: switched on, and the provider's load
    balancers speak it (OpenStack with amphora)."""
    return _lb_proxy_protocol(settings, settings.spec.services.gateway_api.proxy_protocol)


def envoy_gateway_values(settings: ClusterSettings) -> Values:
    del settings
    # The Gateway API and Envoy Gateway CRDs come with the chart (its crds/ directory: helm
    # installs them and never deletes them). PROXY protocol is per Gateway in Envoy Gateway
    # (ClientTrafficPolicy + EnvoyProxy service annotations): see docs/services.md.
    return {"crds": {"enabled": True}}


def _autoscaler_image(settings: ClusterSettings) -> Values:
    """The cluster-autoscaler image of the cluster's Kubernetes minor (the versions table):
    the autoscaler follows the minor (its release 1.M is for Kubernetes 1.M), while one chart
    serves several minors with the image of one."""
    spec = settings.spec
    minor = resolve_version(
        spec.kubernetes.version, provider_of(settings).kind_node_images
    ).version.minor_key
    image = table().service_image("cluster-autoscaler", minor)
    if image is None:
        return {}
    repository, tag = image
    return {"image": {"repository": repository, "tag": tag}}


def cluster_autoscaler_values(settings: ClusterSettings) -> Values:
    spec = settings.spec
    ca = spec.services.cluster_autoscaler
    down = ca.scale_down
    return {
        **_autoscaler_image(settings),
        "cloudProvider": "clusterapi",
        # On the management cluster: Cluster API objects in-cluster, the workload cluster
        # through Cluster API's own kubeconfig Secret of this cluster.
        "clusterAPIMode": "kubeconfig-incluster",
        "clusterAPIKubeconfigSecret": naming.kubeconfig_secret(settings.name),
        "autoDiscovery": {"clusterName": settings.name, "namespace": settings.metadata.namespace},
        "fullnameOverride": naming.per_cluster(settings.name, "autoscaler"),
        # A Role in the cluster's namespace only, never a ClusterRole; plus reading the
        # machine templates, whose status.capacity (CAPO: the flavor, CAPD: the host) lets
        # a group scale up from zero.
        "rbac": {
            "clusterScoped": False,
            "additionalRules": [
                {"apiGroups": [group], "resources": [resource], "verbs": ["get", "list", "watch"]}
                for group, resource in provider_of(settings).machine_template_resources
            ],
        },
        "extraArgs": {
            "expander": ca.expander,
            "scale-down-enabled": down.enabled,
            "scale-down-unneeded-time": down.unneeded_time,
            "scale-down-delay-after-add": down.delay_after_add,
            "scale-down-utilization-threshold": down.utilization_percent / 100,
            "balance-similar-node-groups": True,
        },
    }


def kubelet_csr_approver_values(settings: ClusterSettings) -> Values:
    values: Values = {
        "providerRegex": node_name_regex(settings),
        # OpenStack node names are not in DNS; the IP prefix check replaces the lookup.
        "bypassDnsResolution": True,
    }
    node_cidr = provider_of(settings).node_cidr(settings)
    if node_cidr is not None:
        values["providerIpPrefixes"] = [node_cidr]
    return values


def node_name_regex(settings: ClusterSettings) -> str:
    """The names of exactly this cluster's nodes: the Machine names Cluster API gives the
    template in use (:func:`naming.machine_name_shapes`: the topology controller's for
    ``clusterclass``, our charts' owners for the others), behind the provider's host-name
    prefix (CAPD: ``<cluster>-`` unless the name starts with it). Each group is named, so
    the nodes of another cluster whose name merely starts with this one's never match."""
    spec = settings.spec
    provider = provider_of(settings)
    shapes = naming.machine_name_shapes(
        spec.template, spec.prefix, settings.name, [group.name for group in spec.workers]
    )
    patterns = sorted(
        {
            naming.shape_pattern(provider.node_name_prefix(settings.name, shape) + shape)
            for shape in shapes
        }
    )
    return f"^(?:{'|'.join(patterns)})$"


def metrics_server_values(settings: ClusterSettings) -> Values:
    del settings
    return {"defaultArgs": list(METRICS_SERVER_ARGS), "args": []}


def ingress_nginx_values(settings: ClusterSettings) -> Values:
    provider = provider_of(settings)
    service: Values = {"type": "LoadBalancer" if provider.load_balancer_services else "NodePort"}
    controller: Values = {"ingressClassResource": {"default": True}, "service": service}
    if proxy_protocol_active(settings):
        service["annotations"] = operations_of(provider).proxy_protocol_annotations()
        controller["config"] = {"use-proxy-protocol": "true"}
    return {"controller": controller}


def cert_manager_values(settings: ClusterSettings) -> Values:
    del settings
    # CRDs are part of the release and stay when it is uninstalled (certificates survive).
    return {"crds": {"enabled": True, "keep": True}}


def flux2_values(settings: ClusterSettings) -> Values:
    del settings
    return {"policies": {"create": True}}
