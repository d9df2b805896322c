"""Atomic writes of files and whole directories: readers see the old state or the new one.

Rendered manifests and values files are fed to ``kubectl apply``, GitOps repositories and
CI diffs; a half-written file (interrupted run, full disk, helm failing midway) would be
applied as if it were complete. So everything is written to a temporary sibling on the same
filesystem, flushed, and moved into place with ``os.replace``.

Files that may hold secrets (rendered Secrets, values with credentials) are created with mode
0600 from the start (``private=True``): creating them world-readable and narrowing the mode
afterwards would leave a window in which other users could read them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

_FILE_MODE = 0o644
_PRIVATE_FILE_MODE = 0o600
_DIR_MODE = 0o755
_PRIVATE_DIR_MODE = 0o700


def _fsync_dir(path: Path) -> None:
    """Make a rename durable (best effort: some filesystems refuse fsync on directories)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create ``path`` (must not exist) with ``mode`` and write ``data`` durably."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)  # the umask must not widen or narrow what we asked for
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _as_bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def write_file(path: str | Path, data: str | bytes, *, private: bool = False) -> Path:
    """Write one file atomically (temp file in the same directory, then rename).

    ``private`` creates it 0600. The parent directory must exist. Returns the path.
    """
    target = Path(path)
    mode = _PRIVATE_FILE_MODE if private else _FILE_MODE
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    temp = Path(temp_name)
    try:
        temp.unlink()
        _write_new(temp, _as_bytes(data), mode)
        temp.replace(target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)
    return target


def write_directory(
    directory: str | Path,
    files: Mapping[str, str | bytes],
    *,
    private: bool = False,
    replaceable: Callable[[Path], bool] | None = None,
) -> Path:
    """Make ``directory`` hold exactly ``files`` (name -> content), all or nothing.

    The new content is written to a temporary sibling directory first. Only when every file
    is written does it take the place of ``directory``; a pre-existing directory (and its
    stale files) is removed after that. There is a moment between the two renames in which
    ``directory`` does not exist, but never one in which it is half-written.

    ``replaceable(entry)`` is asked for every entry of an existing directory; if it says no,
    nothing is changed and :class:`InputError` is raised, so a mistyped ``-o ~`` cannot
    delete a home directory. ``private`` makes the directory 0700 and the files 0600.
    """
    target = Path(directory)
    for name in files:
        if not name or "/" in name or name in (".", "..") or name.startswith("."):
            raise ValueError(f"not a plain file name: {name!r}")
    if target.exists() or target.is_symlink():
        if not target.is_dir() or target.is_symlink():
            raise InputError(f"{target}: exists and is not a directory")
        foreign = [entry for entry in target.iterdir() if not (replaceable or _never)(entry)]
        if foreign:
            raise InputError(
                f"{target}: refusing to replace a directory that holds other files "
                f"(e.g. {sorted(foreign)[0].name}); choose an empty or new directory"
            )
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
    try:
        staging.chmod(_PRIVATE_DIR_MODE if private else _DIR_MODE)
        mode = _PRIVATE_FILE_MODE if private else _FILE_MODE
        for name, data in files.items():
            _write_new(staging / name, _as_bytes(data), mode)
        _fsync_dir(staging)
        old: Path | None = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=parent))
            target.replace(old / "content")
        try:
            staging.replace(target)
        except BaseException:
            if old is not None:  # put the previous content back
                (old / "content").replace(target)
                shutil.rmtree(old, ignore_errors=True)
            raise
        _fsync_dir(parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _never(_entry: Path) -> bool:
    return False
