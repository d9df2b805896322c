"""Kubernetes versions of a settings file: the accepted range, ``.x`` and the Docker images.

``1.37.x`` in a settings file means "the newest patch of 1.37 in the versions table of this
release of scs-templates" (the KaaS v1 convention). The table
(:mod:`scs_templates._versions`, documented in docs/versions.md) is data read from its
sources by a maintainer script; it changes with a release, never at render time, so a render
stays reproducible.

Accepted minors are those the targeted Cluster API release supports for workload clusters.
Minors out of upstream support stay accepted, with a warning, so that existing clusters can
upgrade one minor at a time. New clusters default to the newest minor upstream supports.

Docker clusters run published kind node images, pinned by digest: a patch without a
published image resolves to the newest published image of its minor, and says so.
"""

from __future__ import annotations

from scs_templates._core import version_numbers
from scs_templates._core.records import ordered_record, record
from scs_templates._versions import KindImage, table

_TABLE = table()

#: minor -> newest known patch release (from the versions table). Oldest first.
TESTED_PATCHES: dict[tuple[int, int], int] = {m.minor: m.patch for m in _TABLE.minors}
SUPPORTED_MINORS: tuple[tuple[int, int], ...] = tuple(sorted(TESTED_PATCHES))
DEFAULT_VERSION = f"{_TABLE.default_minor.name}.x"


@ordered_record
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


@record
class ResolvedVersion:
    """The version a cluster of a provider really runs.

    ``version``: what the control plane and machines get. ``kind_image``: the published kind
    node image (Docker only). ``note``: why ``version`` differs from what was asked, if it
    does (a patch without a published kind image).
    """

    version: KubernetesVersion
    kind_image: KindImage | None = None
    note: str | None = None


def supported_range_text() -> str:
    low, high = SUPPORTED_MINORS[0], SUPPORTED_MINORS[-1]
    return f"{low[0]}.{low[1]} to {high[0]}.{high[1]}"


def parse_version(text: str) -> KubernetesVersion:
    """Resolve ``1.37.x``/``v1.37.2``/``1.37.2`` to a concrete supported version.

    Raises ValueError with a message fit for a settings problem.
    """
    parts = version_numbers.kubernetes(text)
    if parts is None:
        raise ValueError(
            f"{text!r} is not a Kubernetes version; write it as 1.37.x (newest patch in the "
            "versions table) or 1.37.2"
        )
    major, minor, patch_number = parts
    if (major, minor) not in TESTED_PATCHES:
        raise ValueError(
            f"Kubernetes {major}.{minor} is outside the supported range ({supported_range_text()}"
            f", the workload cluster versions of Cluster API {_TABLE.cluster_api.release})"
        )
    newest = TESTED_PATCHES[(major, minor)]
    if patch_number is not None and patch_number > newest:
        raise ValueError(
            f"Kubernetes {major}.{minor}.{patch_number} does not exist: the newest patch of "
            f"{major}.{minor} is {major}.{minor}.{newest} (versions table of {_TABLE.read_on}; "
            f"{major}.{minor}.x means that one)"
        )
    return KubernetesVersion(major, minor, newest if patch_number is None else patch_number)


def resolve_version(text: str, kind_node_images: bool = False) -> ResolvedVersion:
    """The version a provider really runs for ``text`` (ValueError as :func:`parse_version`).

    A provider whose nodes boot kind node images (``Provider.kind_node_images``): the
    kind node image of exactly that patch when one is published; otherwise the
    newest published image of the minor, with a note saying so.
    """
    version = parse_version(text)
    if not kind_node_images:
        return ResolvedVersion(version)
    release = _TABLE.minor(version.minor_key)
    if release is None or not release.kind_images:  # pragma: no cover - table is checked
        raise ValueError(f"no published kind node image for Kubernetes {version.minor_key}")
    exact = release.kind_image(version.patch)
    if exact is not None:
        return ResolvedVersion(version, exact)
    newest = release.kind_images[0]
    used = KubernetesVersion(version.major, version.minor, newest.patch)
    return ResolvedVersion(
        used,
        newest,
        f"{text} is Kubernetes {version}, and no kind node image is published for it "
        f"(CAPD's table, sigs.k8s.io/cluster-api/test@{_TABLE.kind_mapper_from}, has "
        f"{release.name} images up to {newest.version}, from kind {newest.kind}): the "
        f"cluster's kind nodes run {used} ({newest.image.split('@', 1)[0]}) and its manifests "
        f"declare {used}",
    )


def support_warning(text: str) -> str | None:
    """A warning when the minor of ``text`` is out of upstream support (None otherwise)."""
    try:
        version = parse_version(text)
    except ValueError:
        return None
    release = _TABLE.minor(version.minor_key)
    if release is None or not _TABLE.end_of_life_reached(release):
        return None
    since = f" since {release.end_of_life}" if release.end_of_life else ""
    following = (version.major, version.minor + 1)
    step = f"{following[0]}.{following[1]}.x"
    return (
        f"Kubernetes {release.name} is out of upstream support{since} (as of the versions "
        f"table of {_TABLE.read_on}); accepted so that existing clusters can upgrade one "
        f"minor at a time: upgrade to {step} next (new clusters: {DEFAULT_VERSION})"
    )
