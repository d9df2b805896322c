"""Fixtures of the cloud tier: the session's shared OpenStack stacks.

A module declares the services it needs at module level, ``STACK = BOOTING`` (a
:class:`~tests.support.openstack_fixtures.StackServices`), and asks for ``shared_stack``: the
modules of one configuration share one stack for the session, each in a Keystone project of
its own (tests/support/openstack_fixtures.py says why some modules keep a stack of their own).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openstack_fixtures import SharedStacks, StackServices
from tests.support.openstack_stack import Stack


def _declared(session: pytest.Session) -> list[StackServices]:
    """The ``STACK`` of every module with a test in this session, once per module."""
    modules = {id(m): m for m in (getattr(i, "module", None) for i in session.items) if m}
    return [
        m.STACK for m in modules.values() if isinstance(getattr(m, "STACK", None), StackServices)
    ]


@pytest.fixture(scope="session")
def shared_stacks(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedStacks]:
    stacks = SharedStacks(tmp_path_factory, _declared(request.session))
    yield stacks
    stacks.stop()


@pytest.fixture(scope="module")
def shared_stack(shared_stacks: SharedStacks, request: pytest.FixtureRequest) -> Iterator[Stack]:
    """The session's stack of this module's ``STACK``: started by the first module that
    declared it, stopped after the last one."""
    services = getattr(request.module, "STACK", None)
    if not isinstance(services, StackServices):
        raise pytest.UsageError(f"{request.module.__name__}: shared_stack needs STACK = ...")
    yield shared_stacks.acquire(services)
    shared_stacks.release(services)
