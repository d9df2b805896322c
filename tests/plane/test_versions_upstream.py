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
from collections.abc import Iterator
from pathlib import Path

import pytest

from scs_templates._maintain import update_versions as maintainer
from scs_templates._versions import TABLE_PATH
from tests.support import SHARED, skip_or_fail, versions
from tests.support.versions import INPUTS, RAW, TABLE_RELEASES, VERSIONS

# --------------------------------------------------------------------------- real sources


@pytest.fixture(scope="module")
def go_sources() -> Iterator[dict[str, Path]]:
    """The module directories of the exact releases the table names (Go module proxy)."""
    if shutil.which("go") is None:
        skip_or_fail("go not on PATH (needed to read the Cluster API modules)")
    with tempfile.TemporaryDirectory(prefix="scs-versions-test-") as temp:
        go = maintainer.Go(Path(temp))
        wanted = {
            "capi": (maintainer.CAPI_MODULE, VERSIONS.cluster_api.release),
            "capd": (maintainer.CAPD_MODULE, VERSIONS.kind_mapper_from),
            "capd-same": (maintainer.CAPD_MODULE, VERSIONS.cluster_api.release),
            "capo": (maintainer.CAPO_MODULE, VERSIONS.providers["openstack"].release),
        }
        found: dict[str, Path] = {}
        for key, (module, version) in wanted.items():
            try:
                directory = go.download(module, version)
            except maintainer.UpdateError as error:
                skip_or_fail(f"Go module proxy not reachable: {error}")
            if directory is None:
                pytest.fail(f"{module}@{version} named by the table is not served")
            found[key] = directory
        yield found


@pytest.fixture(scope="module")
def chart_packages() -> list[maintainer.ChartPackage]:
    return versions.chart_packages()


def test_every_docker_image_is_in_capds_published_table(go_sources: dict[str, Path]) -> None:
    mapper = (go_sources["capd"] / "infrastructure/kind/mapper.go").read_text(encoding="utf-8")
    published = {image.image for image in maintainer.kind_images(mapper)}
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
    go_sources: dict[str, Path], chart_packages: list[maintainer.ChartPackage]
) -> None:
    """build_table over the real sources gives table.json byte for byte: nothing in it was
    typed in by hand (the k8s tag list is the one recorded on the read date)."""
    crds = SHARED / "crds"
    if not crds.is_dir():
        skip_or_fail(f"reference CRDs not found at {crds}")
    source = RAW["sources"]["capo"]["where"]
    probed = source.split("newer tags probed: ", 1)[1].split(", ")
    rebuilt = maintainer.build_table(
        today=VERSIONS.read_on,
        k8s_tags=RAW["sources"]["k8s-tags"]["versions"],
        capi_release=VERSIONS.cluster_api.release,
        capi_dir=go_sources["capi"],
        capd_release=VERSIONS.kind_mapper_from,
        capd_dir=go_sources["capd"],
        capd_crd_dir=go_sources["capd-same"] / "infrastructure/docker/config/crd/bases",
        capo_release=VERSIONS.providers["openstack"].release,
        capo_dir=go_sources["capo"],
        capo_probed=probed,
        packages=chart_packages,
        shared_crds=crds,
        inputs=INPUTS,
        releases=[(info.release, info.chart) for info in TABLE_RELEASES],
    )
    assert maintainer.dump(rebuilt) == TABLE_PATH.read_text(encoding="utf-8")
    # the CRD sets used for strict validation are those of the targeted releases
    assert RAW["clusterAPI"]["crds"] and RAW["providers"]["openstack"]["crds"]
