"""Build the plane's programs from Go modules, once, into a cache outside the repository.

Each directory under ``testenv/go/`` is a small wrapper module that only ``require``s an
upstream module (Kubernetes with its staging ``replace`` lines, etcd, Cluster API, CAPD, CAPO)
and pins every dependency in its ``go.sum``. ``go build -o BIN IMPORTPATH`` then builds the
real upstream program; no upstream source is ever copied into the repository.

The cache directory is keyed by a hash of the wrapper modules (``go.mod``, ``go.sum``,
``tools.go``) and of the build recipe below, so a dependency bump builds into a fresh
directory and an unchanged tree never rebuilds:
``~/.cache/scs-templates/testenv/<key>/{bin,manifests}`` (``SCS_TEMPLATES_TESTENV_CACHE``
moves the root). Besides the binaries the build copies each provider's ``config/`` tree
(CRDs, kustomizations, webhook manifests) out of the Go module cache, so starting the plane
needs neither Go nor the module cache.

A ``kubeadm`` of another Kubernetes release (for ``kubeadm config validate`` of a workload
minor) is built on demand by :func:`build_kubeadm` from a generated wrapper module.

Every ``go`` command runs niced (:func:`build_niceness`: it must not slow the tests or the
other work beside it; a nice build still gets every idle core) and under one lock per cache
root (:func:`build_lock`): a second builder of the same machine (the test that needs the
binary while ``make test``'s background build makes it, another checkout's test run) waits
for the first and then finds the binary built, instead of compiling the same packages again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scs_templates._tools.toolchain import go_build
from scs_templates._tools.toolchain.install import go_binary as go_binary  # one lookup of `go`
from testenv.process import PlaneError, capture, run

GO_DIR = Path(__file__).resolve().parent / "go"
#: Bump when the build recipe changes in a way the wrapper modules do not show.
RECIPE = "1"
#: The compiler flags of the programs that only the few tests of their own run (another
#: release's kubeadm and kube-apiserver, the csi-provisioner): no optimisation and no
#: inlining, so ~25 % fewer CPU seconds of build (the csi-provisioner, empty build cache:
#: 192 -> 144 CPU s) for the same source, slower only where it computes, and they mostly
#: wait. The plane (it serves every plane and cloud test), etcdctl (it reuses the plane's
#: etcd packages), OCCM, the Cinder CSI plugin and Flux's controllers (they reuse the
#: plane's Cluster API and CAPO packages, :data:`PLANE_GCFLAGS`) are built optimised.
QUICK_GCFLAGS = go_build.UNOPTIMISED
#: The extra compiler flags of the plane's programs: none (optimised). Programs built in their
#: own wrapper with them (OCCM, the Cinder CSI plugin, Flux's controllers) reuse the packages
#: the plane compiled where their wrapper requires the same versions
#: (tests/unit/test_wrapper_versions.py).
PLANE_GCFLAGS = ""
#: The recipe of another release's programs (:func:`build_release_program`): 2 = QUICK_GCFLAGS.
RELEASE_RECIPE = "2"
#: Wall-clock limit of one `go` command (a cold kube-apiserver build on 2 busy cores is ~15 min).
GO_TIMEOUT = 3600.0
#: How long a builder waits for another one's build (the plane's cold build holds the lock
#: for all of its programs: ~2000 CPU seconds).
BUILD_LOCK_TIMEOUT = 2 * GO_TIMEOUT
#: Niceness added to every `go` command unless SCS_TEMPLATES_TESTENV_NICE says otherwise.
DEFAULT_NICENESS = 10
#: The Kubernetes release the ``kubernetes`` wrapper builds (kept in sync with its go.mod by
#: a test).
KUBERNETES_VERSION = "v1.37.2"


@dataclass(frozen=True)
class Program:
    """One binary: the wrapper module that builds it and the upstream main package."""

    name: str
    module: str
    package: str
    ldflags: tuple[str, ...] = ()


def _kube_ldflags(version: str) -> tuple[str, ...]:
    major, minor = version.lstrip("v").split(".")[:2]
    pkg = "k8s.io/component-base/version"
    return (
        f"-X {pkg}.gitVersion={version}",
        f"-X {pkg}.gitMajor={major}",
        f"-X {pkg}.gitMinor={minor}",
        f"-X {pkg}.gitTreeState=clean",
    )


KUBE_TAGS = "selinux,notest,grpcnotrace"

PROGRAMS: tuple[Program, ...] = (
    Program("etcd", "etcd", "go.etcd.io/etcd/server/v3"),
    Program(
        "kube-apiserver",
        "kubernetes",
        "k8s.io/kubernetes/cmd/kube-apiserver",
        _kube_ldflags(KUBERNETES_VERSION),
    ),
    Program(
        "kube-controller-manager",
        "kubernetes",
        "k8s.io/kubernetes/cmd/kube-controller-manager",
        _kube_ldflags(KUBERNETES_VERSION),
    ),
    Program(
        "kubeadm", "kubernetes", "k8s.io/kubernetes/cmd/kubeadm", _kube_ldflags(KUBERNETES_VERSION)
    ),
    Program("capi-core", "capi", "sigs.k8s.io/cluster-api/core"),
    Program("capi-bootstrap-kubeadm", "capi", "sigs.k8s.io/cluster-api/bootstrap/kubeadm"),
    Program("capi-controlplane-kubeadm", "capi", "sigs.k8s.io/cluster-api/controlplane/kubeadm"),
    Program("capd", "capd", "sigs.k8s.io/cluster-api/test/infrastructure/docker"),
    Program("capo", "capo", "sigs.k8s.io/cluster-api-provider-openstack"),
)


#: What a running plane needs (kubeadm is a tool for tests, built with the rest by
#: ``python -m testenv build`` but not required to start).
PLANE_PROGRAMS = frozenset(p.name for p in PROGRAMS if p.name != "kubeadm")


@dataclass(frozen=True)
class ConfigTree:
    """A provider's kustomize ``config/`` directory inside an upstream Go module."""

    provider: str
    wrapper: str
    module: str
    subdir: str


