"""The REAL CAPO reconciles an OpenStackCluster against the REAL test OpenStack, and uses a
rotated credential before the old one is deleted.

- OpenStack: the local test stack (tests/openstack_stack.py): Keystone 30.0.0, Neutron
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
  observer (tests/openstack_wsgi.py ``audited``) records every token Keystone issues, with
  the application credential and the User-Agent (CAPO's gophercloud says
  ``cluster-api-provider-openstack/...``), and every application credential deleted, in
  order.

``rotate`` must delete the old credential only after CAPO got a token for the new one and
finished a reconcile with it; after the deletion CAPO still reconciles (it deletes the
cluster's network, router, security groups and load balancer with the new credential). When
CAPO does not reconcile (the cluster is paused), ``rotate`` keeps the old credential, says
why, and the next run finishes once CAPO reconciles again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from openstack_fixtures import Tenant, make_tenant, running_stack

from scs_templates import api, lifecycle
from scs_templates.errors import ToolError
from scs_templates.kube import KubeClient
from scs_templates.providers.openstack.appcred import ensure_cluster_credentials
from scs_templates.providers.openstack.capo_fence import FENCE_REASON, ready_condition
from scs_templates.providers.openstack.credentials_secret import (
    credentials_secret_data,
    parse_credentials_secret,
)
from scs_templates.providers.openstack.rotation import rotate_credentials
from scs_templates.settings import ClusterSettings, parse_settings_text
from tests.support import skip_or_fail

if TYPE_CHECKING:
    from openstack_stack import Stack

    from testenv import Plane

pytestmark = [pytest.mark.helm, pytest.mark.plane, pytest.mark.openstack]

INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
CAPI = "cluster.x-k8s.io/v1beta2"
CAPO_AGENT = "cluster-api-provider-openstack/"
#: Seconds for CAPO to build the cluster's infrastructure (Octavia's flows take a while on
#: 2 loaded cores) and to delete it.
RECONCILE_TIMEOUT = 600.0


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    """etcd, kube-apiserver, kube-controller-manager, CAPI core and CAPO."""
    from testenv import PlaneError, build, running
    from testenv.plane import MANAGERS

    missing = [name for name in build.missing() if name != "kubeadm"]
    if missing and build.go_binary() is None:
        skip_or_fail(f"the real test plane needs Go to build {', '.join(missing)}")
    managers = tuple(m for m in MANAGERS if m.name in ("capi-core", "capo"))
    try:
        with running(tmp_path_factory.mktemp("capo-plane"), managers=managers) as started:
            yield started
    except PlaneError as error:
        pytest.fail(f"the test plane did not start: {error}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Keystone + Neutron + Octavia + Nova API, and the admin's external network."""
    for started in running_stack(tmp_path_factory, "capo-stack"):
        try:
            started.start_octavia_cinder(cinder=False)
            started.start_nova()
        except Exception as error:
            pytest.fail(f"Octavia or the Nova API did not start: {error}")
        admin = started.admin_connection()
        public = admin.network.create_network(
            name="public", is_router_external=True, provider_network_type="vxlan"
        )
        admin.network.create_subnet(
            network_id=public.id, cidr="203.0.113.0/24", ip_version=4, name="public"
        )
        admin.close()
        yield started


