"""What the plane tests of the REAL OpenStack workloads share: a cluster installed against the
test stack, a workload cluster's kubelet played, and our rotation through the CLI.

tests/cloud/test_plane_appcred_rotation.py, tests/cloud/test_plane_occm.py and
tests/cloud/test_plane_openstack_cinder_csi.py each prove our install, ``openstack appcred rotate``
and ``delete`` against the real Keystone (and Octavia, Cinder) with the real charts in a real
workload kube-apiserver (tests/support/workload_cluster.py). They set the cluster up, write the
credentials Secret and rotate it the same way, so that what one proves of our code holds for
the others; this module is that one way, so that it cannot drift between them:

- the cluster's settings (:func:`settings_text`) and the credentials Secret as ``install``
  writes it (:func:`install_credentials`, :func:`installed`);
- the Go programs the charts run, built like the plane (:func:`go_program`) (the stacks:
  tests/cloud/conftest.py, one per configuration of tests/support/openstack_fixtures.py);
- the kubelet, which cannot run here (no container runtime): :class:`Kubelet` reports the
  Pods Ready; :class:`PodContainers` runs the REAL program of a Pod's container from the
  Pod's own arguments, environment and mounted cloud-config Secret;
- the rotation step (:func:`rotate_cli`, :func:`rotate_through_cli`) and the wait that
  reports a background runner's failure and log (:func:`wait`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Self

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates._cli.main import main
from scs_templates._settings.model import ClusterSettings
from scs_templates._settings.validate import parse_settings_text
from scs_templates._tools.kube import KubeClient
from scs_templates.providers.openstack.appcred import (
    credential_authenticates,
    ensure_cluster_credentials,
)
from scs_templates.providers.openstack.cloud_config import CLOUD_CONFIG_SECRET
from scs_templates.providers.openstack.connection import cloud_access
from scs_templates.providers.openstack.credentials_secret import (
    StoredCredential,
    credentials_secret_data,
    parse_credentials_secret,
)
from tests.support import real_charts, skip_or_fail
from tests.support.openstack_fixtures import Tenant

if TYPE_CHECKING:
    from scs_templates.providers.openstack.connection import CloudAccess
    from testenv import Plane
    from testenv.process import Daemon
    from tests.support.workload_cluster import WorkloadCluster

#: Where the charts (OCCM, Cinder CSI) mount the cloud-config Secret in their containers.
CONFIG_MOUNT = "/etc/config"


def settings_text(
    namespace: str,
    cloud: str,
    *,
    separate: bool = False,
    name: str = "rot",
    external_network: str | None = None,
    cloud_cluster_name: str | None = None,
) -> str:
    """OCCM and Cinder CSI on (the defaults), the other optional services off (faster);
    ``external_network``: its ID as ``externalNetworkID`` (OCCM's floating network);
    ``cloud_cluster_name``: ``openstack.cloudClusterName`` (OCCM's and Cinder CSI's name)."""
    external = f"\n    externalNetworkID: {external_network}" if external_network else ""
    if cloud_cluster_name:
        external += f"\n    cloudClusterName: {cloud_cluster_name}"
    return f"""apiVersion: scs-templates.scs.community/v1alpha1
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
      machineType: SCS-2V-4-20s
  openstack:
    cloud: {cloud}{external}
    applicationCredential:
      separateWorkload: {"true" if separate else "false"}
  services:
    chartMirror: {json.dumps(str(real_charts()))}
    metricsServer:
      enabled: false
    ingressNginx:
      enabled: false
    gatewayAPI:
      enabled: false
"""


def cluster_settings(namespace: str, cloud: str, **options: Any) -> ClusterSettings:
    return parse_settings_text(settings_text(namespace, cloud, **options)).settings


def write_settings(directory: Path, text: str) -> Path:
    path = directory / "cluster.yaml"
    path.write_text(text)
    return path


def stored_credentials(kube: KubeClient, settings: ClusterSettings) -> dict[str, StoredCredential]:
    """The credentials the cluster's credentials Secret (``capi-<cluster>-cloud-config``, the
    name spelled here as the tests expect it, not taken from the library) holds, by key."""
    data = kube.secret_data(settings.metadata.namespace, f"capi-{settings.name}-cloud-config")
    return parse_credentials_secret(data or {}, settings.spec.openstack.cloud)


def install_credentials(
    conn: Any, kube: KubeClient, settings: ClusterSettings
) -> dict[str, StoredCredential]:
    """What ``install`` does for the credentials: ensure them, write the Secret; what the
    Secret then holds, read back."""
    credentials = ensure_cluster_credentials(conn, settings)
    content = credentials_secret_data(credentials, settings)
    lifecycle.store_credentials(kube, settings, {k: v.reveal() for k, v in content.items()})
    return stored_credentials(kube, settings)


class Installed(NamedTuple):
    """A cluster installed against the test stack (:func:`installed`)."""

    text: str  # the settings file's
    settings: ClusterSettings
    conn: Any  # openstack.connection.Connection (imported lazily)
    kubeconfig: Path  # the management plane's
    kube: KubeClient  # on it
    credentials: dict[str, StoredCredential]  # what install's credentials Secret holds


@contextlib.contextmanager
def installed(
    api_plane: Plane, tenant: Tenant, namespace: str, **options: Any
) -> Iterator[Installed]:
    """The cluster of :func:`settings_text` (``options``) in ``namespace`` with its
    credentials installed on the management plane; the connections closed afterwards."""
    text = settings_text(namespace, tenant.cloud, **options)
    settings = parse_settings_text(text).settings
    conn = tenant.connect()
    kube = KubeClient(str(api_plane.kubeconfig))
    try:
        credentials = install_credentials(conn, kube, settings)
        yield Installed(text, settings, conn, api_plane.kubeconfig, kube, credentials)
    finally:
        kube.close()
        conn.close()


def public_image(admin: Any, name: str) -> Any:
    """A small raw public image ``name``, uploaded into Glance (the admin's, as a cloud's
    images are); the fake virt driver never reads it."""
    return admin.image.create_image(
        name=name,
        data=b"\0" * 4096,
        disk_format="raw",
        container_format="bare",
        visibility="public",
        allow_duplicates=True,
        wait=True,
    )


def go_program(what: str, cached: Path, ensure_built: Callable[[], Path]) -> Path:
    """A program of testenv/ (``what``, its ``cached`` binary), built when it is not cached as
    the plane fixture builds the plane (``make test``'s background ``build --all`` builds
    it, and ``ensure_built`` waits for it under the build lock); without a Go toolchain
    skip, in CI fail."""
    from testenv import PlaneError, build

    if not cached.is_file() and build.go_binary() is None:
        skip_or_fail(f"{what} needs the Go toolchain (`go`) to build (testenv build --occm)")
    try:
        return ensure_built()
    except PlaneError as error:
        pytest.fail(f"{what} could not be built: {error}")


class Poller:
    """A background loop for a ``with`` block: :meth:`poll` every :attr:`INTERVAL` seconds
    in a daemon thread until the block ends. What it raises ends the loop and is kept in
    :attr:`error` (:func:`wait` raises it in the test, not lost in the thread)."""

    INTERVAL = 0.3

    def __init__(self) -> None:
        self.stop_event = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop_event.set()
        self.thread.join(timeout=30)

    def poll(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        try:
            while not self.stop_event.wait(self.INTERVAL):
                self.poll()
        except BaseException as error:
            self.error = error
            raise  # also reported as the thread's (pytest warns), where no wait looks


class Kubelet(Poller):
    """Plays the kubelet of the workload cluster's nodes: every Pod in kube-system is
    reported Running and Ready (no container runtime here), so the real controllers see
    the restarted Pods become available and finish their rollouts."""

    def __init__(self, cluster: WorkloadCluster) -> None:
        super().__init__()
        self.cluster = cluster

    def poll(self) -> None:
        from testenv.kubeapi import APIError

        server = self.cluster.server
        for pod in server.list("v1", "Pod", "kube-system"):
            status = pod.get("status") or {}
            if status.get("phase") == "Running":
                continue
            try:
                server.patch_status(
                    "v1",
                    "Pod",
                    "kube-system",
                    pod["metadata"]["name"],
                    {
                        "phase": "Running",
                        "conditions": [
                            {"type": "Ready", "status": "True"},
                            {"type": "ContainersReady", "status": "True"},
                        ],
                    },
                )
            except APIError:
                continue  # deleted meanwhile


def _expand(value: str, env: dict[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion of container arguments."""
    return re.sub(
        r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), value
    )


