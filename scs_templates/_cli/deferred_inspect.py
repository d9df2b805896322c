"""``dataclasses`` without ``inspect`` at start-up (issue #19: the CPU of one ``render``).

``dataclasses`` imports ``inspect`` (with ``ast``, ``dis``, ``tokenize``, ``linecache``) at
its top, about 12 ms of CPU on the 2-core machine and the largest single import left on the
path of ``render`` and ``validate`` (docs/performance.md, "Start-up of every command"). It
uses it for one thing only: ``inspect.signature(cls)``, to write the ``__doc__`` of a
dataclass that has no docstring of its own. Every dataclass on those paths has a docstring,
so the CLI imports ``dataclasses`` through :func:`import_dataclasses` before any command
module: while ``dataclasses`` runs, ``sys.modules["inspect"]`` is
:class:`_InspectOnFirstUse`, which ``dataclasses`` keeps as its ``inspect``; right after,
the stand-in is gone from ``sys.modules``, so every other ``import inspect`` is the ordinary
one. The first attribute ``dataclasses`` asks of it (a class without a docstring) imports
the real ``inspect``, an ordinary import (thread-safe under the import lock), and hands it
over, so the result is the same as it would have been.
``tests/render/test_deferred_inspect.py`` proves that (the ``__doc__`` of a class without a
docstring, threads, ``inspect`` being the real module afterwards);
``tests/render/test_cli.py`` that ``render`` and ``validate`` import no ``inspect``.

Only the CLI does this (a library caller's process is left as it is); nothing happens when
``dataclasses`` or ``inspect`` is already imported.
"""

from __future__ import annotations

import sys
import types

__all__ = ["import_dataclasses"]


class _InspectOnFirstUse(types.ModuleType):
    """``dataclasses``' ``inspect`` until it first needs it: then the real module."""

    def __getattr__(self, name: str) -> object:
        import importlib  # deferred: importlib

        if sys.modules.get("inspect") is self:  # asked while dataclasses was still running
            del sys.modules["inspect"]
        real = importlib.import_module("inspect")
        dataclasses = sys.modules.get("dataclasses")
        if dataclasses is not None and dataclasses.__dict__.get("inspect") is self:
            dataclasses.inspect = real  # type: ignore[attr-defined]
        return getattr(real, name)


def import_dataclasses() -> None:
    """Import ``dataclasses`` with ``inspect`` deferred to its first use (see the module)."""
    if "dataclasses" in sys.modules or "inspect" in sys.modules:
        return
    stand_in = _InspectOnFirstUse("inspect")
    sys.modules["inspect"] = stand_in
    try:
        # deferred: dataclasses
        import dataclasses  # noqa: F401
    finally:
        if sys.modules.get("inspect") is stand_in:
            del sys.modules["inspect"]
