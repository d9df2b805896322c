"""The cost report at the end of ``make test`` (tests/support/run_tiers.py), its groups, and
the tier of a test module (tests/conftest.py): read from JUnit XML as pytest writes it, from
the pytest command lines, and from the folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SHARED_PLANE, TIERS, tier_of
from tests.support import REPO, run_tiers
from tests.support.run_tiers import SECOND_PLANE_GROUP, SLOWEST, Group, SharedPlane, groups, report

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


def _paths(group: Group, reports: Path) -> tuple[set[str], set[str]]:
    """(the test paths, the --ignore paths) of a group's pytest command line."""
    argv = group.argv(reports, ["-q"])
    assert argv[1:3] == ["-m", "pytest"] and argv[-1] == "-q"
    paths = {a for a in argv[3:] if a.startswith("tests/")}
    ignored = {a.split("=", 1)[1] for a in argv if a.startswith("--ignore=")}
    return paths, ignored


def test_every_tier_module_runs_in_exactly_one_group_and_only_the_plane_groups_share_a_plane(
    tmp_path: Path,
) -> None:
    """The plane tier is split in two pytest processes: together they run every module of
    tests/plane once (a new module lands in the first group), and both, only they, attach to
    the one plane the runner starts; each group writes its own JUnit report."""
    run = groups(2)
    assert [g.name for g in run] == ["unit+render", "plane", "plane-2", "cloud"]
    assert [g.name for g in run if g.shared_plane] == ["plane", "plane-2"]
    assert run[0].argv(tmp_path, [])[3:7] == ["tests/unit", "tests/render", "-n", "2"]
    modules = {f"tests/plane/{p.name}" for p in (REPO / "tests" / "plane").glob("test_*.py")}
    first, first_ignored = _paths(run[1], tmp_path)
    second, second_ignored = _paths(run[2], tmp_path)
    assert first == {"tests/plane"} and not second_ignored
    assert second == first_ignored == {f"tests/plane/{m}" for m in SECOND_PLANE_GROUP}
    assert second <= modules, "a module of the second group that does not exist"
    assert len(second) < len(modules) / 2, "the first group keeps the rest"
    # the Flux tests and the admission of Flux's objects share flux-system: one process
    assert {"test_plane_flux.py", "test_gitops_admission.py"} <= set(SECOND_PLANE_GROUP)
    reports = [a for g in run for a in g.argv(tmp_path, []) if a.startswith("--junitxml=")]
    assert reports == [f"--junitxml={tmp_path / f'{g.name}.xml'}" for g in run]


def test_the_shared_plane_is_named_to_the_plane_groups_as_pid_and_directory(
    tmp_path: Path,
) -> None:
    class Running:
        pid = 4242

    shared = SharedPlane(tmp_path / "shared-plane")
    shared.process = Running()  # type: ignore[assignment]
    assert shared.environment() == {SHARED_PLANE: f"4242:{tmp_path / 'shared-plane'}"}
    assert shared.log == tmp_path / "shared-plane.log"


def test_the_full_suite_runs_the_property_tests_longer_unless_told() -> None:
    """`make test` gives the property tests (validate implies render, OnCalendar) a budget
    ten times that of `make check`; a budget set by the caller (`make property`) wins."""
    assert run_tiers.full_suite_budget({}) == {"SCS_TEMPLATES_PROPERTY_EXAMPLES": "400"}
    assert run_tiers.full_suite_budget({"SCS_TEMPLATES_PROPERTY_EXAMPLES": "7"}) == {}


def test_no_two_test_modules_share_a_name() -> None:
    """The tier folders are not packages, so pytest imports each test module by its file
    name: two of one name make a bare ``pytest`` (every tier in one run) stop at collection
    ('import file mismatch'), although ``make test``, which runs the tiers apart, passes."""
    seen: dict[str, list[str]] = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        if "plugins" not in path.relative_to(REPO).parts:
            seen.setdefault(path.name, []).append(path.relative_to(REPO).as_posix())
    assert not {name: paths for name, paths in seen.items() if len(paths) > 1}


def test_a_shared_plane_that_ends_first_is_reaped_and_said_ended_once(tmp_path: Path) -> None:
    """Its process id alone would keep the plane groups waiting: a zombie until reaped, and
    then free for the next process (pid_max 32768 on the CI machine)."""
    from testenv.plane import PLANE_ENDED

    class Process:
        pid = 4242
        status: int | None = None

        def poll(self) -> int | None:
            return self.status

    shared = SharedPlane(tmp_path / "shared-plane")
    shared.directory.mkdir()
    process = Process()
    shared.process = process  # type: ignore[assignment]
    marker = shared.directory / PLANE_ENDED
    assert shared.reap() is None
    assert not marker.exists()
    process.status = 1
    assert shared.reap() == 1
    said = f"its process exited with 1; its log: {shared.log}\n"
    assert marker.read_text() == said
    process.status = 0  # never said twice, nor changed
    shared.reap()
    assert marker.read_text() == said
    assert shared.stop() == 0


def test_the_runner_reaps_the_shared_plane_while_it_waits_for_the_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plane ends while a group still runs: the group's tests see it said before the
    group ends (stand-ins for the two processes: the unit tier starts none)."""
    from testenv.plane import PLANE_ENDED

    shared = SharedPlane(tmp_path / "shared-plane")
    shared.directory.mkdir()
    marker = shared.directory / PLANE_ENDED
    seen: list[bool] = []

    class Plane:
        pid = 4242

        def poll(self) -> int:
            return 1

    class Pytest:
        def poll(self) -> int | None:
            seen.append(marker.exists())
            return 0 if len(seen) == 3 else None

    shared.process = Plane()  # type: ignore[assignment]
    group = Group("plane", ("plane",), shared_plane=True, log=tmp_path / "plane.log")
    group.process = Pytest()  # type: ignore[assignment]
    monkeypatch.setattr(run_tiers.time, "sleep", lambda seconds: None)
    assert run_tiers._wait([group], shared) == 0
    assert seen == [True, True, True]
    assert "its process exited with 1" in marker.read_text()
    assert "total: 0 passed" in capsys.readouterr().out
