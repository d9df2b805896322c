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
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scs_templates.errors import InputError, ScsTemplatesError
from scs_templates.toolchain import cache_root

__all__ = ["LIBRARY_CHART", "ChartRef", "chart_for", "chart_version", "charts_dir"]

#: The library chart every provider chart depends on.
LIBRARY_CHART = "scs-cluster-common"

_VERSION_LINE = re.compile(r"^version:\s*['\"]?([^'\"\s]+)", re.MULTILINE)


@dataclass(frozen=True)
class ChartRef:
    """A chart ready for ``helm template``: its name, version and directory."""

    name: str
    version: str
    path: Path


def charts_dir() -> Path:
    """The folder holding the charts: ``<repo>/charts`` in a checkout, else the wheel's data.

    The wheel force-includes ``charts`` as ``scs_templates/_data/charts``; a source checkout
    (editable install, tests) has them next to the package.
    """
    package = Path(__file__).resolve().parent
    for candidate in (package / "_data" / "charts", package.parent / "charts"):
        if (candidate / LIBRARY_CHART / "Chart.yaml").is_file():
            return candidate
    raise ScsTemplatesError(
        f"the cluster charts are missing (looked in {package / '_data' / 'charts'} and "
        f"{package.parent / 'charts'}); reinstall scs-templates"
    )


def provider_chart_name(provider: str) -> str:
    """``openstack`` -> ``openstack-cluster`` (the catalogue lists the same names)."""
    return f"{provider}-cluster"


def _files(chart: Path) -> list[Path]:
    """Every file of a chart, sorted, without the dependency folder and lock files."""
    return sorted(
        path
        for path in chart.rglob("*")
        if path.is_file()
        and path.relative_to(chart).parts[0] not in ("charts", "tmpcharts")
        and path.name != "Chart.lock"
    )


def _digest(charts: list[Path]) -> str:
    """sha256 over the relative paths and contents of the given charts' files."""
    digest = hashlib.sha256()
    for chart in charts:
        for path in _files(chart):
            digest.update(f"{chart.name}/{path.relative_to(chart).as_posix()}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


def _copy_chart(source: Path, target: Path) -> None:
    for path in _files(source):
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)


def _version(chart: Path) -> str:
    match = _VERSION_LINE.search((chart / "Chart.yaml").read_text(encoding="utf-8"))
    if not match:
        raise ScsTemplatesError(f"{chart / 'Chart.yaml'} has no version")
    return match.group(1)


def chart_version(name: str) -> str:
    """The version in ``Chart.yaml`` of the packaged chart ``name`` (e.g. ``openstack-cluster``)."""
    return _version(charts_dir() / name)


def chart_for(provider: str) -> ChartRef:
    """The provider's cluster chart, assembled with its library dependency in place.

    Fast path: when the content-addressed directory exists it is returned after hashing the
    (small) chart sources, without copying anything.
    """
    from scs_templates.catalogue import provider_names

    if provider not in provider_names():
        raise InputError(f"unknown provider {provider!r}; known: {', '.join(provider_names())}")
    root = charts_dir()
    name = provider_chart_name(provider)
    source, library = root / name, root / LIBRARY_CHART
    digest = _digest([source, library])
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
    return ChartRef(name=name, version=_version(source), path=target)
