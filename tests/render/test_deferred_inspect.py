"""cli.deferred_inspect: dataclasses imported without inspect, the same dataclasses after.

Each case runs in a fresh interpreter (the test process has imported inspect long ago)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_DOCLESS = """
import dataclasses, json, sys
@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: "list[str]" = dataclasses.field(default_factory=list)
    z: float = 1.5
"""


def _fresh(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


_DEFER = (
    "from scs_templates._cli.deferred_inspect import import_dataclasses; import_dataclasses()\n"
)
_REPORT = (
    "real = sys.modules['inspect']\n"
    "print(json.dumps({'doc': Point.__doc__, 'real': hasattr(real, 'signature') and "
    "type(real).__name__ == 'module' and real.__file__.endswith('inspect.py'), "
    "'handed_over': dataclasses.inspect is real, 'eq': Point(1) == Point(1)}))\n"
)


def test_dataclasses_is_imported_without_inspect() -> None:
    loaded = _fresh(
        _DEFER + "import sys, json, dataclasses\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class Documented:\n"
        "    '''A docstring: dataclasses asks inspect nothing.'''\n"
        "    x: int = 0\n"
        "assert Documented(1) != Documented(2)\n"
        "print(json.dumps([m for m in ('inspect', 'ast', 'dis', 'tokenize') if m in sys.modules]))"
    )
    assert loaded == []


def test_a_class_without_a_docstring_gets_the_same_doc() -> None:
    """The first use imports the real inspect and hands it to dataclasses: the generated
    ``__doc__`` (inspect.signature's text) is the one of an ordinary interpreter."""
    ordinary = _fresh(_DOCLESS + _REPORT)
    deferred = _fresh(_DEFER + _DOCLESS + _REPORT)
    assert ordinary["doc"] == "Point(x: int, y: 'list[str]' = <factory>, z: float = 1.5)"
    assert deferred == ordinary == {**ordinary, "real": True, "handed_over": True, "eq": True}


def test_threads_making_classes_at_once() -> None:
    """The stand-in imports inspect by an ordinary import (the import lock): eight threads
    creating undocumented dataclasses at the same moment all get the same ``__doc__``."""
    code = (
        _DEFER + "import dataclasses, json, sys, threading\n"
        "barrier = threading.Barrier(8); docs = []\n"
        "def make():\n"
        "    barrier.wait()\n"
        "    @dataclasses.dataclass\n"
        "    class C:\n"
        "        a: int = 1\n"
        "    docs.append(C.__doc__)\n"
        "threads = [threading.Thread(target=make) for _ in range(8)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(json.dumps({'docs': sorted(set(docs)), 'n': len(docs),"
        " 'real': dataclasses.inspect is sys.modules['inspect']}))"
    )
    assert _fresh(code) == {"docs": ["C(a: int = 1)"], "n": 8, "real": True}


@pytest.mark.parametrize("first", ["dataclasses", "inspect"])
def test_nothing_happens_when_already_imported(first: str) -> None:
    code = (
        f"import {first}, sys, json\n" + _DEFER + "import dataclasses, inspect\n"
        "print(json.dumps(type(dataclasses.inspect).__name__ == 'module'"
        " and dataclasses.inspect is inspect is sys.modules['inspect']))"
    )
    assert _fresh(code) is True


def test_other_importers_get_the_real_inspect() -> None:
    """Once dataclasses is imported the stand-in is only dataclasses' own name: a later
    ``import inspect`` is the ordinary module, which dataclasses then also uses."""
    code = (
        _DEFER + "import dataclasses, json, sys\n"
        "stand_in = dataclasses.inspect\n"
        "import inspect\n"
        "ok = inspect is not stand_in and type(inspect).__name__ == 'module'\n"
        "stand_in.signature  # dataclasses' first use: handed over to the same module\n"
        "print(json.dumps(ok and dataclasses.inspect is inspect))"
    )
    assert _fresh(code) is True
