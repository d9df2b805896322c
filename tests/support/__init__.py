"""Shared test helpers (import them: `from tests.support import ...`).

Tests that need something from outside the repository (the pinned helm binaries, the
reference CRDs in ../shared, the OpenStack test stack) skip with a clear reason on a user's
machine, but must never skip in CI: there, a missing prerequisite is a failure.
"""

from __future__ import annotations

import os
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates.providers.registry import shipped_providers

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.toolchain.resolve import Tool
    from testenv import Plane

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
#: The names of the shipped providers (the catalogue's rows; test-only ones are not among them).
SHIPPED_PROVIDERS: tuple[str, ...] = tuple(provider.name for provider in shipped_providers())
#: The reference material next to the repository (../shared); SCS_TEMPLATES_SHARED points
#: elsewhere (a git worktree lives one level deeper than the clone).
SHARED = Path(os.environ.get("SCS_TEMPLATES_SHARED") or REPO.parent / "shared")
#: Real upstream service charts, packaged (../shared/charts/README.md lists their sources).
REAL_CHARTS = SHARED / "charts"


def settings_data(
    spec: Mapping[str, Any], name: str = "demo", namespace: str = "default"
) -> dict[str, Any]:
    """A settings document (apiVersion, kind, metadata) around ``spec``."""
    return {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": name, "namespace": namespace},
        "spec": dict(spec),
    }


def settings_of(
    spec: Mapping[str, Any], name: str = "demo", namespace: str = "default", *, file: str = ""
) -> ClusterSettings:
    """Validated settings from a spec dict (the path a settings file takes after YAML)."""
    from scs_templates._settings.validate import validate_data

    return validate_data(settings_data(spec, name, namespace), file=file).settings


def settings_from_text(text: str) -> ClusterSettings:
    """Validated settings from the YAML text of a settings file."""
    from scs_templates._settings.validate import parse_settings_text

    return parse_settings_text(text).settings


def services_settings(
    provider: str = "openstack", *, network_mtu: int = 0, **services: Any
) -> ClusterSettings:
    """Valid settings with ``spec.services`` = ``services`` (camelCase keys)
    (tests/render/test_services.py, tests/plane/test_services_apply.py)."""
    spec: dict[str, Any] = {"provider": provider, "services": services}
    if network_mtu:
        spec["network"] = {"mtu": network_mtu}
    if provider == "openstack":
        spec["controlPlane"] = {"replicas": 1, "machineType": "SCS-2V-4"}
        spec["workers"] = [{"name": "workers", "machineType": "SCS-2V-4"}]
    else:
        spec["controlPlane"] = {"replicas": 1}
    return settings_of(spec)


def autoscaled(provider: str = "openstack", **services: Any) -> ClusterSettings:
    """:func:`services_settings` whose one worker group autoscales from zero, with a label and
    a taint."""
    from scs_templates._settings.model import settings_model

    data = services_settings(provider, **services).model_dump(by_alias=True, exclude_none=True)
    group = data["spec"]["workers"][0]
    group.pop("replicas", None)
    group["autoscaling"] = {"min": 0, "max": 4}
    group["labels"] = {"scs.community/pool": "batch"}
    group["taints"] = [{"key": "batch", "value": "yes", "effect": "NoSchedule"}]
    return settings_model().model_validate(data)


