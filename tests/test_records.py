"""scs_templates.records: a record behaves as the plain frozen dataclass of the same fields."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scs_templates.records import record


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


_LIST_PLAIN = """
import dataclasses, sys
import scs_templates.cli.cmd_render, scs_templates.render, scs_templates.settings.validate
for module_name, module in sorted(sys.modules.items()):
    if not module_name.startswith("scs_templates."):
        continue
    for value in vars(module).values():
        if (isinstance(value, type) and value.__module__ == module_name
                and dataclasses.is_dataclass(value) and not hasattr(value, "__record_repr__")
                and not value.__dataclass_params__.order):
            print(module_name, value.__qualname__)
"""


def test_the_render_path_compiles_no_dataclass_methods_but_for_ordered_classes() -> None:
    """Regression guard for the import cost (docs/performance.md): every dataclass of the
    modules a fresh `render` or `validate` imports is a record, except those with order=True."""
    done = subprocess.run(
        [sys.executable, "-c", _LIST_PLAIN], capture_output=True, text=True, check=True
    )
    assert done.stdout == "", "use scs_templates.records.record for these"
