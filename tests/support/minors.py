"""The supported Kubernetes minors and what the all-features example renders at each: shared by
the tests that check every minor (tests/plane/test_apiserver_minors.py,
tests/plane/test_plane_cluster_features.py, tests/plane/test_plane_kubeadm_minors.py) and the
render-tier check of which minors render a distinct API server configuration."""

from __future__ import annotations

from typing import Any

import yaml

from scs_templates import api
from scs_templates._versions.kubernetes import TESTED_PATCHES
from tests.support import REPO, pinned_helm

EXAMPLE = REPO / "examples" / "openstack-all-features.yaml"


def supported_minors() -> list[tuple[int, int]]:
    from scs_templates import _versions as versions

    return sorted(versions.table().workload_minors)


def render_all_features(minor: tuple[int, int]) -> tuple[Any, api.RenderResult]:
    """(settings, render result) of the all-features example at ``minor``'s tested patch."""
    data = yaml.safe_load(EXAMPLE.read_text())
    data["spec"].setdefault("kubernetes", {})["version"] = (
        f"{minor[0]}.{minor[1]}.{TESTED_PATCHES[minor]}"
    )
    settings = api.validate_data(data).settings
    return settings, api.render(settings, helm=pinned_helm())
