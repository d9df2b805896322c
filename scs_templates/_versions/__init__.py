"""The versions table: every version scs-templates defaults to, with where it was read.

One place for all of it (``table.json`` next to this file, generated from its sources by
``python -m scs_templates._maintain.update_versions``; see docs/versions.md): the Kubernetes minors
the targeted Cluster API release supports, the newest patch of each with its source, the
upstream end-of-life dates, the published kind node images (pinned by digest), the Cluster
API and CAPO releases, and the default service chart version per Kubernetes minor.

The settings model (``.x`` and the default version), the values builders (node images),
the services catalogue (chart defaults), ``scs-templates versions`` and the docs all read
this module; nothing else writes a version down. Support status is computed against the
table's own ``readOn`` date, so output never depends on the clock.
"""

from __future__ import annotations

import datetime
import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates._core.records import record
from scs_templates._core.version_numbers import Minor
from scs_templates._core.version_numbers import minor as minor_of

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "KindImage",
    "MinorRelease",
    "Provider",
    "ServiceDefault",
    "ServiceImage",
    "Source",
    "VersionTable",
    "table",
]

TABLE_PATH = Path(__file__).resolve().parent / "table.json"


def _patch_number(version: str) -> int:
    return int(version.rsplit(".", 1)[1])


@record
class Source:
    """Where a group of facts was read, and when."""

    key: str
    what: str
    where: str
    read_on: str
    note: str = ""


@record
class KindImage:
    """A published kind node image: ``kindest/node:vX.Y.Z@sha256:...``."""

    version: str
    image: str
    kind: str

    @property
    def patch(self) -> int:
        return _patch_number(self.version)

    @property
    def digest(self) -> str:
        return self.image.split("@", 1)[1]


@record
class MinorRelease:
    """One Kubernetes minor: its newest patch, its end of life and its kind images."""

    minor: Minor
    patch: int
    patch_source: str
    end_of_life: str | None
    end_of_life_source: str
    end_of_life_read_on: str
    kind_images: tuple[KindImage, ...]  # newest first

    @property
    def name(self) -> str:
        return f"{self.minor[0]}.{self.minor[1]}"

    @property
    def patch_version(self) -> str:
        return f"v{self.name}.{self.patch}"

    def kind_image(self, patch: int) -> KindImage | None:
        """The published image of exactly ``patch``, if there is one."""
        return next((i for i in self.kind_images if i.patch == patch), None)


@record
class Provider:
    """A Cluster API release (core or infrastructure provider) the charts target."""

    name: str
    module: str
    release: str
    contract: str
    crds: str
    note: str = ""


@record
class ServiceImage:
    """The image of an application that follows the Kubernetes minor (cluster-autoscaler
    1.M is for Kubernetes 1.M) while one chart serves several minors: its tag per minor."""

    repository: str
    by_minor: Mapping[str, str]
    source: str
    read_on: str


@record
class ServiceDefault:
    """The default chart version of one service release, per Kubernetes minor; ``image``
    for the releases whose chart runs an application that must follow the minor;
    ``support``: the Kubernetes minors upstream tests a release line on (``from`` version,
    ``minors``, ``source``, ``readOn``)."""

    release: str
    chart: str
    by_minor: Mapping[str, str]
    notes: Mapping[str, str]
    hold: Mapping[str, str]
    image: ServiceImage | None = None
    support: tuple[Mapping[str, Any], ...] = ()


