"""The proxy environment of the nodes, and of the pods that call the provider's APIs.

Both the cluster chart's node set-up (:mod:`scs_templates._render.values`) and a provider's
cloud integrations (OpenStack: the cloud controller manager and Cinder CSI, which call
Keystone, Nova, Cinder and Octavia) need it: where those APIs are reachable only through the
proxy, a node is never initialised without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scs_templates._contract.model import Proxy
    from scs_templates._settings.model import ClusterSettings

__all__ = ["proxy_env", "proxy_values"]


def proxy_values(settings: ClusterSettings) -> Proxy:
    """The nodes' proxy environment, or {} without a proxy (also the pods' that reach the
    cloud's APIs: :func:`proxy_env`).

    NO_PROXY gets the user's entries plus everything of the cluster itself, so that
    in-cluster and node-to-API traffic never leaves through the proxy: loopback, the pod,
    service and node networks, the service domain and ``.svc``. The API endpoint's address
    is not known at render time (the load balancer's address is assigned by the provider);
    the node adds it at boot from its kubeadm configuration (chart, ``scs.nodeSetupScript``).
    """
    proxy = settings.spec.network.proxy
    if proxy.http_proxy is None and proxy.https_proxy is None:
        return {}
    net = settings.spec.network
    own = [
        "localhost",
        "127.0.0.1",
        "::1",
        net.pod_cidr,
        net.service_cidr,
        net.node_cidr,
        net.service_domain,
        f".{net.service_domain}",
        ".svc",
    ]
    return {
        "httpProxy": proxy.http_proxy or "",
        "httpsProxy": proxy.https_proxy or "",
        "noProxy": list(dict.fromkeys([*proxy.no_proxy, *own])),
    }


def proxy_env(settings: ClusterSettings) -> list[dict[str, str]]:
    """``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY`` of ``network.proxy`` for the pods that call
    the cloud's APIs (Keystone, Nova, Cinder, Octavia): where those are reachable only through
    the proxy, OCCM could never initialize a node. NO_PROXY is the nodes' (the cluster's own
    networks and names; in-cluster API calls go to the service network). [] without a proxy."""
    proxy = proxy_values(settings)
    if not proxy:
        return []
    pairs = [
        ("HTTP_PROXY", proxy["httpProxy"]),
        ("HTTPS_PROXY", proxy["httpsProxy"]),
        ("NO_PROXY", ",".join(proxy["noProxy"])),
    ]
    return [{"name": name, "value": value} for name, value in pairs if value]
