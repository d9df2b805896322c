"""The REAL Cinder CSI plugin (controller service) on a REAL workload API server, with the
REAL Keystone and Cinder of the test stack: what the chart we install runs, with the
credentials our install writes, for claims of our StorageClass, through our rotation and
our delete.

- The plugin: ``cmd/cinder-csi-plugin`` of ``k8s.io/cloud-provider-openstack`` at the release
  the services catalogue deploys for the plane's minor (chart 2.36.0, image v1.36.0; the test
  checks the image), built from OCCM's wrapper module by testenv/occm.py.
- The workload cluster: a real kube-apiserver and kube-controller-manager (with its real
  PersistentVolume binder and protection controllers; tests/support/workload_cluster.py); ``apply``
  installs the REAL upstream Cinder CSI chart with our values (our StorageClasses) and syncs
  ``kube-system/cloud-config`` from the credentials Secret written as ``install`` writes it.
- Cinder: the real API, scheduler and volume service on Cinder's fake test driver
  (tests/support/openstack_stack.py): the volumes are real Cinder volumes with no disk behind them.
  The Nova API runs too (no compute): the plugin refuses to start without a compute
  endpoint in the catalog.
- The sidecar: the REAL csi-provisioner (``cmd/csi-provisioner`` of
  ``github.com/kubernetes-csi/external-provisioner/v5`` v5.3.0, the image tag the chart pins;
  the test checks it), built from its own wrapper by testenv/csi_provisioner.py, run with the
  Pod's own ``csi-provisioner`` container arguments (``--default-fstype=ext4``,
  ``--extra-create-metadata``, ``--feature-gates=Topology=true``, leader election on) on the
  socket of the same Pod's plugin, with a token of the Pod's ServiceAccount from the API
  server's TokenRequest API: it provisions with the RBAC the chart gives it.

Doubles (docs/testing.md "What is still a double"):

- :class:`CSIControllers` and :class:`ProvisionerSidecars` play the kubelet for the
  controller plugin's Deployment (OCCM's mechanism:
  :class:`~tests.support.openstack_workload.PodContainers`): for each live Pod, the real plugin with
  the Pod's own ``cinder-csi-plugin`` container arguments and environment and the
  cloud-config Secret it mounts written where the container reads it, and the real sidecar
  beside it; their shared CSI socket is in a private directory in place of the Pod's
  ``socket-dir`` emptyDir, and the ServiceAccount token is a kubeconfig.
- :func:`register_node_plugin` does what the kubelet does when the node plugin registers on
  a Node: the Node's zone label (``topology.cinder.csi.openstack.org/zone``) and its CSINode
  entry with that topology key, which the sidecar's Topology feature reads.
- The scheduler's choice of a node (the ``volume.kubernetes.io/selected-node`` annotation our
  ``WaitForFirstConsumer`` StorageClass waits for) is set by the test. The node side
  (attach, mount) needs a kubelet: not here.

Proven: a claim of our default StorageClass becomes a real Cinder volume (the PV's name, the
claim's size rounded to GiB, Cinder's default type since our class names none, the zone of
the selected node, the cluster property delete step (c) matches) and a bound PV of the
class's reclaim policy; deleting the claim deletes the volume. ``openstack appcred rotate``
restarts the controller Deployment, the new Pod's plugin runs on the new credential (the old
one no longer authenticates) and creates and deletes volumes with it; ``delete``'s step (a)
deletes the claims and waits until the sidecar and the plugin have deleted their volumes,
and step (c) finds no volume left.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates._lifecycle.workload_cleanup import clean_workload
from scs_templates._tools.kube import KubeClient
from scs_templates.providers.openstack.leftovers import (
    CINDER_CSI_CLUSTER_PROPERTY,
    block_storage_api,
    clean_project_leftovers,
)
from scs_templates.providers.openstack.services import CINDER_DEFAULT_CLASS, CINDER_PROVISIONER
from tests.support.openstack_fixtures import OCTAVIA_CINDER_NOVA_API, Tenant, make_tenant
from tests.support.openstack_workload import (
    Kubelet,
    PodContainers,
    go_program,
    installed,
    rotate_through_cli,
    wait,
)
from tests.support.workload_cluster import NODES, WorkloadCluster, apply, workload_cluster

if TYPE_CHECKING:
    from scs_templates._tools.helm import Helm
    from testenv import Plane
    from tests.support.openstack_stack import Stack

pytestmark = [pytest.mark.extra_builds]

CLUSTER = "csi"
DEPLOYMENT = "openstack-cinder-csi-controllerplugin"
#: The plugin's topology key (its node service reports the server's zone under it).
ZONE_KEY = "topology.cinder.csi.openstack.org/zone"
#: Cinder's default availability zone (the stack's volume service runs in it).
ZONE = "nova"
GIB = 1024**3
WAIT = 120.0


def csi_binary() -> Path:
    """The plugin, built when it is not cached (as test_plane_occm builds OCCM); without a
    Go toolchain skip, in CI fail."""
    from testenv import occm

    return go_program("the Cinder CSI plugin", occm.csi_binary(), occm.ensure_csi_built)


def provisioner_binary() -> Path:
    """The csi-provisioner sidecar, built when it is not cached (as :func:`csi_binary`)."""
    from testenv import csi_provisioner

    return go_program(
        "the csi-provisioner sidecar", csi_provisioner.binary(), csi_provisioner.ensure_built
    )


@pytest.fixture(scope="module", autouse=True)
def csi_program() -> Path:
    """The plugin (and its sidecar), first of the module's fixtures (autouse): a skip comes
    before the stack and the plane start."""
    provisioner_binary()
    return csi_binary()


#: Cinder, and the Nova API: the plugin makes its compute client at start and exits when the
#: catalog has no compute endpoint ("No suitable endpoint could be found in the service
#: catalog"), though creating and deleting volumes asks nothing of Nova.
STACK = OCTAVIA_CINDER_NOVA_API


@pytest.fixture(scope="module")
def stack(shared_stack: Stack) -> Stack:
    """The session's stack of :data:`STACK` (tests/cloud/conftest.py)."""
    return shared_stack


