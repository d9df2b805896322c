"""SIGINT, SIGTERM and SIGHUP end a command cleanly; every timeout ends the tool's group.

The CLI runs in a subprocess (as a CI job would) with a FAKE HELM, a TEST DOUBLE: a shell
script that answers ``helm version`` and otherwise starts a grandchild and sleeps, like a
``helm upgrade --atomic`` waiting for a cluster. A real helm cannot be made to hang on
purpose offline. Checked: the exit code (128 + signal), one line on stderr, the helm group
(grandchild included) gone, and the private helm home removed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import EXAMPLES, fake_helm_binary, wait_for
from tests.support import process_gone as gone

CLI = "import sys; from scs_templates._cli.main import main; sys.exit(main(sys.argv[1:]))"


def hanging_helm(directory: Path, *, hang_in_version: bool = False) -> Path:
    """A TEST DOUBLE for helm that hangs (with a grandchild) in its real work."""
    hang = f'sleep 300 & echo $! > "{directory}/child.pid"; touch "{directory}/started"; sleep 300'
    if hang_in_version:
        return fake_helm_binary(directory, hang, version=hang)
    return fake_helm_binary(directory, hang)


def start_cli(tmp_path: Path, helm: Path, *argv: str, **env: str) -> subprocess.Popen[str]:
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *argv],
        env={**os.environ, "SCS_TEMPLATES_HELM": str(helm), "TMPDIR": str(temp), **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def leftovers(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("scs-"))


@pytest.mark.parametrize(
    ("signum", "code", "name"),
    [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGHUP, 129, "SIGHUP"), (signal.SIGINT, 130, "")],
    ids=["SIGTERM", "SIGHUP", "SIGINT"],
)
def test_signal_stops_helm_and_removes_the_temp_home(
    tmp_path: Path, signum: int, code: int, name: str
) -> None:
    helm = hanging_helm(tmp_path / "helm")
    cli = start_cli(tmp_path, helm, "render", str(EXAMPLES[0]))
    try:
        assert wait_for((tmp_path / "helm" / "started").exists), "helm never started"
        cli.send_signal(signum)
        _out, err = cli.communicate(timeout=30)
    finally:
        cli.kill()
    assert cli.returncode == code
    (line,) = err.splitlines()
    assert line.startswith("scs-templates: ")
    assert ("interrupted (SIGINT)" if signum == signal.SIGINT else f"stopped by {name}") in line
    child = int((tmp_path / "helm" / "child.pid").read_text())
    assert wait_for(lambda: gone(child), 10), "helm's child survived the signal"
    assert leftovers(tmp_path) == []


def test_signal_stops_every_helm_of_a_fleet(tmp_path: Path) -> None:
    """Fleet renders run helm from worker threads, which no main-thread exception reaches."""
    helm = hanging_helm(tmp_path / "helm")
    out = tmp_path / "out"
    cli = start_cli(
        tmp_path,
        helm,
        "render-fleet",
        *(str(path) for path in EXAMPLES[:3]),
        "--output-dir",
        str(out),
    )
    try:
        assert wait_for((tmp_path / "helm" / "started").exists), "helm never started"
        time.sleep(0.5)
        cli.send_signal(signal.SIGTERM)
        _out, err = cli.communicate(timeout=30)
    finally:
        cli.kill()
    assert cli.returncode == 143
    assert len(err.splitlines()) == 1, err
    child = int((tmp_path / "helm" / "child.pid").read_text())
    assert wait_for(lambda: gone(child), 10)
    assert leftovers(tmp_path) == []


def test_version_check_timeout_ends_the_group_and_is_configurable(tmp_path: Path) -> None:
    helm = hanging_helm(tmp_path / "helm", hang_in_version=True)
    started = time.monotonic()
    cli = start_cli(tmp_path, helm, "render", str(EXAMPLES[0]), SCS_TEMPLATES_TIMEOUT="2s")
    _out, err = cli.communicate(timeout=60)
    assert time.monotonic() - started < 30
    assert cli.returncode == 1
    (line,) = err.splitlines()
    assert "`helm version` did not finish within 2 s" in line
    child = int((tmp_path / "helm" / "child.pid").read_text())
    assert wait_for(lambda: gone(child), 10), "the version check orphaned helm's child"


def test_timeout_option_wins_over_the_environment(tmp_path: Path) -> None:
    helm = hanging_helm(tmp_path / "helm")
    cli = start_cli(
        tmp_path,
        helm,
        "--timeout",
        "1s",
        "render",
        str(EXAMPLES[0]),
        SCS_TEMPLATES_TIMEOUT="1h",
    )
    _out, err = cli.communicate(timeout=60)
    assert cli.returncode == 1
    (line,) = err.splitlines()
    assert "did not finish within 1 s and was stopped" in line
    assert leftovers(tmp_path) == []


def test_bad_timeout_values_are_input_errors(tmp_path: Path) -> None:
    helm = hanging_helm(tmp_path / "helm")
    cli = start_cli(tmp_path, helm, "render", str(EXAMPLES[0]), SCS_TEMPLATES_TIMEOUT="soon")
    _out, err = cli.communicate(timeout=60)
    assert cli.returncode == 2
    assert err == (
        "scs-templates: error: SCS_TEMPLATES_TIMEOUT='soon': 'soon' is not a duration "
        "(e.g. 30m, 1h, 90s)\n"
    )
    cli = start_cli(tmp_path, helm, "--timeout", "0", "render", str(EXAMPLES[0]))
    _out, err = cli.communicate(timeout=60)
    assert cli.returncode == 2
    assert "argument --timeout: the duration must be positive" in err
