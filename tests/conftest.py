"""Session fixtures shared by the test modules.

``helm``: the pinned helm binary as a :class:`Helm` runner (rendering only).

``api_plane``: the plane without the Cluster API managers, one per test module (tests that
need only real API servers; modules that call it ``plane`` alias it).

``webhook_plane``: the real webhooks of Cluster API and CAPO, controllers that reconcile
nothing, one per test module (OpenStack clusters that nothing could provision here).

``plane``: ONE real management plane per test session (testenv/: etcd, kube-apiserver,
kube-controller-manager and the Cluster API, CAPD and CAPO managers built from Go modules).
Tests must not share objects through it: each takes a fresh namespace (``plane.namespace``).
Under ``make test`` both plane groups' sessions share one plane that the runner starts
(:data:`SHARED_PLANE`, tests/support/run_tiers.py); a module that stops, kills or restarts
a component uses a plane of its own (``webhook_plane``, ``api_plane``, a module fixture).
Without a Go toolchain and without cached binaries the plane tests skip (fail in CI).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scs_templates._tools.helm import Helm
from tests.support import pinned_helm, real_charts, skip_or_fail

TESTS = Path(__file__).resolve().parent


#: ``PID:DIR``: the session's ``plane`` is the one process PID (``python -m testenv up --dir
#: DIR``) runs, shared with the other test processes that get the same value
#: (tests/support/run_tiers.py sets it); unset, each session starts a plane of its own.
SHARED_PLANE = "SCS_TEMPLATES_SHARED_PLANE"

TIERS = ("unit", "render", "plane", "cloud")
"""The test tiers, cheapest first; each is a folder of tests/ and a marker of that name:

- ``unit``: pure Python, no subprocess (tests/unit/conftest.py refuses one);
- ``render``: helm, helmfile and other programs, offline;
- ``plane``: the real management plane (testenv/: kube-apiserver, etcd, Cluster API managers,
  workload API servers, Flux), programs built from Go modules;
- ``cloud``: the real OpenStack services of the local test stack (with or without a plane).
"""


def pytest_configure(config: pytest.Config) -> None:
    for tier in TIERS:
        config.addinivalue_line("markers", f"{tier}: the {tier} tier (set from the folder)")
    config.addinivalue_line(
        "markers",
        "extra_builds: runs a Go program built after the plane (kubeadm or kube-apiserver of "
        "another release, Flux's controllers, OCCM, Cinder CSI) or builds one itself (helm "
        "for linux/arm64); such modules run last in their tier (pytest_collection_modifyitems)",
    )


def tier_of(path: Path) -> str:
    """The tier of a test file: the folder of tests/ it lives in."""
    relative = path.resolve().relative_to(TESTS)
    if len(relative.parts) < 2 or relative.parts[0] not in TIERS:
        raise pytest.UsageError(
            f"{path}: a test module lives in a tier folder: tests/{{{','.join(TIERS)}}}/"
        )
    return relative.parts[0]


def _order(item: pytest.Item) -> tuple[int, int]:
    tier = TIERS.index(tier_of(item.path))
    return tier, 1 if item.get_closest_marker("extra_builds") else 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its folder's tier; run the tiers cheapest first and, within a tier,
    the modules marked ``extra_builds`` last (each group in collected order).

    On a fresh machine ``make test`` builds the plane and then the rest of
    testenv.build.build_all() in the background, in the order of the extra_builds modules:
    the tests that need no Go program run first, then the plane's while the build goes on,
    then those that wait for the rest. The session's plane starts at the first test that
    needs it and holds the machine-wide lock of CAPD's fixed ports (testenv/plane.py) until
    the session ends, so it runs only while its tests run.
    """
    for item in items:
        item.add_marker(tier_of(item.path))
    items.sort(key=_order)


@pytest.fixture(scope="session")
def helm() -> Helm:
    """The pinned helm (for renders)."""
    runner: Helm = pinned_helm()
    return runner


@pytest.fixture(scope="session")
def services_helmfile() -> object:
    """The pinned helmfile with the pinned helm (services render and apply)."""
    from scs_templates._core.errors import ToolNotFoundError
    from scs_templates._services.runner import ServicesHelmfile

    try:
        return ServicesHelmfile()
    except ToolNotFoundError as error:
        skip_or_fail(f"helmfile/helm not available ({error}); `scs-templates tools install --all`")
        raise


@pytest.fixture(scope="session")
def chart_mirror() -> Path:
    """The REAL upstream charts, packaged (../shared/charts), used as a local chart mirror."""
    return real_charts()


def _skip_without_go() -> None:
    """Skip (fail in CI) when a program of the plane is missing and Go cannot build it."""
    from testenv import build

    missing = [name for name in build.missing() if name != "kubeadm"]
    if missing and build.go_binary() is None:
        skip_or_fail(
            "the real management plane needs the Go toolchain (`go`) to build "
            f"{', '.join(missing)} (or run `python -m testenv build` where Go exists)"
        )


def _running_plane(directory: Path, **options: Any) -> Iterator[object]:
    """Start a real plane in ``directory`` (building what is missing); skip (fail in CI)
    without Go and without cached binaries; fail when it does not start."""
    from testenv import PlaneError, running

    _skip_without_go()
    try:
        with running(directory, **options) as started:
            yield started
    except PlaneError as error:
        pytest.fail(f"the test plane did not start: {error}")


def _shared_plane(value: str) -> object:
    """The plane of :data:`SHARED_PLANE` (``PID:DIR``), once its process reports it ready."""
    from testenv import PlaneError
    from testenv.plane import attach

    owner, sep, directory = value.partition(":")
    if not (sep and owner.isdigit() and directory):
        raise pytest.UsageError(f"{SHARED_PLANE}={value!r}: expected PID:DIR")
    _skip_without_go()
    try:
        return attach(Path(directory), int(owner))
    except PlaneError as error:
        pytest.fail(f"the shared test plane did not start: {error} (log: {directory}.log)")


@pytest.fixture(scope="session")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    shared = os.environ.get(SHARED_PLANE)
    if shared:
        yield _shared_plane(shared)
        return
    yield from _running_plane(tmp_path_factory.mktemp("plane"))


@pytest.fixture(scope="module")
def api_plane(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[object]:
    """The plane WITHOUT the Cluster API managers (etcd, kube-apiserver,
    kube-controller-manager), one per test module, for tests that need real API servers
    but no controllers of Cluster API: cheaper to start, and it does not wait for the
    machine-wide lock of CAPD's fixed ports while another session's plane holds it."""
    module = request.module.__name__.rsplit(".", 1)[-1]
    yield from _running_plane(tmp_path_factory.mktemp(f"{module}-plane"), managers=())


@pytest.fixture(scope="module")
def webhook_plane(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[object]:
    """The plane with the REAL webhooks of Cluster API (core, kubeadm bootstrap, kubeadm
    control plane) and CAPO whose controllers reconcile nothing
    (:func:`testenv.plane.webhooks_only`), one per test module: a management cluster that
    admits an OpenStack cluster as the real one does while no CAPO reconciles it against a
    cloud where no server could boot (the test OpenStack has no compute). No CAPD, so it
    does not wait for the machine-wide lock of CAPD's fixed ports."""
    from testenv.plane import webhooks_only

    module = request.module.__name__.rsplit(".", 1)[-1]
    managers = webhooks_only(
        ("capi-core", "capi-bootstrap-kubeadm", "capi-controlplane-kubeadm", "capo")
    )
    yield from _running_plane(tmp_path_factory.mktemp(f"{module}-plane"), managers=managers)
