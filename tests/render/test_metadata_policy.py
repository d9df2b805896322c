"""Issue #40 defect 11: Pods could read the OpenStack metadata service (169.254.169.254), which
serves each node's bootstrap data (kubeadm join token; on control-plane nodes the CA and
service-account keys).

On OpenStack the services plan carries our chart ``scs-metadata-policy`` (release
``metadata-policy``), rendered here by the REAL helmfile and helm, offline, exactly as
``services render`` and ``apply`` render it: a CiliumClusterwideNetworkPolicy with Cilium, a
Tier and a GlobalNetworkPolicy with Calico. tests/plane/test_metadata_policy_admission.py has
a real kube-apiserver with the CNIs' real CRDs admit those objects.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scs_templates._gitops import GitopsOptions, parse_chart_source
from scs_templates._gitops.objects import cluster_objects
from scs_templates._render.charts import charts_dir
from scs_templates._services.releases import ServiceRelease, service_releases
from scs_templates._services.serverside import rendered_objects
from scs_templates._settings.model import ClusterSettings, settings_model
from tests.support import services_settings

METADATA = "169.254.169.254/32"
RELEASE = "metadata-policy"


def with_metadata_service(settings: ClusterSettings, **section: Any) -> ClusterSettings:
    """``settings`` with ``spec.openstack.metadataService`` = ``section`` (camelCase)."""
    data = settings.model_dump(by_alias=True, exclude_none=True)
    data["spec"].setdefault("openstack", {})["metadataService"] = section
    return settings_model().model_validate(data)


def policy_release(settings: ClusterSettings) -> ServiceRelease | None:
    found = [r for r in service_releases(settings) if r.name == RELEASE]
    return found[0] if found else None


def rendered(settings: ClusterSettings, helmfile: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """The release's objects as ``services render`` renders them, by (kind, name)."""
    release = policy_release(settings)
    assert release is not None, "no metadata-policy release in the plan"
    alone = replace(release, needs=())  # rendered alone: helmfile refuses needs it lacks
    return {
        (obj["kind"], obj["metadata"]["name"]): obj
        for obj in rendered_objects(settings, alone, helmfile)
    }


def test_pods_cannot_read_the_openstack_metadata_service_with_cilium(
    services_helmfile: Any,
) -> None:
    """Defect 11, Cilium: one cluster-wide egressDeny to the metadata address for every Pod
    outside kube-system, without putting those Pods into default-deny."""
    objects = rendered(services_settings(), services_helmfile)
    assert list(objects) == [("CiliumClusterwideNetworkPolicy", "scs-deny-metadata-service")]
    spec = objects[("CiliumClusterwideNetworkPolicy", "scs-deny-metadata-service")]["spec"]
    assert spec["egressDeny"] == [{"toCIDR": [METADATA]}]
    assert spec["enableDefaultDeny"] == {"egress": False, "ingress": False}
    assert "egress" not in spec and "ingress" not in spec  # denies one address, allows nothing
    assert spec["endpointSelector"] == {
        "matchExpressions": [
            {
                "key": "k8s:io.kubernetes.pod.namespace",
                "operator": "NotIn",
                "values": ["kube-system"],
            }
        ]
    }


def test_pods_cannot_read_the_openstack_metadata_service_with_calico(
    services_helmfile: Any,
) -> None:
    """Defect 11, Calico: a Deny in a tier of its own before the default tier, then Pass, so
    the cluster's NetworkPolicies (default tier) still decide all other egress."""
    objects = rendered(services_settings(cni={"type": "calico"}), services_helmfile)
    assert set(objects) == {
        ("Tier", "scs-metadata"),
        ("GlobalNetworkPolicy", "scs-metadata.deny-metadata-service"),
    }
    tier = objects[("Tier", "scs-metadata")]["spec"]
    assert tier == {"order": 100, "defaultAction": "Pass"}
    policy = objects[("GlobalNetworkPolicy", "scs-metadata.deny-metadata-service")]["spec"]
    assert policy["tier"] == "scs-metadata"
    assert policy["types"] == ["Egress"]
    assert policy["egress"] == [
        {"action": "Deny", "destination": {"nets": [METADATA]}},
        {"action": "Pass"},
    ]
    assert policy["namespaceSelector"] == "kubernetes.io/metadata.name not in { 'kube-system' }"


