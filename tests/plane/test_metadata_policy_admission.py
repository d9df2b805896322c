"""Issue #40 defect 11: the metadata policy's objects, ADMITTED by a real kube-apiserver with
the CNIs' real CRDs (tests/support/cni_crds.py: Cilium's CiliumClusterwideNetworkPolicy CRD
from the cilium Go module of the version we install, Calico's Tier and GlobalNetworkPolicy
CRDs from the real crd.projectcalico.org.v1 chart).

The objects are what ``services render`` and ``apply`` render (the real helmfile and helm
with our chart, tests/render/test_metadata_policy.py checks their content); each goes to the
session's plane as a server-side dry-run create: the CRDs' real schemas (CEL rules included)
and pruning, nothing stored (the policies are cluster-scoped: no namespace of ours to hold
them). ``apply`` of the release into a workload API server with these CRDs is
tests/plane/test_services_workload.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates._services.catalogue import default_version, service_info
from scs_templates._services.releases import service_releases
from scs_templates._services.serverside import rendered_objects
from scs_templates._settings.model import ClusterSettings, settings_model
from scs_templates._versions import table
from tests.support import services_settings
from tests.support.cni_crds import calico_policy_crds, cilium_policy_crd, install_crds

if TYPE_CHECKING:
    from scs_templates._tools.helm import Helm
    from testenv import Plane


def policy_objects(settings: ClusterSettings, helmfile: Any) -> list[dict[str, Any]]:
    """The metadata-policy release's objects as ``services render`` renders them."""
    (release,) = [r for r in service_releases(settings) if r.name == "metadata-policy"]
    return rendered_objects(settings, replace(release, needs=()), helmfile)


def cases() -> list[ClusterSettings]:
    """Both CNIs, with and without extra allowed namespaces."""
    found = []
    for cni in ("cilium", "calico"):
        for extra in ([], ["monitoring", "argo"]):
            data = services_settings(cni={"type": cni}).model_dump(by_alias=True, exclude_none=True)
            data["spec"]["openstack"]["metadataService"] = {"allowedNamespaces": extra}
            found.append(settings_model().model_validate(data))
    return found


@pytest.fixture(scope="module")
def policy_crds(plane: Plane, helm: Helm) -> None:
    """The CNIs' real policy CRDs of the versions the default settings install."""
    minor = table().default_minor.minor
    cilium = default_version(service_info("cilium"), minor)
    calico = default_version(service_info("tigera-operator"), minor)
    install_crds(plane.api, [cilium_policy_crd(cilium), *calico_policy_crds(helm, calico)])


def refusals(plane: Plane, objects: list[dict[str, Any]]) -> list[str]:
    from testenv import APIError

    refused = []
    for obj in objects:
        try:
            plane.api.create(obj, dry_run=True)
        except APIError as error:
            refused.append(f"{obj['kind']} {obj['metadata']['name']}: {error}")
    return refused


def test_metadata_policy_is_admitted_by_the_real_api_server_with_the_cnis_real_crds(
    plane: Plane, policy_crds: None, services_helmfile: Any
) -> None:
    kinds = set()
    for settings in cases():
        objects = policy_objects(settings, services_helmfile)
        kinds |= {obj["kind"] for obj in objects}
        assert refusals(plane, objects) == [], settings.spec.services.cni.type
    assert kinds == {"CiliumClusterwideNetworkPolicy", "Tier", "GlobalNetworkPolicy"}


def test_a_broken_policy_is_refused(
    plane: Plane, policy_crds: None, services_helmfile: Any
) -> None:
    """The check can fail: the real CRDs refuse a policy that is not what they define."""
    cilium, _, calico, _ = cases()
    (ccnp,) = policy_objects(cilium, services_helmfile)
    ccnp["spec"]["enableDefaultDeny"] = {"egress": "no"}
    gnp = next(
        o for o in policy_objects(calico, services_helmfile) if o["kind"] == "GlobalNetworkPolicy"
    )
    gnp["spec"]["egress"][0]["action"] = "Reject"
    refused = refusals(plane, [ccnp, gnp])
    assert len(refused) == 2, refused
    assert "enableDefaultDeny" in refused[0] and "action" in refused[1]
