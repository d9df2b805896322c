"""Start and stop a real Cluster API management plane on loopback.

etcd -> kube-apiserver (RBAC on, client-certificate auth) -> kube-controller-manager (garbage
collector, namespaces, ReplicaSets/Deployments, service accounts) -> the providers' CRDs and
webhook configurations -> the managers (CAPI core, kubeadm bootstrap, kubeadm control plane,
CAPD, CAPO), each serving its webhooks on its own port. :func:`start` returns once every
manager reports ready (its ``/readyz`` includes a check that its webhook server answers TLS).

Everything listens on 127.0.0.1 except what upstream cannot be told to bind there: the
managers' webhook servers (controller-runtime binds all interfaces; they require TLS from
our CA) and CAPD's in-memory workload API servers.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from scs_templates._core.atomic import process_alive, write_file
from testenv import build, manifests
from testenv.certs import CertificateAuthority, service_account_keys
from testenv.kubeapi import APIError, KubeAPI
from testenv.ports import free_port
from testenv.process import Daemon, PlaneError, wait_for

#: Seconds for each start-up phase (generous: 2 cores shared with the test suite).
STARTUP_TIMEOUT = 180.0
SERVICE_CIDR = "10.96.0.0/16"


@dataclass(frozen=True)
class Manager:
    """A provider manager: its binary, its ``config/`` tree and extra flags/env."""

    name: str
    config: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


#: ClusterClass (the clusterclass template): every CAPI-family webhook checks the gate.
_TOPOLOGY = ("--feature-gates=ClusterTopology=true",)

MANAGERS: tuple[Manager, ...] = (
    Manager("capi-core", "core", _TOPOLOGY),
    Manager("capi-bootstrap-kubeadm", "bootstrap-kubeadm", _TOPOLOGY),
    Manager("capi-controlplane-kubeadm", "controlplane-kubeadm", _TOPOLOGY),
    # The in-memory backend's workload API servers advertise POD_IP as their endpoint host.
    Manager("capd", "capd", _TOPOLOGY, env=(("POD_IP", "127.0.0.1"),)),
    Manager("capo", "capo"),
)
#: The ``--watch-filter`` value of :func:`webhooks_only`'s managers. Cluster API's and CAPO's
#: controllers reconcile only objects labelled ``cluster.x-k8s.io/watch-filter`` with it
#: (their event filter, ``predicates.ResourceHasFilterLabel`` and
#: ``ResourceNotPausedAndHasFilterLabel``); nothing carries that label.
RECONCILE_NOTHING = "testenv-reconciles-nothing"


def webhooks_only(names: tuple[str, ...]) -> tuple[Manager, ...]:
    """The managers ``names`` of :data:`MANAGERS` with ``--watch-filter=RECONCILE_NOTHING``:
    their webhooks admit, default and convert as ever, their controllers reconcile nothing
    (no finalizer, no owner reference, no cloud call). For a management cluster holding
    objects nothing could provision here, e.g. an OpenStack cluster on a cloud without
    compute, that the real CAPO would otherwise reconcile against that cloud."""
    unknown = set(names) - {m.name for m in MANAGERS}
    if unknown:
        raise ValueError(f"no such manager: {', '.join(sorted(unknown))}")
    return tuple(
        replace(m, args=(*m.args, f"--watch-filter={RECONCILE_NOTHING}"))
        for m in MANAGERS
        if m.name in names
    )


#: CRDs installed without a manager: CAPO's OpenStackServer controller watches ORC Images.
CRD_ONLY: dict[str, frozenset[str]] = {"orc": frozenset({"openstack.k-orc.cloud_images.yaml"})}

KCM_CONTROLLERS = (
    "garbage-collector-controller",
    "namespace-controller",
    "replicaset-controller",
    "deployment-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
)


def _die_with_parent() -> None:
    """Child pre-exec: SIGTERM when the starting process dies (no orphaned planes)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    tmp.replace(path)


def _kubeconfig(server: str, ca: Path, cert: Path, key: Path) -> str:
    import base64

    def b64(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "testenv",
                "cluster": {"server": server, "certificate-authority-data": b64(ca)},
            }
        ],
        "users": [
            {
                "name": "testenv-admin",
                "user": {"client-certificate-data": b64(cert), "client-key-data": b64(key)},
            }
        ],
        "contexts": [
            {"name": "testenv", "context": {"cluster": "testenv", "user": "testenv-admin"}}
        ],
        "current-context": "testenv",
    }
    return json.dumps(config, indent=2) + "\n"


