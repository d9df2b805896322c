"""tempdirs.private_dir: the directory tempfile.mkdtemp would make, without tempfile."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from scs_templates._core import tempdirs


@pytest.fixture(autouse=True)
def _no_temp_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """No temp variables, no cached tempdir, and tempfile not imported as far as private_dir
    can tell (a CLI render has not imported it; this module keeps its own reference)."""
    for variable in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir's cache
    monkeypatch.delitem(sys.modules, "tempfile")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_under_the_directory_tempfile_would_choose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("TMP", "TEMP", "TMPDIR"):  # the last one set wins: TMPDIR is first
        (tmp_path / variable).mkdir()
        monkeypatch.setenv(variable, str(tmp_path / variable))
        made = tempdirs.private_dir("scs-x-")
        assert "tempfile" not in sys.modules  # the fast path, not tempfile's
        tempfile.tempdir = None  # (the fixture restores it)
        assert made.parent == tmp_path / variable == Path(tempfile.gettempdir())
        assert made.name.startswith("scs-x-")
        assert _mode(made) == 0o700
        assert not any(made.iterdir())


def test_private_even_with_an_open_umask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    old = os.umask(0)
    try:
        made = tempdirs.private_dir("p-")
    finally:
        os.umask(old)
    assert _mode(made) == 0o700 and made.stat().st_uid == os.getuid()


def test_the_root_is_normalised_as_tempfile_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tempfile takes os.path.abspath of the variable: "link/.." is the link's own parent,
    not the parent of where the link points (which the kernel would walk to)."""
    (tmp_path / "deep" / "inner").mkdir(parents=True)
    (tmp_path / "deep" / "x").mkdir()
    (tmp_path / "x").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "deep" / "inner")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "link" / ".." / "x"))
    made = tempdirs.private_dir("p-")
    assert made.parent == tmp_path / "x" == Path(tempfile.gettempdir())
    assert not any((tmp_path / "deep" / "x").iterdir())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", "x")  # relative: against the working directory
    assert tempdirs.private_dir("p-").parent == tmp_path / "x"


def test_names_differ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    names = {tempdirs.private_dir("p-").name for _ in range(50)}
    assert len(names) == 50
    assert all(len(name) == len("p-") + 12 for name in names)  # 6 random bytes


def test_taken_names_are_skipped_and_symlinks_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that exists (here a planted symlink to another directory) is never used: the
    directory is made by one mkdir, which refuses any existing name."""
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / "p-000000000000").symlink_to(elsewhere)
    monkeypatch.setenv("TMPDIR", str(root))
    randoms = iter([b"\0" * 6, b"\1" * 6, b"\1" * 6, b"\2" * 6])
    monkeypatch.setattr(tempdirs.os, "urandom", lambda _n: next(randoms))
    first = tempdirs.private_dir("p-")
    second = tempdirs.private_dir("p-")
    assert (first.name, second.name) == ("p-010101010101", "p-020202020202")
    assert not any(elsewhere.iterdir())
    assert (root / "p-000000000000").is_symlink()


@pytest.mark.parametrize("kind", ["missing", "a file"])
def test_an_unusable_directory_is_left_to_tempfile(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TMPDIR naming a missing directory or a file: tempfile skips it (here: for /tmp or the
    next usable candidate); private_dir gives tempfile's own answer."""
    odd = tmp_path / "odd"
    if kind == "a file":
        odd.write_text("")
    monkeypatch.setenv("TMPDIR", str(odd))
    made = tempdirs.private_dir("scs-x-")
    try:
        assert made.parent == Path(sys.modules["tempfile"].gettempdir()) != odd
        assert _mode(made) == 0o700
    finally:
        made.rmdir()


def test_tempfile_already_imported_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process that has imported tempfile (a library caller, a test), its
    ``tempfile.tempdir`` (set by the caller or cached by gettempdir) decides, as it did
    when the helm home came from tempfile.mkdtemp."""
    monkeypatch.setitem(sys.modules, "tempfile", tempfile)
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(chosen))
    made = tempdirs.private_dir("p-")
    assert made.parent == chosen and _mode(made) == 0o700
