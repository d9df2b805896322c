"""The CLI contract: version, help, exit codes, and lazy heavy imports."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from scs_templates import __version__
from scs_templates._cli.main import main
from tests.support import EXAMPLES, REPO
from tests.support.imports import package_modules

if TYPE_CHECKING:
    from collections.abc import Iterator

HEAVY = ("kubernetes", "openstack", "keystoneauth1")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"scs-templates {__version__}\n"


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: scs-templates" in capsys.readouterr().err


def test_unknown_option_exits_2() -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate", "--no-such-option", "x.yaml"])
    assert exited.value.code == 2


def _loaded_modules(args: list[str]) -> set[str]:
    """Run the CLI in a fresh interpreter and list every module it imported."""
    code = (
        "import json, sys\n"
        "from scs_templates._cli.main import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stdout.flush()\n"
        "print('\\nMODULES=' + json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    line = result.stdout.rsplit("MODULES=", 1)[1]
    return set(json.loads(line))


def _modules_after(args: list[str]) -> set[str]:
    """The top-level modules (packages) the CLI imported for ``args``."""
    return {name.split(".")[0] for name in _loaded_modules(args)}


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["validate", str(EXAMPLES[0])],
        ["schema"],
        ["render", str(REPO / "examples" / "openstack-minimal.yaml")],
    ],
    ids=["help", "validate", "schema", "render-openstack"],
)
def test_heavy_imports_stay_lazy(args: list[str]) -> None:
    loaded = _modules_after(args)
    assert not loaded & set(HEAVY), f"{args} imported {sorted(loaded & set(HEAVY))}"


def test_help_does_not_import_pydantic() -> None:
    assert "pydantic" not in _modules_after(["--help"])


def test_version_and_help_import_only_what_they_print() -> None:
    """``--version`` builds no parser; ``--help`` builds no command's own parser, so none of
    the commands' imports (typing, pathlib) is loaded, nor what a command runs inside
    (signal handling: _cli/harness.py) (issue #19: start-up)."""
    assert not _modules_after(["--version"]) & {"typing", "signal"}
    assert not _modules_after(["--help"]) & {"typing", "pathlib", "signal"}
    # validate of a valid file: no suggestion words (difflib), no hashlib (a name is
    # shortened with _core/digest's sha256), nor shutil (with bz2, lzma, zlib, fnmatch):
    # the commands' parsers get help_width too
    assert not _modules_after(["validate", str(EXAMPLES[0])]) & {
        "difflib",
        "hashlib",
        "shutil",
    }


def _command_parsers(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command's parser (and its sub-commands'), with the words that reach it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in sorted(action.choices.items()):
                yield (*words, name), sub
                yield from _command_parsers(sub, (*words, name))


def test_each_command_names_the_function_that_runs_it() -> None:
    """A command's parser names what runs it as ``module:function`` (a string), so that
    building every parser (``--help``) imports none of what the commands do (#38); a command
    group without an action prints its usage (the one callable allowed: ``usage``)."""
    from scs_templates._cli.main import build_parser
    from scs_templates._core.entry_points import load

    named = {}
    for words, sub in _command_parsers(build_parser()):
        func = sub.get_default("func")
        if isinstance(func, str):
            named[" ".join(words)] = func
            assert callable(load(func)), func
        else:
            assert sub._subparsers is not None, f"{' '.join(words)}: func={func!r}"
    assert named["render"] == "scs_templates._cli.run.render:run_render"
    assert named["openstack preflight"].startswith("scs_templates.providers.openstack.cli_run:")
    assert len(named) >= 25, sorted(named)


def test_help_imports_no_command_implementation() -> None:
    """``--help`` (every parser built) loads no module of what a command does."""
    loaded = _loaded_modules(["--help"])
    assert not {m for m in loaded if m.startswith("scs_templates._cli.run") or "cli_run" in m}
    assert "scs_templates._cli.cmd_render" in loaded


def test_no_module_defines_its_own_type_checking() -> None:
    """Type-only imports sit under typing's own ``TYPE_CHECKING``. The ``TYPE_CHECKING =
    False`` idiom that kept typing off ``--help``'s path is gone (#38): the modules ``--help``
    imports annotate with what they load anyway (argparse, ``collections.abc``) and need no
    type-only import; that ``--help`` loads no typing is
    test_version_and_help_import_only_what_they_print."""
    own = [
        module
        for module, path in package_modules(REPO).items()
        if re.search(r"^TYPE_CHECKING\s*=", path.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert own == []


def test_render_imports_no_hashlib() -> None:
    """A render to stdout hashes the charts with the built-in sha256 (_core/digest.py):
    hashlib (with OpenSSL) costs a few ms of CPU at every start (issue #19). The first start
    after helm changed pays once: it runs `helm version` in a temporary home and rewrites the
    version cache (toolchain/resolve.py), so a warm-up render first. Without it this failed
    whenever earlier tests (test_exit_codes' fake helm binaries) had pushed the real helm out
    of the cache's 64 entries."""
    _modules_after(["render", str(EXAMPLES[0])])  # warm-up: the version cache holds helm
    loaded = _modules_after(["render", str(EXAMPLES[0])])
    assert "hashlib" not in loaded


def test_rotation_step_is_a_literal_at_run_time() -> None:
    """``encryption.RotationStep`` (exported) is the Literal the type checker reads."""
    import typing

    from scs_templates._render import encryption

    assert typing.get_origin(encryption.RotationStep) is typing.Literal
    assert typing.get_args(encryption.RotationStep) == ("add", "promote", "remove")
    with pytest.raises(AttributeError):
        encryption.NoSuchName  # noqa: B018


@pytest.mark.parametrize("columns", ["40", "80", "132"])
def test_top_level_help_from_outlines_is_the_full_parsers_help(
    columns: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--help`` (and no arguments at all) list the commands from outline parsers: the text
    is the one every command's real parser gives, at any terminal width."""
    from scs_templates._cli.main import build_parser

    monkeypatch.setenv("COLUMNS", columns)
    full = build_parser().format_help()
    assert build_parser(outline=True).format_help() == full
    for argv in (["--help"], ["-h"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 0
        assert capsys.readouterr().out == full
    assert main([]) == 2
    assert capsys.readouterr().err == full


@pytest.mark.parametrize(
    ("columns", "lines", "terminal"),
    [
        ("132", None, None),
        ("40", "0", 100),  # LINES unusable: shutil asks the terminal, COLUMNS still wins
        (None, None, 100),
        (None, None, 0),  # a terminal that reports no width
        (None, None, None),  # not a terminal
        ("abc", None, 90),
        ("0", None, None),
        ("-5", "30", 120),
        (None, None, "closed"),
        (None, None, "none"),  # no sys.__stdout__ at all
    ],
)
def test_help_width_is_the_one_argparse_picks(
    columns: str | None, lines: str | None, terminal: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """main.help_width (no shutil import for --help) is shutil.get_terminal_size's columns
    minus 2, which argparse's HelpFormatter uses, for every source of the width."""
    import fcntl
    import io
    import pty
    import shutil
    import struct
    import termios

    from scs_templates._cli.main import help_width

    for name, value in (("COLUMNS", columns), ("LINES", lines)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    opened: list[int] = []
    if isinstance(terminal, int):
        leader, follower = pty.openpty()
        opened += [leader, follower]
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, terminal, 0, 0))
        stdout: object = open(follower, "w", closefd=False)  # noqa: SIM115
    elif terminal == "closed":
        stdout = io.StringIO()
        stdout.close()  # type: ignore[attr-defined]
    elif terminal == "none":
        stdout = None
    else:
        stdout = io.TextIOWrapper(io.BytesIO())  # fileno() raises: not a real file
    monkeypatch.setattr(sys, "__stdout__", stdout)
    try:
        assert help_width() == shutil.get_terminal_size().columns - 2
    finally:
        for fd in opened:
            os.close(fd)


def test_top_level_help_is_argparses_text_without_shutil() -> None:
    """``--help`` loads neither shutil nor the archive modules it probes, and its text is
    the one argparse's own HelpFormatter prints (COLUMNS unset, not a terminal: 80)."""
    loaded = _modules_after(["--help"])
    assert not loaded & {"shutil", "bz2", "lzma", "fnmatch"}
    code = (
        "import argparse, sys\n"
        "from scs_templates._cli import main\n"
        "parser = main.build_parser(outline=True)\n"
        "ours = parser.format_help()\n"
        "parser.formatter_class = argparse.HelpFormatter\n"
        "sys.stdout.write(str(ours == parser.format_help()) + ' ' + str(len(ours)))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"COLUMNS", "LINES"}}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    same, size = done.stdout.split()
    assert same == "True" and int(size) > 500


def test_every_commands_help_is_argparses_text() -> None:
    """Each command's own parser (and its sub-commands') formats with the top level's
    HelpFormatter, which picks the width without shutil, and prints exactly what argparse's
    own HelpFormatter prints (COLUMNS unset, not a terminal: 80 columns), up to the example
    block at the end, whose lines ours keeps as written (argparse would fill them)."""
    code = (
        "import argparse, sys\n"
        "from scs_templates._cli import main\n"
        "def walk(parser, seen):\n"
        "    ours = parser.format_help().partition('\\nexamples:')[0]\n"
        "    parser.formatter_class = argparse.HelpFormatter\n"
        "    theirs = parser.format_help().partition('\\nexamples:')[0]\n"
        "    seen.append((parser.prog, ours == theirs))\n"
        "    for action in parser._actions:\n"
        "        if isinstance(action, argparse._SubParsersAction):\n"
        "            for sub in dict.fromkeys(action.choices.values()):\n"
        "                walk(sub, seen)\n"
        "seen = []\n"
        "walk(main.build_parser(), seen)\n"
        "print([prog for prog, same in seen if not same], len(seen))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"COLUMNS", "LINES"}}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    differing, count = done.stdout.rsplit(" ", 1)
    assert differing == "[]" and int(count) > 10


def test_version_fast_path_prints_what_argparse_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """``--version`` skips argparse; its line is the parser's own version action's output."""
    from scs_templates._cli.main import build_parser

    with pytest.raises(SystemExit):
        build_parser(()).parse_args(["--version"])
    by_argparse = capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out == by_argparse


# --------------------------------------------------------------------------- lazy parsers


def test_lazy_commands_are_registered_by_their_module() -> None:
    """main.LAZY_COMMANDS names, for each command, the module that registers it."""
    import argparse

    from scs_templates._cli import main as cli

    for command, module in cli.LAZY_COMMANDS.items():
        assert module in cli.command_modules()
        parser = cli.build_parser((module,))
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        assert command in action.choices, (command, module)


@pytest.mark.parametrize(
    ("argv", "modules"),
    [
        (["render", "x.yaml"], ("scs_templates._cli.cmd_render",)),
        (["--debug", "render-fleet", "a", "--stdout"], ("scs_templates._cli.cmd_fleet",)),
        (["tools", "status"], ("scs_templates._cli.cmd_tools",)),
        (["--version"], ()),
    ],
)
def test_a_command_builds_only_its_own_parser(argv: list[str], modules: tuple[str, ...]) -> None:
    from scs_templates._cli.main import modules_for

    assert modules_for(argv) == modules


@pytest.mark.parametrize(
    "argv", [[], ["--help"], ["-h", "render"], ["rendr"], ["--no-such", "render"], ["x.yaml"]]
)
def test_help_and_errors_build_every_parser(argv: list[str]) -> None:
    from scs_templates._cli.main import command_modules, modules_for

    assert modules_for(argv) == command_modules()


def test_subcommand_help_and_usage_errors_are_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    """A lazily built parser prints the same usage as the full one."""
    from scs_templates._cli.main import build_parser

    # (SETTINGS is optional since -f may name the files: an unknown option is the error)
    with pytest.raises(SystemExit) as exited:
        main(["render", "--no-such-option"])
    assert exited.value.code == 2
    lazy = capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["render", "--no-such-option"])
    assert capsys.readouterr().err == lazy


# --------------------------------------------------------------------------- console script


def _console_script() -> str:
    script = Path(sys.executable).with_name("scs-templates")
    assert script.is_file(), f"{script} missing: run `make setup`"
    return str(script)


def _script(argv: list[str], temp: Path) -> subprocess.CompletedProcess[bytes]:
    """The console script with its temp files under ``temp``."""
    return subprocess.run(
        [_console_script(), *argv],
        capture_output=True,
        env={**os.environ, "TMPDIR": str(temp)},
        timeout=120,
        check=False,
    )


def test_console_script_flushes_everything_before_its_fast_exit(tmp_path: Path) -> None:
    """``run`` skips the interpreter teardown: the output must still be complete and the
    exit code kept."""
    done = _script(["values", str(EXAMPLES[0])], tmp_path)
    assert done.returncode == 0, done.stderr
    code = "from scs_templates._cli.main import main; main()"
    in_process = subprocess.run(
        [sys.executable, "-c", code, "values", str(EXAMPLES[0])],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert done.stdout == in_process.stdout and done.stdout.endswith(b"\n")
    bad = _script(["validate", str(tmp_path / "missing.yaml")], tmp_path)
    assert bad.returncode == 2 and b"no such file" in bad.stderr


def test_console_script_runs_the_exit_handlers(tmp_path: Path) -> None:
    """The exit handlers still run: the private helm home of a render is removed."""
    done = _script(["render", str(EXAMPLES[0])], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"---\n# Source: ")
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("scs-templates-helm-")]


@pytest.mark.parametrize("command", ["validate", "render", "values", "--help"])
def test_a_command_runs_no_garbage_collection(command: str) -> None:
    """The console script raises the collector's young generation (cli/main.GC_YOUNG_THRESHOLD)
    before the command: its start-up allocates ~25,000 objects that all live on, and at
    CPython's 700 they cost ~32 collections that free nothing (7-20 ms of CPU, issue #19).
    Counted with gc.callbacks from just before run(); ~30 collections without the change."""
    argv = [command] if command.startswith("-") else [command, str(EXAMPLES[0])]
    code = (
        "import gc, os, sys\n"
        "from scs_templates._cli import main\n"
        "runs = []\n"
        "gc.callbacks.append(lambda phase, info: runs.append(info['generation']))\n"
        "import atexit\n"
        "atexit.register(lambda: os.write(2, f'\\nGC={len(runs) // 2}'.encode()))\n"
        f"sys.argv = ['scs-templates', *{argv!r}]\n"
        "main.run()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.rsplit(b"GC=", 1)[1] == b"0"
    assert len(done.stdout) > 100


def test_console_script_reports_output_it_could_not_write() -> None:
    """A full disk at the final flush is an error (exit 2), not a silent success."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered stdout
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [_console_script(), "--version"],
            stdout=full,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert b"cannot write to standard output" in done.stderr
