"""Where the cluster charts live and how they are made ready to render.

Contract used by the render engine:
    chart_for(provider: str) -> ChartRef   # .name, .version, .path (a directory helm can
                                           # render with --skip-deps semantics: library chart
                                           # dependency already in place)

Each provider chart depends on the library chart ``scs-cluster-common`` through a
``file://`` dependency. Running ``helm dependency build`` on every render would cost time,
write into the (possibly read-only, possibly shared) installation and race when renders run
in parallel. Instead the provider chart is assembled ONCE into a content-addressed cache
directory with the library chart unpacked under its ``charts/`` folder: helm then renders it
as is. The directory name is the sha256 of every chart file, so a changed chart gets a new
directory and a present one is complete by construction (it is built in a temporary
directory and moved in place with one atomic rename).

Hashing the sources costs ~1 ms, which a fleet of 2000 clusters would pay 2000 times, so
:func:`chart_for` remembers its answer per process. The memo can never be stale: it is
checked on every call against the status (size, inode, mtime, ctime) of every source file,
and taken only when every file's ctime lies :data:`SETTLED_SECONDS` in the past. The kernel
sets ctime to the current time on every write and nobody can set it back (unlike mtime), so
a file changed after the memo was taken has a different ctime; a change racing the hashing
itself (same timestamp tick) cannot happen to a file that has been quiet for that long.
This is git's "racily clean" rule.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates._core.digest import sha256
from scs_templates._core.records import record
from scs_templates._core.shipped import LIBRARY_CHART, chart_version, charts_dir, version_of_chart
from scs_templates._tools.toolchain.resolve import cache_root
from scs_templates.providers.registry import provider as provider_named

if TYPE_CHECKING:
    from scs_templates.providers.interface import Provider

__all__ = ["LIBRARY_CHART", "ChartRef", "chart_for", "chart_version", "charts_dir"]

#: A source file whose ctime is younger than this may still change within the same
#: timestamp tick; while any is, :func:`chart_for` hashes on every call.
SETTLED_SECONDS = 2.0


@record
class ChartRef:
    """A chart ready for ``helm template``: its name, version and directory."""

    name: str
    version: str
    path: Path


def _scan(chart: Path) -> list[tuple[str, os.stat_result]]:
    """Every file of a chart with its status, sorted by path, without the dependency folder
    (``charts/``, ``tmpcharts/``) and lock files. os.scandir: this runs on every
    :func:`chart_for` call, pathlib would triple its cost."""
    found: list[tuple[str, os.stat_result]] = []
    pending = [(str(chart), True)]
    while pending:
        directory, top = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir():
                    if not (top and entry.name in ("charts", "tmpcharts")):
                        pending.append((entry.path, False))
                elif entry.name != "Chart.lock" and entry.is_file():
                    found.append((entry.path, entry.stat()))
    found.sort(key=lambda item: item[0].split("/"))  # as Path ordering (POSIX only)
    return found


def _files(chart: Path) -> list[Path]:
    """Every file of a chart, sorted, without the dependency folder and lock files."""
    return [Path(path) for path, _ in _scan(chart)]


def _digest(charts: list[Path]) -> str:
    """sha256 over the relative paths and contents of the given charts' files."""
    digest = sha256()
    for chart in charts:
        for path in _files(chart):
            digest.update(f"{chart.name}/{path.relative_to(chart).as_posix()}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


Signature = tuple[tuple[str, int, int, int, int], ...]


def _signature(charts: list[Path]) -> Signature:
    """Path, size, inode, mtime and ctime of every source file of the given charts."""
    return tuple(
        (path, status.st_size, status.st_ino, status.st_mtime_ns, status.st_ctime_ns)
        for chart in charts
        for path, status in _scan(chart)
    )


def _settled(signature: Signature, since_ns: int) -> bool:
    """Every file's ctime at least :data:`SETTLED_SECONDS` before ``since_ns``."""
    limit = since_ns - int(SETTLED_SECONDS * 1e9)
    return all(ctime < limit for *_, ctime in signature)


_memo_lock = threading.Lock()
#: (provider, charts dir, cache root) -> (source signature, the answer)
_memo: dict[tuple[str, Path, Path], tuple[Signature, ChartRef]] = {}


def _copy_chart(source: Path, target: Path) -> None:
    for path in _files(source):
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)


def _provider(provider: str | Provider) -> Provider:
    """``provider`` itself, or the provider of that name (InputError when unknown): the
    commands pass the settings' resolved provider, tests and tools may pass a name."""
    if not isinstance(provider, str):
        return provider

    return provider_named(provider)


def provider_chart_version(provider: str | Provider) -> str:
    """The version of the provider's cluster chart, wherever its source is (a provider
    registered for tests keeps its chart outside the shipped folder)."""
    return version_of_chart(_provider(provider).chart_source(charts_dir()))


def chart_for(provider: str | Provider) -> ChartRef:
    """The provider's cluster chart, assembled with its library dependency in place.

    Fast path: the answer remembered for these exact source files (see the module doc), or,
    when the content-addressed directory exists, the directory after hashing the (small)
    chart sources, without copying anything.
    """
    entry = _provider(provider)
    root = charts_dir()
    name = entry.chart
    sources = [entry.chart_source(root), root / LIBRARY_CHART]
    key = (entry.name, root, cache_root())
    started = time.time_ns()
    signature = _signature(sources)
    with _memo_lock:
        remembered = _memo.get(key)
    if (
        remembered is not None
        and remembered[0] == signature
        and (remembered[1].path / "Chart.yaml").is_file()
    ):
        return remembered[1]
    chart = _assemble(name, sources)
    if _settled(signature, started) and _signature(sources) == signature:
        with _memo_lock:
            _memo[key] = (signature, chart)
    return chart


def _assemble(name: str, sources: list[Path]) -> ChartRef:
    """Hash the sources; copy them into the content-addressed directory unless present."""
    source, library = sources
    digest = _digest(sources)
    target = cache_root() / "charts" / digest / name
    if not (target / "Chart.yaml").is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
        staging.chmod(0o755)  # mkdtemp makes it private; the cache may be shared
        try:
            _copy_chart(source, staging)
            _copy_chart(library, staging / "charts" / LIBRARY_CHART)
            try:
                staging.replace(target)
            except OSError:
                # Another process won the race: its copy is identical by construction.
                if not (target / "Chart.yaml").is_file():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return ChartRef(name=name, version=version_of_chart(source), path=target)
