"""scs_templates._core.records: a record behaves as the plain frozen dataclass of the same
fields."""

from __future__ import annotations

import dataclasses
import pickle
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scs_templates._core import records
from scs_templates._core.records import ordered_record, record


@record
class Rec:
    """A record."""

    name: str
    count: int = 0
    tags: tuple[str, ...] = ()
    hidden: str = field(default="h", repr=False)
    ignored: int = field(default=0, compare=False)
    unhashed: int = field(default=0, hash=False)


@dataclass(frozen=True)
class Plain:
    """The same fields as a plain frozen dataclass."""

    name: str
    count: int = 0
    tags: tuple[str, ...] = ()
    hidden: str = field(default="h", repr=False)
    ignored: int = field(default=0, compare=False)
    unhashed: int = field(default=0, hash=False)


values = st.tuples(
    st.text(max_size=5),
    st.integers(-3, 3),
    st.lists(st.sampled_from(["a", "b"]), max_size=2).map(tuple),
    st.sampled_from(["h", "x"]),
    st.integers(0, 2),
    st.integers(0, 2),
)


@given(values, values)
def test_a_record_compares_hashes_and_prints_as_the_dataclass(a: Any, b: Any) -> None:
    ra, rb, pa, pb = Rec(*a), Rec(*b), Plain(*a), Plain(*b)
    assert (ra == rb) is (pa == pb)
    assert (ra != rb) is (pa != pb)
    assert hash(ra) == hash(pa)  # the same tuple of the same fields is hashed
    assert repr(ra) == repr(pa).replace("Plain(", "Rec(", 1)
    assert (ra == pa) is False  # type: ignore[comparison-overlap]  # another class: NotImplemented both ways, then identity
    assert ra.__eq__(pa) is NotImplemented


def test_what_dataclasses_provide_still_works() -> None:
    one = Rec("a", 1, ("x",))
    assert dataclasses.is_dataclass(one)
    assert [f.name for f in dataclasses.fields(one)] == [f.name for f in dataclasses.fields(Plain)]
    assert dataclasses.replace(one, count=2) == Rec("a", 2, ("x",))
    assert dataclasses.asdict(one) == dataclasses.asdict(Plain("a", 1, ("x",)))
    assert Rec.__match_args__ == Plain.__match_args__
    assert pickle.loads(pickle.dumps(one)) == one
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.count = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del one.name
    assert {one, Rec("a", 1, ("x",))} == {one}


@ordered_record
class Ordered:
    """An ordered record."""

    line: int = 0
    name: str = ""
    ignored: int = field(default=0, compare=False)


@dataclass(frozen=True, order=True)
class PlainOrdered:
    """The same fields as a plain ordered frozen dataclass."""

    line: int = 0
    name: str = ""
    ignored: int = field(default=0, compare=False)


ordered_values = st.tuples(st.integers(0, 3), st.sampled_from(["", "a", "b"]), st.integers(0, 2))


@given(ordered_values, ordered_values)
def test_an_ordered_record_orders_as_the_ordered_dataclass(a: Any, b: Any) -> None:
    ra, rb, pa, pb = Ordered(*a), Ordered(*b), PlainOrdered(*a), PlainOrdered(*b)
    assert ((ra < rb), (ra <= rb), (ra > rb), (ra >= rb)) == (
        (pa < pb),
        (pa <= pb),
        (pa > pb),
        (pa >= pb),
    )
    assert (ra == rb) is (pa == pb) and hash(ra) == hash(pa)
    assert [x.ignored for x in sorted([ra, rb])] == [x.ignored for x in sorted([pa, pb])]
    for ours, theirs in ((ra, pa), (pa, ra)):
        with pytest.raises(TypeError, match="not supported between instances"):
            ours < theirs  # type: ignore[operator]  # noqa: B015
    assert ra.__lt__(pa) is NotImplemented


def test_an_ordered_record_refuses_its_own_comparison() -> None:
    with pytest.raises(TypeError, match="not an ordered record"):

        @ordered_record
        class Own:
            """Orders itself."""

            x: int

            def __lt__(self, other: object) -> bool:
                return True


def _refusal(action: Any) -> str:
    with pytest.raises(dataclasses.FrozenInstanceError) as refused:
        action()
    return str(refused.value)


def test_frozen_as_dataclasses_makes_it_without_compiling() -> None:
    """A record's __setattr__/__delattr__ (records._frozen_methods: closures, not two
    exec'd functions per class, issue #19) refuse what dataclasses' own refuse, with the
    same messages, and let a subclass that is not a dataclass set its own attributes."""
    rec, plain = Rec("a"), Plain("a")
    for obj in (rec, plain):
        assert _refusal(lambda o=obj: setattr(o, "count", 1)) == "cannot assign to field 'count'"
        assert _refusal(lambda o=obj: setattr(o, "other", 1)) == "cannot assign to field 'other'"
        assert _refusal(lambda o=obj: delattr(o, "name")) == "cannot delete field 'name'"

    class Sub(Rec):
        """Not a dataclass itself."""

    class PlainSub(Plain):
        """The same for the dataclass."""

    for sub in (Sub("s"), PlainSub("s")):
        sub.extra = 1  # type: ignore[attr-defined]
        del sub.extra  # type: ignore[attr-defined]
        assert _refusal(lambda o=sub: setattr(o, "count", 2)) == "cannot assign to field 'count'"
    frozen_sub = dataclass(frozen=True)(type("FrozenSub", (Rec,), {"__doc__": "x"}))
    assert frozen_sub("f").name == "f"
    assert Rec.__setattr__.__qualname__ == "Rec.__setattr__"
    if sys.version_info < (3, 13):
        assert Rec.__setattr__.__code__.co_filename == records.__file__
        assert Rec.__delattr__.__code__.co_filename == records.__file__
    assert Plain.__setattr__.__code__.co_filename != records.__file__


def test_dataclasses_own_maker_is_back_after_a_record_even_a_refused_one() -> None:
    original = getattr(dataclasses, "_frozen_get_del_attr", None)
    with pytest.raises(TypeError, match="non-default argument"):

        @record
        class Bad:
            """A field without a default after one with a default."""

            a: int = 0
            b: int  # type: ignore[misc]

    assert getattr(dataclasses, "_frozen_get_del_attr", None) is original

    @dataclass(frozen=True)
    class After:
        """A plain frozen dataclass made afterwards compiles its own methods."""

        a: int = 0

    assert After.__setattr__.__code__.co_filename != records.__file__


def test_a_recursive_repr_is_cut_as_dataclasses_cuts_it() -> None:
    holder: list[Any] = []
    rec, plain = Rec("r", tags=(holder,)), Plain("r", tags=(holder,))  # type: ignore[arg-type]
    holder.append(rec)
    assert repr(rec) == "Rec(name='r', count=0, tags=([...],), ignored=0, unhashed=0)"
    holder[0] = plain
    assert repr(plain) == "Plain(name='r', count=0, tags=([...],), ignored=0, unhashed=0)"


def test_own_repr_is_kept_and_own_equality_refused() -> None:
    @record
    class Shown:
        """Prints itself."""

        x: int

        def __repr__(self) -> str:
            return "shown"

    assert repr(Shown(1)) == "shown"
    with pytest.raises(TypeError, match="not a record"):

        @record
        class Equal:
            """Compares itself."""

            x: int

            def __eq__(self, other: object) -> bool:
                return True
