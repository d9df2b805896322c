"""The CNIs' real CRDs that our metadata policy needs, for real API servers in the tests.

Cilium's ``CiliumClusterwideNetworkPolicy`` CRD is not in Cilium's chart: the Cilium operator
creates it when it starts (no operator runs in the test planes). It is read from the cilium
Go module of the version the services catalogue installs, fetched through the Go module
proxy into the Go module cache (``go mod download``, in a throwaway module: never committed).
Calico's ``Tier`` and ``GlobalNetworkPolicy`` CRDs come from the real
``crd.projectcalico.org.v1`` chart in ../shared/charts.
"""

from __future__ import annotations

import functools
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from tests.support import real_charts, skip_or_fail

if TYPE_CHECKING:
    from scs_templates._tools.helm import Helm
    from testenv.kubeapi import KubeAPI

CILIUM_MODULE = "github.com/cilium/cilium"
#: The CRD file inside the cilium module.
CILIUM_CCNP_CRD = "pkg/k8s/apis/cilium.io/client/crds/v2/ciliumclusterwidenetworkpolicies.yaml"
#: The Calico CRDs the metadata policy's objects are (from the v3.32 CRD chart).
CALICO_POLICY_CRDS = ("tiers.crd.projectcalico.org", "globalnetworkpolicies.crd.projectcalico.org")


@functools.cache
def cilium_module(version: str) -> Path:
    """The directory of the cilium Go module at ``version`` (``1.20.0``), downloaded once."""
    from scs_templates._versions.upstream import Go, UpdateError

    tag = version if version.startswith("v") else f"v{version}"
    try:
        with tempfile.TemporaryDirectory(prefix="scs-cilium-") as temp:
            found = Go(Path(temp)).download(CILIUM_MODULE, tag)
    except (UpdateError, OSError) as error:
        skip_or_fail(f"go mod download {CILIUM_MODULE}@{tag}: {error}")
        raise
    if found is None:
        skip_or_fail(f"the Go module proxy does not serve {CILIUM_MODULE}@{tag}")
        raise AssertionError("unreachable")
    return found


def cilium_policy_crd(version: str) -> dict[str, Any]:
    """Cilium's real CiliumClusterwideNetworkPolicy CRD of ``version``."""
    crd: dict[str, Any] = yaml.safe_load((cilium_module(version) / CILIUM_CCNP_CRD).read_text())
    return crd


def chart_crds(helm: Helm, chart: Path, release: str, namespace: str) -> list[dict[str, Any]]:
    """The CRDs of a real packaged ``chart``, as the pinned helm renders them."""
    if not chart.is_file():
        skip_or_fail(f"the real chart is missing: {chart}")
    text = helm.template(release, chart, namespace=namespace, values={}, kube_version="v1.34.1")
    return [
        doc
        for doc in yaml.safe_load_all(text)
        if doc and doc.get("kind") == "CustomResourceDefinition"
    ]


def calico_policy_crds(helm: Helm, version: str) -> list[dict[str, Any]]:
    """Calico's real Tier and GlobalNetworkPolicy CRDs of ``version`` (``v3.32.1``)."""
    chart = real_charts() / f"crd.projectcalico.org.v1-{version}.tgz"
    crds = chart_crds(helm, chart, "calico-crds", "kube-system")
    return [crd for crd in crds if crd["metadata"]["name"] in CALICO_POLICY_CRDS]


def install_crds(api: KubeAPI, crds: list[dict[str, Any]], timeout: float = 120.0) -> None:
    """Server-side apply ``crds`` and wait until each is Established (then its kind is served)."""
    for crd in crds:
        api.apply(crd)
    names = {crd["metadata"]["name"] for crd in crds}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = {
            item["metadata"]["name"]
            for item in api.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
            for cond in (item.get("status") or {}).get("conditions") or []
            if cond.get("type") == "Established" and cond.get("status") == "True"
        }
        if names <= done:
            return
        time.sleep(0.5)
    raise AssertionError(f"CRDs not Established after {timeout:.0f}s: {sorted(names)}")
