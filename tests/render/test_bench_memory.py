"""The benchmark's memory probe measures the CLI's process, not the harness that spawned it.

Linux keeps ``ru_maxrss`` across ``execve``, so a process spawned by a large harness reported
the harness's RSS as its own peak (a full bench run, 2026-12-03: 112 MiB for one ``render``
that peaks at 18 MiB alone); ``bench.cases.memory_of`` reads ``VmHWM`` instead.
"""

from __future__ import annotations

import sys

import pytest

from bench.cases import MINIMAL, memory_of

BALLAST_MIB = 300


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
def test_the_probe_ignores_the_rss_of_the_process_that_spawns_it() -> None:
    ballast = bytearray(BALLAST_MIB * 1024 * 1024)
    ballast[::4096] = b"\x01" * len(ballast[::4096])  # touched: resident, not just reserved
    measured = memory_of(["validate", str(MINIMAL)])
    del ballast
    # validate peaks at a few tens of MiB (no helm), far below the ballast
    assert measured["python_mib"] < BALLAST_MIB / 3, measured
