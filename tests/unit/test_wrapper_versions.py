"""Wrapper modules whose programs are built with the same compiler flags require every module
they share at one version, so that the Go build cache compiles each shared package once:

* Flux's three controllers (testenv/flux/<name>/go.mod) with the plane's CAPO
  (testenv/go/capo): after the plane, 298 -> 198 CPU s (testenv/flux.py);
* OCCM and the Cinder CSI plugin (testenv/occm/go.mod) with the plane's Cluster API managers
  (testenv/go/capi, testenv/go/capd): after the plane, 195 -> 27 CPU s (testenv/occm.py).

All of them are built optimised, as the plane is (testenv.build.PLANE_GCFLAGS).

A package compiles once only when its whole dependency closure is the same, so one module at
another version splits every package above it. When a test fails here, bump the module in
every wrapper of the group to the newest version any of them needs (``go get
MODULE@VERSION``, ``go mod tidy``)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from testenv import occm
from testenv.build import GO_DIR
from testenv.flux import CONTROLLERS, FLUX_DIR

#: ``path version`` of a require line (inside a block or on its own), up to a comment.
REQUIRE = re.compile(r"^(?:require\s+)?\t?([^\s()]+)\s+(v\S+)(?:\s*//.*)?$", re.MULTILINE)
#: The module of a replace line (inside a block or on its own).
REPLACE = re.compile(r"^(?:replace\s+)?\t?([^\s()]+)(?:\s+v\S+)?\s+=>", re.MULTILINE)

#: The groups: wrapper directories built with one set of compiler flags.
GROUPS: dict[str, tuple[Path, ...]] = {
    "Flux's controllers and the plane's CAPO": (
        *(FLUX_DIR / name for name in sorted(CONTROLLERS)),
        GO_DIR / "capo",
    ),
    "OCCM and the plane's Cluster API": (occm.MODULE_DIR, GO_DIR / "capi", GO_DIR / "capd"),
}


def requirements(text: str) -> dict[str, str]:
    """The required modules of a go.mod, without the ones a ``replace`` line pins: those
    stay as the upstream release's own ``replace`` lines have them."""
    replaced = set(REPLACE.findall(text))
    return {path: version for path, version in REQUIRE.findall(text) if path not in replaced}


def test_the_requirements_reader_reads_blocks_single_lines_and_replaces() -> None:
    text = (
        "module m\n\ngo 1.25.0\n\nrequire a.io/x v1.0.0\n\nrequire (\n\tb.io/y v0.2.0 // indirect\n"
        "\tc.io/z v3.0.0\n\td.io/w v1.0.0\n)\n\nreplace c.io/z => c.io/z v3.0.1\n\n"
        "replace (\n\td.io/w v1.0.0 => ../w\n)\n"
    )
    assert requirements(text) == {"a.io/x": "v1.0.0", "b.io/y": "v0.2.0"}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_wrappers_built_alike_share_one_version_of_every_common_module(group: str) -> None:
    by_module: dict[str, dict[str, str]] = defaultdict(dict)
    for wrapper in GROUPS[group]:
        for path, version in requirements((wrapper / "go.mod").read_text()).items():
            by_module[path][wrapper.name] = version
    assert len(by_module) > 150, f"the go.mod files of {group} were not read"
    shared = {path for path, by in by_module.items() if len(by) > 1}
    assert "k8s.io/client-go" in shared, f"{group} share no Kubernetes library"
    split = {path: by for path, by in by_module.items() if len(set(by.values())) > 1}
    assert not split, f"modules at different versions in the wrappers of {group}: {split}"