@dataclass
class Plane:
    """A running plane. ``kubeconfig`` is cluster-admin; ``api`` a client with the same rights."""

    directory: Path
    kubeconfig: Path
    api: KubeAPI
    server: str
    bin: Path
    daemons: list[Daemon] = field(default_factory=list)
    locks: list[int] = field(default_factory=list)
    ports: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    #: For a plane another process runs (:func:`attach`): name -> pid of the processes that
    #: must live (that process and the plane's components); empty for a plane started here.
    watched: dict[str, int] = field(default_factory=dict)

    def namespace(self, prefix: str) -> str:
        """Create a fresh namespace ``PREFIX-xxxxxx`` (parallel tests never share one)."""
        name = f"{prefix}-{secrets.token_hex(3)}"
        self.api.ensure_namespace(name)
        return name

    def stop(self) -> None:
        """Stop every component, managers first, etcd last (of a plane started here; an
        attached plane is its owner's to stop)."""
        for daemon in reversed(self.daemons):
            daemon.stop()
        self.daemons.clear()
        for fd in self.locks:
            os.close(fd)  # releases the flock
        self.locks.clear()

    def component(self, name: str) -> Daemon:
        """The running component ``name`` (``kube-apiserver``, ``etcd``, a manager)."""
        for daemon in self.daemons:
            if daemon.name == name:
                return daemon
        raise KeyError(name)

    def check(self) -> None:
        """Raise if a component has died, or the owner of an attached plane has ended
        (:data:`PLANE_ENDED`)."""
        for daemon in self.daemons:
            daemon.check()
        if self.watched:
            _raise_if_ended(self.directory)
        for name, pid in self.watched.items():
            if not process_alive(pid):
                raise PlaneError(f"{name} (pid {pid}) of the shared plane {self.directory} ended")

    def __enter__(self) -> Plane:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _spawn(plane: Plane, name: str, argv: list[str], env: dict[str, str]) -> Daemon:
    daemon = Daemon(
        name, argv, env=env, log=plane.directory / "logs" / f"{name}.log", preexec=_die_with_parent
    )
    plane.daemons.append(daemon)
    return daemon


#: Seconds to wait for another plane's CAPD to release the fixed in-memory ports.
CAPD_LOCK_TIMEOUT = 1800.0
#: The machine-wide lock file of CAPD's fixed ports. The ports are the machine's, so the lock
#: must not depend on the checkout or the cache root: a cold CI run with its own
#: XDG_CACHE_HOME on a machine where other sessions' planes run (2026-12-02) locked a file
#: of its own cache root and would have started its CAPD beside theirs. A fixed path in /tmp
#: (not TMPDIR, which differs between sessions): a lock file only, never written or read,
#: opened without following a symlink.
CAPD_PORTS_LOCK = Path("/tmp/scs-templates-testenv-capd-ports.lock")  # noqa: S108


def capd_lock_paths() -> tuple[Path, ...]:
    """The lock files a plane with CAPD holds, in the order it takes them: the machine-wide
    :data:`CAPD_PORTS_LOCK`, then the cache root's ``capd-ports.lock``, the only one that
    trees before the machine-wide lock take (so those planes and this one still exclude
    each other)."""
    return (CAPD_PORTS_LOCK, build.cache_root() / "capd-ports.lock")


