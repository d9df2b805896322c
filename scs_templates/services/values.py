"""Pure values builders: settings -> the helm values of each standard service release.

Python decides everything here (the helmfile template only copies the result): which
features are on, which provider specifics apply, and the user's ``values`` from the settings
file, deep-merged over ours (:func:`deep_merge`: mappings merge key by key, anything else,
lists included, is replaced by the user's value).

Decisions worth knowing (see ``docs/services.md``):

* Cilium uses ``ipam.mode: kubernetes`` (kubeadm assigns each node a pod CIDR out of
  ``network.podCIDR``). Gateway API needs Cilium's kube-proxy replacement, so
  ``gatewayAPI.enabled`` turns on ``kubeProxyReplacement`` with ``k8sServiceHost: auto``
  (Cilium reads the API endpoint from kubeadm's ``cluster-info`` ConfigMap).
* metrics-server verifies kubelet serving certificates (never ``--kubelet-insecure-tls``):
  kubelets request serving certificates (``serverTLSBootstrap``) and kubelet-csr-approver
  approves only requests whose host name matches the cluster's node names and, on
  OpenStack, whose addresses lie in ``network.nodeCIDR``.
* ingress-nginx gets the PROXY protocol (Octavia annotation
  ``loadbalancer.openstack.org/proxy-protocol`` plus nginx ``use-proxy-protocol``) only on
  OpenStack, with ``proxyProtocol: true``, and with the amphora provider: Octavia's OVN
  provider cannot speak the PROXY protocol, and nginx waiting for a PROXY header that never
  comes would break every connection.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

from scs_templates.settings import naming
from scs_templates.settings.model import ClusterSettings

__all__ = [
    "BUILDERS",
    "CLOUD_CONFIG_SECRET",
    "METRICS_SERVER_ARGS",
    "PROXY_PROTOCOL_ANNOTATION",
    "base_values",
    "deep_merge",
    "proxy_protocol_active",
]

#: Octavia's annotation (read by the OpenStack cloud controller manager) for PROXY protocol.
PROXY_PROTOCOL_ANNOTATION = "loadbalancer.openstack.org/proxy-protocol"
#: Secret in the workload cluster's kube-system with ``cloud.conf`` for OCCM and Cinder CSI.
CLOUD_CONFIG_SECRET = "cloud-config"  # noqa: S105 - a Secret name, not a password
#: metrics-server arguments: the chart's defaults, stated explicitly so that none of them
#: can ever be ``--kubelet-insecure-tls``.
METRICS_SERVER_ARGS: tuple[str, ...] = (
    "--cert-dir=/tmp",
    "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
    "--kubelet-use-node-status-port",
    "--metric-resolution=15s",
)

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
    """PROXY protocol on the ingress load balancer: OpenStack, amphora, and switched on."""
    spec = settings.spec
    return (
        spec.provider == "openstack"
        and spec.services.ingress_nginx.proxy_protocol
        and spec.openstack.load_balancer_provider == "amphora"
    )


# --------------------------------------------------------------------------- builders


def _cilium(settings: ClusterSettings) -> Values:
    spec = settings.spec
    gateway = spec.services.gateway_api.enabled
    values: Values = {
        "ipam": {"mode": "kubernetes"},
        "kubeProxyReplacement": gateway,
        "gatewayAPI": {"enabled": gateway},
        "operator": {"replicas": 1 if spec.control_plane.replicas == 1 else 2},
        # Hubble's TLS certificates from Cilium's certgen job in the cluster, not from
        # helm's genCA: a render must not hold a private key (nor a new one on every
        # upgrade, which would rotate the CA each time), and must be deterministic.
        "hubble": {"tls": {"auto": {"method": "cronJob"}}},
    }
    if gateway:
        values["k8sServiceHost"] = "auto"
    if spec.network.mtu:
        values["MTU"] = spec.network.mtu
    return values


def _calico(settings: ClusterSettings) -> Values:
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
        calico_network["mtu"] = net.mtu
    return {
        "installation": {
            "enabled": True,
            "cni": {"type": "Calico"},
            "calicoNetwork": calico_network,
        }
    }


def _gateway_api_crds(settings: ClusterSettings) -> Values:
    del settings
    # Cilium's Gateway API needs TLSRoute, which is in the experimental channel only.
    return {
        "crds": {
            "gatewayAPI": {"enabled": True, "channel": "experimental"},
            "envoyGateway": {"enabled": False},
        }
    }


def _occm(settings: ClusterSettings) -> Values:
    return {
        "secret": {"enabled": True, "create": False, "name": CLOUD_CONFIG_SECRET},
        "cluster": {"name": settings.name},
    }


def _snapshot_controller(settings: ClusterSettings) -> Values:
    replicas = 1 if settings.spec.control_plane.replicas == 1 else 2
    return {"controller": {"replicaCount": replicas}}


def _cinder_csi(settings: ClusterSettings) -> Values:
    return {
        "secret": {"enabled": True, "create": False, "name": CLOUD_CONFIG_SECRET},
        "clusterID": settings.name,
        "storageClass": {
            "enabled": True,
            "delete": {"isDefault": True, "allowVolumeExpansion": True},
            "retain": {"isDefault": False, "allowVolumeExpansion": True},
        },
    }


def _kubelet_csr_approver(settings: ClusterSettings) -> Values:
    spec = settings.spec
    # Node names are Machine names: $PREFIX-$CLUSTER-<group>-<hash>[-<hash>].
    stem = naming.resource_name(spec.prefix, settings.name)
    values: Values = {
        "providerRegex": f"^{re.escape(stem)}-[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
        # OpenStack node names are not in DNS; the IP prefix check replaces the lookup.
        "bypassDnsResolution": True,
    }
    if spec.provider == "openstack":
        values["providerIpPrefixes"] = [spec.network.node_cidr]
    return values


def _metrics_server(settings: ClusterSettings) -> Values:
    del settings
    return {"defaultArgs": list(METRICS_SERVER_ARGS), "args": []}


def _ingress_nginx(settings: ClusterSettings) -> Values:
    spec = settings.spec
    service: Values = {"type": "LoadBalancer" if spec.provider == "openstack" else "NodePort"}
    controller: Values = {"ingressClassResource": {"default": True}, "service": service}
    if proxy_protocol_active(settings):
        service["annotations"] = {PROXY_PROTOCOL_ANNOTATION: "true"}
        controller["config"] = {"use-proxy-protocol": "true"}
    return {"controller": controller}


def _cert_manager(settings: ClusterSettings) -> Values:
    del settings
    # CRDs are part of the release and stay when it is uninstalled (certificates survive).
    return {"crds": {"enabled": True, "keep": True}}


def _flux2(settings: ClusterSettings) -> Values:
    del settings
    return {"policies": {"create": True}}


BUILDERS: dict[str, Callable[[ClusterSettings], Values]] = {
    "gateway-api-crds": _gateway_api_crds,
    "cilium": _cilium,
    "tigera-operator": _calico,
    "openstack-cloud-controller-manager": _occm,
    "snapshot-controller": _snapshot_controller,
    "openstack-cinder-csi": _cinder_csi,
    "kubelet-csr-approver": _kubelet_csr_approver,
    "metrics-server": _metrics_server,
    "ingress-nginx": _ingress_nginx,
    "cert-manager": _cert_manager,
    "flux2": _flux2,
}


def base_values(release: str, settings: ClusterSettings) -> Values:
    """Our values for ``release`` (before the user's overrides); KeyError when unknown."""
    return BUILDERS[release](settings)
