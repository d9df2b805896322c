"""The fast path of settings validation in a fresh interpreter: a valid file is loaded without
building any pydantic validator or importing ``importlib.metadata`` (what the fast path
accepts and builds: tests/unit/test_settings_fastpath.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.support import EXAMPLES

# --------------------------------------------------------------------------- what it saves


def test_a_valid_file_builds_no_pydantic_validator() -> None:
    """Neither the validators nor pydantic's plugin loader (``importlib.metadata``)."""
    code = (
        "import sys\n"
        "from scs_templates.settings import load_settings\n"
        "from scs_templates.settings import model\n"
        f"load_settings({str(EXAMPLES[0])!r})\n"
        "built = [n for n, c in vars(model).items() if isinstance(c, type)"
        " and issubclass(c, model.BaseModel) and c.__pydantic_complete__]\n"
        "print(built, 'importlib.metadata' in sys.modules,"
        " 'pydantic.plugin._loader' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["[]", "False", "False"]
