"""How testenv runs its Go builds: niced, one at a time per cache, ended with the caller.

With a FAKE GO, a TEST DOUBLE (``fake_go`` below): a real ``go build`` of kube-apiserver
costs 400-650 CPU seconds on this machine and cannot be made to hang, record its niceness or
leave a grandchild on purpose. The double answers the three commands testenv's per-release
build runs (``go mod download -json``, ``go mod tidy``, ``go build -o BIN``), records each
call with its niceness, and for ``build`` starts a grandchild (as go starts its compilers)
and, if told so, hangs like a long compile. Everything else in the path is the real code:
testenv.build's per-release build, testenv.process's process groups and signal handling.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from testenv import build
from tests.support import REPO, process_gone, wait_for

RELEASE = "v1.35.4"
FAKE_GO = textwrap.dedent(
    """\
    #!{python}
    # TEST DOUBLE for go (tests/render/test_testenv_builds.py): the commands testenv's build runs.
    import json, os, pathlib, subprocess, sys, time
    state = pathlib.Path({state!r})
    args = sys.argv[1:]
    with (state / "calls").open("a") as calls:
        calls.write(json.dumps({{"args": args, "nice": os.nice(0), "pid": os.getpid()}}) + "\\n")
    if args[:3] == ["mod", "download", "-json"]:
        module = state / "module"
        module.mkdir(exist_ok=True)
        staging = "".join(f"\\t{{m}} v0.0.0\\n" for m in ("k8s.io/api", "k8s.io/kube-proxy"))
        (module / "go.mod").write_text(f"require (\\n{{staging}})\\n")
        print(json.dumps({{"Dir": str(module)}}))
    elif args[0] == "build":
        child = subprocess.Popen(["sleep", "300"])
        (state / "child.pid").write_text(str(child.pid))
        if (state / "hang").exists():
            (state / "started").touch()
            time.sleep(300)
        child.kill()
        pathlib.Path(args[args.index("-o") + 1]).write_text("built by the double")
    """
)


@pytest.fixture
def fake_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The double as GO, an empty testenv cache under tmp_path; returns the state directory."""
    state = tmp_path / "go-state"
    state.mkdir()
    go = tmp_path / "go"
    go.write_text(FAKE_GO.format(python=sys.executable, state=str(state)))
    go.chmod(0o755)
    monkeypatch.setenv("GO", str(go))
    monkeypatch.setenv("SCS_TEMPLATES_TESTENV_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SCS_TEMPLATES_TESTENV_NICE", raising=False)
    return state


def calls(state: Path) -> list[dict[str, object]]:
    path = state / "calls"
    lines = path.read_text().splitlines() if path.is_file() else []
    return [json.loads(line) for line in lines]


def builder(stderr: Path) -> subprocess.Popen[bytes]:
    """A separate process that builds kube-apiserver RELEASE (as a test or `make test` does);
    its log lines go to ``stderr`` (a file, read while it runs). Its SIGINT is Python's
    default (KeyboardInterrupt), as in a pytest started from a terminal or CI job, even where
    this test itself runs with SIGINT ignored (a shell's background job)."""
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from testenv import build; "
        f"print(build.build_kube_apiserver({RELEASE!r}, "
        "log=lambda m: print(m, file=sys.stderr, flush=True)))"
    )
    with stderr.open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )


def test_every_go_command_runs_niced(fake_go: Path) -> None:
    """Builds started by tests (or `make test`) must not take the CPU from the tests and
    the plane beside them: every go command runs DEFAULT_NICENESS nicer than its caller."""
    target = build.build_kube_apiserver(RELEASE, log=lambda _: None)
    assert target.read_text() == "built by the double"
    ran = calls(fake_go)
    assert [c["args"][:2] for c in ran] == [  # type: ignore[index]
        ["mod", "download"],
        ["mod", "tidy"],
        ["build", "-trimpath"],
    ]
    expected = min(19, os.nice(0) + build.DEFAULT_NICENESS)
    assert {c["nice"] for c in ran} == {expected}