CONFIG_TREES: tuple[ConfigTree, ...] = (
    ConfigTree("core", "capi", "sigs.k8s.io/cluster-api", "core/config"),
    ConfigTree("bootstrap-kubeadm", "capi", "sigs.k8s.io/cluster-api", "bootstrap/kubeadm/config"),
    ConfigTree(
        "controlplane-kubeadm", "capi", "sigs.k8s.io/cluster-api", "controlplane/kubeadm/config"
    ),
    ConfigTree("capd", "capd", "sigs.k8s.io/cluster-api/test", "infrastructure/docker/config"),
    ConfigTree("capo", "capo", "sigs.k8s.io/cluster-api-provider-openstack", "config"),
    # CAPO's OpenStackServer controller watches ORC Images: its CRD must exist.
    ConfigTree("orc", "capo", "github.com/k-orc/openstack-resource-controller/v2", "config"),
)


def cache_root() -> Path:
    override = os.environ.get("SCS_TEMPLATES_TESTENV_CACHE")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "scs-templates" / "testenv"


def cache_key() -> str:
    """Hash of every wrapper module's go.mod, go.sum and tools.go and of the recipe."""
    digest = hashlib.sha256(f"recipe {RECIPE} {KUBE_TAGS}\n".encode())
    for path in sorted(GO_DIR.glob("*/*")):
        if path.name in {"go.mod", "go.sum", "tools.go"}:
            digest.update(f"{path.relative_to(GO_DIR)}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def plane_dir() -> Path:
    return cache_root() / cache_key()


def build_niceness() -> int:
    """How much nicer than the caller the `go` commands run (SCS_TEMPLATES_TESTENV_NICE, an
    integer; 0 = as the caller)."""
    value = os.environ.get("SCS_TEMPLATES_TESTENV_NICE", "").strip()
    if not value:
        return DEFAULT_NICENESS
    try:
        return max(0, int(value))
    except ValueError:
        raise PlaneError(
            f"SCS_TEMPLATES_TESTENV_NICE must be an integer niceness, not {value!r}"
        ) from None


def acquire_flock(
    fd: int,
    timeout: float,
    waiting: Callable[[], str],
    timed_out: Callable[[], str],
    log: Callable[[str], None],
    done: Callable[[], bool] | None = None,
) -> bool:
    """Take an exclusive flock on ``fd``, waiting up to ``timeout`` seconds for its holder.

    One wait loop for testenv's locks (the build lock here, CAPD's port lock in plane.py):
    ``waiting()`` is logged once when it has to wait, ``timed_out()`` is the PlaneError's text.
    Returns True once the lock is held. With ``done``, a waiter that no longer needs the lock
    (``done()`` is true: what it waited for has been built) stops waiting and gets False.
    Why: flock is not fair. `build --all` releases the lock after each program and takes it
    again at once for the next, so a test polling once a second never got it while the
    background build ran (a cold CI run's plane tests waited ~40 minutes for builds they did
    not need, though the plane had been built long before).
    """
    deadline = time.monotonic() + timeout
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if done is not None and done():
                return False
            if not told:
                log(waiting())
                told = True
            if time.monotonic() > deadline:
                raise PlaneError(timed_out()) from None
            time.sleep(1.0)


@contextlib.contextmanager
def build_lock(
    what: str, log: Callable[[str], None] = print, done: Callable[[], bool] | None = None
) -> Iterator[None]:
    """Hold the cache root's build lock (``<cache root>/build.lock``) while building ``what``.

    Waits (up to :data:`BUILD_LOCK_TIMEOUT`) while another process builds; callers check
    again what is missing once they hold it. ``done`` says whether what the caller needs is
    there by now: then it stops waiting and runs its block WITHOUT the lock (its re-check
    finds nothing to build). The kernel releases the lock when the holder dies, however it
    dies."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    path = root / "build.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)

    def holder() -> str:
        return path.read_text(errors="replace").strip() or "unknown"

    try:
        if acquire_flock(
            fd,
            BUILD_LOCK_TIMEOUT,
            waiting=lambda: f"testenv: {what}: waiting for another build (pid {holder()}; {path})",
            timed_out=lambda: (
                f"{what}: another build (pid {holder()}) still holds {path} after "
                f"{BUILD_LOCK_TIMEOUT:.0f}s"
            ),
            log=log,
            done=done,
        ):
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} building {what}\n".encode())
        yield
    finally:
        os.close(fd)  # releases the flock


def _go_env() -> dict[str, str]:
    """The environment of every ``go`` here. Every build runs as ``scs-templates tools
    install`` runs its own (:mod:`~scs_templates._tools.toolchain.go_build`): no DWARF from
    the compiler (:func:`go_gcflags`; the linker's ``-w`` drops it anyway) and the compiler's
    collector off up to a memory limit, ~16 % fewer CPU seconds (kube-apiserver v1.34 from an
    empty build cache: 264 -> 221). Neither changes what a program does, so no cache key
    names them."""
    env = dict(os.environ)
    env.update(go_build.collector_env(os.environ))
    env.update(CGO_ENABLED="0", GOTOOLCHAIN="local", GOFLAGS="-mod=readonly -buildvcs=false")
    return env


def required(go_mod: Path, module: str) -> str:
    """The release of ``module`` that ``go_mod`` requires (``v3.6.16``), on a line of its
    own or in a ``require`` block."""
    found = re.search(rf"^\s*(?:require )?{re.escape(module)} (v\S+)", go_mod.read_text(), re.M)
    if found is None:
        raise PlaneError(f"{go_mod} does not require {module}")
    return found.group(1)


def go_gcflags(quick: bool) -> str:
    """The ``-gcflags`` of a build: :data:`QUICK_GCFLAGS` or :data:`PLANE_GCFLAGS` (optimised),
    without DWARF: one spelling for the builds and for the cache keys that name them."""
    return go_build.gcflags(QUICK_GCFLAGS if quick else PLANE_GCFLAGS)


def missing() -> list[str]:
    """Names of the programs and config trees not yet in the cache."""
    root = plane_dir()
    names = [p.name for p in PROGRAMS if not (root / "bin" / p.name).is_file()]
    names += [
        f"config:{t.provider}"
        for t in CONFIG_TREES
        if not (root / "manifests" / t.provider).is_dir()
    ]
    return names


def ensure_built(log: Callable[[str], None] = print, only: Iterable[str] | None = None) -> Path:
    """Build whatever is missing; return the plane directory (``bin/`` and ``manifests/``)."""
    root = plane_dir()
    wanted = set(only) if only is not None else None

    def todo_now() -> tuple[list[Program], list[ConfigTree]]:
        todo = [p for p in PROGRAMS if wanted is None or p.name in wanted]
        todo = [p for p in todo if not (root / "bin" / p.name).is_file()]
        trees = [t for t in CONFIG_TREES if not (root / "manifests" / t.provider).is_dir()]
        return todo, trees

    todo, trees = todo_now()
    if not todo and not trees:
        return root
    go = go_binary()
    if go is None:
        raise PlaneError("the Go toolchain (`go`) is not installed: cannot build the test plane")
    with build_lock(f"the test plane ({root.name})", log, done=lambda: todo_now() == ([], [])):
        todo, trees = todo_now()  # what another builder left to do
        _build_plane(go, root, todo, trees, log)
    return root


def _build_plane(
    go: str,
    root: Path,
    todo: list[Program],
    trees: list[ConfigTree],
    log: Callable[[str], None],
) -> None:
    (root / "bin").mkdir(parents=True, exist_ok=True)
    build_log = root / "build.log"
    times_file = root / "build-times.json"
    times: dict[str, float] = json.loads(times_file.read_text()) if times_file.is_file() else {}
    for tree in trees:
        _export_config(go, tree, root / "manifests")
    for program in todo:
        log(f"testenv: building {program.name} ({program.package}); log: {build_log}")
        started = time.monotonic()
        _go_build(go, program, root / "bin", build_log)
        times[program.name] = round(time.monotonic() - started, 1)
        times_file.write_text(json.dumps(times, indent=2, sort_keys=True) + "\n")


def _go_build(go: str, program: Program, bindir: Path, build_log: Path) -> None:
    """``go build`` one program into a temporary name, then rename it into place."""
    flags = ["-trimpath", "-gcflags", go_gcflags(quick=False)]
    flags += ["-ldflags", " ".join(("-s", "-w", *program.ldflags))]
    if program.module == "kubernetes" or program.name == "kubeadm":
        flags += ["-tags", KUBE_TAGS]
    tmp = bindir / f".{program.name}.tmp"
    run(
        [go, "build", *flags, "-o", str(tmp), program.package],
        cwd=GO_DIR / program.module,
        env=_go_env(),
        timeout=GO_TIMEOUT,
        log=build_log,
        niceness=build_niceness(),
    )
    tmp.replace(bindir / program.name)


def _module_dir(go: str, wrapper: Path, module: str) -> Path:
    """Where the Go module cache holds ``module`` at the version ``wrapper`` pins."""
    out = capture(
        [go, "mod", "download", "-json", module],
        cwd=wrapper,
        env=_go_env() | {"GOFLAGS": "-mod=mod -buildvcs=false"},
        timeout=GO_TIMEOUT,
        niceness=build_niceness(),
    )
    return Path(json.loads(out)["Dir"])


def _export_config(go: str, tree: ConfigTree, manifests: Path) -> None:
    """Copy a provider's ``config/`` tree out of the module cache (YAML files only)."""
    source = _module_dir(go, GO_DIR / tree.wrapper, tree.module) / tree.subdir
    if not source.is_dir():
        raise PlaneError(f"{tree.module} has no {tree.subdir}/ (provider {tree.provider})")
    manifests.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{tree.provider}-", dir=manifests))
    shutil.copytree(source, tmp / "config", ignore=shutil.ignore_patterns("*.go"))
    for path in tmp.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (tmp / "config").replace(manifests / tree.provider)
    tmp.rmdir()


# --- kubeadm of another Kubernetes release, on demand ---------------------------------------

_STAGING = re.compile(r"^\s*(k8s\.io/[a-z0-9-]+) v0\.0\.0$", re.MULTILINE)


#: The newest k8s.io/kubernetes release of each minor that the Go module proxy serves
#: (`go list -m -versions k8s.io/kubernetes`, 2026-12-01): the kubeadm that validates the
#: configuration of a workload cluster of that minor (kubeadm refuses older minors).
KUBEADM_RELEASES: dict[str, str] = {
    "1.31": "v1.31.14",
    "1.32": "v1.32.13",
    "1.33": "v1.33.13",
    "1.34": "v1.34.4",
    "1.35": "v1.35.4",
    "1.36": "v1.36.3",
    "1.37": KUBERNETES_VERSION,
}


def kubeadm_release(kubernetes_version: str) -> str:
    """The kubeadm release for a workload version (``1.35.1`` or ``v1.35.1`` -> ``v1.35.4``)."""
    minor = ".".join(kubernetes_version.lstrip("v").split(".")[:2])
    try:
        return KUBEADM_RELEASES[minor]
    except KeyError:
        known = ", ".join(sorted(KUBEADM_RELEASES))
        raise PlaneError(
            f"no kubeadm release known for Kubernetes {minor} (known: {known})"
        ) from None


#: Every supported workload minor (``workloadMinors`` of scs_templates/_versions/table.json;
#: tests/render/test_testenv_builds.py keeps the two equal). The suite runs, for each, the REAL
#: kubeadm of that minor's release in KUBEADM_RELEASES (docs/testing.md "Every supported
#: minor"): it validates the kubeadm configuration the real bootstrap controller generates
#: for it (tests/plane/test_plane_kubeadm_minors.py); the kube-apiservers: APISERVER_MINORS.
#: The plane's minor is the plane's own build.
WORKLOAD_MINORS: tuple[tuple[int, int], ...] = (
    (1, 31),
    (1, 32),
    (1, 33),
    (1, 34),
    (1, 35),
    (1, 36),
    (1, 37),
)

#: The minors whose REAL kube-apiserver loads every flag and file the all-features example
#: renders (tests/plane/test_plane_cluster_features.py): for each distinct configuration the
#: oldest minor that renders it, and the newest supported minor, whose kube-apiserver loads
#: every one of them too. A configuration its oldest and the newest kube-apiserver load is
#: one every minor between loads: Kubernetes does not remove an API version and bring it
#: back, and that each flag, admission plugin and file version exists at every minor is read
#: from every minor's source (tests/plane/test_apiserver_minors.py). The other minors render
#: a byte-identical configuration (tests/render/test_apiserver_configurations.py fails when
#: one stops doing so, naming the minor to add). Today: AuthenticationConfiguration
#: apiserver.config.k8s.io/v1beta1 up to 1.33, v1 from 1.34.
APISERVER_MINORS: tuple[tuple[int, int], ...] = ((1, 31), (1, 34), (1, 37))

#: The workload version of tests/plane/test_plane_inmemory.py's cluster, whose kubeadm (of the
#: same minor) validates the bootstrap data of a machine the in-memory backend runs.
INMEMORY_WALK_MINOR = (1, 36)


def suite_builds() -> list[tuple[str, str]]:
    """``(program, release)`` of every program of another release that the test suite runs,
    in the order its tests need them (:func:`build_all`): the kubeadm of
    test_plane_inmemory's cluster, the other kubeadms oldest first (test_plane_kubeadm_minors),
    then the kube-apiservers oldest first (test_plane_cluster_features). The plane's own
    release is in the plane (:func:`ensure_built`)."""
    releases = [kubeadm_release(f"{a}.{b}") for a, b in sorted(WORKLOAD_MINORS)]
    apiservers = [kubeadm_release(f"{a}.{b}") for a, b in sorted(APISERVER_MINORS)]
    walk = kubeadm_release("{}.{}".format(*INMEMORY_WALK_MINOR))
    kubeadms = [walk] + [r for r in releases if r != walk]
    todo = [("kubeadm", r) for r in kubeadms] + [("kube-apiserver", r) for r in apiservers]
    return [(name, release) for name, release in todo if release != KUBERNETES_VERSION]


def build_all(log: Callable[[str], None] = print) -> list[Path]:
    """Everything the test suite runs (``python -m testenv build --all``; ``make test`` runs
    it in the background), in the order the groups of tests/support/run_tiers.py reach the
    modules that wait for it (marked ``extra_builds``; tests/conftest.py runs them last in
    each group). The groups run side by side, so on a fresh machine each step comes as early
    as the first test waiting for it needs it, the cheap ones first:

    1. the plane (every plane and cloud test);
    2. containerd's registry code (testenv/containerd.py) and etcdctl and etcdutl of the
       plane's etcd release (testenv/etcdctl.py): small, the first such modules of ``plane``;
    3. the kubeadm of test_plane_inmemory's cluster (the first of :func:`suite_builds`):
       ~60 CPU seconds that ``plane`` needs halfway through;
    4. Flux's controllers (testenv/flux.py): ``plane-2``'s first such module, test_plane_flux,
       whose tests are the longest of the tail;
    5. OCCM, the Cinder CSI plugin of OCCM's wrapper and the csi-provisioner sidecar of its
       own wrapper (testenv/occm.py, testenv/csi_provisioner.py): the cloud group's last
       modules;
    6. the rest of :func:`suite_builds`: the other kubeadms (test_plane_kubeadm_minors,
       ``plane-2`` after Flux's tests), then the kube-apiservers (test_plane_cluster_features,
       ``plane-2``'s last module).

    Before all of them: the pinned helm (:func:`ensure_pinned_helm`), whose compiled packages
    the plane's Kubernetes programs reuse.

    Returns the paths built or found, in that order (Flux: its cache directory; not helm)."""
    from testenv import containerd, csi_provisioner, etcdctl, flux, occm  # they import this

    ensure_pinned_helm(log)
    built = [ensure_built(log), containerd.ensure_built(log), etcdctl.ensure_built(log)]
    walk, *rest = suite_builds()
    built.append(build_release_program(*walk, log))
    built.append(flux.ensure_built(log))
    built.append(occm.ensure_built(log))
    built.append(occm.ensure_csi_built(log))
    built.append(csi_provisioner.ensure_built(log))
    built += [build_release_program(name, release, log) for name, release in rest]
    return built


def ensure_pinned_helm(log: Callable[[str], None] = print) -> Path:
    """The helm that ``scs-templates tools install`` resolves (on PATH, cached, or built now
    from the product's pinned wrapper under the toolchain's own lock): the first step of
    :func:`build_all`, before the plane. helm v4.3.2 requires the plane's Kubernetes
    libraries (``k8s.io/*`` v0.37.2) and the plane's wrappers require helm's versions of
    what else they share (tests/unit/test_wrapper_versions.py), so with helm compiled first
    the plane's kube-apiserver, kube-controller-manager and kubeadm reuse ~670 of its
    packages: 205 -> 133 CPU s for helm after them, measured the other way round (2026-12-07).
    ``make test`` needs this helm anyway; its foreground ``tools install`` waits for this one.
    A signal ends its ``go`` as it ends the CLI's (:func:`signals.handled`), then this process
    with the shell's exit code."""
    from scs_templates._core import signals
    from scs_templates._core.errors import ToolError
    from scs_templates._tools.toolchain.install import ensure_tool

    try:
        with signals.handled():
            return ensure_tool("helm", progress=lambda line: log(f"testenv: {line}")).path
    except ToolError as error:
        raise PlaneError(f"the pinned helm: {error}") from error
    except signals.Terminated as stopped:
        raise SystemExit(signals.exit_code(stopped.signum)) from None


def kubeadm_path(version: str) -> Path:
    """Where :func:`build_kubeadm` puts the kubeadm of ``version`` (e.g. ``v1.35.4``)."""
    return release_program_path("kubeadm", version)


def release_program_path(name: str, version: str) -> Path:
    """Where :func:`build_release_program` puts program ``name`` of Kubernetes ``version``."""
    if version == KUBERNETES_VERSION:
        return plane_dir() / "bin" / name
    return cache_root() / name / f"{version}-r{RELEASE_RECIPE}" / name


#: The Kubernetes programs :func:`build_release_program` builds for another release.
RELEASE_PROGRAMS = frozenset({"kubeadm", "kube-apiserver"})


def build_kubeadm(version: str, log: Callable[[str], None] = print) -> Path:
    """The real kubeadm of Kubernetes ``version`` (``vMAJOR.MINOR.PATCH``), built if missing."""
    return build_release_program("kubeadm", version, log)


def build_kube_apiserver(version: str, log: Callable[[str], None] = print) -> Path:
    """The real kube-apiserver of Kubernetes ``version``, built if missing."""
    return build_release_program("kube-apiserver", version, log)


def build_release_program(name: str, version: str, log: Callable[[str], None] = print) -> Path:
    """The real ``cmd/NAME`` of Kubernetes ``version`` (``vMAJOR.MINOR.PATCH``), built if missing.

    The wrapper module is generated (``require k8s.io/kubernetes VERSION`` plus a ``replace``
    of every staging module to its ``v0.MINOR.PATCH`` release, read from the module's own
    go.mod) and resolved with ``go mod tidy``; it lives next to the binary in the cache, one
    per program and release (the plane's wrappers and cache key are untouched). Same flags
    as the plane's Kubernetes programs, so the Go build cache of one program of a release
    serves the others.
    """
    if name not in RELEASE_PROGRAMS:
        raise PlaneError(
            f"cannot build {name!r} for another release (known: kubeadm, kube-apiserver)"
        )
    if not re.fullmatch(r"v1\.\d+\.\d+", version):
        raise PlaneError(f"{name} version must look like v1.35.4, not {version!r}")
    target = release_program_path(name, version)
    if version == KUBERNETES_VERSION:
        ensure_built(log, only=[name])
        return target
    if target.is_file():
        return target
    go = go_binary()
    if go is None:
        raise PlaneError(f"the Go toolchain (`go`) is not installed: cannot build {name}")
    with build_lock(f"{name} {version}", log, done=target.is_file):
        if not target.is_file():  # another builder may have made it meanwhile
            _build_release_program(go, name, version, target, log)
    return target


#: Staging modules that the Go module proxy does not serve at a release's own
#: ``v0.MINOR.PATCH`` -> the newest patch of the same minor it serves, used instead
#: (`go list -m -versions k8s.io/kube-proxy`, 2026-12-01: v0.31.8-v0.31.11; v0.31.14 and
#: v0.31.12 are refused with "403 This module version is not available", v0.31.13 is not in
#: the checksum database). k8s.io/kube-proxy holds only kube-proxy's configuration API
#: types, which kubeadm v1.31.14 reads for its KubeProxyConfiguration; the release notes of
#: v1.31.12-v1.31.14 (CHANGELOG-1.31.md in the module) name no change to them, and the
#: generated conversions kubeadm compiles against touch every field.
STAGING_SUBSTITUTES: dict[tuple[str, str], str] = {
    ("v1.31.14", "k8s.io/kube-proxy"): "v0.31.11",
}


def _staging_release(version: str, module: str) -> str:
    """The release of staging ``module`` that the build of Kubernetes ``version`` uses."""
    own = f"v0.{version.split('.', 1)[1]}"
    return STAGING_SUBSTITUTES.get((version, module), own)


def _build_release_program(
    go: str, name: str, version: str, target: Path, log: Callable[[str], None]
) -> None:
    src = target.parent / "src"
    src.mkdir(parents=True, exist_ok=True)
    build_log = target.parent / "build.log"
    log(f"testenv: building {name} {version}; log: {build_log}")
    header = (
        f"module scs-templates.testenv/{name}\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes {version}\n"
    )
    (src / "go.mod").write_text(header)
    gomod = _module_dir(go, src, f"k8s.io/kubernetes@{version}") / "go.mod"
    staging = sorted(set(_STAGING.findall(gomod.read_text())))
    replace = "".join(f"\t{m} => {m} {_staging_release(version, m)}\n" for m in staging)
    (src / "go.mod").write_text(f"{header}\nreplace (\n{replace})\n")
    package = f"k8s.io/kubernetes/cmd/{name}"
    (src / "tools.go").write_text(f'//go:build tools\n\npackage tools\n\nimport _ "{package}"\n')
    env = _go_env() | {"GOFLAGS": "-mod=mod -buildvcs=false"}
    nice = build_niceness()
    run([go, "mod", "tidy"], cwd=src, env=env, timeout=GO_TIMEOUT, log=build_log, niceness=nice)
    ldflags = " ".join(("-s", "-w", *_kube_ldflags(version)))
    gcflags = go_gcflags(quick=True)
    flags = ["-trimpath", "-tags", KUBE_TAGS, "-gcflags", gcflags, "-ldflags", ldflags]
    tmp = target.parent / f".{name}.tmp"
    started = time.monotonic()
    run(
        [go, "build", *flags, "-o", str(tmp), package],
        cwd=src,
        env=_go_env(),
        timeout=GO_TIMEOUT,
        log=build_log,
        niceness=nice,
    )
    tmp.replace(target)
    log(f"testenv: built {name} {version} in {time.monotonic() - started:.0f} s")
