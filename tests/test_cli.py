"""The CLI contract: version, help, exit codes, and lazy heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from scs_templates import __version__
from scs_templates.cli.main import main
from tests.support import EXAMPLES

HEAVY = ("kubernetes", "openstack", "keystoneauth1")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"scs-templates {__version__}\n"


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: scs-templates" in capsys.readouterr().err


def test_unknown_option_exits_2() -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate", "--no-such-option", "x.yaml"])
    assert exited.value.code == 2


def _modules_after(args: list[str]) -> set[str]:
    """Run the CLI in a fresh interpreter and list the top-level modules it imported."""
    code = (
        "import json, sys\n"
        "from scs_templates.cli.main import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stdout.flush()\n"
        "print('\\nMODULES=' + json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    line = result.stdout.rsplit("MODULES=", 1)[1]
    return set(json.loads(line))


@pytest.mark.parametrize(
    "args",
    [["--help"], ["validate", str(EXAMPLES[0])], ["schema"]],
    ids=["help", "validate", "schema"],
)
def test_heavy_imports_stay_lazy(args: list[str]) -> None:
    loaded = _modules_after(args)
    assert not loaded & set(HEAVY), f"{args} imported {sorted(loaded & set(HEAVY))}"


def test_help_does_not_import_pydantic() -> None:
    assert "pydantic" not in _modules_after(["--help"])
