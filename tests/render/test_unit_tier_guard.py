"""The unit tier's guard (tests/unit/conftest.py) refuses a program started anywhere in a unit
test, in a test body and in a fixture of any scope. Run as a pytest of its own over a copy of
the guard, so this tier may start it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO

PROBE = """
import subprocess

import pytest


@pytest.fixture(scope="{scope}")
def started() -> int:
    return subprocess.run(["true"], check=False).returncode


def test_probe(started: int) -> None:
    assert started == 0
"""


@pytest.mark.parametrize("scope", ["function", "module", "session"])
def test_a_unit_fixture_of_any_scope_cannot_start_a_program(tmp_path: Path, scope: str) -> None:
    """A module-scoped fixture of tests/unit/test_versions.py ran ``go mod download`` unseen:
    the guard was a function-scoped fixture, set up after the module's."""
    unit = tmp_path / "unit"
    unit.mkdir()
    shutil.copy(REPO / "tests" / "unit" / "conftest.py", unit / "conftest.py")
    (unit / "test_probe.py").write_text(PROBE.format(scope=scope))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "unit"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "SubprocessInUnitTier: the unit tier runs no program (started: ['true'])" in done.stdout
