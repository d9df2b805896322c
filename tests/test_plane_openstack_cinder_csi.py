"""The REAL Cinder CSI plugin (controller service) on a REAL workload API server, with the
REAL Keystone and Cinder of the test stack: what the chart we install runs, with the
credentials our install writes, for claims of our StorageClass, through our rotation and
our delete.

- The plugin: ``cmd/cinder-csi-plugin`` of ``k8s.io/cloud-provider-openstack`` at the release
  the services catalogue deploys for the plane's minor (chart 2.36.0, image v1.36.0; the test
  checks the image), built from OCCM's wrapper module by testenv/occm.py.
- The workload cluster: a real kube-apiserver and kube-controller-manager (with its real
  PersistentVolume binder and protection controllers; tests/workload_cluster.py); ``apply``
  installs the REAL upstream Cinder CSI chart with our values (our StorageClasses) and syncs
  ``kube-system/cloud-config`` from the credentials Secret written as ``install`` writes it.
- Cinder: the real API, scheduler and volume service on Cinder's fake test driver
  (tests/openstack_stack.py): the volumes are real Cinder volumes with no disk behind them.
  The Nova API runs too (no compute): the plugin refuses to start without a compute
  endpoint in the catalog.

Doubles (docs/testing.md "What is still a double"):

- :class:`CSIControllers` plays the kubelet for the controller plugin's Deployment (OCCM's
  mechanism: :class:`~tests.openstack_workload.PodContainers`): for each live Pod, the real
  plugin with the Pod's own ``cinder-csi-plugin`` container arguments and environment, the
  cloud-config Secret it mounts written where the container reads it, and its CSI socket in
  a private directory in place of the Pod's ``socket-dir`` emptyDir.
- :class:`ProvisionerDouble` stands in for the Pod's ``csi-provisioner`` sidecar (the
  external-provisioner v5.3.0 the chart pins): it is NOT built, because its module requires
  ``k8s.io/kubernetes`` v1.33.1 and its own k8s.io v0.33 / gRPC v1.72 set, which none of the
  suite's builds has: a third Kubernetes dependency build on a CI budget with minutes to
  spare (docs/testing.md "Cost on a fresh machine"). The double does what the sidecar does
  with the chart's arguments (``--default-fstype=ext4``, ``--extra-create-metadata``,
  ``--feature-gates=Topology=true``) and calls the real plugin's CSI gRPC ``CreateVolume``
  and ``DeleteVolume`` over its unix socket, with messages encoded as the CSI spec's
  csi.proto (spec v1.12.0, the version the plugin is built with) defines them.
- The scheduler's choice of a node (the ``volume.kubernetes.io/selected-node`` annotation our
  ``WaitForFirstConsumer`` StorageClass waits for) is set by the test, and the Nodes get the
  zone label that the node plugin's registration gives them (``topology.cinder.csi.
  openstack.org/zone``). The node side (attach, mount) needs Nova and a kubelet: not here.

Proven: a claim of our default StorageClass becomes a real Cinder volume (the PV's name, the
claim's size rounded to GiB, Cinder's default type since our class names none, the zone of
the selected node, the cluster property delete step (c) matches) and a bound PV of the
class's reclaim policy; deleting the claim deletes the volume. ``openstack appcred rotate``
restarts the controller Deployment, the new Pod's plugin runs on the new credential (the old
one no longer authenticates) and creates and deletes volumes with it; ``delete``'s step (a)
deletes the claims and waits until the plugin has deleted their volumes, and step (c) finds
no volume left.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from openstack_fixtures import Tenant, make_tenant

from scs_templates.kube import KubeClient
from scs_templates.providers.openstack.leftovers import (
    CINDER_CSI_CLUSTER_PROPERTY,
    block_storage_api,
    clean_project_leftovers,
)
from scs_templates.services.values import CINDER_DEFAULT_CLASS, CINDER_PROVISIONER
from scs_templates.workload_cleanup import clean_workload
from tests.openstack_workload import (
    Kubelet,
    PodContainers,
    Poller,
    go_program,
    installed,
    octavia_cinder_stack,
    rotate_through_cli,
    wait,
)
from tests.test_services_workload import apply
from tests.workload_cluster import NODES, WorkloadCluster, workload_cluster

if TYPE_CHECKING:
    from openstack_stack import Stack

    from scs_templates import api
    from testenv import Plane

pytestmark = [pytest.mark.helm, pytest.mark.plane, pytest.mark.openstack, pytest.mark.extra_builds]

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


@pytest.fixture(scope="module", autouse=True)
def csi_program() -> Path:
    """The binary, first of the module's fixtures (autouse): a skip comes before the stack
    and the plane start."""
    return csi_binary()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Keystone, Neutron, Octavia, Cinder and the Nova API (the plugin needs a compute
    endpoint to start: :func:`~tests.openstack_workload.octavia_cinder_stack`)."""
    yield from octavia_cinder_stack(tmp_path_factory, "csi-stack", cinder=True)


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


