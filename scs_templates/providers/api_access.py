"""How ``network.apiAccess`` is enforced: the one place that decides it.

Facts from Cluster API Provider OpenStack v0.14.7 (the source, not its docs):

- ``pkg/cloud/services/loadbalancer/loadbalancer.go``: the listener's ``allowedCIDRs`` are
  set only when the Octavia provider supports them; for provider ``ovn`` they are set to nil,
  silently. So on ``ovn`` the load balancer restricts nothing.
- ``pkg/cloud/services/networking/securitygroups_rules.go`` (``getSGControlPlaneHTTPS``):
  the managed control-plane security group ALWAYS gets "Kubernetes API", ingress tcp 6443
  from anywhere, and ``reconcileGroupRules`` deletes every rule it did not ask for. Extra
  rules (``managedSecurityGroups.controlPlaneNodesSecurityGroupRules``) are added to it, so
  a rule for port 6443 from a few CIDRs restricts nothing either.

OVN load balancers keep the client's source address, so on ``ovn`` the restriction is made
by the control-plane nodes' security group: the API server listens on
:data:`OVN_RESTRICTED_API_PORT` (the load balancer's listener and members follow
``OpenStackCluster.spec.apiServerPort``; kubeadm's ``bindPort`` is set to match), that port
is allowed only from the allowed CIDRs, the management CIDRs and the node network, and
CAPO's unconditional 6443 rule then opens a port nothing listens on. On ``amphora`` the load
balancer's ``allowedCIDRs`` restrict as before (CAPO adds the cluster's subnets and router
IPs to a non-empty list itself).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from scs_templates._core.records import record
from scs_templates.providers.registry import (
    provider_of,
)

if TYPE_CHECKING:  # the render path stays pydantic-free (tests/unit/test_settings_plain.py)
    from typing import Literal

    from scs_templates._settings.model import ClusterSettings
    from scs_templates.providers.openstack.values_model import SecurityGroupRule

    Mechanism = Literal["none", "load-balancer", "security-group", "not-enforced"]

#: Where a provider without allow-lists publishes the API (for ``validate``'s line): CAPD's
#: load balancer container maps the API port to a random port of the Docker host on 0.0.0.0
#: (``::`` for IPv6), sigs.k8s.io/cluster-api test/infrastructure/docker/internal/docker
#: loadbalancer.go ``Create``.
_PUBLISHED = {
    "docker": " (CAPD's load balancer container, on a random port of every address of the "
    "Docker host)"
}

#: Kubernetes' default API server port (and the one CAPO opens to everyone).
DEFAULT_API_PORT = 6443
#: Where the API server listens on OVN when access is restricted: not 6443, which CAPO's
#: managed control-plane group opens to the world whatever else is configured.
OVN_RESTRICTED_API_PORT = 6444


@record
class ApiAccessPlan:
    """What the rendered cluster does for ``network.apiAccess``."""

    mode: str
    mechanism: Mechanism
    sources: tuple[str, ...]
    """Source networks allowed to reach the API (empty: everyone)."""
    port: int
    """The API server's port (load balancer listener and node bind port)."""
    provider: str = ""

    @property
    def load_balancer_cidrs(self) -> list[str]:
        """``apiServerLoadBalancer.allowedCIDRs`` (amphora only)."""
        return list(self.sources) if self.mechanism == "load-balancer" else []

    def security_group_rules(self) -> list[SecurityGroupRule]:
        """CAPO ``controlPlaneNodesSecurityGroupRules``: the API port from each source."""
        if self.mechanism != "security-group":
            return []
        rules: list[SecurityGroupRule] = []
        for index, cidr in enumerate(self.sources):
            network = ipaddress.ip_network(cidr, strict=False)
            rules.append(
                {
                    "name": f"scs-api-{index}",
                    "description": f"Kubernetes API from {network} (apiAccess {self.mode})",
                    "direction": "ingress",
                    "etherType": "IPv4" if network.version == 4 else "IPv6",
                    "protocol": "tcp",
                    "portRangeMin": self.port,
                    "portRangeMax": self.port,
                    "remoteIPPrefix": str(network),
                }
            )
        return rules

    def describe(self) -> str:
        """One line for ``validate``: which mechanism applies."""
        if self.mechanism == "not-enforced":  # a provider without load balancer allow-lists
            return (
                f"API access {self.mode}: provider {self.provider} has no allow-list, "
                "network.apiAccess is not enforced; the API is reachable wherever the "
                f"provider publishes it{_PUBLISHED.get(self.provider, '')}"
            )
        if self.mode == "open":
            return "API access open: anyone may reach the API (no allow-list)"
        sources = ", ".join(self.sources)
        if self.mechanism == "load-balancer":
            return (
                f"API access {self.mode}: enforced by the amphora load balancer's allowed "
                f"CIDRs ({sources}; CAPO adds the cluster's subnet and router IPs)"
            )
        if self.mechanism == "security-group":
            return (
                f"API access {self.mode}: enforced by security-group rules on the "
                f"control-plane nodes (the OVN load balancer keeps the client address): API "
                f"port {self.port} from {sources} only"
            )
        return f"API access {self.mode}: not enforced by provider {self.provider}"


def api_access_plan(settings: ClusterSettings) -> ApiAccessPlan:
    """Decide sources, port and mechanism for the settings' provider and load balancer."""
    spec = settings.spec
    net = spec.network
    access = net.api_access
    # KaaS v1 RESTRICT_KUBEAPI: [] open, [none] internal, [cidr,...] the list plus internal.
    allowed: list[str] = []
    if access.mode == "cidrs":
        allowed.extend(access.cidrs)
    if access.mode in ("internal", "cidrs"):
        allowed.append(net.node_cidr)
        allowed.extend(access.management_cidrs)
    sources = tuple(dict.fromkeys(allowed))

    mechanism, port = provider_of(settings).api_access_enforcement(settings)
    if access.mode == "open":
        # open restricts nothing; only a provider that could not restrict says so
        unrestricted = "not-enforced" if mechanism == "not-enforced" else "none"
        return ApiAccessPlan(access.mode, unrestricted, (), DEFAULT_API_PORT, spec.provider)  # type: ignore[arg-type]
    # a provider answers one of the mechanisms (a str: no typing import on the render path)
    return ApiAccessPlan(access.mode, mechanism, sources, port, spec.provider)  # type: ignore[arg-type]