def _gcflags(args: list[str]) -> str | None:
    return args[args.index("-gcflags") + 1] if "-gcflags" in args else None


def test_only_the_programs_a_test_runs_for_seconds_are_built_unoptimised(
    fake_go: Path,
) -> None:
    """Another release's kube-apiserver and kubeadm, the csi-provisioner and the OCI registry
    of the Flux tests are built with QUICK_GCFLAGS (~25 % fewer CPU seconds) under a key
    that says so; containerd's code, etcdctl (which reuses the plane's etcd packages), OCCM,
    the Cinder CSI plugin and Flux's controllers (which reuse the plane's Cluster API and
    CAPO packages) optimised, like the plane (testenv.build._go_build), under a key that says
    so."""
    from testenv import csi_provisioner, flux, occm, registry
    from testenv.__main__ import main

    build.build_kube_apiserver(RELEASE, log=lambda _: None)
    build.build_kubeadm(RELEASE, log=lambda _: None)
    cache_all_but_flux()  # the plane's programs: test_build_all_builds_the_flux_controllers...
    assert main(["build", "--all"]) == 0
    by_package = {
        c["args"][-1]: _gcflags(c["args"])  # type: ignore[index]
        for c in calls(fake_go)
        if c["args"][0] == "build"  # type: ignore[index]
    }
    quick = {
        "k8s.io/kubernetes/cmd/kube-apiserver",
        "k8s.io/kubernetes/cmd/kubeadm",
        csi_provisioner.PACKAGE,
        registry.PACKAGE,
    }
    assert quick <= set(by_package)
    quick_flags, optimised = build.go_gcflags(quick=True), build.go_gcflags(quick=False)
    assert {p for p, flags in by_package.items() if flags == quick_flags} == quick
    assert set(by_package.values()) == {quick_flags, optimised}
    like_the_plane = {occm.PACKAGE, occm.CSI_PACKAGE, *flux.CONTROLLERS.values()}
    assert {by_package[p] for p in like_the_plane} == {optimised}
    # No DWARF from the compiler (go_build.NO_DWARF), whatever the optimisation.
    assert quick_flags == "all=-N -l -dwarf=false" and optimised == "all=-dwarf=false"
    assert f"-r{build.RELEASE_RECIPE}" in str(build.release_program_path("kubeadm", RELEASE))
    assert occm.module_key() != flux.module_key(occm.MODULE_DIR)
    assert csi_provisioner.module_key() != flux.module_key(csi_provisioner.MODULE_DIR)
    source = flux.FLUX_DIR / "source-controller"
    assert flux.module_key(source) not in str(flux.binary("source-controller"))


@pytest.mark.parametrize(
    ("release", "kube_proxy"),
    [("v1.35.4", "v0.35.4"), ("v1.31.14", "v0.31.11")],
)
def test_staging_modules_are_the_release_own_unless_the_proxy_lacks_them(
    fake_go: Path, release: str, kube_proxy: str
) -> None:
    """The generated wrapper replaces every staging module with the release's v0.MINOR.PATCH,
    except where testenv.build.STAGING_SUBSTITUTES names the newest patch the proxy serves."""
    target = build.build_kubeadm(release, log=lambda _: None)
    gomod = (target.parent / "src" / "go.mod").read_text()
    own = "v0." + release.split(".", 1)[1]
    assert f"\tk8s.io/api => k8s.io/api {own}\n" in gomod
    assert f"\tk8s.io/kube-proxy => k8s.io/kube-proxy {kube_proxy}\n" in gomod
    assert f"require k8s.io/kubernetes {release}\n" in gomod


