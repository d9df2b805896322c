"""The REAL OpenStack cloud controller manager (OCCM) on a REAL workload API server, with the
REAL Keystone, Neutron and Octavia of the test stack: what the chart we install runs, with
the credentials our install writes, through our rotation and our delete.

- OCCM: ``k8s.io/cloud-provider-openstack`` at the release the services catalogue deploys
  for the plane's minor (chart 2.36.0, image v1.36.0; the test checks the two agree), built
  from its Go module by testenv/occm.py.
- The workload cluster: a real kube-apiserver with its own real kube-controller-manager
  (tests/support/workload_cluster.py); ``apply`` installs the REAL upstream OCCM and Cinder CSI
  charts with our values and syncs ``kube-system/cloud-config`` from the credentials Secret
  that the library wrote on the management plane as ``install`` writes it.
- No kubelet and no container runtime run here. :class:`OCCMContainers` plays the kubelet
  for OCCM's DaemonSet (a :class:`~tests.support.openstack_workload.PodContainers`): for each live
  Pod of it, it runs the real binary with the Pod's own container arguments and environment,
  and the Secret volume the Pod mounts written to a private directory in place of
  ``/etc/config`` (what the kubelet does). Two flags differ, on purpose:
  ``--controllers=service`` (the chart also runs cloud-node, cloud-node-lifecycle and route,
  which look servers up in Nova; this module's stack has no compute, and the node lifecycle
  controller would delete Nodes whose server it cannot find: tests/cloud/test_plane_occm_nodes.py
  runs the node controllers on servers that boot) and what a Pod gets from its
  ServiceAccount is a kubeconfig here (``--kubeconfig``, leader election and the serving
  port off). The other Pods of kube-system are reported Ready by
  :class:`~tests.support.openstack_workload.Kubelet`, as in the rotation test.
- The nodes' servers: a Neutron port per Node (device_id = the server ID of the Node's
  ``openstack:///`` provider ID, the Node's InternalIP its fixed IP), which is how OCCM
  finds the subnet of the load balancer and the ports its security group goes on.
- Floating IPs: the cluster's ``externalNetworkID`` is a real external network (an admin
  makes it, with a subnet), the cluster network's router has its gateway there, as CAPO
  makes it; the settings give OCCM that network (``floating-network-id`` in cloud.conf).
  Octavia runs with ``neutron_vips`` (tests/support/openstack_stack.py): the VIP is a real Neutron
  port, so OCCM's floating IP is made by the real Neutron on the real port. Octavia's
  worker keeps the noop network driver (no server to plug the VIP into), so after OCCM has
  deleted the load balancer its VIP port stays (a cloud's worker deletes it); the test
  shows that port is one our network cleanup deletes.

Proven: a Service of type LoadBalancer gets its Octavia load balancer (OCCM's name, a
listener per port, the nodes as members), OCCM's security group and OCCM's floating IP on
the VIP port (the Service's address; step (c)'s matcher recognises OCCM's description);
``openstack appcred rotate`` switches the credential, the DaemonSet's restart brings OCCM up
on the new one (it reconciles a changed Service with it), the old credential is gone;
``delete``'s step (a) deletes the Service and waits for OCCM, which deletes the floating IP,
the load balancer and its security group, so step (c) finds none of OCCM's left.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates._lifecycle.workload_cleanup import LB_CLEANUP_FINALIZER, clean_workload
from scs_templates._tools.kube import KubeClient
from scs_templates.providers.openstack.capo_names import capo_description, capo_network_name
from scs_templates.providers.openstack.cleanup import cleanup_cluster_network
from scs_templates.providers.openstack.leftovers import (
    clean_project_leftovers,
    load_balancer_api,
    occm_load_balancer_prefix,
)
from tests.support.openstack_fixtures import (
    OCTAVIA_NEUTRON_VIPS,
    Tenant,
    external_network,
    make_tenant,
)
from tests.support.openstack_workload import (
    CONFIG_MOUNT,
    Kubelet,
    PodContainers,
    go_program,
    installed,
    rotate_through_cli,
    wait,
)
from tests.support.workload_cluster import NODES, WorkloadCluster, apply, workload_cluster

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.helm import Helm
    from testenv import Plane
    from tests.support.openstack_stack import Stack

pytestmark = [pytest.mark.extra_builds]

CLUSTER = "occm"
DAEMONSET = "openstack-cloud-controller-manager"
LB_WAIT = 300.0


def occm_binary() -> Path:
    """OCCM, built when it is not cached (as the plane fixture builds the plane; ``make
    test``'s background ``build --all`` builds it last, and this waits for it under the build
    lock); without a Go toolchain skip, in CI fail."""
    from testenv import occm

    return go_program("OCCM", occm.binary(), occm.ensure_built)


@pytest.fixture(scope="module", autouse=True)
def occm_program() -> Path:
    """The binary, first of the module's fixtures (autouse): a skip comes before the stack
    and the plane start."""
    return occm_binary()


STACK = OCTAVIA_NEUTRON_VIPS


@pytest.fixture(scope="module")
def stack(shared_stack: Stack) -> Stack:
    """The session's stack of :data:`STACK` (tests/cloud/conftest.py)."""
    return shared_stack


