"""A test component (testenv.process.Daemon) runs with the Go collector of a long-running
component, unless the caller set its own."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from testenv.process import DAEMON_COLLECTOR, Daemon, daemon_env


def _collector_seen(tmp_path: Path, env: dict[str, str]) -> str:
    """What a real child of a Daemon sees of GOGC and GOMEMLIMIT."""
    out = tmp_path / "seen"
    seen = '"${GOGC-unset}" "${GOMEMLIMIT-unset}"'
    script = f'printf "%s %s" {seen} > {out}.tmp && mv {out}.tmp {out}'
    daemon = Daemon("probe", ["/bin/sh", "-c", script], env=env, log=tmp_path / "probe.log")
    try:
        deadline = time.monotonic() + 10
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        daemon.stop()
    return out.read_text()


def test_a_daemon_collects_less_often_than_gos_default(tmp_path: Path) -> None:
    seen = _collector_seen(tmp_path, {"PATH": "/usr/bin:/bin"})
    assert seen == f"{DAEMON_COLLECTOR['GOGC']} {DAEMON_COLLECTOR['GOMEMLIMIT']}"
    assert int(DAEMON_COLLECTOR["GOGC"]) > 100


@pytest.mark.parametrize(
    ("own", "expected"),
    [({"GOGC": "100"}, "100 unset"), ({"GOMEMLIMIT": "300MiB"}, "unset 300MiB")],
)
def test_the_callers_own_collector_setting_wins(
    tmp_path: Path, own: dict[str, str], expected: str
) -> None:
    assert _collector_seen(tmp_path, {"PATH": "/usr/bin:/bin", **own}) == expected


def test_daemon_env_leaves_the_callers_mapping_alone() -> None:
    env = {"PATH": "/bin"}
    assert daemon_env(env) == {"PATH": "/bin", **DAEMON_COLLECTOR}
    assert env == {"PATH": "/bin"}
