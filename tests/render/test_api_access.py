"""network.apiAccess holds on every load balancer provider: the rendered rules, mode x provider.

CAPO v0.14.7 drops ``allowedCIDRs`` for the ``ovn`` provider and always opens port 6443 of the
control-plane security group to everyone (see scs_templates/providers/api_access.py). So:

- amphora: the load balancer's ``allowedCIDRs`` restrict; port 6443; no extra rules;
- ovn, restricted: no ``allowedCIDRs``, the API on port 6444 (listener, members, kubeadm bind
  port) and one control-plane security-group rule per allowed source for exactly that port;
- open: nothing restricted on either provider.

Every rendered object is validated strictly against CAPO's and CAPI's CRDs.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest

from scs_templates._cli.main import main
from scs_templates._core.errors import InputError
from scs_templates._lifecycle import check_api_port_change
from scs_templates._render.values import build_values
from scs_templates.providers.api_access import (
    DEFAULT_API_PORT,
    OVN_RESTRICTED_API_PORT,
    api_access_plan,
)
from tests.render import test_charts
from tests.render.test_charts import by_kind, objects, render, settings_of
from tests.support import crd_validation

# The chart tests' fixtures: the pinned helm, the CRDs (skip or fail), a private chart cache.
_chart_cache = test_charts._chart_cache
helm_path = test_charts.helm_path
crds = test_charts.crds

NODE_CIDR = "10.8.0.0/20"
MANAGEMENT = ["192.0.2.10/32", "2001:db8::/64"]
ALLOWED = ["203.0.113.0/24"]
ACCESS: dict[str, dict[str, Any]] = {
    "open": {"mode": "open"},
    "internal": {"mode": "internal", "managementCIDRs": MANAGEMENT},
    "cidrs": {"mode": "cidrs", "cidrs": ALLOWED, "managementCIDRs": MANAGEMENT},
}
SOURCES = {
    "open": [],
    "internal": [NODE_CIDR, *MANAGEMENT],
    "cidrs": [*ALLOWED, NODE_CIDR, *MANAGEMENT],
}


def _settings(mode: str, provider: str, template: str = "simple") -> Any:
    return settings_of(
        {
            "template": template,
            "provider": "openstack",
            "controlPlane": {"replicas": 3, "machineType": "SCS-4V-8"},
            "workers": [{"name": "md-0", "replicas": 1, "machineType": "SCS-2V-4"}],
            "network": {"nodeCIDR": NODE_CIDR, "apiAccess": ACCESS[mode]},
            "openstack": {"loadBalancerProvider": provider},
        }
    )


def _cluster_and_kubeadm(objs: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The OpenStackCluster spec and the control plane's kubeadm config spec, classic or
    topology (there: the Cluster's variables the class's patches copy into the objects)."""
    if not by_kind(objs, "ClusterClass"):
        (cluster,) = by_kind(objs, "OpenStackCluster")
        (kcp,) = by_kind(objs, "KubeadmControlPlane")
        return cluster["spec"], kcp["spec"]["kubeadmConfigSpec"]
    (topology_cluster,) = by_kind(objs, "Cluster")
    variables = {v["name"]: v["value"] for v in topology_cluster["spec"]["topology"]["variables"]}
    return variables["infrastructureCluster"], variables["controlPlane"]["kubeadmConfigSpec"]


@pytest.mark.parametrize("template", ["simple", "clusterclass"])
@pytest.mark.parametrize("provider", ["amphora", "ovn"])
@pytest.mark.parametrize("mode", ["open", "internal", "cidrs"])
def test_rendered_rules_for_each_mode_and_provider(
    mode: str, provider: str, template: str, helm_path: Path, crds: None
) -> None:
    objs = objects(render(_settings(mode, provider, template), helm_path))
    assert crd_validation.validate_all(objs) == []
    spec, kubeadm = _cluster_and_kubeadm(objs)
    restricted_by_groups = provider == "ovn" and mode != "open"
    port = OVN_RESTRICTED_API_PORT if restricted_by_groups else DEFAULT_API_PORT

    lb = spec["apiServerLoadBalancer"]
    assert lb["provider"] == provider
    if provider == "amphora" and mode != "open":
        assert lb["allowedCIDRs"] == SOURCES[mode]
    else:
        assert "allowedCIDRs" not in lb  # ovn: CAPO would drop it silently anyway

    rules = spec["managedSecurityGroups"].get("controlPlaneNodesSecurityGroupRules", [])
    assert spec["managedSecurityGroups"]["allowAllInClusterTraffic"] is True
    if not restricted_by_groups:
        assert rules == []
        assert "apiServerPort" not in spec
        assert "localAPIEndpoint" not in kubeadm["initConfiguration"]
        assert "controlPlane" not in kubeadm["joinConfiguration"]
        return
    # The port nothing else opens, from exactly the allowed sources, each with its family.
    assert spec["apiServerPort"] == port != 6443
    assert kubeadm["initConfiguration"]["localAPIEndpoint"] == {"bindPort": port}
    assert kubeadm["joinConfiguration"]["controlPlane"]["localAPIEndpoint"] == {"bindPort": port}
    assert [r["remoteIPPrefix"] for r in rules] == SOURCES[mode]
    for rule in rules:
        family = ipaddress.ip_network(rule["remoteIPPrefix"]).version
        assert rule["direction"] == "ingress"
        assert rule["protocol"] == "tcp"
        assert rule["portRangeMin"] == rule["portRangeMax"] == port
        assert rule["etherType"] == f"IPv{family}"
    assert len({r["name"] for r in rules}) == len(rules)  # CAPO keys the list by name
    # No rule ever opens the API port to everyone.
    assert not any(r["remoteIPPrefix"] in ("0.0.0.0/0", "::/0") for r in rules)


def test_docker_has_nothing_to_enforce() -> None:
    settings = settings_of(
        {
            "template": "simple",
            "provider": "docker",
            "network": {"apiAccess": ACCESS["internal"]},
        }
    )
    plan = api_access_plan(settings)
    assert plan.mechanism == "not-enforced"
    assert build_values(settings)["network"]["apiServerPort"] == DEFAULT_API_PORT


@pytest.mark.parametrize(
    ("mode", "provider", "says"),
    [
        ("open", "ovn", "API access open: anyone may reach the API"),
        ("internal", "amphora", "enforced by the amphora load balancer's allowed CIDRs"),
        ("cidrs", "ovn", "enforced by security-group rules on the control-plane nodes"),
    ],
)
def test_validate_says_which_mechanism_applies(
    mode: str, provider: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ruamel.yaml import YAML

    settings = _settings(mode, provider)
    path = tmp_path / "cluster.yaml"
    with path.open("w") as handle:
        YAML(typ="safe").dump(settings.model_dump(by_alias=True, exclude_unset=True), handle)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert says in out
    if provider == "ovn" and mode != "open":
        assert f"API port {OVN_RESTRICTED_API_PORT} from 203.0.113.0/24, {NODE_CIDR}" in out


def test_installed_api_port_cannot_move() -> None:
    old = build_values(_settings("open", "ovn"))
    new = build_values(_settings("internal", "ovn"))
    check_api_port_change(old, old)
    check_api_port_change({"network": {}}, build_values(_settings("cidrs", "amphora")))
    with pytest.raises(InputError, match="API server port from 6443 to 6444"):
        check_api_port_change(old, new)
    # A release from before the field existed listens on 6443.
    with pytest.raises(InputError, match="from 6443 to 6444"):
        check_api_port_change({"network": {"nodeCIDR": NODE_CIDR}}, new)
