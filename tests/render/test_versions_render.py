"""The versions table: its rules, its consumers, its docs and its reproduction from sources.

The strongest tests here read the REAL sources: the Cluster API modules (docs, CAPD's kind
mapper, CRDs) and CAPO from the Go module proxy at the exact releases the table names
(module zips are immutable, so these tests do not move when upstream publishes), and the
real packaged charts in ../shared/charts. They need ``go`` and the proxy (a package registry,
reachable in CI) and skip outside CI when those are missing.
"""

from __future__ import annotations

import re

import pytest

from scs_templates._maintain import update_versions as maintainer
from scs_templates._settings import parse_settings_text
from tests.support import SHARED, skip_or_fail
from tests.unit.test_versions import VERSIONS, settings_text

# --------------------------------------------------------------------------- table rules


# --------------------------------------------------------------------------- Docker images


def test_capd_node_image_for_a_declared_patch_without_an_image_is_accurate() -> None:
    """Issue 40, defect 10: a Docker machine on 1.37.x (v1.37.2, the table's patch) boots
    kindest/node v1.37.0. No v1.37.2 image exists (CAPD's table at v1.14.4 and kind v0.33.0,
    the newest kind release, whose default image is v1.37.0 with the same digest), so the
    fallback stays; the warning says what the machines run AND declare (the same version:
    a node never reports another version than its Machine says) and which image."""
    from scs_templates._render.render import render

    release = VERSIONS.minor((1, 37))
    assert release is not None and release.kind_image(release.patch) is None
    newest = release.kind_images[0]
    text = settings_text("docker", "1.37.x")
    loaded = parse_settings_text(text)
    (note,) = [w.message for w in loaded.warnings if "kind node image" in w.message]
    tag = newest.image.split("@", 1)[0]
    assert f"Docker clusters run {newest.version} ({tag}) and their manifests declare " in note
    assert f"up to {newest.version}, from kind {newest.kind}" in note
    manifests = render(loaded.settings).manifests
    declared = set(re.findall(r"^\s*version: (v1\.37\.\d+)$", manifests, re.MULTILINE))
    assert declared == {newest.version}, declared  # never v1.37.2 next to a v1.37.0 image
    assert newest.image in manifests


# --------------------------------------------------------------------------- service charts


#: The releases with a row of their own (the others take their ``version_of``'s version).


@pytest.fixture(scope="module")
def chart_packages() -> list[maintainer.ChartPackage]:
    charts = SHARED / "charts"
    if not charts.is_dir():
        skip_or_fail(f"real charts not found at {charts}")
    return maintainer.chart_packages(charts)


# --------------------------------------------------------------------------- parsers


# --------------------------------------------------------------------------- CLI and docs


# --------------------------------------------------------------------------- real sources
