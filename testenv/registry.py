"""An OCI registry on loopback, built from a Go module: the chart source of the OCI tests.

No container registry is installed on this machine, and none may be fetched as a binary;
a registry is a Go program, so it is built from the Go module proxy like the plane. The one
built is go-containerregistry's ``cmd/registry`` (``pkg/registry``: the OCI distribution
API, blobs and manifests in memory) at v0.20.6, the version Flux's helm-controller v1.4.0
itself requires (testenv/flux/helm-controller/go.mod). It was chosen over
distribution/distribution's registry for its build: 24 packages against 715 (that one links
every storage driver: S3, Azure, GCS, Redis), which a cold CI run would pay for
(docs/performance.md). ``helm push`` uploads to it and source-controller pulls from it with
the same OCI distribution protocol as from any registry; it serves plain HTTP on loopback
only, hence ``--plain-http`` for helm and ``spec.insecure`` for Flux's OCIRepository.

Its wrapper module is ``testenv/registry/`` (its own cache key, like the Flux controllers':
``<cache root>/flux/registry-<key>/registry``); ``python -m testenv build --flux`` and
``--all`` build it with the Flux controllers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from testenv import build, flux
from testenv.plane import _die_with_parent, _probe_http
from testenv.ports import free_port
from testenv.process import Daemon, PlaneError, wait_for

MODULE_DIR = Path(__file__).resolve().parent / "registry"
PACKAGE = "github.com/google/go-containerregistry/cmd/registry"


def binary() -> Path:
    key = flux.module_key(MODULE_DIR, build.QUICK_GCFLAGS)
    return flux.flux_dir() / f"registry-{key}" / "registry"


def ensure_built(log: Callable[[str], None] = print) -> Path:
    """Build the registry when it is not cached; return its path. Unoptimised like Flux's
    controllers, built just before it: it then shares their compiled dependencies (built
    optimised after them, it took 31 s instead of 0.5)."""
    return flux.ensure_program(
        "registry", PACKAGE, MODULE_DIR, binary(), log, gcflags=build.QUICK_GCFLAGS
    )


@dataclass
class Registry:
    """A running registry: ``host`` is ``127.0.0.1:PORT`` (plain HTTP)."""

    host: str
    daemon: Daemon

    def stop(self) -> None:
        self.daemon.stop()


def start_registry(directory: Path, *, timeout: float = 60.0) -> Registry:
    """Start the registry on a free loopback port; return once ``/v2/`` answers."""
    if not binary().is_file():
        raise PlaneError(f"the OCI registry is not built: {binary()}")
    port = free_port()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(directory)}
    daemon = Daemon(
        "registry",
        [str(binary()), f"-port={port}"],
        env=env,
        log=directory / "registry.log",
        preexec=_die_with_parent,
    )
    try:
        wait_for("the registry's /v2/", _probe_http(port, "/v2/"), timeout, [daemon])
    except BaseException:
        daemon.stop()
        raise
    return Registry(f"127.0.0.1:{port}", daemon)
