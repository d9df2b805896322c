"""How our ``go build`` runs (scs_templates._tools.toolchain.go_build): no compiler DWARF, and
the compiler's collector off up to a memory limit the machine can give every process."""

from __future__ import annotations

from pathlib import Path

import pytest

from scs_templates._tools.toolchain import go_build

GIB = 1 << 30


def test_gcflags_drop_dwarf_for_every_package() -> None:
    assert go_build.gcflags() == "all=-dwarf=false"
    assert go_build.gcflags("all=-N -l") == "all=-N -l -dwarf=false"
    with pytest.raises(ValueError, match="all packages"):
        go_build.gcflags("-N -l")


@pytest.mark.parametrize(
    ("available", "cpus", "expected"),
    [
        # 2 CPUs: 6 processes; 22 GiB / 6 is over the 2 GiB cap.
        (22 * GIB, 2, {"GOGC": "off", "GOMEMLIMIT": "2048MiB"}),
        # 8 CPUs: 18 processes share 27 GiB: 1.5 GiB each.
        (27 * GIB, 8, {"GOGC": "off", "GOMEMLIMIT": "1536MiB"}),
        # 16 CPUs, 16 GiB: under 1 GiB each, Go's default collector stays.
        (16 * GIB, 16, {}),
    ],
)
def test_the_collector_is_off_only_up_to_what_each_process_can_have(
    available: int, cpus: int, expected: dict[str, str]
) -> None:
    assert go_build.collector_env({}, available=available, cpus=cpus) == expected


@pytest.mark.parametrize("name", ["GOGC", "GOMEMLIMIT"])
def test_a_callers_own_setting_is_kept(name: str) -> None:
    assert go_build.collector_env({name: "200"}, available=64 * GIB, cpus=2) == {}


def test_available_memory_is_read_from_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemAvailable:   1000 kB\n")
    assert go_build.available_memory(meminfo) == 1000 * 1024
    meminfo.write_text("MemTotal:       24000000 kB\n")
    assert go_build.available_memory(meminfo) is None
    assert go_build.available_memory(tmp_path / "absent") is None