class CSIControllers(PodContainers):
    """Plays the kubelet for the controller plugin's Deployment: its ``cinder-csi-plugin``
    container (the sidecars: :class:`ProvisionerDouble` and the module docstring)."""

    LOG = "cinder-csi"
    CONTAINER = "cinder-csi-plugin"
    VOLUME = "cloud-config"

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

    def argv(self, args: list[str], conf: Path, uid: str) -> list[str]:
        assert args[0] == "/bin/cinder-csi-plugin", args
        argv = [str(self.binary)]
        for arg in args[1:]:
            # the socket-dir emptyDir is mounted at /csi; the config Secret at /etc/config
            arg = arg.replace("unix://csi/", f"unix://{self.sockets}/{uid[:8]}-")
            argv.append(arg.replace(self.MOUNT, str(conf)))
        assert f"--endpoint=unix://{self.sockets}/{uid[:8]}-csi.sock" in argv, argv
        assert "--provide-node-service=false" in argv, argv
        assert f"--cluster={CLUSTER}" in argv, argv
        return argv

    def sockets_of_running(self) -> list[Path]:
        return [self.sockets / f"{uid[:8]}-csi.sock" for uid in list(self.running)]


# -- CSI messages: protobuf wire encoding of the few csi.proto (spec v1.12.0) messages the
#    provisioner sends. Field numbers are csi.proto's: CreateVolumeRequest name=1,
#    capacity_range=2, volume_capabilities=3, parameters=4, accessibility_requirements=7;
#    CapacityRange required_bytes=1; VolumeCapability mount=2 (MountVolume fs_type=1),
#    access_mode=3 (AccessMode mode=1, SINGLE_NODE_WRITER=1); TopologyRequirement
#    requisite=1, preferred=2; Topology segments=1; CreateVolumeResponse volume=1; Volume
#    capacity_bytes=1, volume_id=2, volume_context=3, accessible_topology=5;
#    DeleteVolumeRequest volume_id=1. Maps are repeated entries (key=1, value=2).


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _map_field(number: int, entries: dict[str, str]) -> bytes:
    return b"".join(
        _bytes_field(number, _bytes_field(1, k.encode()) + _bytes_field(2, v.encode()))
        for k, v in sorted(entries.items())
    )


def _decode(data: bytes) -> dict[int, list[Any]]:
    """Fields of one message: number -> values (ints for varints, bytes for the rest)."""
    fields: dict[int, list[Any]] = {}
    at = 0

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while at < len(data):
        key = varint()
        wire = key & 7
        if wire == 0:
            value: Any = varint()
        elif wire == 2:
            size = varint()
            value, at = data[at : at + size], at + size
        else:
            raise AssertionError(f"unexpected wire type {wire} in a CSI response")
        fields.setdefault(key >> 3, []).append(value)
    return fields


def _decode_map(entries: list[bytes]) -> dict[str, str]:
    out = {}
    for entry in entries:
        fields = _decode(entry)
        out[fields[1][0].decode()] = fields.get(2, [b""])[0].decode()
    return out


