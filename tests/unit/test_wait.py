"""One poll loop (``lifecycle.wait.poll``): the waits of the services and the source that
holds no other deadline loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from scs_templates._core.errors import ToolError
from scs_templates._services.deploy import _deployed_releases
from scs_templates._tools.helm import HelmError
from scs_templates._tools.kube.workload_kubeconfig import wait_for_workload_kubeconfig
from tests.support import REPO

PACKAGE = REPO / "scs_templates"
THE_LOOP = PACKAGE / "_tools" / "kube" / "wait.py"


def _deadline_loops(tree: ast.AST) -> Iterator[int]:
    """Lines of ``while`` loops that read ``time.monotonic()`` or call ``time.sleep``: a
    deadline poll written by hand."""
    for loop in ast.walk(tree):
        if not isinstance(loop, ast.While):
            continue
        for node in ast.walk(loop):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "time"
                and node.func.attr in {"monotonic", "sleep"}
            ):
                yield loop.lineno
                break


#: Deadline loops that poll nothing: helm's output read in one-second steps for the progress
#: tick of ``tools install`` and long helm calls (the process is waited for, not a cluster).
NOT_POLLS = (PACKAGE / "_core" / "process.py",)


def test_no_poll_loop_outside_lifecycle_wait() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in (THE_LOOP, *NOT_POLLS)
        for line in _deadline_loops(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "poll through scs_templates._tools.kube.wait.poll instead"


def test_the_loop_finder_finds_one() -> None:
    assert list(_deadline_loops(ast.parse(THE_LOOP.read_text(encoding="utf-8")))) != []
    assert list(_deadline_loops(ast.parse("while x:\n    y()\n"))) == []


class _Kube:
    """Answers ``cluster_kubeconfig`` with None ``misses`` times, then the text."""

    def __init__(self, misses: int) -> None:
        self.misses = misses
        self.reads = 0

    def cluster_kubeconfig(self, namespace: str, cluster: str) -> str | None:
        self.reads += 1
        return None if self.reads <= self.misses else f"kubeconfig of {namespace}/{cluster}"


def test_the_workload_kubeconfig_is_waited_for() -> None:
    kube = _Kube(misses=2)
    lines: list[str] = []
    text = wait_for_workload_kubeconfig(
        kube,  # type: ignore[arg-type]
        "ns",
        "c1",
        timeout=60,
        poll_interval=0.001,
        progress=lines.append,
    )
    assert text == "kubeconfig of ns/c1"
    assert kube.reads == 3
    assert [line.split(" [")[0] for line in lines] == ["waiting for Secret ns/c1-kubeconfig"] * 2


def test_a_missing_workload_kubeconfig_times_out_naming_the_secret() -> None:
    lines: list[str] = []
    with pytest.raises(ToolError, match=r"Secret ns/c1-kubeconfig did not appear within 0 s"):
        wait_for_workload_kubeconfig(
            _Kube(misses=99),  # type: ignore[arg-type]
            "ns",
            "c1",
            timeout=0,
            poll_interval=0.001,
            progress=lines.append,
        )
    assert lines == []  # the read that timed out says nothing


class _Helm:
    """``helm list`` that fails ``failures`` times, then lists one catalogue release."""

    kubeconfig = "/dev/null"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: list[list[str]] = []

    def run(self, args: list[str], *, what: str) -> object:
        self.calls.append(args)
        if len(self.calls) <= self.failures:
            raise HelmError("connection refused", command=args, returncode=1, stderr="")
        row = (
            '[{"name": "metrics-server", "namespace": "kube-system", "revision": "1",'
            ' "status": "deployed", "chart": "metrics-server-3.12.2", "app_version": ""},'
            ' {"name": "other", "namespace": "default", "revision": "1", "status": "deployed",'
            ' "chart": "other-1.0.0", "app_version": ""}]'
        )
        return type("Completed", (), {"stdout": row})()


def test_deployed_releases_wait_for_the_workload_api() -> None:
    helm = _Helm(failures=2)
    lines: list[str] = []
    found = _deployed_releases(
        helm,  # type: ignore[arg-type]
        timeout=60,
        poll_interval=0.001,
        progress=lines.append,
    )
    assert sorted(found) == ["metrics-server"]
    assert len(helm.calls) == 3
    assert helm.calls[0][-2:] == ["--kubeconfig", "/dev/null"]
    assert [line.split(" [")[0] for line in lines] == ["waiting for the workload cluster's API"] * 2


def test_an_unanswering_workload_api_times_out_with_helms_error() -> None:
    lines: list[str] = []
    with pytest.raises(ToolError, match=r"did not answer within 0 s: connection refused"):
        _deployed_releases(
            _Helm(failures=99),  # type: ignore[arg-type]
            timeout=0,
            poll_interval=0.001,
            progress=lines.append,
        )
    assert lines == []