def test_allowed_namespaces_add_to_kube_system_sorted_and_once(services_helmfile: Any) -> None:
    settings = with_metadata_service(
        services_settings(), allowedNamespaces=["monitoring", "kube-system", "argo"]
    )
    release = policy_release(settings)
    assert release is not None
    assert release.values["allowedNamespaces"] == ["argo", "kube-system", "monitoring"]
    (policy,) = rendered(settings, services_helmfile).values()
    (selector,) = policy["spec"]["endpointSelector"]["matchExpressions"]
    assert selector["values"] == ["argo", "kube-system", "monitoring"]
    calico = with_metadata_service(
        services_settings(cni={"type": "calico"}), allowedNamespaces=["monitoring"]
    )
    gnp = rendered(calico, services_helmfile)[
        ("GlobalNetworkPolicy", "scs-metadata.deny-metadata-service")
    ]
    assert gnp["spec"]["namespaceSelector"] == (
        "kubernetes.io/metadata.name not in { 'kube-system', 'monitoring' }"
    )


def test_deny_pods_off_and_docker_plan_no_policy() -> None:
    assert policy_release(with_metadata_service(services_settings(), denyPods=False)) is None
    assert policy_release(services_settings("docker")) is None  # no metadata service there


def test_the_chart_comes_from_the_package_whatever_the_chart_mirror(chart_mirror: Path) -> None:
    """No mirror holds a chart of ours: ``apply``/``services render`` take the package's
    folder, and a local mirror is not asked for it."""
    for settings in (services_settings(), services_settings(chartMirror=str(chart_mirror))):
        release = policy_release(settings)
        assert release is not None and release.source is not None
        assert release.source.kind == "package"
        assert release.chart == str(charts_dir() / "scs-metadata-policy")
        assert release.needs[0] == "kube-system/cilium"  # after the CNI creates its CRD


@pytest.mark.parametrize(
    ("source", "ref", "chart_key"),
    [
        ("oci://registry.example.com/scs", None, "chartRef"),
        ("https://git.example/s.git", "v1", "chart"),
    ],
)
def test_gitops_takes_the_chart_from_the_cluster_chart_source(
    source: str, ref: str | None, chart_key: str
) -> None:
    """Flux cannot read the package: the HelmRelease names the cluster chart's source (the
    OCI registry's ``scs-metadata-policy`` or the git checkout's ``charts/``)."""
    options = GitopsOptions(parse_chart_source(source, ref))
    found = cluster_objects(services_settings(), options, render=lambda s, r: [])
    release = next(
        obj
        for obj in found.objects.values()
        if obj["kind"] == "HelmRelease" and obj["spec"].get("releaseName") == RELEASE
    )
    spec = release["spec"]
    assert spec["values"]["cni"] == "cilium" and spec["targetNamespace"] == "kube-system"
    assert "kubeConfig" in spec
    if chart_key == "chartRef":
        name = spec["chartRef"]["name"]
        source_obj = found.sources[f"ocirepository-{name}"]
        assert source_obj["spec"]["url"] == "oci://registry.example.com/scs/scs-metadata-policy"
        assert source_obj["spec"]["ref"] == {"tag": "0.1.0"}
    else:
        assert spec["chart"]["spec"]["chart"] == "./charts/scs-metadata-policy"
        assert spec["chart"]["spec"]["sourceRef"]["kind"] == "GitRepository"


def test_services_render_prints_the_policy_after_the_cni(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    """``services render`` (every release, the upstream charts from the local mirror) carries
    the policy, from the package, whatever the mirror holds."""
    from scs_templates._services.preview import render_services

    for cni, kind in (("cilium", "CiliumClusterwideNetworkPolicy"), ("calico", "Tier")):
        settings = services_settings(chartMirror=str(chart_mirror), cni={"type": cni})
        result = render_services(settings, helmfile=services_helmfile)
        assert kind in {obj["kind"] for obj in result.objects}
        names = [r.name for r in result.releases]
        assert names.index(RELEASE) > names.index(
            "cilium" if cni == "cilium" else "tigera-operator"
        )
