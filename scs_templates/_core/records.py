"""Frozen records: frozen dataclasses whose ``__repr__``, ``__eq__`` and ``__hash__`` are
shared functions instead of methods compiled for each class.

Why: ``dataclasses.dataclass`` writes every method of a class as source text and compiles it
(``exec``) while the module is imported; a frozen class gets six of them. On the path of one
``render`` 23 such classes cost about 1 ms of CPU each on the loaded 2-core machine
(docs/performance.md, "Start-up of every command"), a tenth of the Python side of the
command, although most renders never compare, hash or print one of them. :func:`record` lets
dataclasses generate only what depends on each class's fields and defaults (``__init__`` and
the frozen ``__setattr__``/``__delattr__``) and gives every record the same three functions
reading the field names dataclasses decided (``repr``, ``compare`` and ``hash`` of each
field as dataclasses weighs them). Everything else (``dataclasses.fields``, ``replace``,
``asdict``, ``__match_args__``, pickling, ``FrozenInstanceError``) is dataclasses' own.
``tests/unit/test_records.py`` compares a record with the plain frozen dataclass of the same
fields.

:func:`ordered_record` is the same for ``@dataclass(frozen=True, order=True)``: ``<``,
``<=``, ``>``, ``>=`` compare the tuples of the compared fields of two instances of the same
class, as dataclasses' generated methods do (another class: ``NotImplemented``).
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
import sys
import threading
from typing import TYPE_CHECKING, dataclass_transform

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _T = TypeVar("_T")


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


def _ordering(name: str, op: Callable[[Any, Any], bool]) -> Callable[[Any, object], Any]:
    def compare(self: Any, other: object) -> Any:
        cls: Any = self.__class__
        compared = cls.__record_compared__
        if other.__class__ is cls:
            return op(compared(self), compared(other))
        return NotImplemented

    compare.__name__ = compare.__qualname__ = name
    return compare


_ORDER = {
    name: _ordering(name, op)
    for name, op in (
        ("__lt__", operator.lt),
        ("__le__", operator.le),
        ("__gt__", operator.gt),
        ("__ge__", operator.ge),
    )
}


def _frozen_methods(
    cls: type, fields: list[dataclasses.Field[Any]], _globals: object
) -> tuple[Any, Any]:
    """A frozen class's ``__setattr__`` and ``__delattr__`` as dataclasses writes them
    (``_frozen_get_del_attr`` of Python 3.10-3.12: refuse for an instance of the class
    itself or for a field's name, else the parent's method), made as closures instead of
    two pieces of source text compiled with ``exec`` for every class: ~0.25 ms of a
    record's ~0.4 ms of CPU at import, ~4 ms of a ``validate``, ~6 ms of a ``render``
    (issue #19). Python 3.13 compiles all of a class's methods in one ``exec`` and is left
    alone."""
    names = frozenset(f.name for f in fields)
    owner: Any = cls  # for super(): mypy narrows ``cls`` after the ``type(self) is cls`` test

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is owner or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(owner, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is owner or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(owner, self).__delattr__(name)

    return __setattr__, __delattr__


#: dataclasses' maker of the frozen methods where :func:`_frozen_methods` takes its place
#: while a record is made (same signature and result on these versions), else None.
_DATACLASSES_FROZEN = (
    getattr(dataclasses, "_frozen_get_del_attr", None) if sys.version_info < (3, 13) else None
)
_making = threading.Lock()


def _frozen_dataclass(cls: type[_T]) -> type[_T]:
    """``dataclass(frozen=True, repr=False, eq=False)``, its two frozen methods made by
    :func:`_frozen_methods` (for the time of the call, under a lock; a plain dataclass made
    by another thread meanwhile gets the same behaviour)."""
    make = dataclasses.dataclass(frozen=True, repr=False, eq=False)
    if _DATACLASSES_FROZEN is None:
        return make(cls)
    with _making:
        dataclasses._frozen_get_del_attr = _frozen_methods  # type: ignore[attr-defined]
        try:
            return make(cls)
        finally:
            dataclasses._frozen_get_del_attr = _DATACLASSES_FROZEN  # type: ignore[attr-defined]


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(cls: type[_T]) -> type[_T]:
    """``@dataclass(frozen=True)`` with shared ``__repr__``, ``__eq__`` and ``__hash__``
    (a ``__repr__`` the class defines itself is kept, as dataclasses keeps it; a class
    defining its own equality or hash is refused: use a plain dataclass for it)."""
    own = cls.__dict__
    if "__eq__" in own or "__hash__" in own:
        raise TypeError(f"{cls.__qualname__} defines __eq__ or __hash__: not a record")
    made = _frozen_dataclass(cls)
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


@dataclass_transform(frozen_default=True, order_default=True, field_specifiers=(dataclasses.field,))
def ordered_record(cls: type[_T]) -> type[_T]:
    """:func:`record` with the order of ``@dataclass(frozen=True, order=True)`` (a class
    defining one of the four comparisons itself is refused, as dataclasses refuses it)."""
    own = [name for name in _ORDER if name in cls.__dict__]
    if own:
        raise TypeError(f"{cls.__qualname__} defines {own[0]}: not an ordered record")
    made = record(cls)
    for name, compare in _ORDER.items():
        setattr(made, name, compare)
    return made
