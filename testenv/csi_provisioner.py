"""The csi-provisioner sidecar (``external-provisioner``), built from its Go module, run beside
the Cinder CSI controller plugin on loopback.

The Cinder CSI chart the services catalogue installs (2.36.0 for the plane's minor) runs the
image ``registry.k8s.io/sig-storage/csi-provisioner:v5.3.0`` in the controller plugin's Pod:
the sidecar that watches claims, calls the plugin's ``CreateVolume`` and ``DeleteVolume``
over the Pod's socket and writes the PersistentVolumes. Its program is the command
``cmd/csi-provisioner`` of ``github.com/kubernetes-csi/external-provisioner/v5`` at that
tag; the wrapper module ``testenv/csi-provisioner/`` only ``require``s it with the upstream
module's own ``replace`` lines (``k8s.io/*`` => v0.33.0, as the image is built) and pins
every dependency in ``go.sum``. The upstream module requires ``k8s.io/kubernetes`` v1.33.1,
but only for its e2e tests: the command imports none of it, so the wrapper's pruned module
graph does not carry it and nothing of Kubernetes' own tree is compiled.

Like OCCM (testenv/occm.py) it has its own wrapper and cache key
(:func:`testenv.flux.module_key`): ``<cache root>/csi-provisioner/csi-provisioner-<key>/
csi-provisioner``. Its dependency set (``k8s.io/*`` v0.33.0, gRPC v1.72.1) is no other
build's, so it pays for it: docs/testing.md "Cost on a fresh machine". ``build --all``
builds it last, right after the Cinder CSI plugin, for
tests/cloud/test_plane_openstack_cinder_csi.py (the cloud tier's last module), which waits
for it or builds it when it is missing, in CI too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from testenv import build, flux

MODULE_DIR = Path(__file__).resolve().parent / "csi-provisioner"
MODULE = "github.com/kubernetes-csi/external-provisioner/v5"
PACKAGE = f"{MODULE}/cmd/csi-provisioner"
NAME = "csi-provisioner"


def version() -> str:
    """The release the wrapper module requires (``v5.3.0``), read from its go.mod."""
    return build.required(MODULE_DIR / "go.mod", MODULE)


def module_key() -> str:
    """The cache key of the build: the wrapper module's own (:func:`testenv.flux.module_key`)."""
    return flux.module_key(MODULE_DIR, build.QUICK_GCFLAGS)


def provisioner_dir() -> Path:
    """The directory of the sidecar's builds (their build log and times)."""
    return build.cache_root() / NAME


def binary() -> Path:
    return provisioner_dir() / f"{NAME}-{module_key()}" / NAME


def ldflags() -> str:
    """The linker flags of upstream's release-tools (``-X main.version``: the version the
    program logs at start), stripped like every testenv build."""
    return f"-s -w -X main.version={version()}"


def ensure_built(log: Callable[[str], None] = print) -> Path:
    """Build the sidecar when it is not cached; return its path."""
    return flux.ensure_program(
        NAME,
        PACKAGE,
        MODULE_DIR,
        binary(),
        log,
        ldflags=ldflags(),
        gcflags=build.QUICK_GCFLAGS,
        root=provisioner_dir(),
    )
