"""The OpenStack cloud controller manager (OCCM) and the Cinder CSI plugin, built from their
Go module, run on loopback.

The services catalogue installs OCCM's upstream chart into every OpenStack workload cluster
(scs_templates/_versions/table.json: chart 2.36.0 for the plane's minor, whose appVersion and
image tag is v1.36.0, ../shared/charts/README.md). Its program is the Go module
``k8s.io/cloud-provider-openstack`` at that tag; the wrapper module ``testenv/occm/`` only
``require``s it with the upstream module's own ``replace`` lines and pins every dependency in
``go.sum``. Like the Flux controllers it lives OUTSIDE ``testenv/go/`` and has its own cache
key (the wrapper's, :func:`testenv.flux.module_key`): adding it never invalidated the plane's
cached binaries: ``<cache root>/occm/occm-<key>/openstack-cloud-controller-manager``. The
build is niced and holds the cache root's build lock (:func:`testenv.build.build_lock`); its
cold cost is in docs/testing.md ("Cost on a fresh machine").

``python -m testenv build --occm`` builds it, and ``build --all`` (``make test``'s background
build) builds it last but one (then the Cinder CSI plugin, below), for
tests/cloud/test_plane_occm.py, the suite's last module but one. That test waits for it or
builds it when it is missing, in CI too.

It is built like the plane's programs (optimised, :data:`testenv.build.PLANE_GCFLAGS`), and its
wrapper requires every module it shares with the plane's Cluster API managers
(``testenv/go/capi``, ``testenv/go/capd``) at one version, the newest either needs: the
``k8s.io/*`` libraries at v0.36.3 where the release pins v0.36.0 (``k8s.io/kubernetes``
v1.36.3 and its staging ``replace`` lines with them), and every other library they share
at the newest any optimised wrapper or the product's helm and helmfile require
(testenv/wrappers.py, ``python -m testenv align``): patch and minor bumps that change neither
program's behaviour the tests look at. So the Go build cache compiles the Kubernetes
libraries once, for the plane, and OCCM compiles only its own packages on top
(tests/unit/test_wrapper_versions.py keeps the versions aligned; docs/testing.md, "Builds",
has the CPU seconds).

The Cinder CSI plugin (``cmd/cinder-csi-plugin``) is a second command of the same module at
the same release: the image of Cinder CSI chart 2.36.0 is the same v1.36.0 (its appVersion).
It is built from the SAME wrapper (``tools.go`` pins both commands, so they share one
dependency set and every compiled package of it), into the same directory under the same
key: ``<cache root>/occm/occm-<key>/cinder-csi-plugin``. ``build --all`` builds it right
after OCCM, for tests/cloud/test_plane_openstack_cinder_csi.py (after test_plane_occm by name);
its cost on top of OCCM's is in docs/testing.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from testenv import build, flux

MODULE_DIR = Path(__file__).resolve().parent / "occm"
MODULE = "k8s.io/cloud-provider-openstack"
PACKAGE = f"{MODULE}/cmd/openstack-cloud-controller-manager"
NAME = "openstack-cloud-controller-manager"
CSI_PACKAGE = f"{MODULE}/cmd/cinder-csi-plugin"
CSI_NAME = "cinder-csi-plugin"


def version() -> str:
    """The release the wrapper module requires (``v1.36.0``), read from its go.mod."""
    return build.required(MODULE_DIR / "go.mod", MODULE)


def module_key() -> str:
    """The cache key of the build: the wrapper module's own (:func:`testenv.flux.module_key`)."""
    return flux.module_key(MODULE_DIR, build.go_gcflags(quick=False))


def occm_dir() -> Path:
    """The directory of OCCM's builds (their build log and times)."""
    return build.cache_root() / "occm"


def binary() -> Path:
    return occm_dir() / f"occm-{module_key()}" / NAME


def csi_binary() -> Path:
    """The Cinder CSI plugin, next to OCCM (same wrapper, same key)."""
    return occm_dir() / f"occm-{module_key()}" / CSI_NAME


def ldflags() -> str:
    """The linker flags of upstream's Makefile (the version in ``--version`` and in the
    User-Agent OCCM and the CSI plugin send to OpenStack; one ``LDFLAGS`` for every command),
    stripped like every testenv build."""
    release = version()
    return " ".join(
        (
            "-s",
            "-w",
            f"-X k8s.io/component-base/version.gitVersion={release}",
            f"-X {MODULE}/pkg/version.Version={release}",
        )
    )


def ensure_built(log: Callable[[str], None] = print) -> Path:
    """Build OCCM when it is not cached; return its path."""
    return flux.ensure_program(
        NAME,
        PACKAGE,
        MODULE_DIR,
        binary(),
        log,
        ldflags=ldflags(),
        gcflags=build.PLANE_GCFLAGS,
        root=occm_dir(),
    )


def ensure_csi_built(log: Callable[[str], None] = print) -> Path:
    """Build the Cinder CSI plugin when it is not cached; return its path."""
    return flux.ensure_program(
        CSI_NAME,
        CSI_PACKAGE,
        MODULE_DIR,
        csi_binary(),
        log,
        ldflags=ldflags(),
        gcflags=build.PLANE_GCFLAGS,
        root=occm_dir(),
    )