@pytest.fixture(scope="module")
def tenant(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    return make_tenant(stack, tmp_path_factory.mktemp("occm-cloud"), CLUSTER)


class OCCMContainers(PodContainers):
    """OCCM's DaemonSet: the chart's one container, ``--controllers=`` :attr:`CONTROLLERS`
    and a kubeconfig (the module docstring)."""

    #: What this module runs of the chart's controllers (tests/cloud/test_plane_occm_nodes.py
    #: runs the node controllers on a Nova whose servers boot).
    CONTROLLERS = "service"

    def owned(self, pod: dict[str, Any]) -> bool:
        return any(
            ref.get("kind") == "DaemonSet" and ref.get("name") == DAEMONSET
            for ref in pod["metadata"].get("ownerReferences") or []
        )

    def argv(self, args: list[str], conf: Path, pod: dict[str, Any]) -> list[str]:
        assert args[0] == "/bin/openstack-cloud-controller-manager", args
        argv = [str(self.binary)]
        for arg in args[1:]:
            arg = arg.replace(CONFIG_MOUNT, str(conf))
            if arg.startswith("--controllers="):
                arg = f"--controllers={self.CONTROLLERS}"  # the module docstring
            argv.append(arg)
        return [
            *argv,
            f"--kubeconfig={self.cluster.kubeconfig}",
            "--leader-elect=false",
            "--secure-port=0",
        ]


def _node_servers(conn: Any, cluster: WorkloadCluster, settings: ClusterSettings) -> dict[str, str]:
    """The cluster's network, subnet and router as CAPO makes them (CAPO's names and
    description; the router's gateway on the external network, so that a floating IP can
    reach the subnet) and one port per Node (its server's), the Nodes given the provider ID
    and InternalIP of their server, as CAPO and the kubelet give them; node name -> IP."""
    name, description = capo_network_name(settings), capo_description(settings)
    network = conn.network.create_network(name=name, description=description)
    subnet = conn.network.create_subnet(
        network_id=network.id, ip_version=4, cidr="10.8.0.0/24", name=name
    )
    external = settings.spec.openstack.external_network_id
    router = conn.network.create_router(
        name=name, description=description, external_gateway_info={"network_id": external}
    )
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    addresses = {}
    for node in NODES:
        name = node["metadata"]["name"]
        server = str(uuid.uuid4())
        port = conn.network.create_port(network_id=network.id, name=name, device_id=server)
        [fixed] = [ip for ip in port.fixed_ips if ip["subnet_id"] == subnet.id]
        addresses[name] = fixed["ip_address"]
        cluster.server.request(
            "PATCH",
            cluster.server.path("v1", "Node", "", name),
            {"spec": {"providerID": f"openstack:///{server}"}},
            content_type="application/merge-patch+json",
        )
        cluster.server.patch_status(
            "v1",
            "Node",
            "",
            name,
            {
                "addresses": [
                    {"type": "InternalIP", "address": fixed["ip_address"]},
                    {"type": "Hostname", "address": name},
                ]
            },
        )
    return addresses


def _service(ports: list[int]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "type": "LoadBalancer",
            "selector": {"app": "web"},
            "ports": [{"name": f"p{p}", "port": p, "targetPort": 8080} for p in ports],
        },
    }


