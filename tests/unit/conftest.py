"""The unit tier: pure Python. A test here that starts a program fails and names the program;
it belongs in tests/render (or a higher tier). This keeps the tier fast and independent of
the machine's tools.

The guard wraps each phase of a unit test (setup, call, teardown) as a hook, not as a fixture:
module- and session-scoped fixtures are set up before any function-scoped one, so a fixture
could otherwise start a program unseen (tests/unit/test_versions.py's ``go mod download`` did
until it moved to tests/plane/test_versions_upstream.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


class SubprocessInUnitTier(AssertionError):
    """A unit test started a program."""


def _refuse(self: subprocess.Popen[Any], args: Any, *rest: Any, **options: Any) -> None:
    raise SubprocessInUnitTier(
        f"the unit tier runs no program (started: {args!r}); move the test to tests/render"
    )


@contextmanager
def _no_programs() -> Iterator[None]:
    original = subprocess.Popen.__init__
    subprocess.Popen.__init__ = _refuse  # type: ignore[method-assign]
    try:
        yield
    finally:
        subprocess.Popen.__init__ = original  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """The fixtures of every scope are set up here."""
    with _no_programs():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _no_programs():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    with _no_programs():
        return (yield)