@pytest.fixture(scope="module")
def tenant(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    return make_tenant(stack, tmp_path_factory.mktemp("csi-cloud"), CLUSTER)


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    """A short private directory for the plugins' sockets (a unix socket path has at most
    107 bytes; pytest's tmp_path can be longer)."""
    path = Path(tempfile.mkdtemp(prefix="csi-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


class ControllerPodContainers(PodContainers):
    """One container of the controller plugin Deployment's Pods (by their ReplicaSet); the
    Pod's shared ``socket-dir`` emptyDir is ``sockets``, one socket per Pod."""

    def __init__(
        self, cluster: WorkloadCluster, binary: Path, directory: Path, sockets: Path
    ) -> None:
        super().__init__(cluster, binary, directory)
        self.sockets = sockets

    def owned(self, pod: dict[str, Any]) -> bool:
        return any(
            ref.get("kind") == "ReplicaSet" and str(ref.get("name")).startswith(f"{DEPLOYMENT}-")
            for ref in pod["metadata"].get("ownerReferences") or []
        )

    def socket(self, uid: str) -> Path:
        """The CSI socket of the Pod ``uid`` (its plugin listens there, its sidecar dials)."""
        return self.sockets / f"{uid[:8]}-csi.sock"


class CSIControllers(ControllerPodContainers):
    """Plays the kubelet for the controller plugin's Deployment: its ``cinder-csi-plugin``
    container (its ``csi-provisioner`` sidecar: :class:`ProvisionerSidecars`)."""

    LOG = "cinder-csi"
    CONTAINER = "cinder-csi-plugin"
    VOLUME = "cloud-config"

    def argv(self, args: list[str], conf: Path, pod: dict[str, Any]) -> list[str]:
        assert args[0] == "/bin/cinder-csi-plugin", args
        uid = pod["metadata"]["uid"]
        argv = [str(self.binary)]
        for arg in args[1:]:
            # the socket-dir emptyDir is mounted at /csi; the config Secret at /etc/config
            arg = arg.replace("unix://csi/", f"unix://{self.sockets}/{uid[:8]}-")
            argv.append(arg.replace(self.MOUNT, str(conf)))
        assert f"--endpoint=unix://{self.socket(uid)}" in argv, argv
        assert "--provide-node-service=false" in argv, argv
        assert f"--cluster={CLUSTER}" in argv, argv
        return argv


class ProvisionerSidecars(ControllerPodContainers):
    """Plays the kubelet for the controller plugin's ``csi-provisioner`` sidecar: the REAL
    external-provisioner (testenv/csi_provisioner.py) with the Pod's own container arguments,
    on the socket of the same Pod's plugin (the two containers' shared ``socket-dir``), with
    the token of the Pod's ServiceAccount (the chart's RBAC) in place of the mounted one."""

    LOG = "csi-provisioner"
    CONTAINER = "csi-provisioner"
    VOLUME = None  # the sidecar mounts only the socket directory
    #: Where the sidecar's container mounts the shared ``socket-dir`` (the chart's ADDRESS).
    SOCKET = "/var/lib/csi/sockets/pluginproxy/csi.sock"

    def argv(self, args: list[str], conf: Path, pod: dict[str, Any]) -> list[str]:
        assert f"--csi-address={self.SOCKET}" in args, args
        kubeconfig = conf / "kubeconfig"
        account = pod["spec"]["serviceAccountName"]
        service_account_kubeconfig(self.cluster, "kube-system", account, kubeconfig)
        socket = str(self.socket(pod["metadata"]["uid"]))
        argv = [str(self.binary)]
        for arg in args:
            argv.append(arg.replace(self.SOCKET, socket))
        return [
            *argv,
            f"--kubeconfig={kubeconfig}",
            # a Pod's namespace, which the program reads from its ServiceAccount mount
            "--leader-election-namespace=kube-system",
        ]


def service_account_kubeconfig(
    cluster: WorkloadCluster, namespace: str, account: str, path: Path
) -> None:
    """A kubeconfig (0600) with a token of ``account`` from the real API server's TokenRequest
    API: what the kubelet projects into a Pod of that ServiceAccount, so the program runs
    with the RBAC the chart gives it, not as the cluster's admin."""
    from testenv.plane import _write_private

    server = cluster.server
    answer = server.request(
        "POST",
        server.path("v1", "ServiceAccount", namespace, account) + "/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    admin = json.loads(cluster.kubeconfig.read_text())
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": admin["clusters"],
        "users": [{"name": account, "user": {"token": answer["status"]["token"]}}],
        "contexts": [
            {"name": account, "context": {"cluster": admin["clusters"][0]["name"], "user": account}}
        ],
        "current-context": account,
    }
    _write_private(path, json.dumps(config))


def register_node_plugin(cluster: WorkloadCluster) -> None:
    """What the kubelet does when the Cinder CSI node plugin registers on a Node (a double:
    no kubelet or node plugin runs here): the Node's zone label and its CSINode entry for
    the driver with the plugin's topology key, which the provisioner's Topology feature
    reads for the selected node."""
    server = cluster.server
    for node in NODES:
        name = node["metadata"]["name"]
        server.request(
            "PATCH",
            server.path("v1", "Node", "", name),
            {"metadata": {"labels": {ZONE_KEY: ZONE}}},
            content_type="application/merge-patch+json",
        )
        server.create(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSINode",
                "metadata": {"name": name},
                "spec": {
                    "drivers": [
                        {
                            "name": CINDER_PROVISIONER,
                            "nodeID": name,
                            "topologyKeys": [ZONE_KEY],
                        }
                    ]
                },
            }
        )


def _claim(name: str, size: str) -> dict[str, Any]:
    """A claim of our default StorageClass, its node chosen (what the scheduler does for the
    first Pod that uses it)."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "annotations": {"volume.kubernetes.io/selected-node": NODES[-1]["metadata"]["name"]},
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": CINDER_DEFAULT_CLASS,
            "resources": {"requests": {"storage": size}},
        },
    }


def _volumes(conn: Any) -> dict[str, Any]:
    """The project's Cinder volumes of this cluster (the property step (c) matches) by name."""
    return {
        v.name: v
        for v in conn.block_storage.volumes(details=True)
        if (v.metadata or {}).get(CINDER_CSI_CLUSTER_PROPERTY) == CLUSTER
    }


def _bound(cluster: WorkloadCluster, name: str) -> dict[str, Any] | None:
    claim = cluster.server.get("v1", "PersistentVolumeClaim", "shop", name) or {}
    return claim if (claim.get("status") or {}).get("phase") == "Bound" else None


def _provision(
    conn: Any, cluster: WorkloadCluster, name: str, size: str, watched: list[Any]
) -> tuple[dict[str, Any], Any]:
    """Create the claim; wait for its bound PV and its available Cinder volume (a timeout
    fails with the log of the plugin, ``watched[0]``)."""
    cluster.server.create(_claim(name, size))
    claim = wait(f"claim {name} Bound", lambda: _bound(cluster, name), WAIT, *watched, every=0.5)
    pv_name = claim["spec"]["volumeName"]
    volume = wait(
        f"Cinder volume {pv_name} available",
        lambda: (v := _volumes(conn).get(pv_name)) is not None and v.status == "available" and v,
        WAIT,
        *watched,
        every=0.5,
    )
    return claim, volume


def test_cinder_csi_volumes_through_rotation_and_delete(
    csi_program: Path,
    api_plane: Plane,
    tenant: Tenant,
    helm: Helm,
    tmp_path: Path,
    socket_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from testenv import csi_provisioner, occm

    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tenant.clouds_yaml))
    namespace = api_plane.namespace("csi")
    # as install does; Cinder CSI's --cluster (its volumes' property) is CLUSTER
    with installed(api_plane, tenant, namespace, name=CLUSTER, cloud_cluster_name=CLUSTER) as ready:
        settings, conn = ready.settings, ready.conn
        first = ready.credentials["cloud.conf"]
        with workload_cluster(api_plane, settings, helm, tmp_path / "workload") as cluster:
            apply(cluster, settings)  # the real Cinder CSI chart, our StorageClasses
            deployment = cluster.server.get("apps/v1", "Deployment", "kube-system", DEPLOYMENT)
            assert deployment is not None
            containers = {
                c["name"]: c for c in deployment["spec"]["template"]["spec"]["containers"]
            }
            # the program built is the one the chart we install runs
            image = containers["cinder-csi-plugin"]["image"]
            assert image.endswith(f":{occm.version()}"), image
            # the sidecar built is the one the chart runs beside it
            provisioner = containers["csi-provisioner"]
            assert provisioner["image"].endswith(f":{csi_provisioner.version()}")
            for arg in ("--default-fstype=ext4", "--extra-create-metadata"):
                assert arg in provisioner["args"], provisioner["args"]
            assert "--feature-gates=Topology=true" in provisioner["args"]
            storage_class = cluster.server.get(
                "storage.k8s.io/v1", "StorageClass", "", CINDER_DEFAULT_CLASS
            )
            assert storage_class is not None
            assert storage_class["provisioner"] == CINDER_PROVISIONER
            assert storage_class["reclaimPolicy"] == "Delete"
            assert storage_class["volumeBindingMode"] == "WaitForFirstConsumer"
            assert not storage_class.get("parameters")  # Cinder's default type and zone
            register_node_plugin(cluster)
            cluster.server.ensure_namespace("shop")
            default_type = conn.block_storage.find_type("__DEFAULT__", ignore_missing=False)
            with (
                Kubelet(cluster),
                CSIControllers(cluster, csi_program, tmp_path / "csi", socket_dir) as plugins,
                ProvisionerSidecars(
                    cluster, provisioner_binary(), tmp_path / "csi-provisioner", socket_dir
                ) as provisioners,
            ):
                watched = [plugins, provisioners]
                wait(
                    "the controller plugin's Pod to run",
                    lambda: plugins.running and provisioners.running,
                    120,
                    plugins,
                    provisioners,
                )
                assert [
                    f'application-credential-id="{first.id}"' in c
                    for c in plugins.config_of_running()
                ] == [True]

                # a claim of our StorageClass: a real Cinder volume, a bound PV
                claim, volume = _provision(conn, cluster, "data", "1Gi", watched)
                pv_name = claim["spec"]["volumeName"]
                assert pv_name == f"pvc-{claim['metadata']['uid']}"
                assert volume.size == 1
                assert volume.volume_type == default_type.name
                assert volume.availability_zone == ZONE
                assert volume.metadata[CINDER_CSI_CLUSTER_PROPERTY] == CLUSTER
                assert volume.metadata["csi.storage.k8s.io/pvc/name"] == "data"
                pv = cluster.server.get("v1", "PersistentVolume", "", pv_name)
                assert pv is not None
                assert pv["spec"]["csi"]["volumeHandle"] == volume.id
                assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
                # the sidecar's marks: it provisioned the PV and deletes its volume first
                assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == (
                    CINDER_PROVISIONER
                )
                assert (
                    "external-provisioner.volume.kubernetes.io/finalizer"
                    in (pv["metadata"]["finalizers"])
                )
                assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
                    {"matchExpressions": [{"key": ZONE_KEY, "operator": "In", "values": [ZONE]}]}
                ]

                # the claim deleted (reclaim Delete): the plugin deletes the volume
                cluster.server.delete("v1", "PersistentVolumeClaim", "shop", "data")
                wait(
                    "the volume of the deleted claim to go",
                    lambda: (
                        pv_name not in _volumes(conn)
                        and cluster.server.get("v1", "PersistentVolume", "", pv_name) is None
                    ),
                    WAIT,
                    plugins,
                )
                _claim2, kept = _provision(conn, cluster, "before", "2Gi", watched)
                assert kept.size == 2

                # rotation: new credential, the Deployment restarted, the plugin on the new one
                new = rotate_through_cli(ready, first, tmp_path, capsys).new
                wait(
                    "the restarted controller Pod's plugin",
                    lambda: len(plugins.started) == 2 and len(plugins.running) == 1,
                    60,
                    plugins,
                )
                assert [
                    f'application-credential-id="{new.id}"' in c
                    for c in plugins.config_of_running()
                ] == [True]
                # the old Pod's plugin and sidecar are gone: only the new Pod's pair runs
                wait(
                    "the old Pod's sidecar to stop",
                    lambda: list(provisioners.running) == list(plugins.running),
                    60,
                    provisioners,
                    plugins,
                )
                assert len(provisioners.started) == 2
                # the new plugin creates with the new credential (the old one is dead)
                _claim3, after = _provision(conn, cluster, "after", "1Gi", watched)
                assert after.size == 1

                # delete, step (a): the claims go, the new plugin deletes both volumes
                with KubeClient(str(cluster.kubeconfig)) as client:
                    report = clean_workload(client, poll_interval=0.5, timeout=WAIT)
                assert sorted(item.describe() for item in report.deleted) == [
                    "PersistentVolumeClaim shop/after",
                    "PersistentVolumeClaim shop/before",
                ]
                assert cluster.server.list("v1", "PersistentVolume", "") == []
                # DeleteVolume returns once Cinder accepted the delete (the PV goes then);
                # Cinder finishes it by itself: a volume may still be "deleting" here
                wait("Cinder to finish deleting", lambda: _volumes(conn) == {}, WAIT, plugins)
                left = clean_project_leftovers(
                    conn,
                    settings,
                    load_balancers=None,
                    block_storage=block_storage_api(conn),
                    dry_run=True,
                )
                assert [d for d in left.deleted] == [], left.lines()
