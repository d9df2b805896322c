"""Frozen records: frozen dataclasses whose ``__repr__``, ``__eq__`` and ``__hash__`` are
shared functions instead of methods compiled for each class.

Why: ``dataclasses.dataclass`` writes every method of a class as source text and compiles
it (``exec``) while the module is imported; a frozen class gets six of them. On the path of
one ``render`` 23 such classes cost about 1 ms of CPU each on the loaded 2-core machine
(docs/performance.md, case 6), a tenth of the Python side of the command, although most
renders never compare, hash or print one of them. :func:`record` lets dataclasses generate
only what depends on each class's fields and defaults (``__init__`` and the frozen
``__setattr__``/``__delattr__``) and gives every record the same three functions reading
the field names dataclasses decided (``repr``, ``compare`` and ``hash`` of each field as
dataclasses weighs them). Everything else (``dataclasses.fields``, ``replace``, ``asdict``,
``__match_args__``, pickling, ``FrozenInstanceError``) is dataclasses' own.
``tests/test_records.py`` compares a record with the plain frozen dataclass of the same
fields.

Classes with ``order=True`` stay plain dataclasses (their comparison methods would need
the same treatment, and only two of them are on the path).
"""

from __future__ import annotations

import dataclasses
import reprlib

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_options: object) -> Callable[[object], object]:
        """typing's decorator only tells type checkers that ``record`` makes dataclasses;
        at run time it would only set ``__dataclass_transform__``, and importing typing for
        it costs every command (``tests/test_cli.py::test_commands_import_no_typing``)."""
        return lambda function: function


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """The tuple of those attributes, as the generated methods build it."""
    return lambda obj: tuple(getattr(obj, name) for name in names)


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    cls = self.__class__
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in cls.__record_repr__)
    return f"{cls.__qualname__}({shown})"


def _eq(self: Any, other: object) -> Any:
    cls: Any = self.__class__
    compared = cls.__record_compared__
    if other.__class__ is cls:
        return compared(self) == compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(type(self).__record_hashed__(self))


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(cls: type[_T]) -> type[_T]:
    """``@dataclass(frozen=True)`` with shared ``__repr__``, ``__eq__`` and ``__hash__``
    (a ``__repr__`` the class defines itself is kept, as dataclasses keeps it; a class
    defining its own equality or hash is refused: use a plain dataclass for it)."""
    own = cls.__dict__
    if "__eq__" in own or "__hash__" in own:
        raise TypeError(f"{cls.__qualname__} defines __eq__ or __hash__: not a record")
    made = dataclasses.dataclass(frozen=True, repr=False, eq=False)(cls)
    fields = dataclasses.fields(made)  # type: ignore[arg-type]
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    made.__record_repr__ = tuple(f.name for f in fields if f.repr)  # type: ignore[attr-defined]
    made.__record_compared__ = staticmethod(  # type: ignore[attr-defined]
        _getter(tuple(f.name for f in fields if f.compare))
    )
    made.__record_hashed__ = staticmethod(_getter(hashed))  # type: ignore[attr-defined]
    if "__repr__" not in own:
        made.__repr__ = _repr  # type: ignore[method-assign]
    made.__eq__ = _eq  # type: ignore[method-assign]
    made.__hash__ = _hash  # type: ignore[method-assign]
    return made