@record
class VersionTable:
    """The shipped versions table (``table.json``), typed."""

    read_on: str
    sources: tuple[Source, ...]
    cluster_api: Provider
    workload_minors: tuple[Minor, ...]
    management_minors: tuple[Minor, ...]
    providers: Mapping[str, Provider]
    kind_mapper_from: str
    minors: tuple[MinorRelease, ...]  # oldest first
    services: Mapping[str, ServiceDefault]

    def minor(self, key: Minor) -> MinorRelease | None:
        return next((m for m in self.minors if m.minor == key), None)

    def source(self, key: str) -> Source:
        return next(s for s in self.sources if s.key == key)

    def end_of_life_reached(self, release: MinorRelease) -> bool:
        """Out of upstream support on the table's date: its own EOL date passed, or that of
        a newer minor (upstream branches end in order; an unknown date counts as passed then).
        """
        as_of = datetime.date.fromisoformat(self.read_on)
        for other in self.minors:
            if other.minor < release.minor or other.end_of_life is None:
                continue
            if datetime.date.fromisoformat(other.end_of_life) <= as_of:
                return True
        return False

    def status(self, release: MinorRelease) -> str:
        return "end of life" if self.end_of_life_reached(release) else "supported"

    @property
    def default_minor(self) -> MinorRelease:
        """New clusters get the newest minor that Cluster API supports and upstream still does."""
        supported = [m for m in self.minors if not self.end_of_life_reached(m)]
        if not supported:
            raise RuntimeError("versions table: no Kubernetes minor is supported upstream")
        return supported[-1]

    def service_version(self, release: str, minor: Minor) -> str:
        """The default chart version of ``release`` for Kubernetes ``minor``."""
        entry = self.services[release]
        return entry.by_minor[f"{minor[0]}.{minor[1]}"]

    def service_image(self, release: str, minor: Minor) -> tuple[str, str] | None:
        """(repository, tag) of the image ``release`` runs on Kubernetes ``minor``, for the
        releases whose application follows the minor; None for the others."""
        image = self.services[release].image
        if image is None:
            return None
        return image.repository, image.by_minor[f"{minor[0]}.{minor[1]}"]


def _provider(name: str, data: Mapping[str, Any]) -> Provider:
    return Provider(
        name=name,
        module=str(data["module"]),
        release=str(data["release"]),
        contract=str(data.get("contract", "")),
        crds=str(data.get("crds", "")),
        note=str(data.get("clusterAPI", "")),
    )


def _image(data: Mapping[str, Any] | None) -> ServiceImage | None:
    if not data:
        return None
    return ServiceImage(
        repository=str(data["repository"]),
        by_minor=dict(data["byMinor"]),
        source=str(data["source"]),
        read_on=str(data["readOn"]),
    )


def parse_table(data: Mapping[str, Any]) -> VersionTable:
    """Build the typed table from its JSON form."""
    sources = tuple(
        Source(key, str(s["what"]), str(s["where"]), str(s["readOn"]), str(s.get("note", "")))
        for key, s in data["sources"].items()
    )
    capi = data["clusterAPI"]
    minors = tuple(
        MinorRelease(
            minor=minor_of(key),
            patch=_patch_number(entry["patch"]),
            patch_source=str(entry["patchSource"]),
            end_of_life=entry["endOfLife"]["date"],
            end_of_life_source=str(entry["endOfLife"]["source"]),
            end_of_life_read_on=str(entry["endOfLife"]["readOn"]),
            kind_images=tuple(
                KindImage(str(i["version"]), str(i["image"]), str(i["kind"]))
                for i in entry["kindImages"]
            ),
        )
        for key, entry in sorted(data["kubernetes"].items(), key=lambda kv: minor_of(kv[0]))
    )
    services = {
        release: ServiceDefault(
            release=release,
            chart=str(entry["chart"]),
            by_minor=dict(entry["byMinor"]),
            notes=dict(entry.get("notes", {})),
            hold=dict(entry.get("hold", {})),
            image=_image(entry.get("image")),
            support=tuple(dict(s) for s in entry.get("support", [])),
        )
        for release, entry in data["services"].items()
    }
    return VersionTable(
        read_on=str(data["readOn"]),
        sources=sources,
        cluster_api=_provider("cluster-api", capi),
        workload_minors=tuple(minor_of(m) for m in capi["workloadMinors"]),
        management_minors=tuple(minor_of(m) for m in capi["managementMinors"]),
        providers={name: _provider(name, p) for name, p in data["providers"].items()},
        kind_mapper_from=next(
            (str(p["kindMapperFrom"]) for p in data["providers"].values() if "kindMapperFrom" in p),
            "",
        ),
        minors=minors,
        services=services,
    )


@functools.cache
def table() -> VersionTable:
    """The table shipped with this release of scs-templates (read once)."""
    return parse_table(json.loads(TABLE_PATH.read_text(encoding="utf-8")))


def table_json() -> dict[str, Any]:
    """The table as data (``scs-templates versions --output json``)."""
    data: dict[str, Any] = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    data.pop("_comment", None)
    return data
