"""The REAL CAPO reconciles an OpenStackCluster against the REAL test OpenStack: on an
existing network with extra node rules, and with a rotated credential that it uses before
the old one is deleted; and it applies the production example's
``apiAccess`` as the settings promise (security-group rules on ovn, the listener's allowed
CIDRs on amphora), falling back silently to the default provider when Octavia does not offer
the one asked for (which the preflight refuses).

- OpenStack: the local test stack (tests/support/openstack_stack.py): Keystone 30.0.0, Neutron
  29.0.0 (ML2 + the router plugin, no agents), Octavia 19.0.0 (API + controller worker on its
  noop drivers), and the Nova 34.0.0 API (no compute: CAPO's cluster reconcile only asks it
  for the API version and the availability zones). An external network made by the admin,
  as a cloud has one.
- Kubernetes: a real plane (testenv/) with the real CAPI core manager and the real CAPO
  v0.14.7 manager only (no CAPD: its fixed ports would wait for any other plane). The
  Cluster and the OpenStackCluster are the chart's render for the settings (the Cluster
  without its control plane: no server can boot here, and the question is the cluster's
  infrastructure).
- The proof that CAPO authenticates with the new credential is Keystone's: the stack's
  observer (tests/support/openstack_wsgi.py ``audited``) records every token Keystone issues, with
  the application credential and the User-Agent (CAPO's gophercloud says
  ``cluster-api-provider-openstack/...``), and every application credential deleted, in
  order.

The chart's network choices (issue #16): on an existing network and subnet of the project
(``openstack.existingNetwork``), without an API floating IP, with extra node rules
(``openstack.nodeSecurityGroupRules``), CAPO makes no network, subnet or router, puts the
API load balancer on that subnet, creates each rule in both node security groups, and on
deletion leaves the project's network alone.

``rotate`` must delete the old credential only after CAPO got a token for the new one and
finished a reconcile with it; after the deletion CAPO still reconciles (it deletes the
cluster's network, router, security groups and load balancer with the new credential). When
CAPO does not reconcile (the cluster is paused), ``rotate`` keeps the old credential, says
why, and the next run finishes once CAPO reconciles again.
"""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from ruamel.yaml import YAML

from scs_templates import _lifecycle as lifecycle
from scs_templates import api
from scs_templates._core.errors import ToolError
from scs_templates._settings.model import ClusterSettings
from scs_templates._settings.validate import parse_settings_text
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient
from scs_templates.providers.openstack.appcred import (
    delete_cluster_credentials,
    ensure_cluster_credentials,
)
from scs_templates.providers.openstack.capo_fence import FENCE_REASON, ready_condition
from scs_templates.providers.openstack.capo_names import (
    capo_resource_name,
    capo_security_group_names,
)
from scs_templates.providers.openstack.credentials_secret import (
    credentials_secret_data,
    parse_credentials_secret,
)
from scs_templates.providers.openstack.preflight import run_preflight
from scs_templates.providers.openstack.rotation import rotate_credentials
from tests.support import REPO, plane_with_managers, wait_on_plane
from tests.support.openstack_fixtures import OCTAVIA_CINDER_NOVA_API, Tenant, make_tenant
from tests.support.workload_cluster import empty_workload

if TYPE_CHECKING:
    from testenv import Plane
    from tests.support.openstack_stack import Stack


INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
CAPI = "cluster.x-k8s.io/v1beta2"
CAPO_AGENT = "cluster-api-provider-openstack/"
#: Seconds for CAPO to build the cluster's infrastructure (Octavia's flows take a while on
#: 2 loaded cores) and to delete it.
RECONCILE_TIMEOUT = 600.0


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    """etcd, kube-apiserver, kube-controller-manager, CAPI core and CAPO."""
    yield from plane_with_managers(tmp_path_factory, "capo-plane", ("capi-core", "capo"))


#: Octavia and the Nova API for CAPO's OpenStackCluster reconcile (Cinder: the stack is the
#: Cinder CSI module's too).
STACK = OCTAVIA_CINDER_NOVA_API


