"""scs_templates._core.records in a fresh interpreter: the modules ``render`` and ``validate``
import define no plain dataclass (the record behaviour itself: tests/unit/test_records.py)."""

from __future__ import annotations

import subprocess
import sys

_LIST_PLAIN = """
import dataclasses, sys
import scs_templates._cli.cmd_render, scs_templates._render.render, scs_templates._settings.validate
for module_name, module in sorted(sys.modules.items()):
    if not module_name.startswith("scs_templates."):
        continue
    for value in vars(module).values():
        if (isinstance(value, type) and value.__module__ == module_name
                and dataclasses.is_dataclass(value) and not hasattr(value, "__record_repr__")):
            print(module_name, value.__qualname__)
"""


def test_the_render_path_compiles_no_dataclass_methods_but_init() -> None:
    """Import cost guard (docs/performance.md "Start-up of every command"): every dataclass of the
    modules a fresh `render` or `validate` imports is a record (an ordered one for order)."""
    done = subprocess.run(
        [sys.executable, "-c", _LIST_PLAIN], capture_output=True, text=True, check=True
    )
    assert done.stdout == "", "use scs_templates._core.records.record (ordered_record) for these"