class PodContainers(Poller):
    """Plays the kubelet for one container of a workload's Pods (a double: no kubelet can run
    here): one real process per live Pod, started from that Pod's container and the Secret it
    mounts as it is when the Pod starts; a deleted Pod's process is stopped. Subclasses say
    which Pods (:meth:`owned`), which container, which Secret volume and mount, and the
    program's arguments (:meth:`argv`): OCCM's DaemonSet in tests/cloud/test_plane_occm.py, the
    Cinder CSI controller plugin's Deployment in tests/cloud/test_plane_openstack_cinder_csi.py."""

    #: The log files' prefix (``<prefix>-<pod uid>.log``) and the processes' name prefix.
    LOG = "occm"
    #: The container (``None``: the Pod's only one).
    CONTAINER: str | None = None
    #: The Secret volume (the cloud-config Secret we sync) and where the container mounts it
    #: (``None``: the container mounts none, as the CSI sidecars).
    VOLUME: str | None = "cloud-config-volume"
    MOUNT = CONFIG_MOUNT

    def __init__(self, cluster: WorkloadCluster, binary: Path, directory: Path) -> None:
        super().__init__()
        self.cluster = cluster
        self.binary = binary
        self.directory = directory
        self.running: dict[str, tuple[Daemon, Path]] = {}
        self.started: list[str] = []  # Pod UIDs, in start order

    def __exit__(self, *_: object) -> None:
        super().__exit__()
        for daemon, _conf in self.running.values():
            daemon.stop()
        self.running.clear()

    def owned(self, pod: dict[str, Any]) -> bool:
        """Whether ``pod`` is one of the workload's (by its owner reference)."""
        raise NotImplementedError

    def argv(self, args: list[str], conf: Path, pod: dict[str, Any]) -> list[str]:
        """The program's command line for ``pod`` from the container's (``$(VAR)``-expanded)
        args, its Secret volume written to ``conf``."""
        raise NotImplementedError

    def pods(self) -> list[dict[str, Any]]:
        return [p for p in self.cluster.server.list("v1", "Pod", "kube-system") if self.owned(p)]

    def config_of_running(self) -> list[str]:
        """The cloud.conf of every running process (as its container sees it)."""
        return [(conf / "cloud.conf").read_text() for _d, conf in list(self.running.values())]

    def logs(self) -> list[Path]:
        return sorted(self.directory.glob(f"{self.LOG}-*.log"))

    def poll(self) -> None:
        live = {
            pod["metadata"]["uid"]: pod
            for pod in self.pods()
            if not pod["metadata"].get("deletionTimestamp")
        }
        for uid in list(self.running):
            if uid not in live:  # the Pod was deleted: its container stops
                daemon, _conf = self.running.pop(uid)
                daemon.stop()
        for uid, pod in live.items():
            if uid not in self.running:
                self.running[uid] = self._start(pod)
                self.started.append(uid)
        for daemon, _conf in self.running.values():
            daemon.check()

    def _start(self, pod: dict[str, Any]) -> tuple[Daemon, Path]:
        from testenv.plane import _die_with_parent
        from testenv.process import Daemon

        spec = pod["spec"]
        [container] = [c for c in spec["containers"] if self.CONTAINER in (None, c["name"])]
        uid = pod["metadata"]["uid"]
        conf = self.directory / f"pod-{uid}" / "config"
        conf.mkdir(parents=True, mode=0o700)
        if self.VOLUME is not None:
            self._write_secret_volume(spec, container, conf)
        env = {e["name"]: e.get("value", "") for e in container.get("env") or []}
        args = [_expand(a, env) for a in container["args"]]
        daemon = Daemon(
            f"{self.LOG}-{uid[:8]}",
            self.argv(args, conf, pod),
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(conf.parent)},
            log=self.directory / f"{self.LOG}-{uid}.log",
            preexec=_die_with_parent,
        )
        return daemon, conf

    def _write_secret_volume(
        self, spec: dict[str, Any], container: dict[str, Any], conf: Path
    ) -> None:
        """The cloud-config Secret volume, written to ``conf`` as the kubelet writes it."""
        mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts") or []}
        # the chart's other mounts (hostPath kubelet plugin and PKI directories, the
        # ServiceAccount token) are not read with the flags argv() gives
        assert mounts[self.VOLUME].rstrip("/") == self.MOUNT, mounts
        [volume] = [v for v in spec["volumes"] if v["name"] == self.VOLUME]
        assert volume["secret"]["secretName"] == CLOUD_CONFIG_SECRET  # the one we sync
        secret = self.cluster.server.get(
            "v1", "Secret", "kube-system", volume["secret"]["secretName"]
        )
        assert secret is not None
        for key, value in secret["data"].items():  # what the kubelet writes into the volume
            path = conf / key
            path.write_bytes(base64.b64decode(value))
            path.chmod(0o600)


