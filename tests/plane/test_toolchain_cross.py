"""The pinned helm cross-builds for linux/arm64: the install works on arm64 machines too.

A REAL ``go build`` of helm for ``GOARCH=arm64`` (``CGO_ENABLED=0``, as helm's own release
builds), through the same :func:`scs_templates._tools.toolchain.install.build` that
``scs-templates tools install`` runs, then the ELF header of the result: machine
``EM_AARCH64`` (183), 64-bit, little-endian.

It builds without the compiler's optimisations (``optimise=False``: the same source and the
same ``go build``; nothing here runs the binary). Cost (measured, docs/toolchain.md
"Architectures and macOS"): 182 CPU s with no arm64 objects in the Go build cache (221
optimised; the amd64 build's cache does not help: every package compiles again for the
other architecture); once they are in the Go build cache (any later run on the same
machine) it is a link: 6 s (4 CPU s). Marked
``extra_builds``: it runs with the last group of the suite (tests/conftest.py), after the
background build of the plane's programs. Without Go it skips (fails in CI).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from scs_templates._tools.toolchain import install, pins
from tests.support import skip_or_fail

pytestmark = [pytest.mark.extra_builds]

#: ELF e_machine of AArch64 (the ELF for the Arm 64-bit Architecture specification).
EM_AARCH64 = 183


def elf_machine(path: Path) -> tuple[int, int, int]:
    """``(EI_CLASS, EI_DATA, e_machine)`` of an ELF file (2, 1, ... for 64-bit LE)."""
    header = path.read_bytes()[:20]
    assert header[:4] == b"\x7fELF", f"{path} is not an ELF file"
    ei_class, ei_data = header[4], header[5]
    (machine,) = struct.unpack("<H" if ei_data == 1 else ">H", header[18:20])
    return ei_class, ei_data, machine


def test_helm_cross_builds_for_linux_arm64(tmp_path: Path) -> None:
    go = install.go_binary()
    if go is None:
        skip_or_fail("the arm64 cross-build of helm needs the Go toolchain (`go`)")
        return
    binary = install.build(
        "helm", tmp_path / "helm-arm64", go=go, goos="linux", goarch="arm64", optimise=False
    )
    assert elf_machine(binary) == (2, 1, EM_AARCH64)
    marker = (binary.parent / pins.MARKER_NAME).read_text()
    assert '"goarch": "arm64"' in marker and '"version": "4.3.2"' in marker
    assert '"optimised": false' in marker
