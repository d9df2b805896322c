"""Kubernetes versions: the supported range and the table of tested patch releases.

``1.33.x`` in a settings file means "the newest patch of 1.33 that this release of
scs-templates was tested with" (the KaaS v1 convention). The table is data, documented in
``docs/settings.md``; bump it in a release, never at render time, so a render stays
reproducible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# minor -> newest tested patch release. Oldest first.
TESTED_PATCHES: dict[tuple[int, int], int] = {
    (1, 32): 9,
    (1, 33): 5,
    (1, 34): 1,
    (1, 35): 2,
}
SUPPORTED_MINORS: tuple[tuple[int, int], ...] = tuple(sorted(TESTED_PATCHES))
DEFAULT_VERSION = "1.34.x"

_VERSION_RE = re.compile(
    r"^v?(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)\.(?P<patch>0|[1-9]\d*|x)$"
)


@dataclass(frozen=True, order=True)
class KubernetesVersion:
    """A resolved Kubernetes version (always a concrete patch)."""

    major: int
    minor: int
    patch: int

    def __str__(self) -> str:
        return f"v{self.major}.{self.minor}.{self.patch}"

    @property
    def minor_key(self) -> tuple[int, int]:
        return (self.major, self.minor)


def supported_range_text() -> str:
    low, high = SUPPORTED_MINORS[0], SUPPORTED_MINORS[-1]
    return f"{low[0]}.{low[1]} to {high[0]}.{high[1]}"


def parse_version(text: str) -> KubernetesVersion:
    """Resolve ``1.33.x``/``v1.33.5``/``1.33.5`` to a concrete supported version.

    Raises ValueError with a message fit for a settings problem.
    """
    match = _VERSION_RE.match(text.strip())
    if not match:
        raise ValueError(
            f"{text!r} is not a Kubernetes version; write it as 1.33.x (newest tested patch) "
            "or 1.33.5"
        )
    major, minor = int(match["major"]), int(match["minor"])
    if (major, minor) not in TESTED_PATCHES:
        raise ValueError(
            f"Kubernetes {major}.{minor} is outside the supported range ({supported_range_text()})"
        )
    patch_text = match["patch"]
    patch = TESTED_PATCHES[(major, minor)] if patch_text == "x" else int(patch_text)
    return KubernetesVersion(major, minor, patch)