def openstack_settings_text(
    name: str, node_cidr: str, *, extra: str = "", external: str = "", namespace: str = "default"
) -> str:
    """An OpenStack settings file on cloud ``demo`` with per-cluster application credentials
    (tests/unit/test_openstack_offline.py, tests/cloud/test_openstack.py); ``external`` and
    ``extra``: further lines of the ``openstack`` and ``applicationCredential`` sections."""
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
      machineType: SCS-4V-8-50s
  network:
    nodeCIDR: {node_cidr}
  openstack:
    cloud: demo
{external}    applicationCredential:
      perCluster: true
{extra}"""


def openstack_settings(name: str, node_cidr: str, **kwargs: str) -> ClusterSettings:
    """Validated :func:`openstack_settings_text`."""
    return settings_from_text(openstack_settings_text(name, node_cidr, **kwargs))


def real_charts() -> Path:
    """The directory of the real packaged service charts, or skip (fail in CI)."""
    if not (REAL_CHARTS / "README.md").is_file():
        skip_or_fail(f"the real upstream service charts are not in {REAL_CHARTS}")
    return REAL_CHARTS


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def skip_or_fail(reason: str) -> None:
    """Skip outside CI; fail in CI, where every prerequisite must be present."""
    if in_ci():
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


def pinned_helm() -> Any:
    """The library's Helm runner over the pinned helm (skip, or fail in CI, when absent)."""
    from scs_templates._core.errors import ToolNotFoundError
    from scs_templates._tools.helm import Helm
    from scs_templates._tools.toolchain.resolve import find_helm

    try:
        return Helm(find_helm())
    except ToolNotFoundError as error:
        skip_or_fail(f"helm is not installed (`scs-templates tools install`): {error}")
        raise


def helm_tool() -> Tool:
    """The REAL pinned helm, for tests that run helm against a real API server; skip (fail in
    CI) when it is not installed."""
    from scs_templates._core.errors import ScsTemplatesError
    from scs_templates._tools.toolchain.resolve import find_helm

    try:
        return find_helm()
    except ScsTemplatesError as error:
        skip_or_fail(f"helm is not installed (`scs-templates tools install`): {error}")
        raise  # unreachable: skip_or_fail raises


def helmfile_tool() -> Tool:
    """The REAL pinned helmfile, built now when missing (as a helmfile command does: minutes,
    once); skip (fail in CI) when it cannot be had (no Go)."""
    from scs_templates._core.errors import ScsTemplatesError
    from scs_templates._tools.toolchain.install import ensure_tool

    try:
        return ensure_tool("helmfile")
    except ScsTemplatesError as error:
        skip_or_fail(f"helmfile is not installed (`scs-templates tools install --all`): {error}")
        raise


def process_gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie counts: it no longer runs)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def wait_for(condition: Callable[[], object], seconds: float = 30.0) -> bool:
    """Poll ``condition`` every 50 ms until it is true (True) or ``seconds`` pass (False): a
    process or file of the test's own, never a bare sleep."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def fake_helm_binary(directory: Path, body: str, *, version: str = 'printf "v4.3.2"') -> Path:
    """A TEST DOUBLE for helm 4.3.2: ``version`` runs ``version``, anything else ``body``
    (after reading stdin, where the values arrive). For cases a real helm cannot be made to
    show: hanging, printing garbage, flooding stderr."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "helm"
    script.write_text(
        "#!/bin/sh\n"
        "# TEST DOUBLE for helm (tests/support/__init__.py: fake_helm_binary).\n"
        f'if [ "$1" = version ]; then {version}; exit 0; fi\n'
        "cat > /dev/null\n"
        f"{body}\n"
    )
    script.chmod(0o755)
    return script


_RENDERED: dict[str, list[dict[str, Any]]] = {}


def render_crds_from_real_charts(settings: ClusterSettings, release: Any) -> list[dict[str, Any]]:
    """gitops' renderer of CRD releases (scs_templates._gitops.crds) over the real packaged
    charts in ../shared/charts: the same chart version and values, the pinned helmfile; only
    the place the chart comes from is the local mirror (no registry is reachable here).
    Cached per release and values (a helmfile run per distinct rendering)."""
    import json

    from scs_templates._services.releases import service_releases
    from scs_templates._services.runner import ServicesHelmfile
    from scs_templates._services.serverside import rendered_objects

    key = json.dumps([release.name, release.version, release.values], sort_keys=True)
    if key not in _RENDERED:
        services = settings.spec.services.model_copy(update={"chart_mirror": str(real_charts())})
        spec = settings.spec.model_copy(update={"services": services})
        mirrored = settings.model_copy(update={"spec": spec})
        local = next(r for r in service_releases(mirrored) if r.name == release.name)
        assert (local.version, local.values) == (release.version, release.values)
        _RENDERED[key] = rendered_objects(mirrored, local, ServicesHelmfile())
    return [dict(obj) for obj in _RENDERED[key]]


