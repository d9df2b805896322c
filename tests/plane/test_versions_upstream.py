"""The versions table reproduced from its sources (the unit and render parts of the table's
tests are tests/unit/test_versions.py and tests/render/test_versions_render.py).

These tests read the REAL sources: the Cluster API modules (docs, CAPD's kind
mapper, CRDs) and CAPO from the Go module proxy at the exact releases the table names
(module zips are immutable, so these tests do not move when upstream publishes), and the
real packaged charts in ../shared/charts. They need ``go`` and the proxy (a package registry,
reachable in CI) and skip outside CI when those are missing.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from scs_templates._maintain import update_versions as maintainer
from scs_templates._versions import TABLE_PATH
from scs_templates._versions.upstream import Go, UpdateError, Upstream
from scs_templates.providers.docker import versions_source as capd
from scs_templates.providers.openstack import versions_source as capo
from scs_templates.providers.registry import shipped_providers
from tests.support import SHARED, skip_or_fail, versions
from tests.support.versions import INPUTS, RAW, TABLE_RELEASES, VERSIONS

# --------------------------------------------------------------------------- real sources


#: The module versions the table names: what the proxy served on the read date, as far as
#: the table is concerned.
WANTED = {
    "capi": (maintainer.CAPI_MODULE, VERSIONS.cluster_api.release),
    "capd": (capd.MODULE, VERSIONS.kind_mapper_from),
    "capd-same": (capd.MODULE, VERSIONS.cluster_api.release),
    "capo": (capo.MODULE, VERSIONS.providers["openstack"].release),
}


class FrozenProxy(Go):
    """The Go module proxy as of the table's read date: it lists and serves exactly the
    module versions the table names (module zips are immutable), so the providers'
    ``read_versions`` choose what they chose then, however much upstream published since."""

    def __init__(self, workdir: Path, served: Mapping[str, set[str]]) -> None:
        super().__init__(workdir)
        self.served = served

    def versions(self, module: str) -> list[str] | None:
        return sorted(self.served[module]) if module in self.served else None

    def download(self, module: str, version: str) -> Path | None:
        return super().download(module, version) if version in self.served.get(module, ()) else None


@pytest.fixture(scope="module")
def go_proxy() -> Iterator[FrozenProxy]:
    """The frozen proxy, after checking that the real one serves every version it does."""
    if shutil.which("go") is None:
        skip_or_fail("go not on PATH (needed to read the Cluster API modules)")
    served: dict[str, set[str]] = {}
    for module, version in WANTED.values():
        served.setdefault(module, set()).add(version)
    with tempfile.TemporaryDirectory(prefix="scs-versions-test-") as temp:
        yield FrozenProxy(Path(temp), served)


@pytest.fixture(scope="module")
def go_sources(go_proxy: FrozenProxy) -> dict[str, Path]:
    """The module directories of the exact releases the table names (Go module proxy)."""
    found: dict[str, Path] = {}
    for key, (module, version) in WANTED.items():
        try:
            directory = go_proxy.download(module, version)
        except UpdateError as error:
            skip_or_fail(f"Go module proxy not reachable: {error}")
            raise
        if directory is None:
            pytest.fail(f"{module}@{version} named by the table is not served")
        found[key] = directory
    return found


@pytest.fixture(scope="module")
def chart_packages() -> list[maintainer.ChartPackage]:
    return versions.chart_packages()


def test_every_docker_image_is_in_capds_published_table(go_sources: dict[str, Path]) -> None:
    mapper = (go_sources["capd"] / capd.MAPPER).read_text(encoding="utf-8")
    published = {image.image for image in capd.kind_images(mapper)}
    for release in VERSIONS.minors:
        for image in release.kind_images:
            assert image.image in published, image.image
            assert image.image in mapper  # tag AND digest, as published


def test_supported_minors_are_cluster_apis(go_sources: dict[str, Path]) -> None:
    text = (go_sources["capi"] / "docs/book/src/reference/versions.md").read_text(encoding="utf-8")
    workload, management = maintainer.capi_support(text, VERSIONS.cluster_api.release)
    assert tuple(workload) == VERSIONS.workload_minors
    assert tuple(management) == VERSIONS.management_minors
    # v1.14.0 would not have 1.37: the ">= v1.14.1" cell is honoured
    assert (1, 37) not in maintainer.capi_support(text, "v1.14.0")[0]


def test_the_table_is_reproduced_from_its_sources(
    go_proxy: FrozenProxy,
    go_sources: dict[str, Path],
    chart_packages: list[maintainer.ChartPackage],
) -> None:
    """build_table over the real sources, the providers' parts read by their own
    ``read_versions`` through the proxy as of the read date, gives table.json byte for byte:
    nothing in it was typed in by hand (the k8s tag list is the one recorded on the read
    date)."""
    crds = SHARED / "crds"
    if not crds.is_dir():
        skip_or_fail(f"reference CRDs not found at {crds}")
    upstream = Upstream(go_proxy, VERSIONS.cluster_api.release, RAW, INPUTS, crds, VERSIONS.read_on)
    providers = maintainer.provider_versions(upstream, shipped_providers())
    rebuilt = maintainer.build_table(
        today=VERSIONS.read_on,
        k8s_tags=RAW["sources"]["k8s-tags"]["versions"],
        capi_release=VERSIONS.cluster_api.release,
        capi_dir=go_sources["capi"],
        providers=providers,
        packages=chart_packages,
        shared_crds=crds,
        inputs=INPUTS,
        releases=[(info.release, info.chart) for info in TABLE_RELEASES],
    )
    assert maintainer.dump(rebuilt) == TABLE_PATH.read_text(encoding="utf-8")
    # every module version the providers read is one the table names
    pinned = {f"{module}@{version}" for module, version in WANTED.values()}
    assert {m for p in providers.values() for m in p.read} == pinned - {"@".join(WANTED["capi"])}
    # the CRD sets used for strict validation are those of the targeted releases
    assert RAW["clusterAPI"]["crds"] and RAW["providers"]["openstack"]["crds"]