def _topology(zone: str) -> bytes:
    return _map_field(1, {ZONE_KEY: zone})


def create_volume_request(
    name: str, size: int, fs_type: str, parameters: dict[str, str], zone: str
) -> bytes:
    capability = _bytes_field(2, _bytes_field(1, fs_type.encode())) + _bytes_field(
        3, _int_field(1, 1)
    )
    topology = _bytes_field(1, _topology(zone)) + _bytes_field(2, _topology(zone))
    return (
        _bytes_field(1, name.encode())
        + _bytes_field(2, _int_field(1, size))
        + _bytes_field(3, capability)
        + _map_field(4, parameters)
        + _bytes_field(7, topology)
    )


def parse_volume(response: bytes) -> dict[str, Any]:
    [volume] = _decode(response)[1]
    fields = _decode(volume)
    return {
        "capacity_bytes": fields.get(1, [0])[0],
        "volume_id": fields[2][0].decode(),
        "volume_context": _decode_map(fields.get(3, [])),
        "accessible_topology": [_decode_map(_decode(t).get(1, [])) for t in fields.get(5, [])],
    }


class ProvisionerDouble(Poller):
    """The csi-provisioner sidecar's work (a double: the module docstring says why), against
    the real plugin's socket: a claim the PV controller handed to our driver
    (``volume.kubernetes.io/storage-provisioner``) with a selected node gets ``CreateVolume``
    and a PV bound to it (what external-provisioner v5 writes); a Released PV of our driver
    with reclaim policy Delete gets ``DeleteVolume``, then the PV is deleted."""

    INTERVAL = 0.5

    def __init__(self, cluster: WorkloadCluster, plugins: CSIControllers) -> None:
        super().__init__()
        self.cluster = cluster
        self.plugins = plugins
        self.calls: list[tuple[str, str]] = []  # (method, socket) in call order

    def _call(self, method: str, request: bytes) -> bytes:
        import grpc

        sockets = self.plugins.sockets_of_running()
        assert len(sockets) == 1, sockets  # the Deployment's one replica
        [socket] = sockets
        self.calls.append((method, socket.name))
        with grpc.insecure_channel(f"unix://{socket}") as channel:
            call = channel.unary_unary(f"/csi.v1.Controller/{method}")
            response: bytes = call(request, timeout=60, wait_for_ready=True)
        return response

    def poll(self) -> None:
        if not self.plugins.running:
            return
        server = self.cluster.server
        for claim in server.list("v1", "PersistentVolumeClaim", ""):
            self._provision(claim)
        for pv in server.list("v1", "PersistentVolume", ""):
            self._delete(pv)

    def _provision(self, claim: dict[str, Any]) -> None:
        meta = claim["metadata"]
        annotations = meta.get("annotations") or {}
        if (
            annotations.get("volume.kubernetes.io/storage-provisioner") != CINDER_PROVISIONER
            or claim["spec"].get("volumeName")
            or meta.get("deletionTimestamp")
        ):
            return
        node_name = annotations["volume.kubernetes.io/selected-node"]  # WaitForFirstConsumer
        server = self.cluster.server
        storage_class = server.get(
            "storage.k8s.io/v1", "StorageClass", "", claim["spec"]["storageClassName"]
        )
        node = server.get("v1", "Node", "", node_name)
        assert storage_class is not None and node is not None
        name = f"pvc-{meta['uid']}"  # --volume-name-prefix=pvc, the claim's UID
        if server.get("v1", "PersistentVolume", "", name) is not None:
            return
        size = _quantity(claim["spec"]["resources"]["requests"]["storage"])
        parameters = dict(storage_class.get("parameters") or {})
        parameters.update(  # --extra-create-metadata
            {
                "csi.storage.k8s.io/pvc/name": meta["name"],
                "csi.storage.k8s.io/pvc/namespace": meta["namespace"],
                "csi.storage.k8s.io/pv/name": name,
            }
        )
        zone = node["metadata"]["labels"][ZONE_KEY]  # Topology=true: the node's segment
        volume = parse_volume(
            self._call("CreateVolume", create_volume_request(name, size, "ext4", parameters, zone))
        )
        terms = [
            {"matchExpressions": [{"key": k, "operator": "In", "values": [v]}]}
            for segment in volume["accessible_topology"]
            for k, v in sorted(segment.items())
        ]
        spec: dict[str, Any] = {
            "capacity": {"storage": str(volume["capacity_bytes"])},
            "accessModes": claim["spec"]["accessModes"],
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy", "Delete"),
            "storageClassName": storage_class["metadata"]["name"],
            "volumeMode": claim["spec"].get("volumeMode", "Filesystem"),
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": meta["namespace"],
                "name": meta["name"],
                "uid": meta["uid"],
                "resourceVersion": meta["resourceVersion"],
            },
            "csi": {
                "driver": CINDER_PROVISIONER,
                "volumeHandle": volume["volume_id"],
                "fsType": "ext4",
                "volumeAttributes": volume["volume_context"],
            },
        }
        if terms:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": terms}}
        server.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {
                    "name": name,
                    "annotations": {"pv.kubernetes.io/provisioned-by": CINDER_PROVISIONER},
                },
                "spec": spec,
            }
        )

    def _delete(self, pv: dict[str, Any]) -> None:
        meta, spec = pv["metadata"], pv["spec"]
        if (
            (meta.get("annotations") or {}).get("pv.kubernetes.io/provisioned-by")
            != CINDER_PROVISIONER
            or (pv.get("status") or {}).get("phase") != "Released"
            or spec.get("persistentVolumeReclaimPolicy") != "Delete"
            or meta.get("deletionTimestamp")
        ):
            return
        self._call("DeleteVolume", _bytes_field(1, spec["csi"]["volumeHandle"].encode()))
        self.cluster.server.delete("v1", "PersistentVolume", "", meta["name"])


