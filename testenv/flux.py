"""Flux's source-, helm- and kustomize-controller, built from Go modules, run against a plane.

Each controller has its own wrapper module under ``testenv/flux/<name>/`` (a ``require`` of
the upstream module at the Flux release's version plus the upstream ``replace`` lines, every
dependency pinned in ``go.sum``). They live OUTSIDE ``testenv/go/``, and each controller has
its own cache key (its wrapper and the recipe), so adding or bumping one never invalidates
the plane's cached binaries nor the other controllers':
``<cache root>/flux/<name>-<key>/<name>``.

They are built like the plane's programs (optimised, :data:`testenv.build.PLANE_GCFLAGS`),
and the three wrappers and CAPO's (``testenv/go/capo``) require every module they share at
one version, the newest any of them needs: a patch or minor above what a release pins, e.g.
``k8s.io/*`` v0.34.10 and controller-runtime v0.22.5 (CAPO v0.14.7's) where the Flux
release pins v0.34.1 and v0.22.2, and newer go-openapi, kube-openapi and ``golang.org/x``
modules for CAPO. So the Go build cache compiles each shared package once: the controllers
reuse the Kubernetes libraries the plane compiled for CAPO and each other's packages. From
a build cache holding the plane's CAPO, all three take 198 CPU s, where unoptimised on
their own versions they took 298 (2026-12-06; from an empty build cache, before the three
shared their versions: 564). tests/unit/test_wrapper_versions.py keeps them so: the
Kubernetes libraries by hand in all four (``go get``, ``go mod tidy``; CAPO's wrapper ``go
mod tidy -e``, its test-only dependencies are not all on the module proxy), every other
library with ``python -m testenv align`` (testenv/wrappers.py: the newest any optimised
wrapper or the product's helm and helmfile require).

``python -m testenv build --all`` (``make test``'s background build) builds them after the
plane and the first other release's kubeadm (:func:`testenv.build.build_all`), ``--flux``
alone; the Flux tests (tests/plane/test_plane_flux.py, marked ``extra_builds`` so that they
run after the tests the earlier builds serve) build them when they are not cached, as the
plane fixture builds the plane. Like the plane's builds
they run niced and under the cache root's build lock (:func:`testenv.build.build_lock`).
The measured cost is in docs/testing.md ("Builds").

:func:`start_flux` runs them against a running plane with its admin kubeconfig: every
namespace watched, leader election off, the artifact server of source-controller on a free
loopback port that helm- and kustomize-controller fetch from.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scs_templates._tools.toolchain import go_build
from testenv import build
from testenv.plane import Plane, _die_with_parent, _probe_http
from testenv.ports import free_port
from testenv.process import Daemon, PlaneError, run, wait_for

FLUX_DIR = Path(__file__).resolve().parent / "flux"
#: Bump when the build recipe changes in a way the wrapper modules do not show.
RECIPE = "1"
#: The upstream main package of each controller (the module root).
CONTROLLERS: dict[str, str] = {
    "source-controller": "github.com/fluxcd/source-controller",
    "helm-controller": "github.com/fluxcd/helm-controller",
    "kustomize-controller": "github.com/fluxcd/kustomize-controller",
}


def module_key(module_dir: Path, gcflags: str = "") -> str:
    """Hash of one wrapper module (go.mod, go.sum, tools.go), the recipe and the compiler
    flags: the cache key of the program it builds, independent of the plane's key and of
    the other programs'."""
    recipe = f"flux recipe {RECIPE}\n" + (f"gcflags {gcflags}\n" if gcflags else "")
    digest = hashlib.sha256(recipe.encode())
    for path in sorted(module_dir.iterdir()):
        if path.name in {"go.mod", "go.sum", "tools.go"}:
            digest.update(f"{module_dir.name}/{path.name}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def flux_dir() -> Path:
    """The directory of the controllers' builds (their build log and times)."""
    return build.cache_root() / "flux"


def binary(name: str) -> Path:
    key = module_key(FLUX_DIR / name, build.go_gcflags(quick=False))
    return flux_dir() / f"{name}-{key}" / name


def missing() -> list[str]:
    return [name for name in CONTROLLERS if not binary(name).is_file()]


def ensure_built(log: Callable[[str], None] = print) -> Path:
    """Build the controllers that are missing, and the OCI registry of the OCI chart source
    test (testenv/registry.py); return the directory of their builds."""
    from testenv import registry  # it imports this module

    todo = missing()
    if todo:
        go = build.go_binary()
        if go is None:
            raise PlaneError("the Go toolchain (`go`) is not installed: cannot build Flux")
        with build.build_lock("the Flux controllers", log, done=lambda: not missing()):
            for name in missing():  # another builder may have made some meanwhile
                build_program(
                    go,
                    name,
                    CONTROLLERS[name],
                    FLUX_DIR / name,
                    binary(name),
                    log,
                    gcflags=build.PLANE_GCFLAGS,
                )
    registry.ensure_built(log)
    return flux_dir()


def ensure_program(
    name: str,
    package: str,
    module_dir: Path,
    target: Path,
    log: Callable[[str], None],
    *,
    ldflags: str = "-s -w",
    gcflags: str = "",
    root: Path | None = None,
) -> Path:
    """``target`` (one program of its own wrapper module, e.g. the OCI registry, OCCM), built
    by :func:`build_program` under the cache root's build lock when it is not there yet."""
    if target.is_file():
        return target
    go = build.go_binary()
    if go is None:
        raise PlaneError(f"the Go toolchain (`go`) is not installed: cannot build {name}")
    with build.build_lock(name, log, done=target.is_file):
        if not target.is_file():
            build_program(
                go,
                name,
                package,
                module_dir,
                target,
                log,
                ldflags=ldflags,
                gcflags=gcflags,
                root=root,
            )
    return target


def build_program(
    go: str,
    name: str,
    package: str,
    module_dir: Path,
    target: Path,
    log: Callable[[str], None],
    *,
    ldflags: str = "-s -w",
    gcflags: str = "",
    root: Path | None = None,
) -> None:
    """``go build`` ``package`` in its wrapper module into ``target`` (niced, logged to
    ``ROOT/build.log``; the seconds it took recorded in ``ROOT/build-times.json``; ROOT is
    ``flux_dir()`` unless given)."""
    root = root or flux_dir()
    root.mkdir(parents=True, exist_ok=True)
    times_file = root / "build-times.json"
    log(f"testenv: building {name} ({package}); log: {root / 'build.log'}")
    started = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{name}.tmp"
    run(
        [
            go,
            "build",
            "-trimpath",
            "-gcflags",
            go_build.gcflags(gcflags),
            "-ldflags",
            ldflags,
            "-o",
            str(tmp),
            package,
        ],
        cwd=module_dir,
        env=build._go_env(),
        timeout=build.GO_TIMEOUT,
        log=root / "build.log",
        niceness=build.build_niceness(),
    )
    tmp.replace(target)
    times: dict[str, float] = json.loads(times_file.read_text()) if times_file.is_file() else {}
    times[name] = round(time.monotonic() - started, 1)
    times_file.write_text(json.dumps(times, indent=2, sort_keys=True) + "\n")


@dataclass
class Flux:
    """The running controllers; ``stop()`` ends them."""

    daemons: list[Daemon]

    def check(self) -> None:
        for daemon in self.daemons:
            daemon.check()

    def stop(self) -> None:
        for daemon in reversed(self.daemons):
            daemon.stop()
        self.daemons.clear()


def start_flux(plane: Plane, directory: Path, *, timeout: float = 180.0) -> Flux:
    """Start the controllers against ``plane``; return once every one is ready."""
    if missing():
        raise PlaneError(f"Flux controllers not built: {', '.join(missing())}")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "logs").mkdir(exist_ok=True)
    (directory / "storage").mkdir(exist_ok=True)  # source-controller refuses a missing one
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBECONFIG")}
    env["KUBECONFIG"] = str(plane.kubeconfig)
    storage = free_port()
    common = ["--enable-leader-election=false", "--watch-all-namespaces=true", "--log-level=info"]
    argv = {
        "source-controller": [
            f"--storage-path={directory / 'storage'}",
            f"--storage-addr=127.0.0.1:{storage}",
            f"--storage-adv-addr=127.0.0.1:{storage}",
        ],
        # a release whose dependsOn is not Ready yet is looked at again after 5 s (30 s by
        # default): the services' chain of a test is reconciled without idle minutes
        "helm-controller": ["--requeue-dependency=5s"],
        # the same for a Kustomization whose dependsOn is not Ready yet
        "kustomize-controller": ["--requeue-dependency=5s"],
    }
    flux = Flux([])
    try:
        health: dict[str, int] = {}
        for name, extra in argv.items():
            health[name] = free_port()
            flux.daemons.append(
                Daemon(
                    name,
                    [
                        str(binary(name)),
                        f"--metrics-addr=127.0.0.1:{free_port()}",
                        f"--health-addr=127.0.0.1:{health[name]}",
                        *common,
                        *extra,
                    ],
                    env=env,
                    log=directory / "logs" / f"{name}.log",
                    preexec=_die_with_parent,
                )
            )
        for daemon in flux.daemons:
            wait_for(
                f"{daemon.name} /readyz",
                _probe_http(health[daemon.name], "/readyz"),
                timeout,
                flux.daemons,
            )
    except BaseException:
        flux.stop()
        raise
    return flux