@pytest.fixture(scope="module")
def stack(shared_stack: Stack) -> Stack:
    """The session's stack of :data:`STACK` (tests/cloud/conftest.py), and the admin's
    external network."""
    admin = shared_stack.admin_connection()
    public = admin.network.create_network(
        name="public", is_router_external=True, provider_network_type="vxlan"
    )
    admin.network.create_subnet(
        network_id=public.id, cidr="203.0.113.0/24", ip_version=4, name="public"
    )
    admin.close()
    return shared_stack


@pytest.fixture(scope="module")
def tenant(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    return make_tenant(stack, tmp_path_factory.mktemp("capo-cloud"), "capo")


def _settings(
    namespace: str, cloud: str, *, name: str = "capo", network: str = "", openstack: str = ""
) -> ClusterSettings:
    """One control-plane machine and one worker without an API floating IP; ``network`` and
    ``openstack``: further lines of those sections (indented as there)."""
    text = f"""apiVersion: scs-templates.scs.community/v1alpha1
kind: ClusterSettings
metadata:
  name: {name}
  namespace: {namespace}
spec:
  provider: openstack
  controlPlane:
    replicas: 1
    machineType: SCS-2V-4-20s
  workers:
    - name: workers
      replicas: 1
      machineType: SCS-2V-4-20s{network}
  openstack:
    cloud: {cloud}
    apiFloatingIP: false{openstack}
"""
    return parse_settings_text(text).settings


def _infrastructure(settings: ClusterSettings, helm: Helm) -> list[dict[str, Any]]:
    """The chart's Cluster (without its control plane) and OpenStackCluster."""
    objects = api.render(settings, helm=helm).objects
    cluster = next(o for o in objects if o["kind"] == "Cluster")
    spec = {k: v for k, v in cluster["spec"].items() if k != "controlPlaneRef"}
    infra = next(o for o in objects if o["kind"] == "OpenStackCluster")
    return [infra, cluster | {"spec": spec}]


def _create(
    plane: Plane, conn: Any, kube: KubeClient, settings: ClusterSettings, helm: Helm
) -> tuple[Any, dict[str, Any]]:
    """The cluster's credentials made and stored in its Secret, then the chart's
    OpenStackCluster and Cluster applied: (the credentials, the OpenStackCluster)."""
    credentials = ensure_cluster_credentials(conn, settings)
    content = credentials_secret_data(credentials, settings)
    lifecycle.store_credentials(kube, settings, {k: v.reveal() for k, v in content.items()})
    infra, cluster = _infrastructure(settings, helm)
    namespace = settings.metadata.namespace
    for obj in (infra, cluster):
        plane.api.apply(obj | {"metadata": obj["metadata"] | {"namespace": namespace}})
    return credentials, infra


def _capo_tokens(stack: Stack, credential_id: str, after: int = 0) -> list[dict[str, Any]]:
    return [
        e
        for e in stack.keystone_events()
        if e["event"] == "token"
        and e["seq"] > after
        and e.get("credential") == credential_id
        and e["agent"].startswith(CAPO_AGENT)
    ]


def rotate_waiting_for_capo(
    conn: Any, settings: ClusterSettings, kube: KubeClient, workload: KubeClient
) -> Any:
    """``rotate_credentials`` as a user runs it, waiting up to :data:`RECONCILE_TIMEOUT` for
    CAPO to reconcile with the new credential (the OCCM/CSI restarts on ``workload``)."""
    return rotate_credentials(
        conn, settings, kube, workload=workload, timeout=RECONCILE_TIMEOUT, poll_interval=1
    )


def _deleted_at(stack: Stack, credential_id: str) -> int:
    return next(
        int(e["seq"])
        for e in stack.keystone_events()
        if e["event"] == "delete-credential" and e["credential"] == credential_id
    )


def _wait(what: str, check: Any, plane: Plane, timeout: float = RECONCILE_TIMEOUT) -> Any:
    return wait_on_plane(what, check, plane, timeout)


def _cluster_resources(conn: Any, name: str) -> dict[str, list[str]]:
    """What CAPO made for the cluster in the tenant's project, by kind. ``name``: CAPO's
    ``$NAMESPACE-$CLUSTER`` (k8s-clusterapi-cluster-..., k8s-cluster-...-secgroup-...)."""
    return {
        "networks": sorted(n.name for n in conn.network.networks() if name in n.name),
        "subnets": sorted(s.name for s in conn.network.subnets() if name in s.name),
        "routers": sorted(r.name for r in conn.network.routers() if name in r.name),
        "security groups": sorted(g.name for g in conn.network.security_groups() if name in g.name),
        "load balancers": sorted(
            lb.name for lb in conn.load_balancer.load_balancers() if name in lb.name
        ),
    }


def _ready(plane: Plane, namespace: str, name: str) -> Any:
    """The OpenStackCluster once CAPO set it Ready, else None."""
    found = plane.api.get(INFRA, "OpenStackCluster", namespace, name) or {}
    return found if (found.get("status") or {}).get("ready") else None


def _wait_ready(plane: Plane, namespace: str, name: str) -> dict[str, Any]:
    """Wait until CAPO made the OpenStackCluster ``name`` Ready; it."""
    found = _wait(f"OpenStackCluster {name} Ready", lambda: _ready(plane, namespace, name), plane)
    return dict(found)


def _delete(plane: Plane, namespace: str, cluster: str, name: str) -> None:
    """Delete the Cluster and wait until CAPO deleted the OpenStackCluster ``name``."""
    plane.api.delete(CAPI, "Cluster", namespace, cluster)
    _wait(
        f"OpenStackCluster {name} deleted",
        lambda: plane.api.get(INFRA, "OpenStackCluster", namespace, name) is None,
        plane,
    )


def test_capo_reconciles_with_the_rotated_credential_before_the_old_is_deleted(
    plane: Plane, stack: Stack, tenant: Tenant, helm: Helm, tmp_path: Path
) -> None:
    namespace = plane.namespace("capo-rotate")
    settings = _settings(namespace, tenant.cloud)
    conn = tenant.connect()
    kube = KubeClient(str(plane.kubeconfig))
    try:
        credentials, infra = _create(plane, conn, kube, settings, helm)
        first = credentials.cluster.credential
        name = infra["metadata"]["name"]
        capo_name = f"-{namespace}-capo"

        def set_paused(paused: bool) -> None:
            """Pause or unpause the Cluster: CAPO reconciles nothing of a paused cluster."""
            plane.api.apply(
                {
                    "apiVersion": CAPI,
                    "kind": "Cluster",
                    "metadata": {"name": "capo", "namespace": namespace},
                    "spec": {"paused": paused},
                },
                manager="test-pause",
            )

        built = _wait_ready(plane, namespace, name)
        made = _cluster_resources(conn, capo_name)
        assert all(made.values()), made  # network, subnet, router, groups, load balancer
        assert built["status"]["network"]["id"] and built["status"]["router"]["id"]
        assert built["status"]["apiServerLoadBalancer"]["id"]
        assert _capo_tokens(stack, first.id), "CAPO never authenticated with the credential"

        # the workload cluster: an empty real kube-apiserver (the OCCM/CSI restarts are
        # proven in test_plane_appcred_rotation.py)
        with empty_workload(plane, "capo-workload", tmp_path) as workload:
            # paused: CAPO does not reconcile, so the old credential is kept, and why
            set_paused(True)
            with pytest.raises(ToolError, match="no reconcile since the switch") as refused:
                rotate_credentials(
                    conn, settings, kube, workload=workload, timeout=30, poll_interval=1
                )
            assert "old credential is kept" in str(refused.value)
            switched = parse_credentials_secret(
                kube.secret_data(namespace, "capi-capo-cloud-config") or {}, tenant.cloud
            )["clouds.yaml"]
            assert switched.id != first.id
            assert conn.identity.find_application_credential(conn.current_user_id, first.id), (
                "the old credential was deleted although CAPO never used the new one"
            )
            osc = plane.api.get(INFRA, "OpenStackCluster", namespace, name)
            assert (ready_condition(osc) or {}).get("reason") == FENCE_REASON

            # unpaused: the next run finishes once CAPO reconciled with the new one
            marker = stack.keystone_events()[-1]["seq"]
            set_paused(False)
            report = rotate_waiting_for_capo(conn, settings, kube, workload)
            assert report.created == []  # finishing, no third credential
            assert report.confirmed == [f"OpenStackCluster {namespace}/{name}"]
            assert [c.id for c in report.deleted] == [first.id]

        # Keystone's record: CAPO got a token for the NEW credential before the old one
        # was deleted, and none for the old one after the pause was lifted
        deleted = _deleted_at(stack, first.id)
        new_tokens = _capo_tokens(stack, switched.id, after=marker)
        assert new_tokens and new_tokens[0]["seq"] < deleted, (new_tokens, deleted)
        assert all(t["status"] == 201 for t in new_tokens)
        assert not [t for t in _capo_tokens(stack, first.id, after=marker) if t["status"] == 201]
        osc = plane.api.get(INFRA, "OpenStackCluster", namespace, name)
        assert (ready_condition(osc) or {}).get("status") == "True"

        # after the deletion CAPO still works, with the new credential only: it deletes
        # the cluster's infrastructure
        _delete(plane, namespace, "capo", name)
        assert not any(_cluster_resources(conn, capo_name).values()), _cluster_resources(
            conn, capo_name
        )
        assert _capo_tokens(stack, switched.id, after=deleted) or new_tokens
        assert not [t for t in _capo_tokens(stack, first.id, after=deleted) if t["status"] == 201]
    finally:
        kube.close()
        conn.close()


# --------------------------------------------------------------------------- apiAccess

#: The preflight check that refuses a load balancer provider the cloud does not offer.
PROVIDER_CHECK = "load-balancer-provider"
#: The production example's API access (examples/openstack-production.yaml): who may reach
#: the API, written out here so the test does not read it through the code it checks.
PRODUCTION_SOURCES = {"203.0.113.0/24", "198.51.100.17/32", "10.20.0.0/20", "192.0.2.10/32"}


def _production(namespace: str, cloud: str, external: str, **changes: str) -> ClusterSettings:
    """examples/openstack-production.yaml in ``namespace`` on the tenant's cloud and the
    stack's external network; ``changes``: name, nodeCIDR, loadBalancerProvider."""
    yaml = YAML()
    document = yaml.load((REPO / "examples" / "openstack-production.yaml").read_text())
    document["metadata"]["namespace"] = namespace
    document["metadata"]["name"] = changes.get("name", document["metadata"]["name"])
    spec = document["spec"]
    spec["network"]["nodeCIDR"] = changes.get("nodeCIDR", spec["network"]["nodeCIDR"])
    spec["openstack"]["cloud"] = cloud
    spec["openstack"]["externalNetworkID"] = external
    # as in the rotation test: the API's floating IP changes nobody's access (CAPO's allowed
    # CIDRs do not name it) and only adds a Neutron round trip per reconcile here
    spec["openstack"]["apiFloatingIP"] = False
    provider = changes.get("loadBalancerProvider", spec["openstack"]["loadBalancerProvider"])
    spec["openstack"]["loadBalancerProvider"] = provider
    text = StringIO()
    yaml.dump(document, text)
    return parse_settings_text(text.getvalue()).settings


def _reach_api(conn: Any, group_id: str, port: int) -> list[tuple[str, str]]:
    """Who the security group admits to tcp ``port``: ("prefix", CIDR) or ("group", ID) per
    ingress rule (a rule without either admits everyone: ("prefix", "0.0.0.0/0"))."""
    admitted = []
    for rule in conn.network.security_group_rules(security_group_id=group_id):
        if rule.direction != "ingress" or rule.protocol not in (None, "tcp", "6"):
            continue
        low, high = rule.port_range_min, rule.port_range_max
        if low is not None and not (low <= port <= (high if high is not None else low)):
            continue
        if rule.remote_group_id:
            admitted.append(("group", str(rule.remote_group_id)))
        else:
            admitted.append(("prefix", str(rule.remote_ip_prefix or "0.0.0.0/0")))
    return sorted(admitted)


def _listener(conn: Any, lb_id: str) -> Any:
    """The one listener of Octavia's load balancer ``lb_id``."""
    (listener,) = [
        item
        for item in conn.load_balancer.listeners()
        if any(lb["id"] == lb_id for lb in item.load_balancers)
    ]
    return listener


def test_capo_enforces_the_production_examples_api_access_on_ovn_and_amphora(
    plane: Plane, stack: Stack, tenant: Tenant, helm: Helm
) -> None:
    """The production example's ``apiAccess: cidrs`` as the REAL CAPO v0.14.7 applies it to
    the REAL Neutron and Octavia, for both load balancer providers, one cluster after the
    other (one Octavia load balancer at a time: two at once starved each other on this
    loaded 2-core machine and ran past the Ready timeout):

    - ``ovn``: CAPO creates the control-plane security group with the chart's rules, and the
      API port 6444 is reachable from exactly the allowed sources (the example's CIDRs, the
      node CIDR, the management CIDR) and the cluster's own security groups; CAPO's own
      "Kubernetes API" rule opens 6443 to everyone (why the API is not on 6443); the rules
      are the same once CAPO set the cluster Ready (every reconcile reconciles the security
      groups, deleting rules it did not ask for, before the load balancer:
      controllers/openstackcluster_controller.go, reconcileNetworkComponents).
    - This Octavia offers no ``ovn`` provider (its driver needs OVN's northbound database and
      Neutron's OVN driver, which do not run here), and CAPO then makes the load balancer
      with the DEFAULT provider, saying so only in an ``OctaviaProviderNotFound`` event
      (title-cased): an amphora listener on 6444 without allowed CIDRs, so the API is open.
      The preflight's ``load-balancer-provider`` check (run by install) refuses the ovn
      settings on this cloud (exit 2) and passes the amphora ones.
    - ``amphora``: the listener on 6443 has exactly the allowed sources plus what CAPO adds
      (the node subnet and the router's IPs) as Octavia's ``allowed_cidrs``, and the
      control-plane group has no rule of ours.

    Deleting each Cluster, CAPO removes everything it made."""
    namespace = plane.namespace("capo-access")
    conn = tenant.connect()
    kube = KubeClient(str(plane.kubeconfig))
    admin = stack.admin_connection()
    external = admin.network.find_network("public").id
    admin.close()
    ovn = _production(namespace, tenant.cloud, external)
    amphora = _production(
        namespace,
        tenant.cloud,
        external,
        name="prod2",
        nodeCIDR="10.21.0.0/20",
        loadBalancerProvider="amphora",
    )

    def build(settings: ClusterSettings) -> str:
        """The cluster's credentials Secret, OpenStackCluster and Cluster; CAPO's name."""
        return str(_create(plane, conn, kube, settings, helm)[1]["metadata"]["name"])

    def delete(settings: ClusterSettings, name: str) -> None:
        """Delete the Cluster; CAPO leaves nothing of it in Neutron and Octavia."""
        _delete(plane, namespace, settings.metadata.name, name)
        left = _cluster_resources(conn, f"-{capo_resource_name(settings)}")
        assert not any(left.values()), left

    def groups(settings: ClusterSettings) -> dict[str, str]:
        wanted = capo_security_group_names(settings)
        return {g.name: g.id for g in conn.network.security_groups() if g.name in wanted}

    try:
        # ovn: the control-plane group's rules
        name = build(ovn)
        ovn_infra = plane.api.get(INFRA, "OpenStackCluster", namespace, name) or {}
        assert ovn_infra["spec"]["apiServerPort"] == 6444
        assert "allowedCIDRs" not in (ovn_infra["spec"].get("apiServerLoadBalancer") or {})

        def ovn_rules() -> Any:
            control_plane = groups(ovn).get(capo_security_group_names(ovn)[0])
            if not control_plane:
                return None
            admitted = _reach_api(conn, control_plane, 6444)
            return admitted if ("prefix", "192.0.2.10/32") in admitted else None

        admitted = _wait("CAPO's control-plane security group with the API rules", ovn_rules, plane)
        own_groups = set(groups(ovn).values())
        assert {cidr for kind, cidr in admitted if kind == "prefix"} == PRODUCTION_SOURCES
        assert {ident for kind, ident in admitted if kind == "group"} <= own_groups
        control_plane = groups(ovn)[capo_security_group_names(ovn)[0]]
        assert ("prefix", "0.0.0.0/0") in _reach_api(conn, control_plane, 6443)  # CAPO's own

        # ovn on a cloud whose Octavia does not offer it: CAPO falls back to the default
        # provider with an event only, and the API is open (an amphora listener without
        # allowed CIDRs, forwarding from its own address in the node CIDR). preflight
        # (so install) refuses these settings on such a cloud.
        fallen_back = _wait_ready(plane, namespace, name)
        assert _reach_api(conn, control_plane, 6444) == admitted
        ovn_lb = conn.load_balancer.get_load_balancer(
            fallen_back["status"]["apiServerLoadBalancer"]["id"]
        )
        assert ovn_lb.provider == "amphora"
        ovn_listener = _listener(conn, ovn_lb.id)
        assert ovn_listener.protocol_port == 6444 and not ovn_listener.allowed_cidrs
        # CAPO title-cases its event reasons (pkg/record/recorder.go: cases.Title), so its
        # "OctaviaProviderNotFound" reads Octaviaprovidernotfound; the Normal event's message
        # formats a pointer where the provider belongs ("Provider %!s(optional.String=0x...)
        # specified ..."), so neither event names the provider
        said = [
            (event.get("type"), str(event.get("message")))
            for event in plane.api.list("v1", "Event", namespace)
            if (event.get("involvedObject") or {}).get("name") == name
            and event.get("reason") == "Octaviaprovidernotfound"
        ]
        assert ("Warning", "Provider specified for Octavia not found.") in said, said
        assert any(
            kind == "Normal" and message.endswith(" using the default provider.")
            for kind, message in said
        ), said
        # (the stack's Nova has none of the example's flavors or its keypair: those checks
        # fail too; only this one is the question here)
        (check,) = [r for r in run_preflight(conn, ovn).results if r.name == PROVIDER_CHECK]
        assert check.status == "failed" and check.in_settings, check
        assert "ovn is not offered by this cloud's Octavia (offered: amphora" in check.message
        assert "apiAccess cidrs would not hold" in check.message
        (check,) = [r for r in run_preflight(conn, amphora).results if r.name == PROVIDER_CHECK]
        assert check.status == "ok", check
        delete(ovn, name)

        # amphora: the listener's allowed_cidrs, no rule of ours
        name = build(amphora)
        built = _wait_ready(plane, namespace, name)
        assert built["spec"].get("apiServerPort", 6443) == 6443
        listener = _listener(conn, built["status"]["apiServerLoadBalancer"]["id"])
        assert listener.protocol_port == 6443
        subnet_cidrs = {s["cidr"] for s in built["status"]["network"]["subnets"]}
        router_ips = {f"{ip}/32" for ip in built["status"]["router"].get("ips") or []}
        expected = {"203.0.113.0/24", "198.51.100.17/32", "10.21.0.0/20", "192.0.2.10/32"}
        assert set(listener.allowed_cidrs) == expected | subnet_cidrs | router_ips
        amphora_cp = groups(amphora)[capo_security_group_names(amphora)[0]]
        assert not [
            r
            for r in conn.network.security_group_rules(security_group_id=amphora_cp)
            if (r.description or "").startswith("Kubernetes API from ")
        ]
        delete(amphora, name)
    finally:
        for settings in (ovn, amphora):
            delete_cluster_credentials(conn, settings)
        kube.close()
        conn.close()


#: The extra node rules of the snapshot scenario openstack-network-volumes, as settings
NODE_RULES = """
    nodeSecurityGroupRules:
      - name: nodeports-office
        description: NodePorts from the office
        protocol: tcp
        portRangeMin: 30000
        portRangeMax: 32767
        remoteIPPrefix: 198.51.100.0/24
      - name: icmp
        protocol: icmp"""


def _rule(rule: Any) -> tuple[Any, ...]:
    """A Neutron security-group rule as the fields the settings give (and none else)."""
    return (
        rule.direction,
        rule.ether_type,
        rule.protocol,
        rule.port_range_min,
        rule.port_range_max,
        rule.remote_ip_prefix,
        rule.remote_group_id,
        rule.description or "",
    )


def test_capo_builds_on_an_existing_network_with_the_extra_node_rules(
    plane: Plane, tenant: Tenant, helm: Helm
) -> None:
    """openstack.existingNetwork (the network by name, the subnet by ID), apiFloatingIP false
    and nodeSecurityGroupRules, reconciled by the REAL CAPO against the real Neutron and
    Octavia: CAPO uses the project's own network and subnet (makes no network, subnet or
    router), puts the API load balancer's address on that subnet, and both node security
    groups hold each extra rule exactly as the settings give it; deleting the cluster removes
    what CAPO made and leaves the project's network and subnet alone."""
    namespace = plane.namespace("capo-net")
    conn = tenant.connect()
    kube = KubeClient(str(plane.kubeconfig))
    network = conn.network.create_network(name="project-net")
    subnet = conn.network.create_subnet(
        network_id=network.id, cidr="10.30.0.0/24", ip_version=4, name="project-subnet"
    )
    try:
        existing = f"""
    existingNetwork:
      network: project-net
      subnet: {subnet.id}"""
        settings = _settings(
            namespace,
            tenant.cloud,
            name="net",
            network="\n  network:\n    nodeCIDR: 10.30.0.0/24",
            openstack=existing + NODE_RULES,
        )
        _, infra = _create(plane, conn, kube, settings, helm)
        assert infra["spec"]["network"] == {"filter": {"name": "project-net"}}
        assert infra["spec"]["subnets"] == [{"id": subnet.id}]
        assert "managedSubnets" not in infra["spec"]
        name = infra["metadata"]["name"]
        capo_name = f"-{namespace}-net"
        status = _wait_ready(plane, namespace, name)["status"]
        assert status["network"]["id"] == network.id
        assert [s["id"] for s in status["network"]["subnets"]] == [subnet.id]
        assert "router" not in status, status.get("router")
        made = _cluster_resources(conn, capo_name)
        assert made["networks"] == made["subnets"] == made["routers"] == [], made
        assert len(made["security groups"]) == 2 and len(made["load balancers"]) == 1, made
        (balancer,) = [lb for lb in conn.load_balancer.load_balancers() if capo_name in lb.name]
        assert balancer.vip_subnet_id == subnet.id

        wanted = {
            (
                "ingress",
                "IPv4",
                "tcp",
                30000,
                32767,
                "198.51.100.0/24",
                None,
                "NodePorts from the office",
            ),
            ("ingress", "IPv4", "icmp", None, None, None, None, ""),
        }
        for group_id in (
            status["controlPlaneSecurityGroup"]["id"],
            status["workerSecurityGroup"]["id"],
        ):
            rules = {
                _rule(r) for r in conn.network.security_group_rules(security_group_id=group_id)
            }
            assert wanted <= rules, sorted(rules, key=str)

        _delete(plane, namespace, "net", name)
        assert not any(_cluster_resources(conn, capo_name).values()), _cluster_resources(
            conn, capo_name
        )
        assert conn.network.get_network(network.id).id == network.id
        assert conn.network.get_subnet(subnet.id).id == subnet.id
    finally:
        kube.close()
        conn.network.delete_subnet(subnet.id, ignore_missing=True)
        conn.network.delete_network(network.id, ignore_missing=True)
        conn.close()