def _take_lock(path: Path, log: Callable[[str], None]) -> int:
    """Open ``path`` and hold its flock (waiting up to :data:`CAPD_LOCK_TIMEOUT`); the fd."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        build.acquire_flock(
            fd,
            CAPD_LOCK_TIMEOUT,
            waiting=lambda: f"testenv: waiting for another plane's CAPD to end (lock {path})",
            timed_out=lambda: (
                f"another test plane holds CAPD's fixed ports for over "
                f"{CAPD_LOCK_TIMEOUT:.0f}s (lock {path})"
            ),
            log=log,
        )
    except PlaneError:
        os.close(fd)
        raise
    return fd


def _lock_capd_ports(plane: Plane, log: Callable[[str], None]) -> None:
    """Hold the machine-wide locks of CAPD's fixed ports while this plane runs.

    CAPD's in-memory backend listens on fixed ports (debug server :19000, one workload API
    server per cluster from :20000, all interfaces; upstream main offers no flag for them), so
    two planes with CAPD cannot run on one machine at the same time: the second waits here.
    """
    held: list[int] = []
    try:
        for path in capd_lock_paths():
            held.append(_take_lock(path, log))
    except PlaneError:
        for fd in held:
            os.close(fd)
        raise
    plane.locks.extend(held)


def _probe_https(port: int, path: str, ca: str, cert: str, key: str) -> Callable[[], bool]:
    api = KubeAPI("127.0.0.1", port, ca=ca, cert=cert, key=key)

    def probe() -> bool:
        api.request("GET", path, timeout=5)
        return True

    return probe


def _probe_http(port: int, path: str) -> Callable[[], bool]:
    import http.client

    def probe() -> bool:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("GET", path)
            return conn.getresponse().status == 200
        finally:
            conn.close()

    return probe


def _apiserver_argv(
    bindir: Path, pki: Path, etcd_url: str, port: int, prefix: str, extra: tuple[str, ...]
) -> list[str]:
    """kube-apiserver's command line (file names as :func:`start` writes them to ``pki``)."""
    return [
        str(bindir / "kube-apiserver"),
        f"--etcd-servers={etcd_url}",
        f"--etcd-prefix={prefix}",
        f"--etcd-cafile={pki / 'ca.crt'}",
        f"--etcd-certfile={pki / 'etcd-client.crt'}",
        f"--etcd-keyfile={pki / 'etcd-client.key'}",
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        f"--secure-port={port}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        "--authorization-mode=RBAC",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        f"--cert-dir={pki / 'apiserver-generated'}",
        "--endpoint-reconciler-type=none",
        "--allow-privileged=true",
        "--profiling=false",
        *extra,
    ]


