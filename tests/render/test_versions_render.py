"""The versions table as rendered: what a Docker machine of a declared patch boots (helm
template). Its rules are tests/unit/test_versions.py; its sources,
tests/plane/test_versions_upstream.py.
"""

from __future__ import annotations

import re

from scs_templates._settings.validate import parse_settings_text

# --------------------------------------------------------------------------- table rules
from tests.support.versions import VERSIONS, settings_text

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
    runs = f"the cluster's kind nodes run {newest.version} ({tag}) and its manifests declare "
    assert runs in note
    assert f"up to {newest.version}, from kind {newest.kind}" in note
    manifests = render(loaded.settings).manifests
    declared = set(re.findall(r"^\s*version: (v1\.37\.\d+)$", manifests, re.MULTILINE))
    assert declared == {newest.version}, declared  # never v1.37.2 next to a v1.37.0 image
    assert newest.image in manifests
