"""Where the files shipped beside the package are: a source checkout, or the wheel.

The wheel force-includes ``charts`` and ``helmfile.d`` as ``scs_templates/_data/<name>``;
a source checkout (editable install, tests) has them next to the package.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from scs_templates._core.errors import ScsTemplatesError

__all__ = ["LIBRARY_CHART", "chart_version", "charts_dir", "shipped_dir", "version_of_chart"]

#: The library chart every cluster chart depends on (also the marker of the charts folder).
LIBRARY_CHART = "scs-cluster-common"
_VERSION_LINE = re.compile(r"^version:\s*['\"]?([^'\"\s]+)", re.MULTILINE)

_PACKAGE = Path(__file__).resolve().parents[1]  # scs_templates/, above _core/


def shipped_dir(name: str, what: str, marker: str = ".") -> Path:
    """The folder ``name`` (holding ``marker``) from the wheel's data or the checkout;
    ScsTemplatesError naming ``what`` and both places otherwise."""
    candidates = (_PACKAGE / "_data" / name, _PACKAGE.parent / name)
    for candidate in candidates:
        if (candidate / marker).exists() and candidate.is_dir():
            return candidate
    raise ScsTemplatesError(
        f"{what} missing (looked in {candidates[0]} and {candidates[1]}); reinstall scs-templates"
    )


@functools.cache
def charts_dir() -> Path:
    """The folder holding the charts: ``<repo>/charts`` in a checkout, else the wheel's data."""
    return shipped_dir("charts", "the cluster charts are", f"{LIBRARY_CHART}/Chart.yaml")


def version_of_chart(chart: Path) -> str:
    """The ``version`` line of the chart folder's ``Chart.yaml``."""
    match = _VERSION_LINE.search((chart / "Chart.yaml").read_text(encoding="utf-8"))
    if not match:
        raise ScsTemplatesError(f"{chart / 'Chart.yaml'} has no version")
    return match.group(1)


def chart_version(name: str) -> str:
    """The version in ``Chart.yaml`` of the packaged chart ``name`` (e.g. ``openstack-cluster``)."""
    return version_of_chart(charts_dir() / name)
