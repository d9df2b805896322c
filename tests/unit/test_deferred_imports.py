"""An import inside a function defers a heavy third-party package, and says which:
``# deferred: <name>``.

A module's module-level imports load its *closure* (tests/support/imports.py reads it from the
source). An import inside a function is there only to keep a third-party package
(openstacksdk, kubernetes, pydantic, ruamel, ...) out of that closure until the function
runs; the comment names one module or top-level package it defers. An import whose targets
the closure has loaded already defers nothing and belongs at the top of the module; one that
defers only modules of ours or of the standard library belongs there too, but for the two
in :data:`OWN_DEFERRALS` (docs/development.md, "Where an import goes").
"""

from __future__ import annotations

from pathlib import Path

from tests.support import REPO
from tests.support.imports import STDLIB, Package, deferral_problems, deferrals

#: The in-function imports that defer only modules of ours or of the standard library, by
#: (file, the reason's name), with why: each keeps ``--help`` (or ``--version``) within its
#: 30 ms target (docs/performance.md, "Tried and not landed", has what each would cost).
OWN_DEFERRALS: dict[tuple[str, str], str] = {
    ("scs_templates/_cli/main.py", "scs_templates._cli.harness"): (
        "what a command runs inside (log handler, signal handling, error lines) is not "
        "needed to print --help or --version"
    ),
    ("scs_templates/_clikit/arguments.py", "pathlib"): (
        "path arguments become Paths when given; --help builds every parser and parses none"
    ),
}


def _third_party(name: str) -> bool:
    top = name.split(".")[0]
    return top not in STDLIB and top != "scs_templates"


def test_only_third_party_packages_are_deferred_but_the_named_two() -> None:
    """#38: an import inside a function only to defer a heavy third-party package."""
    own = {
        (str(d.path), d.given)
        for d in deferrals(Package(REPO))
        if d.given is not None and not _third_party(d.given)
    }
    assert own == set(OWN_DEFERRALS)


def test_every_in_function_import_defers_what_its_comment_names() -> None:
    problems = deferral_problems(REPO)
    assert not problems, "in-function imports (docs/development.md):\n" + "\n".join(problems)


def _package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_checker_finds_missing_wrong_and_unnecessary_deferrals(tmp_path: Path) -> None:
    """The checker itself can fail: each kind of bad deferral is named with its file:line,
    and a good one passes."""
    _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/light.py": "import json\n",
            "pkg/heavy.py": "import kubernetes\nfrom pkg import light\n",
            "pkg/user.py": (
                "from pkg import light\n"
                "\n"
                "def good():\n"
                "    from pkg import heavy  # deferred: kubernetes\n"
                "\n"
                "def above():\n"
                "    # deferred: pkg.heavy\n"
                "    from pkg.heavy import kubernetes\n"
                "\n"
                "def missing():\n"
                "    import kubernetes\n"
                "\n"
                "def wrong():\n"
                "    from pkg import heavy  # deferred: pydantic\n"
                "\n"
                "def loaded_already():\n"
                "    from pkg import heavy  # deferred: json\n"
                "\n"
                "def unnecessary():\n"
                "    import json\n"
                "    from pkg.light import json as j\n"
            ),
        },
    )
    problems = deferral_problems(tmp_path, "pkg")
    assert [p.split(": ")[0:2] for p in problems] == [
        ["pkg/user.py:11", "missing reason"],
        ["pkg/user.py:14", "wrong reason"],
        ["pkg/user.py:17", "wrong reason"],
        ["pkg/user.py:20", "unnecessary deferral"],
        ["pkg/user.py:21", "unnecessary deferral"],
    ]
    assert "`# deferred: kubernetes`" in problems[0]


def test_the_closure_leaves_out_type_checking_and_functions(tmp_path: Path) -> None:
    """Only what importing a module runs is in its closure: not ``if TYPE_CHECKING:`` imports,
    not function bodies; a submodule imported by ``from pkg import module`` is, and so are
    parent packages."""
    _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/core/__init__.py": "",
            "pkg/core/util.py": "def helper(): ...\n",
            "pkg/model.py": "import pydantic\n",
            "pkg/typed.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    import pydantic\n"
                "def f():\n"
                "    import yaml\n"
            ),
            "pkg/eager.py": "from pkg.model import Model\n",
            "pkg/sub.py": "from pkg.core import util\n",
        },
    )
    package = Package(tmp_path, "pkg")
    assert "pydantic" not in package.closure("pkg")
    assert not {"pydantic", "yaml"} & package.closure("pkg.typed")
    assert {"pkg.model", "pydantic"} <= package.closure("pkg.eager")
    assert {"pkg", "pkg.core", "pkg.core.util"} <= package.closure("pkg.sub")