def _listeners(conn: Any, lb_id: str) -> dict[int, Any]:
    return {
        int(listener.protocol_port): listener
        for listener in conn.load_balancer.listeners(load_balancer_id=lb_id)
    }


def _occm_load_balancers(conn: Any) -> list[Any]:
    prefix = f"kube_service_{CLUSTER}_"
    return [lb for lb in conn.load_balancer.load_balancers() if lb.name.startswith(prefix)]


def _occm_groups(conn: Any) -> list[Any]:
    return [
        group
        for group in conn.network.security_groups()
        if group.name.startswith("lb-sg-")
        and str(group.description).endswith(f" in cluster {CLUSTER}")
    ]


def _occm_fips(conn: Any) -> list[Any]:
    return [
        fip
        for fip in conn.network.ips()
        if str(fip.description).startswith("Floating IP for Kubernetes external service ")
    ]


def test_occm_load_balancer_through_rotation_and_delete(
    occm_program: Path,
    api_plane: Plane,
    stack: Stack,
    tenant: Tenant,
    helm: Helm,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from testenv import occm

    binary = occm_program
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tenant.clouds_yaml))
    namespace = api_plane.namespace("occm")
    admin = stack.admin_connection()  # the cloud's external network, made by an admin
    try:
        external = str(external_network(admin).id)
    finally:
        admin.close()
    with installed(
        api_plane,
        tenant,
        namespace,
        name=CLUSTER,
        external_network=external,
        cloud_cluster_name=CLUSTER,  # OCCM's load balancers and floating IPs carry it
    ) as ready:
        settings, conn = ready.settings, ready.conn  # the credentials as install writes them
        first = ready.credentials["cloud.conf"]
        with workload_cluster(api_plane, settings, helm, tmp_path / "workload") as cluster:
            apply(cluster, settings)  # the real OCCM chart, cloud-config synced from the Secret
            daemonset = cluster.server.get("apps/v1", "DaemonSet", "kube-system", DAEMONSET)
            assert daemonset is not None
            [container] = daemonset["spec"]["template"]["spec"]["containers"]
            # the program built is the one the chart we install runs
            assert container["image"].endswith(f":{occm.version()}"), container["image"]
            addresses = _node_servers(conn, cluster, settings)
            cluster.server.ensure_namespace("shop")
            with (
                Kubelet(cluster),
                OCCMContainers(cluster, binary, tmp_path / "occm") as running,
            ):
                wait("OCCM's Pod to run", lambda: running.running, 120, running)
                assert [
                    (
                        f'application-credential-id="{first.id}"' in c,
                        f'floating-network-id="{external}"' in c,
                    )
                    for c in running.config_of_running()
                ] == [(True, True)]
                cluster.server.create(_service([80]))

                # a LoadBalancer Service: OCCM makes its Octavia load balancer
                def active() -> Any:
                    found = _occm_load_balancers(conn)
                    return found if found and found[0].provisioning_status == "ACTIVE" else None

                [lb] = wait("OCCM's load balancer ACTIVE", active, LB_WAIT, running)
                assert lb.name == f"{occm_load_balancer_prefix(settings)}shop_web"
                assert lb.name == f"kube_service_{CLUSTER}_shop_web"

                def ingress() -> Any:
                    svc = cluster.server.get("v1", "Service", "shop", "web") or {}
                    return ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress")

                [address] = wait("the Service's load balancer address", ingress, LB_WAIT, running)
                # OCCM's floating IP: made by the real Neutron on the real VIP port
                [fip] = _occm_fips(conn)
                assert address["ip"] == fip.floating_ip_address != lb.vip_address
                assert (fip.port_id, fip.floating_network_id) == (lb.vip_port_id, external)
                assert fip.fixed_ip_address == lb.vip_address
                assert fip.description == (
                    f"Floating IP for Kubernetes external service shop/web from cluster {CLUSTER}"
                )
                # step (c) would find what OCCM made by its names and descriptions
                found = clean_project_leftovers(
                    conn,
                    settings,
                    load_balancers=load_balancer_api(conn),
                    block_storage=None,
                    dry_run=True,
                )
                assert sorted((item.kind, item.id) for item in found.deleted) == sorted(
                    [("load balancer", lb.id), ("floating IP", fip.id)]
                    + [("security group", g.id) for g in _occm_groups(conn)]
                ), found.lines()
                svc = cluster.server.get("v1", "Service", "shop", "web")
                assert svc is not None
                assert LB_CLEANUP_FINALIZER in svc["metadata"]["finalizers"]
                node_port = svc["spec"]["ports"][0]["nodePort"]
                [listener] = _listeners(conn, lb.id).values()
                assert listener.protocol_port == 80
                [pool] = list(conn.load_balancer.pools(loadbalancer_id=lb.id))
                members = {
                    (m.address, m.protocol_port) for m in conn.load_balancer.members(pool.id)
                }
                assert members == {(ip, node_port) for ip in addresses.values()}
                [group] = _occm_groups(conn)
                assert group.description.startswith("Security Group for shop/web Service")

                # rotation: new credential, the DaemonSet restarted, OCCM on the new one
                new = rotate_through_cli(ready, first, tmp_path, capsys).new

                def restarted() -> bool:  # the restart made a new Pod: a new OCCM
                    return len(running.started) == 2 and len(running.running) == 1

                wait("OCCM's new Pod to run", restarted, 60, running)
                assert [
                    f'application-credential-id="{new.id}"' in c
                    for c in running.config_of_running()
                ] == [True]

                # the restarted OCCM works with the new credential: a changed Service
                cluster.server.request(
                    "PATCH",
                    cluster.server.path("v1", "Service", "shop", "web"),
                    {"spec": {"ports": _service([80, 443])["spec"]["ports"]}},
                    content_type="application/merge-patch+json",
                )
                wait(
                    "OCCM's listener for the new port",
                    lambda: set(_listeners(conn, lb.id)) == {80, 443},
                    LB_WAIT,
                    running,
                )

                # delete, step (a): the Service goes, OCCM deletes what it made
                with KubeClient(str(cluster.kubeconfig)) as client:
                    report = clean_workload(client, poll_interval=0.5, timeout=LB_WAIT)
                assert [item.describe() for item in report.deleted] == [
                    "Service shop/web (type LoadBalancer)"
                ]
                assert cluster.server.get("v1", "Service", "shop", "web") is None
                assert _occm_load_balancers(conn) == []
                assert _occm_groups(conn) == []
                assert _occm_fips(conn) == []
                left = clean_project_leftovers(
                    conn,
                    settings,
                    load_balancers=load_balancer_api(conn),
                    block_storage=None,
                    dry_run=True,
                )
                assert [d for d in left.deleted] == [], left.lines()
                # The VIP port: Octavia's noop worker leaves it (a cloud's worker deletes it).
                # DOWN, Octavia's, on the cluster's network inside the node CIDR: the network
                # cleanup after the Cluster's delete removes it.
                [vip] = conn.network.ports(name=f"octavia-lb-{lb.id}")
                assert (vip.device_owner, vip.status) == ("Octavia", "DOWN")
                network_left = cleanup_cluster_network(conn, settings, dry_run=True)
                assert ("port", vip.id) in {(i.kind, i.id) for i in network_left.planned}