@contextlib.contextmanager
def extra_apiserver(
    plane: Plane, name: str, args: tuple[str, ...], *, bindir: Path | None = None
) -> Iterator[KubeAPI]:
    """A second kube-apiserver with extra flags (e.g. a rendered admission configuration).

    It shares the plane's etcd under its own key prefix (an empty cluster of its own), the
    plane's certificates and binaries (``bindir``: the directory of another release's
    kube-apiserver, :func:`testenv.build.build_kube_apiserver`); no controllers or webhooks
    talk to it. Raises :class:`PlaneError` with the tail of its log when it does not become
    ready, which is how a test sees that the API server refuses a configuration file.
    """
    port = free_port()
    pki = plane.directory / "pki"
    argv = _apiserver_argv(
        bindir or plane.bin,
        pki,
        f"https://127.0.0.1:{plane.ports['etcd']}",
        port,
        f"/{name}",
        args,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBECONFIG")}
    daemon = Daemon(
        name, argv, env=env, log=plane.directory / "logs" / f"{name}.log", preexec=_die_with_parent
    )
    try:
        api = KubeAPI(
            "127.0.0.1",
            port,
            ca=str(pki / "ca.crt"),
            cert=str(pki / "admin.crt"),
            key=str(pki / "admin.key"),
        )
        wait_for(f"{name} /readyz", api.healthy, STARTUP_TIMEOUT, [daemon])
        yield api
    finally:
        daemon.stop()


def start(
    directory: Path,
    *,
    log: Callable[[str], None] = print,
    managers: tuple[Manager, ...] = MANAGERS,
    apiserver_args: tuple[str, ...] = (),
) -> Plane:
    """Build what is missing, start the plane with its state in ``directory``; return it."""
    began = time.monotonic()
    root = build.ensure_built(log, only=build.PLANE_PROGRAMS)
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "logs").mkdir(exist_ok=True)
    pki = directory / "pki"
    ca = CertificateAuthority(pki)
    local = ("127.0.0.1", "localhost")
    # server AND client usage, as kubeadm issues it (cmd/kubeadm/app/phases/certs/certlist.go,
    # KubeadmCertEtcdServer): etcd's v3 JSON gateway dials etcd's gRPC with this certificate
    etcd_server = ca.issue("etcd-server", "etcd", hosts=local, server=True, client=True)
    etcd_client = ca.issue("etcd-client", "kube-apiserver-etcd-client", client=True)
    ca.issue(
        "apiserver",
        "kube-apiserver",
        hosts=(*local, "10.96.0.1", "kubernetes", "kubernetes.default", "kubernetes.default.svc"),
        server=True,
    )
    admin = ca.issue("admin", "testenv-admin", organizations=("system:masters",), client=True)
    sa = service_account_keys(pki)
    ports = {name: free_port() for name in ("etcd", "etcd-peer", "apiserver")}
    bindir = root / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBECONFIG", "ETCD"))}
    server = f"https://127.0.0.1:{ports['apiserver']}"
    kubeconfig = directory / "kubeconfig"
    _write_private(kubeconfig, _kubeconfig(server, ca.cert, admin.cert, admin.key))
    api = KubeAPI(
        "127.0.0.1", ports["apiserver"], ca=str(ca.cert), cert=str(admin.cert), key=str(admin.key)
    )
    plane = Plane(directory, kubeconfig, api, server, bindir, ports=ports)
    try:
        etcd_url = f"https://127.0.0.1:{ports['etcd']}"
        peer_url = f"http://127.0.0.1:{ports['etcd-peer']}"
        etcd = _spawn(
            plane,
            "etcd",
            [
                str(bindir / "etcd"),
                "--name=testenv",
                f"--data-dir={directory / 'etcd'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=testenv={peer_url}",
                f"--cert-file={etcd_server.cert}",
                f"--key-file={etcd_server.key}",
                f"--trusted-ca-file={ca.cert}",
                "--client-cert-auth",
                "--unsafe-no-fsync",  # a throwaway store: durability buys nothing here
                "--log-level=warn",
            ],
            env,
        )
        wait_for(
            "etcd",
            _probe_https(
                ports["etcd"], "/health", str(ca.cert), str(etcd_client.cert), str(etcd_client.key)
            ),
            STARTUP_TIMEOUT,
            [etcd],
        )
        plane.timings["etcd"] = round(time.monotonic() - began, 1)
        kas = _spawn(
            plane,
            "kube-apiserver",
            _apiserver_argv(bindir, pki, etcd_url, ports["apiserver"], "/registry", apiserver_args),
            env,
        )
        wait_for("kube-apiserver /readyz", api.healthy, STARTUP_TIMEOUT, [etcd, kas])
        plane.timings["kube-apiserver"] = round(time.monotonic() - began, 1)
        _spawn(
            plane,
            "kube-controller-manager",
            [
                str(bindir / "kube-controller-manager"),
                f"--kubeconfig={kubeconfig}",
                f"--controllers={','.join(KCM_CONTROLLERS)}",
                f"--service-account-private-key-file={sa.key}",
                f"--root-ca-file={ca.cert}",
                "--leader-elect=false",
                "--secure-port=0",
                "--use-service-account-credentials=false",
            ],
            env,
        )
        webhook_ports = {m.name: free_port() for m in managers}
        health_ports = {m.name: free_port() for m in managers}
        plane.ports.update({f"{k}-webhook": v for k, v in webhook_ports.items()})
        plane.ports.update({f"{k}-health": v for k, v in health_ports.items()})
        _install_manifests(plane, root / "manifests", managers, webhook_ports, ca.pem)
        plane.timings["crds"] = round(time.monotonic() - began, 1)
        manager_env = env | {"KUBECONFIG": str(kubeconfig)}
        if any(m.name == "capd" for m in managers):
            _lock_capd_ports(plane, log)
        started: list[tuple[Manager, Daemon]] = []
        for manager in managers:
            certs = pki / manager.name
            ca.issue(
                manager.name,
                manager.name,
                hosts=local,
                server=True,
                cert_name="tls.crt",
                key_name="tls.key",
                directory=certs,
            )
            daemon = _spawn(
                plane,
                manager.name,
                [
                    str(bindir / manager.name),
                    "--leader-elect=false",
                    f"--webhook-port={webhook_ports[manager.name]}",
                    f"--webhook-cert-dir={certs}",
                    f"--health-addr=127.0.0.1:{health_ports[manager.name]}",
                    "--diagnostics-address=0",
                    *manager.args,
                ],
                manager_env | dict(manager.env),
            )
            started.append((manager, daemon))
        for manager, daemon in started:
            wait_for(
                f"{manager.name} /readyz",
                _probe_http(health_ports[manager.name], "/readyz"),
                STARTUP_TIMEOUT,
                [daemon],
            )
        plane.timings["managers"] = round(time.monotonic() - began, 1)
        # written last and atomically: its presence says "ready" to :func:`attach`
        state = {
            "server": server,
            "ports": plane.ports,
            "pids": {d.name: d.pid for d in plane.daemons},
        }
        write_file(directory / PLANE_JSON, json.dumps(state, indent=2, sort_keys=True) + "\n")
    except BaseException:
        plane.stop()
        raise
    return plane


#: The file :func:`start` writes into the plane's directory once every component is ready.
PLANE_JSON = "plane.json"
#: The file the parent of a shared plane's process writes into the plane's directory once it
#: has seen that process end (tests/support/run_tiers.py): one line, its exit status and log.
#: A process id alone cannot tell the attached test processes: the process stays a zombie
#: until its parent reaps it, which frees the id for the next process (``pid_max`` is 32768
#: on this 2-core machine).
PLANE_ENDED = "ended"


