"""The REAL OpenStack cloud controller manager's node controllers on REAL Nova servers: a
Node registered as our kubeadm configuration registers it (``providerID:
openstack:///<server id>``, issue #15, 4) is initialized from ITS server, even when another
server of the project has the same name, and is deleted once its server is gone.

- OpenStack: the test stack with servers that boot (tests/support/openstack_stack.py,
  ``Stack.start_nova(compute=True)``: Placement and Nova's real conductor, scheduler and
  compute on Nova's ``fake.FakeDriver``; Neutron's real ``openvswitch`` mechanism driver
  binds the ports), Glance for the image, Octavia as the chart's cloud.conf expects a
  load-balancer service.
- OCCM: the module of tests/cloud/test_plane_occm.py (the same binary, chart, credentials and
  kubelet stand-in, :class:`~tests.cloud.test_plane_occm.OCCMContainers`), running the chart's
  ``cloud-node`` and ``cloud-node-lifecycle`` controllers (the chart runs them; the service
  and route controllers are the other module's and need no servers).
- The Nodes are the workload cluster's (tests/support/workload_cluster.py), as a kubelet with
  ``--cloud-provider=external`` registers them: the provider ID our kubelet arguments give
  (tests/cloud/test_plane_capo_machines.py proves what cloud-init makes of them on a CAPO server)
  and the ``node.cloudprovider.kubernetes.io/uninitialized`` taint. No kubelet runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.cloud.test_plane_occm import DAEMONSET, OCCMContainers, occm_binary
from tests.support.openstack_fixtures import BOOTING, Tenant, make_tenant
from tests.support.openstack_workload import Kubelet, installed, public_image, wait
from tests.support.workload_cluster import NODES, apply, workload_cluster

if TYPE_CHECKING:
    from scs_templates._tools.helm import Helm
    from testenv import Plane
    from tests.support.openstack_stack import Stack

pytestmark = [pytest.mark.extra_builds]

CLUSTER = "nodes"
UNINITIALIZED = "node.cloudprovider.kubernetes.io/uninitialized"
NODE_WAIT = 180.0


@pytest.fixture(scope="module", autouse=True)
def occm_program() -> Path:
    """The binary, first (autouse): a skip comes before the stack and the plane start."""
    return occm_binary()


STACK = BOOTING


@pytest.fixture(scope="module")
def stack(shared_stack: Stack) -> Stack:
    """The session's stack of :data:`STACK` (tests/cloud/conftest.py: Keystone, Neutron,
    Octavia, Glance, Placement and Nova with compute); two flavors and a public image, made
    by the admin as a cloud has them."""
    admin = shared_stack.admin_connection()
    admin.compute.create_flavor(name="node-flavor", vcpus=1, ram=1024, disk=10)
    admin.compute.create_flavor(name="other-flavor", vcpus=1, ram=512, disk=10)
    public_image(admin, "node-image")
    admin.close()
    return shared_stack


@pytest.fixture(scope="module")
def tenant(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    return make_tenant(stack, tmp_path_factory.mktemp("occm-nodes-cloud"), CLUSTER)


class NodeControllers(OCCMContainers):
    CONTROLLERS = "cloud-node,cloud-node-lifecycle"


def _boot(conn: Any, name: str, flavor: str, network_id: str) -> tuple[Any, str]:
    """A server ``name`` on its own port of ``network_id``, ACTIVE: (it, its fixed IP)."""
    port = conn.network.create_port(network_id=network_id, name=name)
    server = conn.compute.create_server(
        name=name,
        image_id=conn.image.find_image("node-image").id,
        flavor_id=conn.compute.find_flavor(flavor).id,
        networks=[{"port": port.id}],
    )
    server = conn.compute.wait_for_server(server, wait=NODE_WAIT)
    return server, port.fixed_ips[0]["ip_address"]


def _node(cluster: Any, name: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = cluster.server.get("v1", "Node", "", name)
    return found


def _taint_keys(node: dict[str, Any]) -> set[str]:
    return {t["key"] for t in (node.get("spec") or {}).get("taints") or []}


def test_occm_initializes_each_node_from_its_own_server_and_deletes_a_gone_ones_node(
    occm_program: Path,
    api_plane: Plane,
    stack: Stack,
    tenant: Tenant,
    helm: Helm,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tenant.clouds_yaml))
    namespace = api_plane.namespace("occm-nodes")
    with installed(api_plane, tenant, namespace, name=CLUSTER) as ready:
        settings, conn = ready.settings, ready.conn
        network = conn.network.create_network(name=f"k8s-clusterapi-cluster-{namespace}-nodes")
        conn.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.9.0.0/24")
        servers = {}
        for node in NODES:
            name = node["metadata"]["name"]
            servers[name] = _boot(conn, name, "node-flavor", network.id)
        # A second server with a worker's name (another cluster's, or a leftover): a lookup
        # by name would be ambiguous; the provider ID is not.
        worker = NODES[-1]["metadata"]["name"]
        decoy, decoy_ip = _boot(conn, worker, "other-flavor", network.id)
        with workload_cluster(api_plane, settings, helm, tmp_path / "workload") as cluster:
            apply(cluster, settings)  # the real OCCM chart, cloud-config synced from the Secret
            daemonset = cluster.server.get("apps/v1", "DaemonSet", "kube-system", DAEMONSET)
            assert daemonset is not None
            [container] = daemonset["spec"]["template"]["spec"]["containers"]
            [controllers] = [a for a in container["args"] if a.startswith("--controllers=")]
            assert {"cloud-node", "cloud-node-lifecycle"} <= set(
                controllers.removeprefix("--controllers=").split(",")
            ), controllers
            for node in NODES:  # registered as a kubelet with --cloud-provider=external does
                name = node["metadata"]["name"]
                taints = [*(node.get("spec") or {}).get("taints", [])]
                taints.append({"key": UNINITIALIZED, "value": "true", "effect": "NoSchedule"})
                cluster.server.request(
                    "PATCH",
                    cluster.server.path("v1", "Node", "", name),
                    {
                        "spec": {
                            "providerID": f"openstack:///{servers[name][0].id}",
                            "taints": taints,
                        }
                    },
                    content_type="application/merge-patch+json",
                )
            with (
                Kubelet(cluster),
                NodeControllers(cluster, occm_program, tmp_path / "occm") as running,
            ):
                wait("OCCM's Pod to run", lambda: running.running, 120, running)

                def initialized() -> bool:
                    nodes = [_node(cluster, n["metadata"]["name"]) or {} for n in NODES]
                    return all(UNINITIALIZED not in _taint_keys(n) for n in nodes)

                wait("OCCM to initialize the Nodes", initialized, NODE_WAIT, running)
                for name, (server, ip) in servers.items():
                    node = _node(cluster, name)
                    assert node is not None
                    labels = node["metadata"]["labels"]
                    assert labels["node.kubernetes.io/instance-type"] == "node-flavor", name
                    assert labels["topology.kubernetes.io/zone"] == server.availability_zone
                    assert labels["topology.kubernetes.io/region"] == "RegionOne"
                    addresses = {(a["type"], a["address"]) for a in node["status"]["addresses"]}
                    assert ("InternalIP", ip) in addresses, addresses
                    assert ("InternalIP", decoy_ip) not in addresses, addresses
                    assert node["spec"]["providerID"] == f"openstack:///{server.id}"

                # The worker's server is deleted; its Node goes NotReady (no kubelet reports):
                # the node lifecycle controller finds no server for its provider ID and
                # deletes the Node, although a server of that name (the decoy) still exists.
                gone, _ = servers[worker]
                conn.compute.delete_server(gone)
                conn.compute.wait_for_delete(gone, wait=NODE_WAIT)
                cluster.server.patch_status(
                    "v1",
                    "Node",
                    "",
                    worker,
                    {"conditions": [{"type": "Ready", "status": "False", "reason": "Test"}]},
                )
                wait(
                    "OCCM to delete the gone server's Node",
                    lambda: _node(cluster, worker) is None,
                    NODE_WAIT,
                    running,
                )
                assert conn.compute.get_server(decoy.id).status == "ACTIVE"
                control_plane = NODES[0]["metadata"]["name"]
                assert _node(cluster, control_plane) is not None
