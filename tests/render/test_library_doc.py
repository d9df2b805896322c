"""docs/library.md's examples run: every ``pycon`` block is a doctest, run here in order
(one namespace, as a reader types them) in a folder whose ``cluster.yaml`` is
examples/openstack-minimal.yaml. The ``python`` example tool is run by tests/render/test_api.py."""

from __future__ import annotations

import doctest
import re
import shutil
from pathlib import Path

import pytest

from tests.support import REPO, skip_or_fail

LIBRARY_MD = REPO / "docs" / "library.md"
BLOCK = re.compile(r"^```(pycon|python)\n(.*?)^```", re.S | re.M)


def test_library_md_examples_run_as_doctests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scs_templates._core.errors import ToolNotFoundError
    from scs_templates._tools.toolchain.resolve import find_helm

    try:
        find_helm()
    except ToolNotFoundError as error:
        skip_or_fail(f"helm not installed: {error}")
    shutil.copy(REPO / "examples" / "openstack-minimal.yaml", tmp_path / "cluster.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    text = LIBRARY_MD.read_text(encoding="utf-8")
    blocks = [
        (m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in BLOCK.finditer(text)
    ]
    assert [kind for kind, _, _ in blocks].count("python") == 1, "only the example tool is python"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    namespace: dict[str, object] = {}
    tests = 0
    for kind, code, line in blocks:
        if kind != "pycon":
            continue
        test = parser.get_doctest(code, namespace, f"library.md:{line}", str(LIBRARY_MD), line)
        tests += len(test.examples)
        runner.run(test, out=report.append, clear_globs=False)
        namespace = test.globs  # DocTest copies its globals: the next block goes on from here
    assert tests >= 10
    assert runner.failures == 0, "".join(report)
    assert (tmp_path / "out" / "01-cluster-demo.yaml").is_file()


def test_library_md_names_only_what_the_api_exports() -> None:
    from scs_templates import api

    text = LIBRARY_MD.read_text(encoding="utf-8")
    named = set(re.findall(r"\bapi\.([A-Za-z_][A-Za-z0-9_]*)", text))
    assert named, "docs/library.md lost its api.NAME references"
    assert sorted(name for name in named if name not in api.__all__) == []
