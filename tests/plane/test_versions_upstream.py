"""The versions table: its rules, its consumers, its docs and its reproduction from sources.

The strongest tests here read the REAL sources: the Cluster API modules (docs, CAPD's kind
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
from scs_templates._versions import table
from tests.support import SHARED, skip_or_fail

VERSIONS = table()


# --------------------------------------------------------------------------- table rules


# --------------------------------------------------------------------------- Docker images


# --------------------------------------------------------------------------- service charts


@pytest.fixture(scope="module")
def chart_packages() -> list[maintainer.ChartPackage]:
    charts = SHARED / "charts"
    if not charts.is_dir():
        skip_or_fail(f"real charts not found at {charts}")
    return maintainer.chart_packages(charts)


# --------------------------------------------------------------------------- parsers


# --------------------------------------------------------------------------- CLI and docs


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


def test_every_docker_image_is_in_capds_published_table(go_sources: dict[str, Path]) -> None:
    mapper = (go_sources["capd"] / "infrastructure/kind/mapper.go").read_text(encoding="utf-8")
    published = {image.image for image in maintainer.kind_images(mapper)}
    for release in VERSIONS.minors:
        for image in release.kind_images:
            assert image.image in published, image.image
            assert image.image in mapper  # tag AND digest, as published
