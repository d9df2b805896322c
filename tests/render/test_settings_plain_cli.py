"""The plain settings objects in a fresh interpreter: the CLI's render and validate of a valid
file import no pydantic, while an invalid file still gets pydantic's FILE:LINE:COL errors
(the objects themselves: tests/unit/test_settings_plain.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import EXAMPLES


@pytest.mark.parametrize("command", ["render", "validate", "values"])
def test_the_cli_happy_path_imports_no_pydantic(command: str, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from scs_templates._cli.main import main\n"
        f"code = main([{command!r}, {str(EXAMPLES[0])!r}])\n"
        "print(code, sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'),"
        " 'scs_templates._settings.model' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stderr.split()[-3:] == ["0", "[]", "False"], done.stderr


def test_an_invalid_file_still_gets_pydantic_errors_with_positions(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    text = EXAMPLES[0].read_text()
    bad.write_text(text.replace("name:", "name: Not_A_Label #", 1))
    done = subprocess.run(
        [sys.executable, "-m", "scs_templates._cli.main", "validate", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    line = done.stderr.strip().splitlines()[0]
    file, row, column, rest = line.split(":", 3)
    assert file == str(bad) and int(row) > 0 and int(column) > 0 and "metadata.name" in rest
