"""The public library API: importing it stays light, and the docs' example tool really
works (its names are pinned by tests/unit/test_public_api.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support import REPO, skip_or_fail


def test_importing_the_api_stays_light() -> None:
    code = (
        "import sys, scs_templates.api\n"
        "print(sorted(m for m in ('kubernetes', 'openstack') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "[]"


def test_the_documented_example_tool_runs(tmp_path: Path) -> None:
    from scs_templates._core.errors import ToolNotFoundError
    from scs_templates._tools.toolchain.resolve import find_helm

    try:
        find_helm()
    except ToolNotFoundError as error:
        skip_or_fail(f"helm not installed: {error}")
    text = (REPO / "docs" / "library.md").read_text()
    section = text.split("## Example: another tool embedding scs-templates", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code, "docs/library.md lost its example"
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "docs/library.md", "exec"), namespace)
    generate = namespace["generate"]
    assert callable(generate)
    assert generate(REPO / "examples", tmp_path) == 0
    written = sorted(p.relative_to(tmp_path).parts[:2] for p in tmp_path.glob("*/*"))
    assert ("default", "demo") in written
    assert ("team-a", "prod1") in written
    assert list((tmp_path / "default" / "demo").glob("*.yaml"))
