"""The REAL CAPO boots a cluster's control-plane server on the REAL test OpenStack, and
``delete`` then leaves nothing of the cluster in the project (issue #15).

- OpenStack: the local test stack (tests/support/openstack_stack.py) with servers that boot:
  Keystone, Neutron (its real ``openvswitch`` mechanism driver binds the server's port on
  the compute host's agent record), Octavia (API + worker on noop drivers), Glance (file
  store), Placement, and Nova: API, conductor, scheduler and compute, all real, the compute
  service on Nova's own ``fake.FakeDriver`` virt driver (the server goes ACTIVE, no VM runs).
- Kubernetes: a real plane (testenv/) with the real CAPI core, kubeadm bootstrap, kubeadm
  control plane and CAPO v0.14.7 managers (no CAPD: its fixed ports would wait for any other
  plane).
- The cluster goes through the product's own path: ``lifecycle.install`` (preflight against
  the real Nova and Glance, the per-cluster application credential, the server groups, the
  credentials Secret, helm) and ``lifecycle.delete`` (the Cluster, then the cloud cleanup).

Proven here, and nowhere else against real services:
- CAPO's server for the KubeadmControlPlane's machine: ACTIVE on the compute host, with the
  chart's image and flavor, in the control plane's server group, on a port of the cluster's
  network bound to that host, with CAPO's control-plane security group.
- Node registration as CAPO's reference template does it (issue #15, 4): the kubelet's
  ``provider-id`` in the bootstrap data CAPO handed to Nova, rendered as cloud-init renders it
  on that server (its Jinja with the instance's ID and host name), is the OpenStackMachine's
  ``spec.providerID``, ``openstack:///<server id>``; the node name is the server's host name.
- ``openstack appcred rotate`` right after ``install``, while CAPO builds the cluster's
  infrastructure: the rotation deletes the old credential only after CAPO got a token for
  the new one (Keystone's record, tests/support/openstack_wsgi.py ``audited``); CAPO then asks Nova
  for the server with the new credential (in the run of 2026-12-04 the server's create came
  8 s after the old credential's deletion), the server goes ACTIVE, exactly one, and CAPO
  deletes everything with the new credential, the old one never again authenticated.
- ``delete``: CAPO deletes the server and its port, then the cluster's network; step (c)
  removes the server groups and the application credential; the project keeps nothing of
  the cluster.

The one thing a cloud does that this cannot: run the server, so no kubelet registers a Node
(the KubeadmControlPlane waits for an API server that never answers; the workers' bootstrap
data waits for an initialized control plane, so their servers are never asked for).
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from ruamel.yaml import YAML

from scs_templates import _lifecycle as lifecycle
from scs_templates import api
from scs_templates._settings.model import ClusterSettings
from scs_templates._settings.validate import parse_settings_text
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient
from scs_templates.providers.openstack.credentials_secret import parse_credentials_secret
from scs_templates.providers.openstack.values import credentials_secret_name
from tests.cloud.test_plane_capo_rotation import _capo_tokens, _deleted_at, rotate_waiting_for_capo
from tests.support import pinned_helm, plane_with_managers, wait_on_plane
from tests.support.openstack_fixtures import BOOTING, Tenant, external_network, make_tenant
from tests.support.openstack_workload import public_image
from tests.support.workload_cluster import empty_workload

if TYPE_CHECKING:
    from testenv import Plane
    from tests.support.openstack_stack import Stack


INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
#: Seconds for CAPO to build the cluster's infrastructure and boot the server, and to
#: delete them (Octavia's flows and the scheduler take a while on 2 loaded cores).
RECONCILE_TIMEOUT = 600.0
FLAVOR = "SCS-2V-4-20s"


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    """etcd, kube-apiserver, kube-controller-manager, CAPI core + kubeadm providers, CAPO."""
    wanted = ("capi-core", "capi-bootstrap-kubeadm", "capi-controlplane-kubeadm", "capo")
    yield from plane_with_managers(tmp_path_factory, "capo-machines-plane", wanted)


STACK = BOOTING


@pytest.fixture(scope="module")
def stack(shared_stack: Stack) -> Stack:
    """The session's stack of :data:`STACK` (tests/cloud/conftest.py: Keystone, Neutron,
    Octavia, Glance, Placement and Nova with compute); the flavor and the external network
    (the cluster's router gateway), made by the admin as on a cloud."""
    admin = shared_stack.admin_connection()
    admin.compute.create_flavor(name=FLAVOR, vcpus=2, ram=4096, disk=20)
    external_network(admin)
    admin.close()
    return shared_stack


@pytest.fixture(scope="module")
def tenant(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    return make_tenant(stack, tmp_path_factory.mktemp("capo-machines-cloud"), "boot")


@pytest.fixture
def helm(plane: Plane, tmp_path: Path) -> Helm:
    return Helm(pinned_helm().tool, kubeconfig=str(plane.kubeconfig), home=tmp_path / "helm")


def _settings(namespace: str, cloud: str) -> ClusterSettings:
    text = f"""apiVersion: scs-templates.scs.community/v1alpha1
kind: ClusterSettings
metadata:
  name: boot
  namespace: {namespace}
spec:
  provider: openstack
  controlPlane:
    replicas: 1
    machineType: {FLAVOR}
  workers:
    - name: workers
      replicas: 1
      machineType: {FLAVOR}
  openstack:
    cloud: {cloud}
    apiFloatingIP: false
"""
    return parse_settings_text(text).settings


def _control_plane_template(settings: ClusterSettings, helm: Helm) -> dict[str, Any]:
    objects = api.render(settings, helm=helm).objects
    return next(
        o
        for o in objects
        if o["kind"] == "OpenStackMachineTemplate" and "control-plane" in o["metadata"]["name"]
    )


def _cloud_init_jinja(user_data: str, variables: dict[str, str]) -> dict[str, Any]:
    """The cloud-config as cloud-init renders it on the server: the bootstrap data's
    ``## template: jinja`` header makes cloud-init render the rest with the instance's
    data (``instance_id``, ``local_hostname``)."""
    import jinja2

    header, _, body = user_data.partition("\n")
    assert header.strip() == "## template: jinja", header
    rendered = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(body)
    return dict(YAML(typ="safe").load(rendered.render(**variables)))


def _kubelet_flags(cloud_config: dict[str, Any]) -> tuple[str, str]:
    """(the kubelet's ``--provider-id``, the node name) from the kubeadm configuration in
    the cloud-config (``/run/kubeadm/kubeadm.yaml``), as the kubelet gets them: kubeadm
    writes the extra args into ``kubeadm-flags.env``, which systemd splits like a shell."""
    kubeadm = next(
        f for f in cloud_config["write_files"] if f["path"] == "/run/kubeadm/kubeadm.yaml"
    )
    documents = list(YAML(typ="safe").load_all(kubeadm["content"]))
    init = next(d for d in documents if d and d.get("kind") == "InitConfiguration")
    registration = init["nodeRegistration"]
    args = {a["name"]: a["value"] for a in registration["kubeletExtraArgs"]}
    (provider_id,) = shlex.split(f"--provider-id={args['provider-id']}")
    return provider_id.removeprefix("--provider-id="), str(registration["name"])


def _project_contents(conn: Any) -> dict[str, list[str]]:
    """Everything in the tenant's project (its own, used by this test only) by kind, except
    the project's ``default`` security group and the user's own credential."""
    kinds = {
        "servers": [s.name for s in conn.compute.servers()],
        "server groups": [g.name for g in conn.compute.server_groups()],
        "ports": [p.name or p.id for p in conn.network.ports()],
        "networks": [n.name for n in conn.network.networks(project_id=conn.current_project_id)],
        "routers": [r.name for r in conn.network.routers()],
        "floating IPs": [f.floating_ip_address for f in conn.network.ips()],
        "security groups": [g.name for g in conn.network.security_groups() if g.name != "default"],
        "load balancers": [lb.name for lb in conn.load_balancer.load_balancers()],
        "application credentials": [
            c.name
            for c in conn.identity.application_credentials(user=conn.current_user_id)
            if not c.name.endswith("-own")
        ],
    }
    return {kind: sorted(found) for kind, found in kinds.items() if found}


def _stored_credential(kube: KubeClient, settings: ClusterSettings) -> Any:
    """The application credential CAPO's ``clouds.yaml`` in the credentials Secret names."""
    data = kube.secret_data(settings.metadata.namespace, credentials_secret_name(settings))
    return parse_credentials_secret(data or {}, settings.spec.openstack.cloud)["clouds.yaml"]


def test_capo_boots_the_control_plane_server_and_delete_leaves_nothing(
    plane: Plane,
    stack: Stack,
    tenant: Tenant,
    helm: Helm,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tenant.clouds_yaml))
    namespace = plane.namespace("capo-boot")
    settings = _settings(namespace, tenant.cloud)
    template = _control_plane_template(settings, helm)["spec"]["template"]["spec"]
    admin = stack.admin_connection()
    conn = tenant.connect()
    kube = KubeClient(str(plane.kubeconfig))
    try:
        image = public_image(admin, template["image"]["filter"]["name"])
        lifecycle.install(settings, helm=helm, kube=kube)

        # the credential rotated while CAPO builds the cluster's infrastructure
        first = _stored_credential(kube, settings)
        with empty_workload(plane, "boot-workload", tmp_path) as workload:
            report = rotate_waiting_for_capo(conn, settings, kube, workload)
        new = _stored_credential(kube, settings)
        assert new.id != first.id
        assert [c.id for c in report.deleted] == [first.id]
        clusters = plane.api.list(INFRA, "OpenStackCluster", namespace)
        assert report.confirmed == [
            f"OpenStackCluster {namespace}/{c['metadata']['name']}" for c in clusters
        ]
        assert len(clusters) == 1
        deleted = _deleted_at(stack, first.id)
        new_tokens = _capo_tokens(stack, new.id)
        assert new_tokens and new_tokens[0]["seq"] < deleted, (new_tokens, deleted)

        def booted() -> tuple[dict[str, Any], Any] | None:
            for machine in plane.api.list(INFRA, "OpenStackMachine", namespace):
                instance = (machine.get("status") or {}).get("instanceID")
                if not instance:
                    continue
                server = admin.compute.get_server(instance)
                if server.status == "ERROR":
                    raise AssertionError(f"the server failed: {server.fault}")
                if server.status == "ACTIVE":
                    return machine, server
            return None

        machine, server = wait_on_plane(
            "the control plane's server ACTIVE", booted, plane, RECONCILE_TIMEOUT
        )
        built = _project_contents(conn)
        assert set(built) == {
            "servers",
            "server groups",
            "ports",
            "networks",
            "routers",
            "security groups",
            "load balancers",
            "application credentials",
        }, built
        name = machine["metadata"]["name"]
        assert server.name == name
        assert server.compute_host == stack.COMPUTE_HOST
        assert server.image.id == image.id
        assert server.flavor.original_name == FLAVOR
        group = conn.compute.find_server_group(template["serverGroup"]["filter"]["name"])
        assert group is not None and server.id in group.member_ids

        (port,) = list(admin.network.ports(device_id=server.id))
        assert port.binding_host_id == stack.COMPUTE_HOST
        assert port.binding_vif_type == "ovs"
        network = conn.network.get_network(port.network_id)
        assert network.name.startswith("k8s-clusterapi-cluster-"), network.name
        groups = {conn.network.get_security_group(g).name for g in port.security_group_ids}
        assert any(g.endswith("-secgroup-controlplane") for g in groups), groups

        # Node registration: what cloud-init makes of the bootstrap data on this server.
        provider_id = machine["spec"].get("providerID")
        assert provider_id == f"openstack:///{server.id}"
        cloud_config = _cloud_init_jinja(
            base64.b64decode(server.user_data).decode(),
            {"instance_id": server.id, "local_hostname": server.hostname},
        )
        kubelet_provider_id, node_name = _kubelet_flags(cloud_config)
        assert kubelet_provider_id == provider_id
        assert node_name == server.hostname == name

        # one server, made with the new credential
        assert built["servers"] == [name], built

        result = lifecycle.delete(settings, helm=helm, kube=kube, timeout=RECONCILE_TIMEOUT)
        assert result.cluster_deleted
        assert _project_contents(conn) == {}
        # CAPO worked on with the new credential only (its token of before the deletion,
        # cached by its client): Keystone issued no token for the old one after its
        # deletion (a refused attempt is 401)
        assert not [t for t in _capo_tokens(stack, first.id, after=deleted) if t["status"] == 201]
    finally:
        kube.close()
        conn.close()
        admin.close()