def wait(
    what: str, probe: Any, timeout: float, runner: PodContainers, *others: Poller, every: float = 1
) -> Any:
    """``probe()``'s first truthy answer within ``timeout`` seconds, polled ``every`` seconds;
    a failure of a background runner (``runner``, ``others``) is raised at once, a timeout
    fails with the tail of the log of ``runner`` and of every other Pod runner."""
    deadline = time.monotonic() + timeout
    while True:
        for watched in (runner, *others):
            if watched.error is not None:
                raise watched.error
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            tails = []
            for containers in (runner, *others):
                if isinstance(containers, PodContainers):
                    logs = containers.logs()
                    tail = logs[-1].read_text()[-3000:] if logs else "(none)"
                    tails.append(f"{containers.LOG} log:\n{tail}")
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}; " + "\n".join(tails))
        time.sleep(every)


def rotate_cli(settings_file: Path, kubeconfig: Path) -> int:
    """``scs-templates openstack appcred rotate`` of ``settings_file`` through the CLI, with the
    limits the plane tests give it (the workload's restart waited for up to 240 s)."""
    return main(
        [
            "openstack",
            "appcred",
            "rotate",
            str(settings_file),
            "--kubeconfig",
            str(kubeconfig),
            "--timeout",
            "240",
            "--poll-interval",
            "0.5",
        ]
    )


@dataclass(frozen=True)
class Rotated:
    """What :func:`rotate_through_cli` left: the Secret's credentials by key, the one of the
    key asked for (``new``), and the CLI's stdout and stderr."""

    credentials: dict[str, StoredCredential]
    new: StoredCredential
    out: str
    err: str


def rotate_through_cli(
    cluster: Installed,
    old: StoredCredential,
    directory: Path,
    capsys: pytest.CaptureFixture[str],
    *,
    key: str = "cloud.conf",
) -> Rotated:
    """The rotation step of the plane tests: :func:`rotate_cli` of the cluster's settings
    file (written to ``directory``) must exit 0 saying it deleted ``old`` (its ID), the
    Secret's ``key`` credential is then another one, and only that one authenticates."""
    code = rotate_cli(write_settings(directory, cluster.text), cluster.kubeconfig)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"(ID {old.id})" in out
    credentials = stored_credentials(cluster.kube, cluster.settings)
    new = credentials[key]
    assert new.id != old.id
    access: CloudAccess = cloud_access(cluster.conn)
    assert not credential_authenticates(access, old.id, old.secret)
    assert credential_authenticates(access, new.id, new.secret)
    return Rotated(credentials, new, out, err)
