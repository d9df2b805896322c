"""The cloud tier's shared stacks (tests/support/openstack_fixtures.py): one stack per
configuration, started once for the modules that declare it and stopped after the last."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import openstack_fixtures
from tests.support.openstack_fixtures import (
    BOOTING,
    OCTAVIA_CINDER_NOVA_API,
    OCTAVIA_NEUTRON_VIPS,
    SharedStacks,
    StackServices,
)


class FakeStack:
    """Records what was started on it and whether it was stopped."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.started: list[tuple[str, dict[str, Any]]] = []
        self.stopped = False

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("start_"):
            raise AttributeError(name)
        return lambda **options: self.started.append((name, options))

    def stop(self) -> None:
        self.stopped = True


class Factory:
    def __init__(self, root: Path) -> None:
        self.root = root

    def mktemp(self, name: str) -> Path:
        return self.root / name


@pytest.fixture
def stacks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[FakeStack]:
    made: list[FakeStack] = []

    def start(state_dir: Path) -> FakeStack:
        made.append(FakeStack(state_dir))
        return made[-1]

    monkeypatch.setattr(openstack_fixtures, "start_or_skip", start)
    return made


def test_modules_of_one_configuration_share_one_stack_until_the_last(
    stacks: list[FakeStack], tmp_path: Path
) -> None:
    shared = SharedStacks(Factory(tmp_path), [BOOTING, BOOTING, OCTAVIA_NEUTRON_VIPS])
    first = shared.acquire(BOOTING)
    shared.release(BOOTING)
    assert not first.stopped  # a second module declared it
    assert shared.acquire(BOOTING) is first
    shared.release(BOOTING)
    assert first.stopped and len(stacks) == 1
    assert first.started == [  # type: ignore[attr-defined]
        ("start_octavia_cinder", {"cinder": False, "neutron_vips": False}),
        ("start_glance", {}),
        ("start_nova", {"compute": True}),
    ]
    vips = shared.acquire(OCTAVIA_NEUTRON_VIPS)
    assert vips is not first and vips.state_dir.name == "stack-octavia-neutron-vips"
    shared.stop()
    assert vips.stopped


def test_each_configuration_starts_what_it_names(stacks: list[FakeStack], tmp_path: Path) -> None:
    shared = SharedStacks(Factory(tmp_path), [])
    started = shared.acquire(OCTAVIA_CINDER_NOVA_API)
    assert started.started == [  # type: ignore[attr-defined]
        ("start_octavia_cinder", {"cinder": True, "neutron_vips": False}),
        ("start_nova", {"compute": False}),
    ]
    cinder = shared.acquire(StackServices(cinder=True))
    assert cinder.started == [("start_cinder", {})]  # type: ignore[attr-defined]
    assert OCTAVIA_CINDER_NOVA_API.name == "stack-octavia-noop-cinder-nova-api"
