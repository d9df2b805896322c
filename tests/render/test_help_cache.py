"""scs_templates._cli.help_cache: the console script's ``--help`` prints the last run's text
only while everything it was made from is unchanged (issue #19: ``--help`` <= 30 ms)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scs_templates._cli import help_cache

_RUN = (
    "import atexit, os, sys\n"
    "atexit.register(lambda: os.write(2, b'ARGPARSE=%d' % ('argparse' in sys.modules)))\n"
    "sys.argv = ['scs-templates', *sys.argv[1:]]\n"
    "from scs_templates._cli.main import run\n"
    "run()\n"
)


def _help(cache: Path, *argv: str, **env: str) -> tuple[str, bool]:
    """The console script's --help with its cache in ``cache``: (stdout, argparse loaded)."""
    environment = {
        k: v for k, v in os.environ.items() if k not in {"COLUMNS", "SCS_TEMPLATES_CACHE_DIR"}
    }
    environment.update(XDG_CACHE_HOME=str(cache), **env)
    done = subprocess.run(
        [sys.executable, "-c", _RUN, *(argv or ("--help",))],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.endswith("ARGPARSE=1")


def _uncached(columns: str) -> str:
    code = (
        "import sys\n"
        "from scs_templates._cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit as exiting:\n"
        "    assert exiting.code == 0\n"
    )
    env = {**os.environ, "COLUMNS": columns}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout


def _file(cache: Path) -> Path:
    return cache / "scs-templates" / "help.txt"


@pytest.mark.parametrize("columns", ["40", "80", "132"])
def test_the_second_help_is_the_first_without_argparse(tmp_path: Path, columns: str) -> None:
    first, built = _help(tmp_path, COLUMNS=columns)
    assert built and first == _uncached(columns) and "render-fleet" in first
    assert _file(tmp_path).is_file()
    second, built = _help(tmp_path, COLUMNS=columns)
    assert second == first and not built
    assert _help(tmp_path, "-h", COLUMNS=columns) == (first, False)


def _tamper(cache: Path, *, text: str, stamp_of: str | None = None) -> None:
    """Replace the cached text; with ``stamp_of``, also pretend that file has changed."""
    head, _, _ = _file(cache).read_text(encoding="utf-8").partition("\n\n")
    lines = head.split("\n")
    if stamp_of is not None:
        matching = [i for i, line in enumerate(lines) if line.endswith(stamp_of)]
        assert matching, stamp_of
        lines[matching[0]] = "1 2\t" + lines[matching[0]].split("\t", 1)[1]
    _file(cache).write_text("\n".join(lines) + "\n\n" + text, encoding="utf-8")


@pytest.mark.parametrize(
    "changed",
    [
        "scs_templates/_cli/cmd_render.py",  # a command's help text
        "scs_templates/_cli/main.py",  # the list of commands
        "argparse.py",  # the formatter itself
    ],
)
def test_a_changed_source_makes_the_text_anew(tmp_path: Path, changed: str) -> None:
    real, _ = _help(tmp_path, COLUMNS="80")
    _tamper(tmp_path, text="CACHED\n")
    assert _help(tmp_path, COLUMNS="80") == ("CACHED\n", False)  # the guard is the stamps
    _tamper(tmp_path, text="STALE\n", stamp_of=changed)
    assert _help(tmp_path, COLUMNS="80") == (real, True)
    assert _file(tmp_path).read_text(encoding="utf-8").endswith("\n\n" + real)


def test_another_width_locale_or_a_broken_file_makes_the_text_anew(tmp_path: Path) -> None:
    _help(tmp_path, COLUMNS="80")
    _tamper(tmp_path, text="STALE\n")
    assert _help(tmp_path, COLUMNS="100") == (_uncached("100"), True)
    _tamper(tmp_path, text="STALE\n")
    assert _help(tmp_path, COLUMNS="100", LANGUAGE="de")[1] is True
    for broken in ("", "scs-templates --help cache 1\n", "\x00\xff", "other\n\nSTALE\n"):
        _file(tmp_path).write_text(broken, encoding="utf-8", errors="surrogateescape")
        assert _help(tmp_path, COLUMNS="100") == (_uncached("100"), True)


def test_a_recorded_file_that_is_gone_makes_the_text_anew(tmp_path: Path) -> None:
    real, _ = _help(tmp_path, COLUMNS="80")
    head, _, _ = _file(tmp_path).read_text(encoding="utf-8").partition("\n\n")
    gone = tmp_path / "gone.py"
    gone.write_text("")
    stamp = help_cache._stamp(str(gone))
    gone.unlink()
    _file(tmp_path).write_text(f"{head}\n{stamp}\t{gone}\n\nSTALE\n", encoding="utf-8")
    assert _help(tmp_path, COLUMNS="80") == (real, True)


def test_an_unwritable_cache_only_costs_time(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    out, built = _help(blocker, COLUMNS="80")
    assert built and out == _uncached("80")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_the_library_entry_never_uses_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from scs_templates._cli.main import main

    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path))
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "render-fleet" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_a_module_whose_source_cannot_be_seen_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded module whose file cannot be stat-ed (from a zip archive, or deleted) could
    change unseen: nothing is kept then."""
    import types

    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path))
    help_cache.store(80, "TEXT\n")
    assert help_cache.read(80) == "TEXT\n"
    zipped = types.ModuleType("zipped")
    zipped.__file__ = str(tmp_path / "lib.zip" / "zipped.py")
    monkeypatch.setitem(sys.modules, "zipped", zipped)
    Path(help_cache.cache_file()).unlink()
    help_cache.store(80, "TEXT\n")
    assert not Path(help_cache.cache_file()).exists()
