"""Atomic writes of files and whole directories: readers see the old state or the new one.

Rendered manifests and values files are fed to ``kubectl apply``, GitOps repositories and
CI diffs; a half-written file (interrupted run, full disk, helm failing midway) would be
applied as if it were complete. So everything is written to a temporary sibling on the same
filesystem, flushed, and moved into place with ``os.replace``.

Files that may hold secrets (rendered Secrets, values with credentials) are created with mode
0600 from the start (``private=True``): creating them world-readable and narrowing the mode
afterwards would leave a window in which other users could read them.

Temporary siblings are named ``.NAME.PID.XXXX.tmp`` / ``.old``: a run killed with SIGKILL
(or a power cut) cannot remove its own, so every write first removes the siblings of the same
target whose process is gone. Any failure to write (a path under a file, a read-only or full
filesystem, ``/proc``) is one :class:`~scs_templates._core.errors.InputError` naming the target,
and the folders a failed write had to create above its target are removed again (no empty
skeletons after a full disk).

An output folder is ours alone (issue #41): a symbolic link at it or anywhere below it is
refused (:func:`refuse_links`), because replacing or removing through a link could change
files outside the folder. The folders ABOVE the output folder are the user's and may be links.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates._core.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

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


def _prefix(target: Path) -> str:
    return f".{target.name}.{os.getpid()}."


_SIBLING = re.compile(r"^\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[^.]+\.(?:tmp|old)$")


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user, or a zombie, counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_siblings(target: Path) -> list[Path]:
    """Remove the temporary siblings of ``target`` left by runs that died; return them."""
    removed: list[Path] = []
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _SIBLING.match(entry.name)
        if not match or match["name"] != target.name or process_alive(int(match["pid"])):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                entry.unlink()
        removed.append(entry)
    return removed


def refuse_links(root: Path) -> None:
    """Raise :class:`InputError` naming the first symbolic link at ``root`` or below it.

    Why: an output folder is replaced or pruned as a whole; a link inside it (planted by a
    pull request, or left by a user) would let that write or removal reach files outside the
    folder. A missing ``root`` passes. Links are never followed while looking.
    """
    if root.is_symlink():
        raise _link_error(root)
    if not root.is_dir():
        return
    for folder, folders, files in os.walk(root, followlinks=False):
        folders.sort()
        for name in sorted([*folders, *files]):
            path = Path(folder) / name
            if path.is_symlink():
                raise _link_error(path)


def _link_error(path: Path) -> InputError:
    return InputError(
        f"{path}: is a symbolic link; output folders and everything in them must be real "
        "folders and files (nothing is written or removed through a link)"
    )


@contextlib.contextmanager
def folder_made(path: Path) -> Iterator[Path]:
    """``mkdir -p path`` for the body; if the body fails, the folders made here are removed.

    Only folders that did not exist before and are empty again are removed, so a failed
    write (a full disk, a signal) leaves no empty folder skeleton behind. Once the body
    succeeded, each folder made here is synced into its parent (deepest first), so the path
    to what the body wrote survives a power loss too.
    """
    missing: list[Path] = []
    for folder in (path, *path.parents):
        if folder.exists() or folder.is_symlink():
            break
        missing.append(folder)
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            folder.mkdir()
            made.append(folder)
        yield path
    except BaseException:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    for folder in reversed(made):
        _fsync_dir(folder.parent)


def _write_error(target: Path, error: OSError) -> InputError:
    reason = error.strerror or str(error)
    if error.errno == errno.ENOSPC:
        reason = "no space left on the device"
    for ancestor in target.parents:
        if ancestor.exists():
            if not ancestor.is_dir():
                reason = f"{ancestor} is not a directory"
            break
    return InputError(f"{target}: cannot write: {reason}")


def _temp_sibling(target: Path) -> Path:
    """A free temporary name next to ``target`` (stale siblings removed first)."""
    remove_stale_siblings(target)
    try:
        fd, temp_name = tempfile.mkstemp(prefix=_prefix(target), suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise _write_error(target, error) from None
    os.close(fd)
    return Path(temp_name)


def _as_bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def write_file(path: str | Path, data: str | bytes, *, private: bool = False) -> Path:
    """Write one file atomically (temp file in the same directory, then rename).

    ``private`` creates it 0600. The parent directory must exist. Returns the path.
    """
    target = Path(path)
    mode = _PRIVATE_FILE_MODE if private else _FILE_MODE
    if target.is_dir():
        raise InputError(f"{target}: is a directory; cannot write a file there")
    temp = _temp_sibling(target)
    try:
        temp.unlink()
        _write_new(temp, _as_bytes(data), mode)
        temp.replace(target)
    except OSError as error:
        temp.unlink(missing_ok=True)
        raise _write_error(target, error) from None
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)
    return target


def create_file(path: str | Path, data: str | bytes, *, private: bool = False) -> Path:
    """Like :func:`write_file`, but refuse (``FileExistsError``) to replace an existing file.

    The content is complete before the name appears (a link of the finished temp file), so a
    full disk or a kill never leaves an empty or partial file under the final name.
    """
    target = Path(path)
    mode = _PRIVATE_FILE_MODE if private else _FILE_MODE
    if target.exists() or target.is_symlink():
        raise FileExistsError(errno.EEXIST, "exists already", str(target))
    temp = _temp_sibling(target)
    try:
        temp.unlink()
        _write_new(temp, _as_bytes(data), mode)
        os.link(temp, target)  # fails if the target appeared meanwhile: never replaced
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "exists already", str(target)) from None
    except OSError as error:
        raise _write_error(target, error) from None
    finally:
        temp.unlink(missing_ok=True)
    _fsync_dir(target.parent)
    return target


def write_directory(
    directory: str | Path,
    files: Mapping[str, str | bytes],
    *,
    private: bool = False,
    replaceable: Callable[[Path], bool] | None = None,
) -> Path:
    """Make ``directory`` hold exactly ``files`` (relative path -> content), all or nothing.

    The new content is written to a temporary sibling directory first. Only when every file
    is written does it take the place of ``directory``; a pre-existing directory (and its
    stale files) is removed after that. There is a moment between the two renames in which
    ``directory`` does not exist, but never one in which it is half-written. A name may hold
    folders (``NS/NAME/file.yaml``: ``render-fleet``), each part a plain name.

    ``replaceable(entry)`` is asked for every entry of an existing directory; if it says no,
    nothing is changed and :class:`InputError` is raised, so a mistyped ``-o ~`` cannot
    delete a home directory. A symbolic link at or below ``directory`` is refused the same
    way (:func:`refuse_links`). ``private`` makes the directories 0700 and the files 0600.
    """
    target = Path(directory)
    for name in files:
        parts = name.split("/")
        if any(not part or part in (".", "..") or part.startswith(".") for part in parts):
            raise ValueError(f"not a plain file name: {name!r}")
    check_replaceable(target, replaceable)
    try:
        with folder_made(target.parent):
            staging = _staging_sibling(target)
            _fill(staging, target, files, private=private)  # removes staging on any failure
    except OSError as error:
        raise _write_error(target, error) from None
    return target


def _staging_sibling(target: Path) -> Path:
    """A new empty folder (0700) beside ``target``; stale siblings of dead runs go first."""
    remove_stale_siblings(target)
    return Path(tempfile.mkdtemp(prefix=_prefix(target), suffix=".tmp", dir=target.parent))


@contextlib.contextmanager
def new_directory(directory: str | Path) -> Iterator[Path]:
    """Fill a directory that does not exist yet as a whole: the body writes into the
    yielded staging folder beside it, which takes the directory's name when the body
    succeeds. A failure (a full disk, a signal, an error) leaves nothing: no directory, no
    staging folder, no folders made above it. Used where the content is written by many
    calls (``gitops`` into a new folder); :func:`write_directory` for one mapping.
    """
    target = Path(directory)
    try:
        with folder_made(target.parent):
            staging = _staging_sibling(target)
            try:
                yield staging
                staging.chmod(_DIR_MODE)
                staging.replace(target)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            _fsync_dir(target.parent)
    except OSError as error:
        raise _write_error(target, error) from None


def check_replaceable(target: Path, replaceable: Callable[[Path], bool] | None) -> None:
    """Refuse (:class:`InputError`) to replace ``target`` unless it is missing, or a real
    folder without links whose every entry ``replaceable`` accepts: the check
    :func:`write_directory` makes, for commands that check before the work that fills it."""
    if target.is_symlink():
        raise _link_error(target)
    if not target.exists():
        return
    if not target.is_dir():
        raise InputError(f"{target}: exists and is not a directory")
    entries = sorted(target.iterdir())
    for entry in entries:
        if entry.is_symlink():
            raise _link_error(entry)
    foreign = [entry for entry in entries if not (replaceable or _never)(entry)]
    if foreign:
        raise InputError(
            f"{target}: refusing to replace a directory that holds other files "
            f"(e.g. {foreign[0].name}); choose an empty or new directory"
        )
    refuse_links(target)  # only now: every entry is ours, so the walk stays in our output


def _fill(staging: Path, target: Path, files: Mapping[str, str | bytes], *, private: bool) -> None:
    parent = target.parent
    try:
        folder_mode = _PRIVATE_DIR_MODE if private else _DIR_MODE
        staging.chmod(folder_mode)
        mode = _PRIVATE_FILE_MODE if private else _FILE_MODE
        folders = {staging}
        for name, data in files.items():
            path = staging / name
            _make_inside(staging, path.parent, folder_mode)
            _write_new(path, _as_bytes(data), mode)
            folders.update(staging / folder for folder in Path(name).parents[:-1])
        for folder in sorted(folders, key=lambda f: (-len(f.parts), f)):
            _fsync_dir(folder)  # deepest first: each folder's entries, then its own in its parent
        old: Path | None = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=_prefix(target), suffix=".old", dir=parent))
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


def _make_inside(staging: Path, folder: Path, mode: int) -> None:
    """The folders of a nested name inside ``staging``, with ``mode`` (not the umask's)."""
    missing: list[Path] = []
    while folder != staging and not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        made.mkdir()
        made.chmod(mode)


def _never(_entry: Path) -> bool:
    return False
