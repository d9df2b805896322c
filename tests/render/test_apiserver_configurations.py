"""Which supported minors need a REAL kube-apiserver of their own: the API server
configuration the all-features example renders (every extra flag and every file it points
at) changes only at a few minors, and testenv.build.APISERVER_MINORS holds, for each
distinct configuration, the oldest minor that renders it, and the newest minor
(tests/plane/test_plane_cluster_features.py starts each of their kube-apiservers with its
configuration, and the newest one with every configuration). Every other minor renders a
configuration byte-identical to that of the nearest older minor in APISERVER_MINORS: a real
kube-apiserver of it would load what the oldest and the newest kube-apiserver load. This
test fails, naming the minor, when a change of the charts or the values makes a minor render
a configuration of its own."""

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


def test_every_distinct_apiserver_configuration_meets_its_oldest_kube_apiserver() -> None:
    minors = supported_minors()
    chosen = sorted(build.APISERVER_MINORS)
    assert set(chosen) <= set(minors), "a minor no longer supported"
    assert chosen[0] == minors[0] and chosen[-1] == minors[-1], "the oldest and newest run"
    configuration = {minor: _apiserver_configuration(minor) for minor in minors}
    for before, after in itertools.pairwise(minors):
        if configuration[before] != configuration[after]:
            assert after in chosen, (
                f"the API server configuration changes between {before} and {after}: add "
                f"{after} to testenv.build.APISERVER_MINORS"
            )
    for minor in set(minors) - set(chosen):
        lower = max(m for m in chosen if m < minor)
        assert configuration[minor] == configuration[lower], minor
    for minor in chosen[1:-1]:
        below = max(m for m in minors if m < minor)
        assert configuration[minor] != configuration[below], (
            f"{minor} renders what {below} renders: it needs no kube-apiserver of its own"
        )
