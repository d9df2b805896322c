"""Which supported minors need a REAL kube-apiserver of their own: the API server
configuration the all-features example renders (every extra flag and every file it points
at) changes only at a few minors, and testenv.build.APISERVER_MINORS holds the oldest and
the newest minor and both sides of each change (tests/plane/test_plane_cluster_features.py
starts each of their kube-apiservers with it). Every other minor renders a configuration
byte-identical to that of both minors around it in APISERVER_MINORS: a real kube-apiserver
of it would load exactly what its neighbours load. This test fails, naming the minor, when a
change of the charts or the values makes a minor render a configuration of its own."""

from __future__ import annotations

import itertools
import json
from typing import Any

from testenv import build
from tests.support.minors import render_all_features, supported_minors


def _apiserver_configuration(minor: tuple[int, int]) -> str:
    """The rendered API server flags and the files under /etc/kubernetes, as one text."""
    _, result = render_all_features(minor)
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    spec: dict[str, Any] = kcp["spec"]["kubeadmConfigSpec"]
    flags = {a["name"]: a["value"] for a in spec["clusterConfiguration"]["apiServer"]["extraArgs"]}
    files = {
        f["path"]: f.get("content", f.get("contentFrom"))
        for f in spec["files"]
        if f["path"].startswith("/etc/kubernetes/")
    }
    return json.dumps({"flags": flags, "files": files}, sort_keys=True, indent=1)


def test_every_distinct_apiserver_configuration_meets_a_real_kube_apiserver_of_both_ends() -> None:
    minors = supported_minors()
    chosen = sorted(build.APISERVER_MINORS)
    assert set(chosen) <= set(minors), "a minor no longer supported"
    assert chosen[0] == minors[0] and chosen[-1] == minors[-1], "the oldest and newest run"
    configuration = {minor: _apiserver_configuration(minor) for minor in minors}
    for before, after in itertools.pairwise(minors):
        if configuration[before] != configuration[after]:
            assert {before, after} <= set(chosen), (
                f"the API server configuration changes between {before} and {after}: add "
                "both to testenv.build.APISERVER_MINORS"
            )
    for minor in set(minors) - set(chosen):
        lower = max(m for m in chosen if m < minor)
        upper = min(m for m in chosen if m > minor)
        assert configuration[minor] == configuration[lower] == configuration[upper], minor
