"""The OpenStack services start from bytecode: their venv holds a current ``.pyc`` of every
module.

CI sets ``PYTHONDONTWRITEBYTECODE``, so a service never writes what it compiles: without the
bytecode written when the venv is built (:func:`tests.support.openstack_stack.compile_bytecode`)
every Keystone, Neutron, Nova, Cinder, Octavia, Placement and Glance process, and every
``*-manage`` run, compiled its imports from source again (2.5-5 CPU s each; ~35 such processes
in a run). Found when the cached venv, used by every run, held 16,614 modules and no
``.pyc``.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import struct
from pathlib import Path

from tests.support import skip_or_fail
from tests.support.openstack_stack import BYTECODE_MARKER, StackError, stack_venv


def stale_bytecode(source: Path) -> str | None:
    """Why ``source`` has no current timestamp-checked ``.pyc`` (None when it has one)."""
    cached = Path(importlib.util.cache_from_source(str(source)))
    try:
        header = cached.read_bytes()[:16]
    except FileNotFoundError:
        return "no .pyc"
    if header[:4] != importlib.util.MAGIC_NUMBER:
        return "another Python's .pyc"
    flags, mtime, size = struct.unpack("<3I", header[4:16])
    stat = os.stat(source)
    if flags != 0 or mtime != int(stat.st_mtime) & 0xFFFFFFFF or size != stat.st_size & 0xFFFFFFFF:
        return "a .pyc of another version of the file"
    return None


def test_every_module_of_the_stack_venv_has_current_bytecode() -> None:
    try:
        venv = stack_venv()
    except StackError as error:
        skip_or_fail(f"the OpenStack stack venv could not be built: {error}")
        return
    assert (venv / BYTECODE_MARKER).is_file()
    sources = sorted((venv / "lib").rglob("*.py"))
    assert len(sources) > 10_000, f"{venv}: {len(sources)} modules, expected the services'"
    stale = [f"{s.relative_to(venv)}: {why}" for s in sources if (why := stale_bytecode(s))]
    assert not stale, f"{len(stale)} of {len(sources)} modules lack bytecode, e.g. {stale[:5]}"


def test_a_module_without_bytecode_is_found(tmp_path: Path) -> None:
    """The check itself can fail: a module never compiled, and one changed after."""
    module = tmp_path / "m.py"
    module.write_text("x = 1\n")
    assert stale_bytecode(module) == "no .pyc"
    py_compile.compile(str(module))
    assert stale_bytecode(module) is None
    module.write_text("x = 22\n")
    assert stale_bytecode(module) == "a .pyc of another version of the file"