def mark_ended(directory: Path, reason: str) -> None:
    """Say that the process running the shared plane in ``directory`` has ended, and the
    plane with it (``reason``: one line): :func:`attach` and :meth:`Plane.check` raise."""
    write_file(directory / PLANE_ENDED, f"{reason}\n")


def _raise_if_ended(directory: Path) -> None:
    marker = directory / PLANE_ENDED
    if marker.is_file():
        raise PlaneError(f"the shared plane in {directory} has ended: {marker.read_text().strip()}")


def attach(
    directory: Path,
    owner: int,
    *,
    log: Callable[[str], None] = print,
    poll: float = 1.0,
) -> Plane:
    """The plane that process ``owner`` (``python -m testenv up --dir DIRECTORY``) starts in
    ``directory``, once it is ready: one plane shared by several test processes (the plane
    groups of tests/support/run_tiers.py). Waits as long as ``owner`` lives (it may wait for
    the plane's build or for CAPD's machine-wide port lock); raises :class:`PlaneError` when
    it ends first, or its parent has said so (:data:`PLANE_ENDED`). The returned plane
    neither owns nor stops the components; ``check()`` raises once the owner or a component
    has ended."""
    ready = directory / PLANE_JSON
    said = False
    while not ready.is_file():
        _raise_if_ended(directory)
        if not process_alive(owner):
            raise PlaneError(f"the shared plane's process {owner} ended before {ready} existed")
        if not said:
            log(f"testenv: waiting for the shared plane in {directory} (process {owner})")
            said = True
        time.sleep(poll)
    _raise_if_ended(directory)
    state = json.loads(ready.read_text())
    pki = directory / "pki"
    ports = {str(k): int(v) for k, v in state["ports"].items()}
    api = KubeAPI(
        "127.0.0.1",
        ports["apiserver"],
        ca=str(pki / "ca.crt"),
        cert=str(pki / "admin.crt"),
        key=str(pki / "admin.key"),
    )
    watched = {"the plane's owner": owner, **{str(k): int(v) for k, v in state["pids"].items()}}
    return Plane(
        directory,
        directory / "kubeconfig",
        api,
        str(state["server"]),
        build.plane_dir() / "bin",
        ports=ports,
        watched=watched,
    )


def _install_manifests(
    plane: Plane,
    root: Path,
    managers: tuple[Manager, ...],
    webhook_ports: dict[str, int],
    ca_pem: bytes,
) -> None:
    """Apply every CRD (server-side) and wait for Established; then the webhook configurations."""
    api = plane.api
    crds: list[dict[str, Any]] = []
    configs: list[dict[str, Any]] = []
    by_config = {m.config: m for m in managers}
    for tree in [m.config for m in managers] + list(CRD_ONLY):
        manager = by_config.get(tree)
        port = webhook_ports[manager.name] if manager else None
        only = CRD_ONLY.get(tree)
        crds += manifests.crds(root / tree, port=port, ca_pem=ca_pem, only=only)
        if manager is not None:
            configs += manifests.webhook_configurations(
                root / tree, tree, port=webhook_ports[manager.name], ca_pem=ca_pem
            )

    # the API server compiles each CRD's schema: a few at a time is faster than one by one
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(api.apply, crds))
    names = [crd["metadata"]["name"] for crd in crds]

    def established() -> bool:
        items = api.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        done = {
            item["metadata"]["name"]
            for item in items.get("items", [])
            for cond in (item.get("status") or {}).get("conditions") or []
            if cond.get("type") == "Established" and cond.get("status") == "True"
        }
        return all(name in done for name in names)

    wait_for("CRDs Established", established, STARTUP_TIMEOUT, plane.daemons)
    for config in configs:
        api.apply(config)


@contextlib.contextmanager
def running(directory: Path, **kwargs: Any) -> Iterator[Plane]:
    """``with running(DIR) as plane:`` - start, yield, always stop."""
    plane = start(directory, **kwargs)
    try:
        yield plane
    finally:
        plane.stop()


__all__ = [
    "MANAGERS",
    "PLANE_JSON",
    "RECONCILE_NOTHING",
    "APIError",
    "Manager",
    "Plane",
    "PlaneError",
    "attach",
    "extra_apiserver",
    "running",
    "start",
    "webhooks_only",
]
