"""Lazy re-exports: one mechanism (scs_templates/_core/lazy.py), and each package's three lists
agree.

A package that exports names of its submodules on first use writes each name three times:
under ``if TYPE_CHECKING:`` (for type checkers), in its table for :func:`scs_templates._core.lazy.
exports` (for the run time) and in ``__all__``. These tests read the packages' source, so a
name missing from one of them, or listed under the wrong submodule, fails here, and so does a
package that writes its own module-level ``__getattr__`` again.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import EXAMPLES, REPO

PACKAGE = REPO / "scs_templates"
#: Every package that takes ``__getattr__`` from lazy.exports, and the submodules of its
#: table that importing it loads anyway (its eager imports need them).
LAZY_PACKAGES = {
    "scs_templates.providers": (),  # imported by every provider's command module (--help)
    "scs_templates.providers.openstack": (),
    "scs_templates.providers.openstack.migrate": (),
    "scs_templates._services": ("values",),  # the catalogue's value builders
    "scs_templates._settings": (),
    "scs_templates._tools.toolchain": (),
}
#: Module-level ``__getattr__`` that is no re-export: encryption's makes ``RotationStep``
#: (a typing.Literal) on first use.
OWN_GETATTR = {"scs_templates/_render/encryption.py"}


def _source(package: str) -> ast.Module:
    path = REPO / Path(*package.split(".")) / "__init__.py"
    return ast.parse(path.read_text(encoding="utf-8"))


def _type_checking_imports(package: str) -> dict[str, str]:
    """name -> submodule (relative) of the ``if TYPE_CHECKING:`` imports from the package."""
    found: dict[str, str] = {}
    for node in _source(package).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    prefix = f"{package}."
                    assert statement.module.startswith(prefix), statement.module
                    for alias in statement.names:
                        found[alias.asname or alias.name] = statement.module[len(prefix) :]
    return found


def _table(package: str) -> dict[str, str]:
    """name -> submodule of the table the package hands to lazy.exports."""
    module = importlib.import_module(package)
    for node in ast.walk(_source(package)):
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "exports"
            and ast.unparse(node.args[0]) == "__name__"
        ):
            homes = ast.literal_eval(node.args[1]) if isinstance(node.args[1], ast.Dict) else None
            if homes is None:
                homes = getattr(module, ast.unparse(node.args[1]))
            return {name: home for home, names in homes.items() for name in names}
    raise AssertionError(f"{package} does not call exports(__name__, ...)")


@pytest.mark.parametrize("package", sorted(LAZY_PACKAGES))
def test_the_three_lists_agree(package: str) -> None:
    table = _table(package)
    assert _type_checking_imports(package) == table
    module = importlib.import_module(package)
    eager = {name for name in module.__all__ if name not in table}
    assert eager <= set(vars(module)), "an __all__ name neither imported nor lazy"
    assert set(table) <= set(module.__all__)


@pytest.mark.parametrize("package", sorted(LAZY_PACKAGES))
def test_each_name_is_its_submodules_and_kept(package: str) -> None:
    module = importlib.import_module(package)
    for name, home in sorted(_table(package).items()):
        value = getattr(module, name)
        assert value is getattr(importlib.import_module(f"{package}.{home}"), name)
        assert vars(module)[name] is value, "a second use must be a plain attribute read"
        assert name in dir(module)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such'"):
        module.no_such  # noqa: B018


@pytest.mark.parametrize("package", sorted(LAZY_PACKAGES))
def test_importing_the_package_imports_no_lazy_submodule(package: str) -> None:
    homes = sorted({f"{package}.{home}" for home in _table(package).values()})
    code = f"import sys, {package}\nprint([m for m in {homes!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == repr([f"{package}.{home}" for home in LAZY_PACKAGES[package]])


def test_no_package_writes_its_own_lazy_getattr() -> None:
    """A module-level ``def __getattr__`` is a second copy of lazy.exports (or belongs in
    OWN_GETATTR with the reason); every package calling exports is in LAZY_PACKAGES."""
    own: set[str] = set()
    callers: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        relative = path.relative_to(REPO).as_posix()
        if any(
            isinstance(node, ast.FunctionDef) and node.name == "__getattr__" for node in tree.body
        ):
            own.add(relative)
        if "exports(__name__" in ast.unparse(tree):
            callers.add(".".join(path.relative_to(REPO).parent.parts))
    assert own == OWN_GETATTR
    assert callers == set(LAZY_PACKAGES)


def _modules_of_render(example: Path) -> set[str]:
    """Every module a ``render`` of ``example`` to stdout imported, in a fresh interpreter."""
    code = (
        "import json, sys\n"
        "from scs_templates._cli.main import main\n"
        "try:\n"
        f"    main(['render', {str(example)!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stdout.flush()\n"
        "print('\\nMODULES=' + json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    ).stdout
    return set(json.loads(out.rsplit("MODULES=", 1)[1]))


#: What a successful ``render`` does not need (issue #19, docs/performance.md "One render"):
#: shlex only quotes a secret for redaction, and helm's stderr of a successful run is empty,
#: so secrets.redact returns at once (and --debug's command line imports it itself).
RENDER_NEVER_IMPORTS = {"shlex"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_render_path_imports_none_of_the_trimmed_modules(example: Path) -> None:
    loaded = _modules_of_render(example)
    assert "scs_templates._render.render" in loaded
    assert not loaded & RENDER_NEVER_IMPORTS, sorted(loaded & RENDER_NEVER_IMPORTS)
