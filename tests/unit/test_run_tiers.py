"""The cost report at the end of ``make test`` (tests/support/run_tiers.py) and the tier of a
test module (tests/conftest.py): read from JUnit XML as pytest writes it, and from the folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TIERS, tier_of
from tests.support import REPO
from tests.support.run_tiers import SLOWEST, Group, report

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>
"""


def _case(module: str, name: str, seconds: float, outcome: str = "") -> str:
    inner = {"failed": "<failure message='x'/>", "skipped": "<skipped message='y'/>"}
    return (
        f'<testcase classname="{module}" name="{name}" time="{seconds}">'
        f"{inner.get(outcome, '')}</testcase>"
    )


def test_the_report_gives_each_group_and_tier_the_slowest_tests_and_one_totals_line(
    tmp_path: Path,
) -> None:
    fast = "".join(_case("tests.unit.test_a", f"t{i}", 0.01 * i) for i in range(40))
    slow = _case("tests.render.test_b", "slow", 12.5) + _case(
        "tests.render.test_b", "broken", 3.0, "failed"
    )
    (tmp_path / "unit+render.xml").write_text(JUNIT.format(cases=fast + slow))
    plane = _case("tests.plane.test_c", "plane", 99.0) + _case(
        "tests.plane.test_c", "skipped", 0.0, "skipped"
    )
    (tmp_path / "plane.xml").write_text(JUNIT.format(cases=plane))
    groups = [
        Group("unit+render", ("unit", "render"), seconds=61.0, status=1),
        Group("plane", ("plane",), seconds=120.0, status=0),
        Group("cloud", ("cloud",), seconds=5.0, status=2),  # no report: collection failed
    ]
    lines = [" ".join(line.split()) for line in report(groups, tmp_path).splitlines()]
    assert "unit+render: 61.0 s wall clock, 42 tests, FAILED (exit 1)" in lines
    assert "plane: 120.0 s wall clock, 2 tests, passed" in lines
    assert "cloud: 5.0 s wall clock, 0 tests, FAILED (exit 2)" in lines
    assert "tier plane: 99.0 s in its tests (2 tests)" in lines
    assert "tier render: 15.5 s in its tests (2 tests)" in lines
    slowest = lines[lines.index(f"the {SLOWEST} slowest tests:") + 1 :][:SLOWEST]
    assert slowest[0] == "99.00 s tests.plane.test_c::plane"
    assert slowest[1].endswith("tests.render.test_b::slow")
    assert len(slowest) == SLOWEST
    assert lines[-1] == "total: 42 passed, 1 failed, 1 skipped"


def test_a_test_module_outside_a_tier_folder_is_refused() -> None:
    assert [tier_of(REPO / "tests" / tier / "test_x.py") for tier in TIERS] == list(TIERS)
    with pytest.raises(pytest.UsageError, match="tier folder"):
        tier_of(REPO / "tests" / "test_x.py")
    with pytest.raises(pytest.UsageError, match="tier folder"):
        tier_of(REPO / "tests" / "support" / "test_x.py")