#: A real self-signed CA certificate (its key thrown away): the settings refuse made-up PEM
#: (settings/certificates.py); the tests' CA in settings.
CA_PEM = (
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBbzCCARWgAwIBAgIUAZ3V/8oQdyQU7MBDhiVXo6qS4q0wCgYIKoZIzj0EAwIw\n"
    "LTErMCkGA1UEAwwic2NzLXRlbXBsYXRlcyB0ZXN0IENBICh0ZXN0cyBvbmx5KTAe\n"
    "Fw0yNjAxMDEwMDAwMDBaFw0zNTEyMzAwMDAwMDBaMC0xKzApBgNVBAMMInNjcy10\n"
    "ZW1wbGF0ZXMgdGVzdCBDQSAodGVzdHMgb25seSkwWTATBgcqhkjOPQIBBggqhkjO\n"
    "PQMBBwNCAARCIiSJ+9jPDR7RHJqpdSpQeZHAizwegdDK/bVCLDOKiPW77LXXNiFW\n"
    "b2PVlsZHeTZ/Vz2WEKNeokP7JxfbkfyxoxMwETAPBgNVHRMBAf8EBTADAQH/MAoG\n"
    "CCqGSM49BAMCA0gAMEUCIQCpqOxQJPv049DnBPPIyFGhP5CfKbADPsSPsLxmC+1y\n"
    "DgIgPkUoGA1Wi6IJVb0LlODXkUAEyI7C8dAixrg0AqrXVVg=\n"
    "-----END CERTIFICATE-----\n"
)


def run_node_setup(
    files: list[dict[str, Any]],
    root: Path,
    scratch: Path,
    given: Mapping[str, str],
    tools: Mapping[str, str] | None = None,
) -> None:
    """Lay a node's bootstrap ``files`` out under ``root`` (with ``given``: path -> content,
    what the bootstrap controller copies from Secrets and what Cluster API writes, e.g.
    /run/kubeadm/kubeadm-join-config.yaml) and run the rendered scs-node-setup.sh for real,
    twice (it must be idempotent), in a sandbox: its absolute paths moved under ``root``,
    systemctl a stub in ``scratch``, ``tools``: further programs there (name -> script). No
    node boots here; this is the script a node runs."""
    import subprocess

    def place(path: str, text: str) -> None:
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    by_path = {f["path"]: f for f in files}
    for path, entry in by_path.items():
        place(path, entry.get("content", ""))
    for path, text in given.items():
        place(path, text)
    script = by_path["/usr/local/sbin/scs-node-setup.sh"]["content"]
    for prefix in ("/run/kubeadm", "/etc/systemd", "/etc/containerd"):
        script = script.replace(prefix, f"{root}{prefix}")
    (scratch / "bin").mkdir(parents=True, exist_ok=True)
    for name, body in {"systemctl": "#!/bin/sh\nexit 0\n", **(tools or {})}.items():
        (scratch / "bin" / name).write_text(body)
        (scratch / "bin" / name).chmod(0o755)
    (scratch / "setup.sh").write_text(script)
    env = {"PATH": f"{scratch / 'bin'}:/usr/bin:/bin"}
    for _ in range(2):
        ran = subprocess.run(
            ["bash", str(scratch / "setup.sh")],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env=env,
        )
        assert ran.returncode == 0, ran.stderr