def test_the_niceness_can_be_set(fake_go: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCS_TEMPLATES_TESTENV_NICE", "0")
    build.build_kube_apiserver(RELEASE, log=lambda _: None)
    assert {c["nice"] for c in calls(fake_go)} == {os.nice(0)}
    monkeypatch.setenv("SCS_TEMPLATES_TESTENV_NICE", "lots")
    with pytest.raises(build.PlaneError, match="SCS_TEMPLATES_TESTENV_NICE"):
        build.build_niceness()


def test_a_second_builder_waits_for_the_first_and_builds_nothing(
    fake_go: Path, tmp_path: Path
) -> None:
    """While one process holds the build lock, another one needing the same binary waits
    and, once the first has made it, uses it: the packages are not compiled twice."""
    log = tmp_path / "second.log"
    with build.build_lock("the test's own build", log=lambda _: None):
        second = builder(log)
        assert wait_for(lambda: second.poll() is not None or "waiting" in log.read_text(), 60)
        assert second.poll() is None, log.read_text()
        lock = build.cache_root() / "build.lock"
        assert lock.read_text() == f"{os.getpid()} building the test's own build\n"
        target = build.release_program_path("kube-apiserver", RELEASE)
        target.parent.mkdir(parents=True)
        target.write_text("built by the first builder")
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 0, log.read_text()
    assert out.decode().strip() == str(target)
    assert "waiting for another build (pid " in log.read_text()
    assert target.read_text() == "built by the first builder"
    assert calls(fake_go) == []  # the second builder ran no go command at all


def test_a_waiter_whose_program_appears_stops_waiting_while_the_lock_is_still_held(
    fake_go: Path, tmp_path: Path
) -> None:
    """flock is not fair: `build --all` in the background releases the lock after each
    program and takes it again at once for the next one, so a test needing a program that is
    already built would wait for the WHOLE background build (a cold CI run's plane tests sat
    ~40 minutes behind builds they did not need). The waiter must notice that its program is
    there and go on while the lock is still held by the other builder."""
    log = tmp_path / "second.log"
    with build.build_lock("the background build's next program", log=lambda _: None):
        second = builder(log)
        assert wait_for(lambda: second.poll() is not None or "waiting" in log.read_text(), 60)
        assert second.poll() is None, log.read_text()
        target = build.release_program_path("kube-apiserver", RELEASE)
        target.parent.mkdir(parents=True)
        target.write_text("built by the background build")
        out, _ = second.communicate(timeout=60)  # the lock is still held here
        assert second.returncode == 0, log.read_text()
        lock = build.cache_root() / "build.lock"
        assert lock.read_text() == f"{os.getpid()} building the background build's next program\n"
    assert out.decode().strip() == str(target)
    assert calls(fake_go) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_the_builder_ends_the_go_build_and_its_children(
    fake_go: Path, tmp_path: Path, signum: int
) -> None:
    """pytest (or make) signalled while a go build runs: the build's whole process group
    (go and the compilers it started) ends, and the builder then ends as the signal says.
    Without the fix a SIGTERM or SIGHUP killed the builder alone and left the build running
    (it lives in its own session, so the signal never reached it)."""
    (fake_go / "hang").touch()
    log = tmp_path / "builder.log"
    proc = builder(log)
    assert wait_for(lambda: (fake_go / "started").exists(), 60), log.read_text()
    go_pid = next(c["pid"] for c in calls(fake_go) if c["args"][0] == "build")  # type: ignore[index]
    child = int((fake_go / "child.pid").read_text())
    assert isinstance(go_pid, int)
    assert not process_gone(child)
    try:
        proc.send_signal(signum)
        proc.communicate(timeout=60)
        assert proc.returncode == -signum  # ended by the signal, as without a build running
        assert wait_for(lambda: process_gone(go_pid) and process_gone(child), 30)
    finally:  # a failing run must not leave the double behind
        for pid in (go_pid, child):
            if not process_gone(pid):
                os.kill(pid, signal.SIGKILL)
    lock = build.cache_root() / "build.lock"
    with build.build_lock("after the signal"):  # released: taken at once
        assert lock.read_text().startswith(f"{os.getpid()} ")


def test_the_suite_builds_cover_every_release_the_tests_run() -> None:
    """`build --all` makes what the per-minor tests need (their lists live in testenv.build):
    the kubeadm of test_plane_inmemory's cluster first (the ``plane`` group needs it halfway),
    then the others oldest first (the order of test_plane_kubeadm_minors), then the
    kube-apiservers (test_plane_cluster_features, ``plane-2``'s last module). Each minor's own
    kubeadm; the kube-apiserver of each minor of APISERVER_MINORS."""
    from tests.plane.test_plane_inmemory import FIRST

    todo = build.suite_builds()
    want = {build.kubeadm_release(f"{a}.{b}") for a, b in build.WORKLOAD_MINORS}
    apiservers = {build.kubeadm_release(f"{a}.{b}") for a, b in build.APISERVER_MINORS}
    plane = {build.KUBERNETES_VERSION}
    assert {r for n, r in todo if n == "kube-apiserver"} == apiservers - plane
    assert {r for n, r in todo if n == "kubeadm"} == want - plane
    kubeadms = [r for n, r in todo if n == "kubeadm"]
    walk = build.kubeadm_release(FIRST)
    assert build.kubeadm_release("{}.{}".format(*build.INMEMORY_WALK_MINOR)) == walk
    oldest_first = [build.kubeadm_release(f"{a}.{b}") for a, b in sorted(build.WORKLOAD_MINORS)]
    assert kubeadms == [walk] + [r for r in oldest_first if r not in (walk, *plane)]
    names = [n for n, _ in todo]
    assert names == sorted(names, key=lambda n: n == "kube-apiserver")
    assert len(set(todo)) == len(todo)


def cache_all_but_flux() -> Path:
    """Fill the (test) cache with everything ``build --all`` makes except Flux's controllers;
    return the plane's directory."""
    root = build.plane_dir()
    for program in build.PROGRAMS:
        (root / "bin").mkdir(parents=True, exist_ok=True)
        (root / "bin" / program.name).write_text("cached")
    for tree in build.CONFIG_TREES:
        (root / "manifests" / tree.provider).mkdir(parents=True)
    for name, release in build.suite_builds():
        path = build.release_program_path(name, release)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("cached")
    return root


def test_build_all_on_a_warm_cache_runs_no_go_command(
    fake_go: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Warm, ``build --all`` only names what it found, in the order the groups' waiting
    modules need it: containerd's registry code, etcdctl (and etcdutl), the kubeadm of
    test_plane_inmemory (``plane``), Flux's controllers (``plane-2``), OCCM, the Cinder CSI
    plugin, its csi-provisioner sidecar (the cloud group), the other kubeadms, the other
    releases' kube-apiservers (``plane-2``), the plane."""
    from testenv import containerd, csi_provisioner, etcdctl, flux, occm, registry
    from testenv.__main__ import main

    root = cache_all_but_flux()
    cached = [*map(flux.binary, flux.CONTROLLERS), registry.binary(), containerd.binary()]
    cached += [etcdctl.binary(), etcdctl.binary("etcdutl")]
    for path in [*cached, occm.binary(), occm.csi_binary(), csi_provisioner.binary()]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("cached")
    assert main(["build", "--all"]) == 0
    printed = capsys.readouterr().out.split()
    walk, *rest = build.suite_builds()
    assert walk[0] == "kubeadm" and rest
    assert printed == [
        str(containerd.binary()),
        str(etcdctl.binary()),
        str(build.release_program_path(*walk)),
        str(flux.flux_dir()),
        str(occm.binary()),
        str(occm.csi_binary()),
        str(csi_provisioner.binary()),
        *[str(build.release_program_path(n, r)) for n, r in rest],
        str(root),
    ]
    assert calls(fake_go) == []


def test_build_all_builds_the_flux_controllers_niced_under_their_own_keys(fake_go: Path) -> None:
    """``make test``'s background build makes containerd's registry code, Flux's controllers
    (and the OCI registry of the OCI chart source test) too, so that a fresh machine does
    not build them in the foreground when tests/plane/test_plane_flux.py starts; each under a key
    of its own wrapper (neither the plane's key nor another controller's: adding
    kustomize-controller did not rebuild the other two); OCCM right after Flux
    (tests/cloud/test_plane_occm.py: before, it was not in ``build --all`` and skipped in
    CI), then the Cinder CSI plugin of OCCM's wrapper (test_plane_openstack_cinder_csi)
    under OCCM's key, into OCCM's directory, and its csi-provisioner sidecar under a key of
    its own wrapper; etcdctl and etcdutl (of the plane's etcd release) right after
    containerd's code, under a key of their own wrapper."""
    from testenv import containerd, csi_provisioner, etcdctl, flux, occm, registry
    from testenv.__main__ import main

    root = cache_all_but_flux()
    assert flux.missing() == list(flux.CONTROLLERS)
    assert main(["build", "--all"]) == 0
    assert flux.missing() == []
    built = [*map(flux.binary, flux.CONTROLLERS), registry.binary()]
    for path in built:
        assert path.read_text() == "built by the double"
        assert path.parent.parent == flux.flux_dir() != root
    keys = {path.parent.name.rsplit("-", 1)[1] for path in built}
    assert len(keys) == len(built) and build.cache_key() not in keys
    ran = calls(fake_go)
    # containerd's registry code first (right after the plane), under its own key
    assert containerd.binary().read_text() == "built by the double"
    assert containerd.module_key() not in keys | {build.cache_key()}
    assert occm.binary().read_text() == "built by the double"
    assert occm.module_key() not in keys | {build.cache_key(), containerd.module_key()}
    assert occm.csi_binary().read_text() == "built by the double"
    assert occm.csi_binary().parent == occm.binary().parent
    assert csi_provisioner.binary().read_text() == "built by the double"
    assert etcdctl.binary().read_text() == etcdctl.binary("etcdutl").read_text()
    assert etcdctl.module_key() not in keys | {build.cache_key(), containerd.module_key()}
    assert csi_provisioner.module_key() not in keys | {build.cache_key(), occm.module_key()}
    expected_packages = [
        ".",
        etcdctl.ETCDUTL,
        etcdctl.ETCDCTL,
        *flux.CONTROLLERS.values(),
        registry.PACKAGE,
        occm.PACKAGE,
        occm.CSI_PACKAGE,
        csi_provisioner.PACKAGE,
    ]
    assert [c["args"][-1] for c in ran] == expected_packages  # type: ignore[index]
    expected = min(19, os.nice(0) + build.DEFAULT_NICENESS)
    assert {c["nice"] for c in ran} == {expected}


def test_build_all_builds_the_pinned_helm_first_as_tools_install_does(
    fake_go: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``build --all`` resolves the pinned helm before the plane, as ``scs-templates tools
    install`` does: with none on PATH or in the tools cache it builds helm from the
    product's wrapper, with the plane's compiler flags (the plane's Kubernetes programs then
    reuse its compiled packages: the Go build cache shares a package only between builds
    with the same flags); a helm that cannot be built stops the run with one line before the
    plane's first ``go``."""
    from scs_templates._core.cachedir import ENV_CACHE_DIR
    from scs_templates._tools.toolchain import pins
    from testenv.__main__ import main

    monkeypatch.delenv("SCS_TEMPLATES_HELM", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "product-cache"))
    assert main(["build", "--all"]) == 1
    ran = calls(fake_go)
    assert [c["args"][-1] for c in ran] == [pins.go_tool("helm").package]
    args: list[str] = ran[0]["args"]  # type: ignore[assignment]
    assert "-trimpath" in args
    assert args[args.index("-gcflags") + 1] == build.go_gcflags(quick=False)
    errors = capsys.readouterr().err.splitlines()
    assert errors[-1].startswith("testenv: the pinned helm: "), errors


def test_a_controller_s_key_is_its_own_wrapper_s(tmp_path: Path) -> None:
    """A changed wrapper changes that controller's key only."""
    from testenv import flux

    for name in ("a-controller", "b-controller"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "go.mod").write_text(f"module {name}\n")
    before = {name: flux.module_key(tmp_path / name) for name in ("a-controller", "b-controller")}
    (tmp_path / "a-controller" / "go.sum").write_text("x v1 h1:abc=\n")
    assert flux.module_key(tmp_path / "a-controller") != before["a-controller"]
    assert flux.module_key(tmp_path / "b-controller") == before["b-controller"]


#: What a test module calls when it needs a program that ``build --all`` makes after the plane.
LATER_BUILDS = re.compile(
    r"\b(build_kubeadm|build_kube_apiserver|build_release_program|flux_binaries"
    r"|containerd\.ensure_built|etcdctl\.ensure_built|occm_binary|csi_binary|provisioner_binary)\("
)


def test_the_modules_needing_later_builds_run_last() -> None:
    """A module that runs a program ``build --all`` makes after the plane is marked
    ``extra_builds`` (tests/conftest.py runs those last): else on a fresh machine it starts
    while the background build is still at the plane, and waits for it or builds in the
    foreground."""
    modules = [
        path
        for tier in ("plane", "cloud")  # the order of tests/conftest.py's TIERS
        for path in sorted(REPO.glob(f"tests/{tier}/test_*.py"))
        if LATER_BUILDS.search(path.read_text())
    ]
    assert "test_plane_flux.py" in {path.name for path in modules}
    # OCCM, the Cinder CSI plugin and its csi-provisioner sidecar come before the other
    # kubeadms and kube-apiservers in build_all: only the cloud tier runs them, so the
    # cloud tier, side by side with the plane groups, does not wait for the whole build
    cloud_builds = re.compile(r"\b(occm_binary|csi_binary|provisioner_binary)\(")
    needing_them = {p.parent.name for p in modules if cloud_builds.search(p.read_text())}
    assert needing_them == {"cloud"}, needing_them
    for path in modules:
        module = importlib.import_module(f"tests.{path.parent.name}.{path.stem}")
        marks = getattr(module, "pytestmark", [])
        assert "extra_builds" in {mark.name for mark in marks}, path.name


def test_the_suite_minors_are_every_supported_one() -> None:
    """Every minor the settings model supports is validated by its own kubeadm
    (tests/plane/test_plane_kubeadm_minors.py), built ahead by suite_builds()."""
    from tests.support.minors import supported_minors

    assert set(build.WORKLOAD_MINORS) == set(supported_minors())


def test_occm_builds_niced_under_its_own_key_with_upstream_s_version_flags(
    fake_go: Path,
) -> None:
    """``build --occm`` makes OCCM in its own cache directory, keyed by its own wrapper (not
    the plane's key: adding it rebuilt nothing of the plane), niced, with the version linker
    flags of upstream's Makefile, and the Cinder CSI plugin of the same wrapper next to it
    with the same flags; then the plugin's csi-provisioner sidecar under its own wrapper's
    key, with the version flag of upstream's release-tools."""
    from testenv import csi_provisioner, flux, occm, registry
    from testenv.__main__ import main

    cache_all_but_flux()
    for path in [*map(flux.binary, flux.CONTROLLERS), registry.binary()]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("cached")
    assert main(["build", "--occm"]) == 0
    assert occm.binary().read_text() == "built by the double"
    assert occm.binary().parent.parent == occm.occm_dir()
    assert occm.module_key() != build.cache_key()
    assert occm.csi_binary().read_text() == "built by the double"
    assert occm.csi_binary().parent == occm.binary().parent
    assert csi_provisioner.binary().read_text() == "built by the double"
    assert csi_provisioner.binary().parent.parent == csi_provisioner.provisioner_dir()
    assert csi_provisioner.module_key() not in {build.cache_key(), occm.module_key()}
    ran = calls(fake_go)
    packages = [occm.PACKAGE, occm.CSI_PACKAGE, csi_provisioner.PACKAGE]
    assert [c["args"][-1] for c in ran] == packages  # type: ignore[index]
    for call in ran:
        args = call["args"]
        assert isinstance(args, list)
        flags = args[args.index("-ldflags") + 1]
        if args[-1] == csi_provisioner.PACKAGE:
            assert flags == f"-s -w -X main.version={csi_provisioner.version()}"
        else:
            assert f"k8s.io/component-base/version.gitVersion={occm.version()}" in flags
            assert f"k8s.io/cloud-provider-openstack/pkg/version.Version={occm.version()}" in flags
        assert call["nice"] == min(19, os.nice(0) + build.DEFAULT_NICENESS)
    assert main(["build", "--occm"]) == 0 and len(calls(fake_go)) == 3  # cached


def _default_chart_file(release: str, name: str) -> Any:
    """A YAML file of the real chart (../shared/charts) the services catalogue installs as
    ``release`` at the default minor."""
    import tarfile

    import yaml

    from scs_templates._services.catalogue import default_version, service_info
    from scs_templates._versions import table
    from tests.support import real_charts

    info = service_info(release)
    chart_version = default_version(info, table().default_minor.minor)
    with tarfile.open(real_charts() / f"{info.chart}-{chart_version}.tgz") as tar:
        member = tar.extractfile(f"{info.chart}/{name}")
        assert member is not None
        return yaml.safe_load(member.read())


def test_occm_is_the_release_the_services_catalogue_deploys() -> None:
    """The OCCM and the Cinder CSI plugin built are the images of the charts the catalogue
    installs at the default minor (each chart's appVersion, from the real charts in
    ../shared/charts): one module release for both."""
    from testenv import occm

    for release in ("openstack-cloud-controller-manager", "openstack-cinder-csi"):
        chart = _default_chart_file(release, "Chart.yaml")
        assert chart["appVersion"] == occm.version() == "v1.36.0", release


def test_the_csi_provisioner_is_the_sidecar_the_cinder_csi_chart_runs() -> None:
    """The csi-provisioner built is the image tag of the Cinder CSI chart the catalogue
    installs at the default minor (its values, from the real chart in ../shared/charts), and
    the wrapper builds it with upstream's own ``replace`` lines (``k8s.io/*`` at v0.33.0)."""
    from testenv import csi_provisioner

    values = _default_chart_file("openstack-cinder-csi", "values.yaml")
    image = values["csi"]["provisioner"]["image"]
    assert image["repository"] == "registry.k8s.io/sig-storage/csi-provisioner"
    assert image["tag"] == csi_provisioner.version() == "v5.3.0"
    go_mod = (csi_provisioner.MODULE_DIR / "go.mod").read_text()
    assert "replace k8s.io/client-go => k8s.io/client-go v0.33.0" in go_mod


def test_align_asks_go_again_for_the_version_a_conflict_names(tmp_path: Path) -> None:
    """``go get`` refuses a version below what another module asked for requires;
    ``python -m testenv align`` asks again with the version go names, then tidies; an error
    that is no such conflict ends it with go's message. A ``go`` TEST DOUBLE: the real one
    would need the module proxy and a real conflict of the day."""
    from testenv import wrappers

    record = tmp_path / "calls"
    go = tmp_path / "go"
    go.write_text(
        f"#!{sys.executable}\nimport pathlib, sys\n"
        f"with pathlib.Path({str(record)!r}).open('a') as calls:\n"
        "    calls.write(' '.join(sys.argv[1:]) + '\\n')\n"
        "if 'b.io/y@v1.1.0' in sys.argv:\n"
        "    sys.exit('go: a.io/x@v2.0.0 requires b.io/y@v1.2.0, not b.io/y@v1.1.0')\n"
        "if 'c.io/z@v1.0.0' in sys.argv:\n"
        "    sys.exit('go: c.io/z@v1.0.0: 403 This module version is not available')\n"
    )
    go.chmod(0o755)
    wrappers._get(str(go), tmp_path, {"a.io/x": "v2.0.0", "b.io/y": "v1.1.0"})
    assert record.read_text().splitlines() == [
        "get a.io/x@v2.0.0 b.io/y@v1.1.0",
        "get a.io/x@v2.0.0 b.io/y@v1.2.0",
        "mod tidy -e",
    ]
    with pytest.raises(build.PlaneError, match="403 This module version is not available"):
        wrappers._get(str(go), tmp_path, {"c.io/z": "v1.0.0"})
