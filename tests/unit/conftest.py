"""The unit tier: pure Python. A test here that starts a program fails and names the program;
it belongs in tests/render (or a higher tier). This keeps the tier fast and independent of
the machine's tools."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest


class SubprocessInUnitTier(AssertionError):
    """A unit test started a program."""


@pytest.fixture(autouse=True)
def _no_subprocess(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(self: subprocess.Popen[Any], args: Any, *rest: Any, **options: Any) -> None:
        raise SubprocessInUnitTier(
            f"the unit tier runs no program (started: {args!r}); move the test to tests/render"
        )

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    yield
