"""Run the test tiers of ``make test`` side by side, then report what each cost.

Why side by side: the plane and cloud tiers mostly wait (controllers, rollouts, the services
of the OpenStack test stack answering), while the unit and render tiers keep a core busy. Run
one after the other they took the sum of their wall clocks; as pytest processes side by side
they take about the longest one. The plane tier is the longest (its tests wait for real
controllers, about a third of a core busy), so it runs as TWO pytest processes, ``plane``
and ``plane-2`` (the modules of :data:`SECOND_PLANE_GROUP`), that share ONE management plane:
this runner starts it (``python -m testenv up --dir DIR/shared-plane``, log
``DIR/shared-plane.log``; it holds CAPD's machine-wide port lock, so two planes with CAPD
could not run at once) and gives both the environment variable
``tests.conftest.SHARED_PLANE``; their session fixture ``plane`` attaches to it once it is
ready. Each test takes namespaces of its own there; the modules that stop or restart a
component start planes of their own. The cloud tier keeps its own session fixtures (the
OpenStack stack) and planes without CAPD.

    python -m tests.support.run_tiers [--reports DIR] [--jobs N] [-- PYTEST_ARGS...]

The unit and render tiers run in one pytest with ``-n N`` workers (pytest-xdist); the two
plane groups and the cloud tier each in a pytest of their own. Their output goes to
``DIR/<group>.log``; the first group's is shown as it runs, the others' when they end. At the
end: the wall clock of each group and tier, the 25 slowest tests of the run, and one line
with the totals. Exit status: 0 when every group passed, else 1 (2 for bad arguments).
SIGINT, SIGTERM and SIGHUP end every group's process group and the shared plane before this
runner exits.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from tests.support import REPO

SLOWEST = 25

#: The plane tier's modules of the second plane group (``plane-2``); the first (``plane``)
#: runs the rest of tests/plane. The two take about the same time (docs/testing.md, "Cost").
#: test_plane_flux and test_gitops_admission stay in ONE group: both use Flux's cluster-wide
#: objects on the shared plane (its CRDs; objects in ``flux-system`` that the admission test
#: dry-run creates and the Flux tests apply), so they must not run at the same time.
SECOND_PLANE_GROUP = (
    "test_plane_flux.py",
    "test_gitops_admission.py",
    "test_plane_kubeadm_minors.py",
    "test_services_workload.py",
    "test_services_apply.py",
    "test_plane_cluster_features.py",
)


@dataclass
class Group:
    """One pytest process: the tiers it runs and how it went. ``only`` (module file names of
    the single tier) runs just those modules of it, ``ignore`` the tier without them;
    ``shared_plane``: its session attaches to the plane this runner starts."""

    name: str
    tiers: tuple[str, ...]
    workers: int = 0
    only: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    shared_plane: bool = False
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    seconds: float = 0.0
    status: int | None = None
    log: Path = field(default_factory=Path)

    def argv(self, reports: Path, extra: list[str]) -> list[str]:
        if self.only:
            (tier,) = self.tiers
            paths = [f"tests/{tier}/{module}" for module in self.only]
        else:
            paths = [f"tests/{tier}" for tier in self.tiers]
        argv = [sys.executable, "-m", "pytest", *paths]
        argv += [f"--ignore=tests/{self.tiers[0]}/{module}" for module in self.ignore]
        if self.workers:
            argv += ["-n", str(self.workers)]
        return [*argv, f"--junitxml={reports / f'{self.name}.xml'}", *extra]


def groups(jobs: int) -> list[Group]:
    """The pytest processes of ``make test``, the one shown live first."""
    return [
        Group("unit+render", ("unit", "render"), workers=jobs),
        Group("plane", ("plane",), ignore=SECOND_PLANE_GROUP, shared_plane=True),
        Group("plane-2", ("plane",), only=SECOND_PLANE_GROUP, shared_plane=True),
        Group("cloud", ("cloud",)),
    ]


@dataclass
class SharedPlane:
    """The management plane the plane groups share: ``python -m testenv up`` in
    ``directory`` (a fresh one each run), its output in ``directory.log``."""

    directory: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.directory.with_name(f"{self.directory.name}.log")

    def start(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory.mkdir(parents=True)
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "testenv", "up", "--dir", str(self.directory)],
                cwd=REPO,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def environment(self) -> dict[str, str]:
        """What a group's pytest needs to attach (``tests.conftest.SHARED_PLANE``)."""
        from tests.conftest import SHARED_PLANE

        assert self.process is not None, "start() first"
        return {SHARED_PLANE: f"{self.process.pid}:{self.directory}"}

    def reap(self) -> int | None:
        """The plane's exit status once its process has ended (reaped, never a zombie), else
        None. The first time it is seen ended, the plane groups are told
        (:func:`testenv.plane.mark_ended`): their waiting attach and every later check fail
        at once, instead of waiting on a process id that a zombie, or the next process to
        get it, keeps alive."""
        from testenv.plane import PLANE_ENDED, mark_ended

        if self.process is None:
            return None
        status = self.process.poll()
        if status is not None and not (self.directory / PLANE_ENDED).exists():
            mark_ended(self.directory, f"its process exited with {status}; its log: {self.log}")
        return status

    def stop(self) -> int | None:
        """End the plane (SIGTERM: it stops its components; SIGKILL after 60 s); the exit
        status it had when it ended by itself before, else None."""
        if self.process is None:
            return None
        early = self.reap()
        if early is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        return early


