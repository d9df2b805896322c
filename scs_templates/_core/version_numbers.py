"""Version numbers as the project reads them: one parser for ``[v]X.Y.Z`` and ``X.Y``.

Versions come from four places: the settings (``1.33.x``, ``v1.33.5``), tools' output
(``helm version`` prints ``v3.15.3+g3bb50bb``), the release history (an installed
cluster's ``v1.33.5``) and upstream release lists (tags, of which only ``vX.Y.Z`` is a
stable release). They share one grammar, here; each reader picks how much of the text must
be the version (:func:`exact`, :func:`leading`, :func:`first_in`). Pure and import-light:
the CLI's start-up and the settings' fast path read versions too.
"""

from __future__ import annotations

import re

#: ``(major, minor, patch)``: compares as versions do.
Version = tuple[int, int, int]
#: ``(major, minor)``.
Minor = tuple[int, int]

_CORE = r"v?(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)"
_EXACT = re.compile(_CORE)
_IN_TEXT = re.compile(rf"(?<![\w.]){_CORE}")
#: A Kubernetes version as the settings write it: ``1.33.x`` (the newest tested patch) or
#: ``1.33.5``, ``v`` allowed; no leading zeros. ASCII digits only and ``\Z`` (Python's ``$``
#: also matches before a trailing newline); at most 4 digits a part: helm parses
#: ``--kube-version`` segments as uint64.
_KUBERNETES = re.compile(
    r"\Av?(?P<major>0|[1-9][0-9]{0,3})\.(?P<minor>0|[1-9][0-9]{0,3})"
    r"\.(?P<patch>0|[1-9][0-9]{0,3}|x)\Z"
)
_MINOR = re.compile(r"(?P<major>\d+)\.(?P<minor>\d+)")


def _version(match: re.Match[str] | None) -> Version | None:
    if match is None:
        return None
    return int(match["major"]), int(match["minor"]), int(match["patch"])


def exact(text: str) -> Version | None:
    """``v1.36.3`` -> ``(1, 36, 3)``; anything more or less (a pre-release, a suffix) -> None."""
    return _version(_EXACT.fullmatch(text.strip()))


def leading(text: str) -> Version | None:
    """The version the text starts with: ``v1.33.5+build.1`` -> ``(1, 33, 5)``; else None."""
    return _version(_EXACT.match(text.strip()))


def first_in(text: str) -> Version | None:
    """The first version standing on its own in a tool's output (``Version:"v3.15.3"``)."""
    return _version(_IN_TEXT.search(text))


def kubernetes(text: str) -> tuple[int, int, int | None] | None:
    """A Kubernetes version as the settings write it: ``1.33.x`` -> ``(1, 33, None)``,
    ``v1.33.5`` -> ``(1, 33, 5)``; None when it is not one."""
    match = _KUBERNETES.match(text.strip())
    if match is None:
        return None
    patch = match["patch"]
    return int(match["major"]), int(match["minor"]), None if patch == "x" else int(patch)


def minor(text: str) -> Minor:
    """``1.33`` -> ``(1, 33)`` (the keys of the versions table); ValueError otherwise."""
    match = _MINOR.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a minor version such as 1.33")
    return int(match["major"]), int(match["minor"])


def minor_text(value: Minor) -> str:
    """``(1, 33)`` -> ``1.33``."""
    return f"{value[0]}.{value[1]}"
