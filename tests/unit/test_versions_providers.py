"""The versions table's provider parts come from the providers' ``read_versions`` hooks:
the maintainer script names no provider (tests/unit/test_provider_names.py), it places what
each hook returns, in provider-name order. The shipped hooks over the real sources are
tests/plane/test_versions_upstream.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from scs_templates._maintain import update_versions as maintainer
from scs_templates._versions import KindImage
from scs_templates._versions.upstream import Go, ProviderVersions, UpdateError, Upstream
from scs_templates.providers.interface import Provider
from scs_templates.providers.operations import Operations, operations_of

VERSIONS_MD = """\
### Core provider

| | v1.14 |
|---|---|
| Kubernetes v1.35 | ✓ |
| Kubernetes v1.36 | ✓ |
"""
METADATA = "releaseSeries:\n  - major: 1\n    minor: 14\n    contract: v1beta2\n"
IMAGE = "kindest/node:v1.36.4@sha256:" + "0" * 64


class Plain(Provider):
    """A provider without operations (so without versions of its own: the defaults)."""

    name: ClassVar[str] = "plain"
    description: ClassVar[str] = "no versions of its own"


class ReadingOperations(Operations):
    """Operations whose hook returns a fixed part of the table (set by the test)."""

    part: ProviderVersions | None = None

    def read_versions(self, upstream: Upstream) -> ProviderVersions | None:
        assert upstream.cluster_api_release == "v1.14.2"
        return self.part


READING = ReadingOperations()


class Reading(Provider):
    """A provider whose operations read a part of the table."""

    name: ClassVar[str] = "reading"
    description: ClassVar[str] = "reads its versions"
    operations: ClassVar[str | None] = f"{__name__}:READING"


def _upstream(tmp_path: Path) -> Upstream:
    return Upstream(Go(tmp_path), "v1.14.2", {}, {}, tmp_path / "crds", "2026-12-01")


def _table(tmp_path: Path, providers: dict[str, ProviderVersions]) -> dict[str, Any]:
    capi = tmp_path / "capi"
    (capi / "docs/book/src/reference").mkdir(parents=True)
    (capi / "docs/book/src/reference/versions.md").write_text(VERSIONS_MD, encoding="utf-8")
    (capi / "metadata.yaml").write_text(METADATA, encoding="utf-8")
    end_of_life = {"date": None, "source": "test", "readOn": "2026-12-01"}
    return maintainer.build_table(
        today="2026-12-01",
        k8s_tags=["v1.35.2", "v1.36.1"],
        capi_release="v1.14.2",
        capi_dir=capi,
        providers=providers,
        packages=[],
        shared_crds=tmp_path / "crds",
        inputs={"endOfLife": {"1.35": end_of_life, "1.36": end_of_life}},
        releases=[],
    )


def _part(name: str, **extra: Any) -> ProviderVersions:
    return ProviderVersions(
        entry={"module": f"example.org/{name}", "release": "v1.0.0"},
        sources={f"{name}-src": {"what": name, "where": "here", "readOn": "2026-12-01"}},
        **extra,
    )


def test_a_provider_without_the_hook_contributes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part = _part("reading")
    monkeypatch.setattr(READING, "part", part)
    found = maintainer.provider_versions(_upstream(tmp_path), [Reading(), Plain()])
    assert found == {"reading": part}
    assert operations_of(Plain()).read_versions(_upstream(tmp_path)) is None


def test_the_tables_provider_entries_and_sources_come_from_the_hooks_in_name_order(
    tmp_path: Path,
) -> None:
    kind = KindImage("v1.36.4", IMAGE, "v0.31")
    table = _table(
        tmp_path,
        {
            "zeta": _part("zeta"),
            "alpha": _part("alpha", kind_images=(kind,), kind_images_source="alpha-src"),
        },
    )
    assert table["providers"] == {
        "alpha": {"module": "example.org/alpha", "release": "v1.0.0"},
        "zeta": {"module": "example.org/zeta", "release": "v1.0.0"},
    }
    assert list(table["providers"]) == ["alpha", "zeta"]
    assert list(table["sources"]) == [
        "k8s-tags",
        "capi-versions",
        "alpha-src",
        "zeta-src",
        "charts",
    ]
    # a provider's kind image names a newer patch than the tags: its source row is named
    newest = table["kubernetes"]["1.36"]
    assert (newest["patch"], newest["patchSource"]) == ("v1.36.4", "alpha-src")
    assert newest["kindImages"] == [{"version": "v1.36.4", "image": IMAGE, "kind": "v0.31"}]
    older = table["kubernetes"]["1.35"]
    assert (older["patch"], older["patchSource"], older["kindImages"]) == (
        "v1.35.2",
        "k8s-tags",
        [],
    )


def test_without_providers_the_table_has_no_provider_parts(tmp_path: Path) -> None:
    table = _table(tmp_path, {})
    assert table["providers"] == {}
    assert list(table["sources"]) == ["k8s-tags", "capi-versions", "charts"]


def test_two_providers_cannot_name_the_same_source_row(tmp_path: Path) -> None:
    clash = ProviderVersions(entry={}, sources={"alpha-src": {}})
    with pytest.raises(UpdateError, match="two sources of the table are called 'alpha-src'"):
        _table(tmp_path, {"alpha": _part("alpha"), "beta": clash})
