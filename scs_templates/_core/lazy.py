"""Names a package exports but imports on first use (PEP 562): one mechanism for every package.

A package's ``__init__`` re-exports names of its submodules so that callers import them from
one place; importing those submodules up front would make every command pay for what only a
few need (the settings model and pydantic, openstacksdk's callers, the helmfile runner, the
tool installer), and render and validate import these packages. So the package lists where
each such name lives and takes its module-level ``__getattr__`` and ``__dir__`` from
:func:`exports`: the first use of a name imports its submodule and keeps the value in the
package, so every later use is a plain attribute read.

Type checkers read the same names from the package's ``if TYPE_CHECKING:`` imports and its
``__all__``; ``tests/render/test_lazy.py`` fails when those, the table and the submodules disagree,
or when a package writes its own ``__getattr__`` again.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["exports"]


def exports(
    package: str, homes: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` (its ``__name__``); ``homes`` maps each
    submodule, relative to the package, to the names it exports through it."""
    where = {name: f"{package}.{module}" for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        home = where.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