#: The property tests' examples in the full suite (``make test``); ``make check`` runs each
#: test's small default and ``make property`` thousands (SCS_TEMPLATES_PROPERTY_EXAMPLES).
FULL_SUITE_PROPERTY_EXAMPLES = 400


def full_suite_budget(environ: Mapping[str, str]) -> dict[str, str]:
    """The longer property budget of the full suite, unless the caller set one."""
    if "SCS_TEMPLATES_PROPERTY_EXAMPLES" in environ:
        return {}
    return {"SCS_TEMPLATES_PROPERTY_EXAMPLES": str(FULL_SUITE_PROPERTY_EXAMPLES)}


def _start(
    group: Group, reports: Path, extra: list[str], env: dict[str, str], *, live: bool
) -> None:
    group.log = reports / f"{group.name}.log"
    output = None if live else group.log.open("wb")
    group.started = time.monotonic()
    group.process = subprocess.Popen(
        group.argv(reports, extra),
        cwd=REPO,
        env=os.environ | env,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT if output else None,
        start_new_session=True,
    )
    if output:
        output.close()


def _stop_all(groups: list[Group], shared: SharedPlane) -> None:
    for group in groups:
        if group.process is not None and group.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group.process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    for group in groups:
        if group.process is None:
            continue
        try:
            group.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(group.process.pid, signal.SIGKILL)
            group.process.wait()
    shared.stop()


@dataclass
class Case:
    tier: str
    name: str
    seconds: float
    outcome: str


def _cases(report: Path) -> list[Case]:
    """The test cases of a JUnit XML report, with the tier from the test's module path."""
    if not report.exists():
        return []
    cases = []
    for case in ET.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "")
        tier = module.split(".")[1] if module.startswith("tests.") else "?"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        name = f"{module}::{case.get('name', '')}"
        cases.append(Case(tier, name, float(case.get("time", "0") or 0), outcome))
    return cases


def report(groups: list[Group], reports: Path) -> str:
    """The cost of the run: each group's wall clock, each tier's summed test time, the slowest
    tests, and one closing line with the totals."""
    lines = ["", "=" * 30 + " cost of the run " + "=" * 30]
    cases: list[Case] = []
    for group in groups:
        found = _cases(reports / f"{group.name}.xml")
        cases += found
        state = "passed" if group.status == 0 else f"FAILED (exit {group.status})"
        lines.append(
            f"{group.name:>12}: {group.seconds:7.1f} s wall clock, {len(found)} tests, {state}"
        )
    tiers = sorted({case.tier for case in cases})
    for tier in tiers:
        mine = [case for case in cases if case.tier == tier]
        total = sum(case.seconds for case in mine)
        lines.append(f"{'tier ' + tier:>12}: {total:7.1f} s in its tests ({len(mine)} tests)")
    lines.append(f"the {SLOWEST} slowest tests:")
    for case in sorted(cases, key=lambda case: -case.seconds)[:SLOWEST]:
        lines.append(f"{case.seconds:9.2f} s  {case.name}")
    counts = {outcome: 0 for outcome in ("passed", "failed", "skipped")}
    for case in cases:
        counts[case.outcome] += 1
    lines.append(
        f"total: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reports", type=Path, default=REPO / ".venv" / "reports")
    parser.add_argument("--jobs", type=int, default=2, help="xdist workers of unit + render")
    parser.add_argument("pytest_args", nargs="*", help="passed to every pytest (after --)")
    options = parser.parse_args(argv)
    reports: Path = options.reports
    reports.mkdir(parents=True, exist_ok=True)
    for old in reports.glob("*.xml"):
        old.unlink()
    run = groups(options.jobs)
    shared = SharedPlane(reports / "shared-plane")

    def on_signal(number: int, frame: FrameType | None) -> None:
        _stop_all(run, shared)
        raise SystemExit(128 + number)

    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, on_signal)

    shared.start()
    for index, group in enumerate(run):
        env = shared.environment() if group.shared_plane else {}
        env |= full_suite_budget(os.environ)
        _start(group, reports, options.pytest_args, env, live=index == 0)
    code = _wait(run, shared)
    early = shared.stop()
    if early is not None:
        print(f"the shared plane ended by itself (exit {early}); its log: {shared.log}")
    return code


def _wait(groups: list[Group], shared: SharedPlane) -> int:
    """Wait for every group, show the others' logs once the live one has ended, then the
    report; the exit status of the run. A shared plane that ends before the groups is
    reaped and marked ended at once (:meth:`SharedPlane.reap`)."""
    reports = groups[0].log.parent
    waiting, to_show = list(groups), list(groups[1:])
    while waiting or to_show:
        shared.reap()
        for group in list(waiting):
            assert group.process is not None
            status = group.process.poll()
            if status is not None:
                group.status = status
                group.seconds = time.monotonic() - group.started
                waiting.remove(group)
        # the others' logs once the live one has ended, so that no two interleave
        for group in list(to_show) if groups[0].status is not None else []:
            if group.status is not None:
                to_show.remove(group)
                print(f"\n{'=' * 20} the {group.name} group's pytest ({group.log}) {'=' * 20}")
                sys.stdout.flush()
                sys.stdout.buffer.write(group.log.read_bytes())
                sys.stdout.flush()
        time.sleep(1)
    print(report(groups, reports), flush=True)
    return 0 if all(group.status == 0 for group in groups) else 1


if __name__ == "__main__":
    sys.exit(main())