def plane_with_managers(
    tmp_path_factory: pytest.TempPathFactory, directory: str, names: tuple[str, ...]
) -> Iterator[Plane]:
    """For a module's ``plane`` fixture: etcd, kube-apiserver, kube-controller-manager and
    only the managers ``names`` of :data:`testenv.plane.MANAGERS`, in a fresh ``directory``.
    Skips (fails in CI) when a binary is missing and Go cannot build it; fails when the
    plane does not start."""
    from testenv import PlaneError, build, running
    from testenv.plane import MANAGERS

    needed = {"etcd", "kube-apiserver", "kube-controller-manager", *names}
    missing = [name for name in build.missing() if name in needed]
    if missing and build.go_binary() is None:
        skip_or_fail(f"the test plane needs the Go toolchain (`go`) to build {', '.join(missing)}")
    managers = tuple(m for m in MANAGERS if m.name in names)
    try:
        with running(tmp_path_factory.mktemp(directory), managers=managers) as started:
            yield started
    except PlaneError as error:
        pytest.fail(f"the test plane did not start: {error}")


def wait_on_plane(what: str, check: Any, plane: Plane, timeout: float) -> Any:
    """``check()``'s first truthy answer within ``timeout`` seconds, polled every 2 s; each
    round first checks that the plane's processes still run (``Plane.check``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        plane.check()
        found = check()
        if found:
            return found
        time.sleep(2)
    raise AssertionError(f"timed out waiting for {what}")


@contextmanager
def serving_in_thread(server: Any, name: str) -> Iterator[str]:
    """Run a loopback ``socketserver`` server (an HTTP double) in a daemon thread; yield
    ``http://127.0.0.1:PORT`` and shut it down afterwards."""
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextmanager
def serving_tls_in_thread(server: Any, name: str, directory: Path) -> Iterator[tuple[str, bytes]]:
    """:func:`serving_in_thread` over HTTPS: a CA of its own in ``directory`` signs the
    server's certificate for 127.0.0.1. Yields ``https://127.0.0.1:PORT`` and the CA's PEM
    (what a client trusts)."""
    from testenv.certs import CertificateAuthority  # cryptography: only where TLS is served

    authority = CertificateAuthority(directory)
    pair = authority.issue(name, name, hosts=("127.0.0.1",), server=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pair.cert), str(pair.key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with serving_in_thread(server, name) as url:
        yield "https" + url.removeprefix("http"), authority.pem


def answer_json(
    handler: Any, status: int, body: bytes, headers: Iterable[tuple[str, str]] = ()
) -> None:
    """An HTTP double's whole answer: ``status``, a JSON ``body`` with its length, and
    ``headers``."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


#: How often :func:`answer_trickling` sends its next byte: a quarter of the shortest
#: ``--timeout`` the tests give (1 s), so no per-read timeout ever fires and only a wall
#: clock ends the call.
TRICKLE_EVERY = 0.25


def answer_trickling(handler: Any, released: threading.Event, hang: float) -> None:
    """An HTTP double's answer that never completes in time: a 200 announcing a megabyte
    of JSON, then one byte every :data:`TRICKLE_EVERY` seconds (no read timeout ever
    fires) until ``released`` or ``hang`` seconds are over, or the client gives up."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(1 << 20))
    handler.end_headers()
    handler.wfile.flush()
    deadline = time.monotonic() + hang
    while not released.wait(TRICKLE_EVERY) and time.monotonic() < deadline:
        try:
            handler.wfile.write(b" ")
            handler.wfile.flush()
        except OSError:  # the client gave up: its wall clock did its job
            return


def token_kubeconfig(path: Path, server: str) -> Path:
    """A kubeconfig (0600) for ``server`` with the token ``not-a-real-token`` (a canary: it
    must appear in no output)."""
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: c\n  cluster:\n    server: {server}\n"
        "contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
        "users:\n- name: u\n  user:\n    token: not-a-real-token\n"
    )
    path.chmod(0o600)
    return path