@pytest.fixture(scope="module")
def tenant(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    return make_tenant(stack, tmp_path_factory.mktemp("capo-cloud"), "capo")


def _settings(namespace: str, cloud: str) -> ClusterSettings:
    text = f"""apiVersion: scs-templates.scs.community/v1alpha1
kind: ClusterSettings
metadata:
  name: capo
  namespace: {namespace}
spec:
  provider: openstack
  controlPlane:
    replicas: 1
    machineType: SCS-2V-4-20s
  workers:
    - name: workers
      replicas: 1
      machineType: SCS-2V-4-20s
  openstack:
    cloud: {cloud}
    apiFloatingIP: false
"""
    return parse_settings_text(text).settings


def _infrastructure(settings: ClusterSettings, helm: api.Helm) -> list[dict[str, Any]]:
    """The chart's Cluster (without its control plane) and OpenStackCluster."""
    objects = api.render(settings, helm=helm).objects
    cluster = next(o for o in objects if o["kind"] == "Cluster")
    spec = {k: v for k, v in cluster["spec"].items() if k != "controlPlaneRef"}
    infra = next(o for o in objects if o["kind"] == "OpenStackCluster")
    return [infra, cluster | {"spec": spec}]


def _capo_tokens(stack: Stack, credential_id: str, after: int = 0) -> list[dict[str, Any]]:
    return [
        e
        for e in stack.keystone_events()
        if e["event"] == "token"
        and e["seq"] > after
        and e.get("credential") == credential_id
        and e["agent"].startswith(CAPO_AGENT)
    ]


def _deleted_at(stack: Stack, credential_id: str) -> int:
    return next(
        int(e["seq"])
        for e in stack.keystone_events()
        if e["event"] == "delete-credential" and e["credential"] == credential_id
    )


def _wait(what: str, check: Any, plane: Plane, timeout: float = RECONCILE_TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        plane.check()
        found = check()
        if found:
            return found
        time.sleep(2)
    raise AssertionError(f"timed out waiting for {what}")


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


def test_capo_reconciles_with_the_rotated_credential_before_the_old_is_deleted(
    plane: Plane, stack: Stack, tenant: Tenant, helm: api.Helm, tmp_path: Path
) -> None:
    from testenv.plane import extra_apiserver

    namespace = plane.namespace("capo-rotate")
    settings = _settings(namespace, tenant.cloud)
    conn = tenant.connect()
    kube = KubeClient(str(plane.kubeconfig))
    try:
        credentials = ensure_cluster_credentials(conn, settings)
        content = credentials_secret_data(credentials, settings)
        lifecycle.store_credentials(kube, settings, {k: v.reveal() for k, v in content.items()})
        first = credentials.cluster.credential
        infra, cluster = _infrastructure(settings, helm)
        for obj in (infra, cluster):
            plane.api.apply(obj | {"metadata": obj["metadata"] | {"namespace": namespace}})
        name = infra["metadata"]["name"]
        capo_name = f"-{namespace}-capo"

        def ready() -> Any:
            found = plane.api.get(INFRA, "OpenStackCluster", namespace, name) or {}
            return found if (found.get("status") or {}).get("ready") else None

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

        built = _wait(f"OpenStackCluster {name} Ready", ready, plane)
        made = _cluster_resources(conn, capo_name)
        assert all(made.values()), made  # network, subnet, router, groups, load balancer
        assert built["status"]["network"]["id"] and built["status"]["router"]["id"]
        assert built["status"]["apiServerLoadBalancer"]["id"]
        assert _capo_tokens(stack, first.id), "CAPO never authenticated with the credential"

        # the workload cluster: an empty real kube-apiserver (the OCCM/CSI restarts are
        # proven in test_plane_appcred_rotation.py)
        with extra_apiserver(plane, "capo-workload", ()) as server:
            config = json.loads(plane.kubeconfig.read_text())
            config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{server.port}"
            path = tmp_path / "workload.kubeconfig"
            path.write_text(json.dumps(config))
            path.chmod(0o600)
            with KubeClient(str(path)) as workload:
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
                report = rotate_credentials(
                    conn,
                    settings,
                    kube,
                    workload=workload,
                    timeout=RECONCILE_TIMEOUT,
                    poll_interval=1,
                )
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
        plane.api.delete(CAPI, "Cluster", namespace, "capo")
        _wait(
            f"OpenStackCluster {name} deleted",
            lambda: plane.api.get(INFRA, "OpenStackCluster", namespace, name) is None,
            plane,
        )
        assert not any(_cluster_resources(conn, capo_name).values()), _cluster_resources(
            conn, capo_name
        )
        assert _capo_tokens(stack, switched.id, after=deleted) or new_tokens
        assert not [t for t in _capo_tokens(stack, first.id, after=deleted) if t["status"] == 201]
    finally:
        kube.close()
        conn.close()
