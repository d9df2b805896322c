"""etcdctl and etcdutl of the plane's etcd release, built from their Go modules: the tools the
etcd maintenance script of control-plane nodes runs (tests/render/test_node_tools.py).

On a node, etcd-defrag.sh runs ``etcdctl`` inside the etcd static pod (``crictl exec``): the
etcdctl of the etcd image, so of the same release as the etcd it talks to. Here the test
runs the script against a throwaway etcd of the plane's build (testenv/go/etcd) with the
etcdctl of the same release, and checks the snapshot it saves with that release's etcdutl
(etcd 3.6 moved ``snapshot status`` there). The wrapper module ``testenv/etcdctl/`` only
``require``s ``go.etcd.io/etcd/etcdctl/v3`` and ``go.etcd.io/etcd/etcdutl/v3`` at the
release of the etcd wrapper's ``go.etcd.io/etcd/server/v3`` (a test keeps them equal) and
pins every dependency in ``go.sum``. Its own cache key (:func:`testenv.flux.module_key`), so
adding it did not change the plane's: ``<cache root>/etcdctl/etcdctl-<key>/{etcdctl,etcdutl}``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from testenv import build, flux

MODULE_DIR = Path(__file__).resolve().parent / "etcdctl"
ETCDCTL = "go.etcd.io/etcd/etcdctl/v3"
ETCDUTL = "go.etcd.io/etcd/etcdutl/v3"
NAME = "etcdctl"


def version() -> str:
    """The etcdctl release the wrapper builds."""
    return build.required(MODULE_DIR / "go.mod", ETCDCTL)


def module_key() -> str:
    """The cache key of the build: the wrapper module's own."""
    return flux.module_key(MODULE_DIR)


def tools_dir() -> Path:
    """The directory of the builds (their build log and times)."""
    return build.cache_root() / NAME


def binary(name: str = "etcdctl") -> Path:
    """Where the build puts ``etcdctl`` or ``etcdutl``."""
    return tools_dir() / f"{NAME}-{module_key()}" / name


def ensure_built(log: Callable[[str], None] = print) -> Path:
    """Build etcdctl and etcdutl when they are not cached; return etcdctl's path (etcdutl is
    beside it)."""
    flux.ensure_program("etcdutl", ETCDUTL, MODULE_DIR, binary("etcdutl"), log, root=tools_dir())
    return flux.ensure_program(NAME, ETCDCTL, MODULE_DIR, binary(), log, root=tools_dir())