def _quantity(text: str) -> int:
    units = {"Gi": GIB, "Mi": 1024**2, "G": 10**9, "M": 10**6}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * factor
    return int(text)


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
    helm: api.Helm,
    tmp_path: Path,
    socket_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from testenv import occm

    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tenant.clouds_yaml))
    namespace = api_plane.namespace("csi")
    with installed(api_plane, tenant, namespace, name=CLUSTER) as ready:  # as install does
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
            # the sidecar the double stands for, and the arguments it follows
            provisioner = containers["csi-provisioner"]
            assert provisioner["image"].endswith(":v5.3.0"), provisioner["image"]
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
            for node in NODES:  # what the node plugin's registration gives a Node
                cluster.server.request(
                    "PATCH",
                    cluster.server.path("v1", "Node", "", node["metadata"]["name"]),
                    {"metadata": {"labels": {ZONE_KEY: ZONE}}},
                    content_type="application/merge-patch+json",
                )
            cluster.server.ensure_namespace("shop")
            default_type = conn.block_storage.find_type("__DEFAULT__", ignore_missing=False)
            with (
                Kubelet(cluster),
                CSIControllers(cluster, csi_program, tmp_path / "csi", socket_dir) as plugins,
                ProvisionerDouble(cluster, plugins) as provisioner_double,
            ):
                watched = [plugins, provisioner_double]
                wait("the controller plugin's Pod to run", lambda: plugins.running, 120, plugins)
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
                calls_before = len(provisioner_double.calls)
                # the new plugin creates with the new credential (the old one is dead)
                _claim3, after = _provision(conn, cluster, "after", "1Gi", watched)
                assert after.size == 1
                new_socket = plugins.sockets_of_running()[0].name
                assert provisioner_double.calls[calls_before:] == [("CreateVolume", new_socket)]

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
                deletes = provisioner_double.calls[calls_before + 1 :]
                assert deletes == [("DeleteVolume", new_socket)] * 2
                left = clean_project_leftovers(
                    conn,
                    settings,
                    load_balancers=None,
                    block_storage=block_storage_api(conn),
                    dry_run=True,
                )
                assert [d for d in left.deleted] == [], left.lines()
