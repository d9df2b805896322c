"""containerd's own registry code as a program: the proof of the registry mirror, CA and
proxy files the nodes get (tests/plane/test_containerd_node_files.py).

No node boots on this machine, so no containerd runs; but the code with which containerd
reads ``/etc/containerd/certs.d/*/hosts.toml`` and pulls through it is a Go module. The
wrapper module ``testenv/containerd/`` is a small program of ours (``main.go``) that requires
``github.com/containerd/containerd/v2`` and calls its hosts.toml loader
(``core/remotes/docker/config.ConfigureHosts``, what containerd's CRI plugin and so kubeadm's
and the kubelet's image pulls use) and its resolver against a loopback TLS registry, and Go's
``http.ProxyFromEnvironment`` (the proxy choice of containerd's HTTP transport). Its own
cache key (go.mod, go.sum, main.go and the recipe), like the Flux controllers':
``<cache root>/containerd-check-<key>/containerd-check``. ``python -m testenv build --all``
builds it right after the plane (~75 CPU seconds from an empty build cache, docs/testing.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from testenv import build, flux

MODULE_DIR = Path(__file__).resolve().parent / "containerd"
NAME = "containerd-check"


def module_key() -> str:
    """Hash of the wrapper module (go.mod, go.sum, main.go) and the recipe."""
    digest = hashlib.sha256(f"containerd-check recipe {flux.RECIPE}\n".encode())
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update(f"{name}\n".encode())
        digest.update((MODULE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def binary() -> Path:
    return build.cache_root() / f"{NAME}-{module_key()}" / NAME


def ensure_built(log: Callable[[str], None] = print) -> Path:
    """Build the program (the wrapper's own package ``.``) when it is not cached; return its
    path."""
    return flux.ensure_program(NAME, ".", MODULE_DIR, binary(), log)
