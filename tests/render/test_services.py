"""Standard services offline: catalogue, values builders, state values, helmfile, render.

The helmfile and ``services render`` tests run the REAL helmfile 1.8 and helm 4.3 offline
with the REAL upstream charts (../shared/charts, used as a local chart mirror). ``apply`` of
these charts into real API servers is tests/plane/test_services_apply.py (the plumbing) and
tests/plane/test_services_workload.py (the Pods admitted).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from scs_templates._services.catalogue import service_catalogue, service_info
from scs_templates._services.releases import (
    chart_source,
    normalize_version,
    service_releases,
    services_state_values,
)
from scs_templates._services.values import METRICS_SERVER_ARGS, deep_merge
from scs_templates._settings.model import ClusterSettings, settings_model
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import parse_settings_text
from scs_templates.providers.openstack.services import PROXY_PROTOCOL_ANNOTATION
from tests import support
from tests.support import REPO, autoscaled, real_charts, services_settings

yaml = YAML(typ="safe")
#: How docs/services.md names the namespace of a release on the management cluster.
MANAGEMENT_NAMESPACE_CELL = "(the cluster's, on the management cluster)"


def by_name(settings: ClusterSettings) -> dict[str, Any]:
    return {release.name: release for release in service_releases(settings)}


# --------------------------------------------------------------------------- catalogue + docs


def test_catalogue_names_are_unique_and_versions_are_pinned() -> None:
    names = [info.release for info in service_catalogue()]
    assert len(names) == len(set(names))
    for info in service_catalogue():
        assert re.fullmatch(r"v?\d+\.\d+\.\d+", info.version), info
        assert info.packaged or info.repository.startswith(("https://", "oci://")), info


def test_docs_table_lists_every_service_with_its_tested_version() -> None:
    text = (REPO / "docs" / "services.md").read_text(encoding="utf-8")
    section = text.split('### Default ("tested") chart versions', 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("release", "---"):
            rows.add(tuple(cells))
    expected = {
        (i.release, i.namespace or MANAGEMENT_NAMESPACE_CELL, i.chart, i.version, i.repository)
        for i in service_catalogue()
    }
    assert rows == expected


# --------------------------------------------------------------------------- values builders


def test_defaults_on_openstack() -> None:
    releases = service_releases(services_settings())
    assert [r.name for r in releases] == [
        "cilium",
        "openstack-cloud-controller-manager",
        "metadata-policy",
        "snapshot-controller",
        "openstack-cinder-csi",
        "kubelet-csr-approver",
        "metrics-server",
    ]
    assert all(r.installed for r in releases)


def test_docker_has_no_openstack_services() -> None:
    names = set(by_name(services_settings("docker", ingressNginx={"enabled": True})))
    assert names == {"cilium", "kubelet-csr-approver", "metrics-server", "ingress-nginx"}


def test_proxy_protocol_only_when_enabled_on_openstack_amphora() -> None:
    on = by_name(services_settings(ingressNginx={"enabled": True}))["ingress-nginx"].values
    service = on["controller"]["service"]
    assert service["annotations"] == {PROXY_PROTOCOL_ANNOTATION: "true"}
    assert on["controller"]["config"] == {"use-proxy-protocol": "true"}
    assert service["type"] == "LoadBalancer"

    off = by_name(services_settings(ingressNginx={"enabled": True, "proxyProtocol": False}))
    assert "annotations" not in off["ingress-nginx"].values["controller"]["service"]
    assert "config" not in off["ingress-nginx"].values["controller"]

    docker = by_name(services_settings("docker", ingressNginx={"enabled": True}))
    values = docker["ingress-nginx"].values["controller"]
    assert "annotations" not in values["service"] and "config" not in values
    assert values["service"]["type"] == "NodePort"


def test_no_proxy_protocol_with_the_ovn_load_balancer() -> None:
    data = services_settings(ingressNginx={"enabled": True}).model_dump(by_alias=True)
    data["spec"]["openstack"]["loadBalancerProvider"] = "ovn"
    settings = settings_model().model_validate(data)
    values = by_name(settings)["ingress-nginx"].values["controller"]
    assert "annotations" not in values["service"] and "config" not in values


def test_metrics_server_verifies_kubelet_tls() -> None:
    for provider in ("openstack", "docker"):
        releases = by_name(services_settings(provider))
        values = releases["metrics-server"].values
        assert values["defaultArgs"] == list(METRICS_SERVER_ARGS)
        assert values["args"] == []
        assert "insecure" not in json.dumps(values)
    approver = by_name(services_settings())["kubelet-csr-approver"].values
    assert approver["providerRegex"] == (
        "^(?:capi-demo-control-plane-[a-z0-9]{5}|capi-demo-workers-[a-z0-9]{5}-[a-z0-9]{5})$"
    )
    assert re.match(approver["providerRegex"], "capi-demo-workers-abcde-xyz12")
    assert not re.match(approver["providerRegex"], "other-cluster-workers-abcde")
    assert approver["providerIpPrefixes"] == ["10.8.0.0/20"]
    assert (
        "providerIpPrefixes"
        not in by_name(services_settings("docker"))["kubelet-csr-approver"].values
    )
    # metrics-server waits for the approver
    assert (
        "kube-system/kubelet-csr-approver" in by_name(services_settings())["metrics-server"].needs
    )


def test_gateway_api_on_both_cnis() -> None:
    releases = by_name(services_settings(gatewayAPI={"enabled": True}))
    assert releases["cilium"].values["gatewayAPI"] == {
        "enabled": True,
        "gatewayClass": {"create": "true"},
    }
    assert releases["cilium"].values["kubeProxyReplacement"] is True  # Cilium 1.20 needs it
    assert "nodePort" not in releases["cilium"].values
    assert "k8sServiceHost" not in releases["cilium"].values
    assert releases["cilium"].needs == ("kube-system/gateway-api-crds",)
    crds = releases["gateway-api-crds"].values["crds"]
    assert crds["gatewayAPI"] == {"enabled": True, "channel": "experimental"}

    plain = by_name(services_settings())
    assert "gateway-api-crds" not in plain
    assert plain["cilium"].values["gatewayAPI"] == {"enabled": False}
    assert plain["cilium"].values["kubeProxyReplacement"] is False

    calico = by_name(services_settings(cni={"type": "calico"}))
    assert "gateway-api-crds" not in calico and "cilium" not in calico
    assert calico["tigera-operator"].needs == ("kube-system/calico-crds",)
    pools = calico["tigera-operator"].values["installation"]["calicoNetwork"]["ipPools"]
    assert pools[0]["cidr"] == "192.168.0.0/16"
    envoy = by_name(services_settings(cni={"type": "calico"}, gatewayAPI={"enabled": True}))
    assert "gateway-api-crds" not in envoy  # Envoy Gateway's chart brings the CRDs
    assert envoy["envoy-gateway"].values == {"crds": {"enabled": True}}
    assert envoy["envoy-gateway"].needs == (
        "tigera-operator/tigera-operator",
        "kube-system/openstack-cloud-controller-manager",
    )


def test_user_values_are_deep_merged_over_ours() -> None:
    settings = services_settings(
        cni={"values": {"ipam": {"operator": {"x": 1}}, "hubble": {"relay": {"enabled": True}}}},
        metricsServer={"values": {"defaultArgs": ["--only-this"], "replicas": 2}},
        ingressNginx={
            "enabled": True,
            "values": {"controller": {"service": {"annotations": {"a/b": "c"}}}},
        },
    )
    releases = by_name(settings)
    assert releases["cilium"].values["ipam"] == {"mode": "kubernetes", "operator": {"x": 1}}
    assert releases["cilium"].values["hubble"] == {
        "relay": {"enabled": True},
        "tls": {"auto": {"method": "cronJob"}},
    }
    assert releases["metrics-server"].values["defaultArgs"] == ["--only-this"]  # lists replace
    annotations = releases["ingress-nginx"].values["controller"]["service"]["annotations"]
    assert annotations == {PROXY_PROTOCOL_ANNOTATION: "true", "a/b": "c"}


def test_deep_merge_does_not_modify_its_inputs() -> None:
    base = {"a": {"b": 1, "c": [1]}}
    override = {"a": {"c": [2], "d": None}}
    assert deep_merge(base, override) == {"a": {"b": 1, "c": [2], "d": None}}
    assert base == {"a": {"b": 1, "c": [1]}}


def test_versions_are_overridden_with_the_chart_v_convention() -> None:
    releases = by_name(
        services_settings(
            cni={"version": "1.17.8"},
            certManager={"enabled": True, "version": "1.17.2"},
            metricsServer={"version": "v3.12.2"},
        )
    )
    assert releases["cilium"].version == "1.17.8"
    assert releases["cert-manager"].version == "v1.17.2"
    assert releases["metrics-server"].version == "3.12.2"
    # no setting: the default of the versions table
    assert releases["kubelet-csr-approver"].version == service_info("kubelet-csr-approver").version
    assert normalize_version("v3.30.0", "v3.30.3") == "v3.30.0"


def test_chart_sources() -> None:
    info = next(i for i in service_catalogue() if i.release == "cilium")
    upstream = chart_source(info, "1.18.2", None)
    assert upstream.chart == "helm-cilium-io/cilium"
    assert upstream.repository is not None
    assert upstream.repository.url == "https://helm.cilium.io"
    oci = chart_source(info, "1.18.2", "oci://harbor.example/charts")
    assert oci.chart == "scs-chart-mirror/cilium"
    assert oci.repository is not None
    assert (oci.repository.url, oci.repository.oci) == ("harbor.example/charts", True)
    for mirror in ("file:///srv/charts", "/srv/charts"):
        local = chart_source(info, "1.18.2", mirror)
        assert (local.chart, local.repository) == ("/srv/charts/cilium-1.18.2.tgz", None)
    with pytest.raises(SettingsError):
        services_settings(chartMirror="harbor.example/charts")


def test_state_values_keep_disabled_services_unless_forced() -> None:
    settings = services_settings(metricsServer={"enabled": False})
    deployed = {"cilium", "metrics-server", "kubelet-csr-approver"}
    kept = services_state_values(settings, installed=deployed, force_remove=False)
    rows = {r["name"]: r for r in kept["services"]["releases"]}
    assert rows["metrics-server"]["installed"] is True
    assert rows["kubelet-csr-approver"]["installed"] is True
    removed = services_state_values(settings, installed=deployed, force_remove=True)
    rows = {r["name"]: r for r in removed["services"]["releases"]}
    assert rows["metrics-server"]["installed"] is False
    assert rows["metrics-server"]["needs"] == []
    assert rows["cilium"]["installed"] is True
    # neither wanted nor deployed: not in the state at all
    absent = services_state_values(settings, installed=set(), force_remove=True)
    assert "metrics-server" not in {r["name"] for r in absent["services"]["releases"]}


def test_needs_put_the_cni_first_and_the_ccm_before_the_rest() -> None:
    releases = by_name(services_settings(certManager={"enabled": True}))
    assert releases["cilium"].needs == ()
    assert releases["openstack-cloud-controller-manager"].needs == ("kube-system/cilium",)
    assert releases["cert-manager"].needs == (
        "kube-system/cilium",
        "kube-system/openstack-cloud-controller-manager",
    )
    assert "kube-system/snapshot-controller" in releases["openstack-cinder-csi"].needs


# --------------------------------------------------------------------------- helmfile (real)


def manifests_of(text: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Rendered objects by (kind, name)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for document in yaml.load_all(text):
        if document:
            found[(document["kind"], document["metadata"]["name"])] = document
    return found


def test_helmfile_list_upstream_sources(services_helmfile: Any) -> None:
    settings = services_settings(ingressNginx={"enabled": True}, gatewayAPI={"enabled": True})
    rows = services_helmfile.list(services_state_values(settings))
    table = {(r["name"], r["namespace"], r["chart"], r["version"], r["installed"]) for r in rows}
    cilium = service_info("cilium").version
    assert ("cilium", "kube-system", "helm-cilium-io/cilium", cilium, True) in table
    assert (
        "gateway-api-crds",
        "kube-system",
        "docker-io-envoyproxy/gateway-crds-helm",
        service_info("gateway-api-crds").version,
        True,
    ) in table
    assert (
        "ingress-nginx",
        "ingress-nginx",
        "kubernetes-github-io-ingress-nginx/ingress-nginx",
        service_info("ingress-nginx").version,
        True,
    ) in table
    # helmfile 1.x lists by namespace, then name (the install order is the `needs` graph)
    listed = [(r["namespace"], r["name"]) for r in rows]
    assert listed == sorted(listed)


def test_helmfile_without_services_state_has_no_releases(services_helmfile: Any) -> None:
    assert services_helmfile.list({}) == []


def test_helmfile_build_with_local_mirror(services_helmfile: Any, chart_mirror: Path) -> None:
    settings = services_settings(
        chartMirror=f"file://{chart_mirror}",
        cni={"version": "1.18.12"},
        certManager={"enabled": True},
        metricsServer={"enabled": False},
    )
    state = services_state_values(settings, installed={"metrics-server"}, force_remove=True)
    built = list(yaml.load_all(services_helmfile.build(state)))
    document = next(d for d in built if d and "releases" in d)
    assert "repositories" not in document  # a local mirror needs no repository at all
    releases = {r["name"]: r for r in document["releases"]}
    assert releases["cilium"]["chart"] == f"{chart_mirror}/cilium-1.18.12.tgz"
    assert releases["cilium"]["version"] == "1.18.12"
    cert_manager = service_info("cert-manager").version
    assert releases["cert-manager"]["chart"] == f"{chart_mirror}/cert-manager-{cert_manager}.tgz"
    assert releases["cert-manager"]["values"] == [{"crds": {"enabled": True, "keep": True}}]
    assert releases["cert-manager"]["needs"] == [
        "kube-system/cilium",
        "kube-system/openstack-cloud-controller-manager",
    ]
    assert releases["metrics-server"]["installed"] is False
    assert releases["kubelet-csr-approver"]["installed"] is True  # always: kubelet certificates


def test_helmfile_build_oci_mirror_names_the_registry(services_helmfile: Any) -> None:
    # helmfile build pulls OCI charts, so check the generated state via `list` (offline).
    settings = services_settings(chartMirror="oci://harbor.example/charts")
    state = services_state_values(settings)
    assert state["services"]["repositories"] == [
        {"name": "scs-chart-mirror", "url": "harbor.example/charts", "oci": True}
    ]
    rows = services_helmfile.list(state)
    assert {r["chart"] for r in rows} >= {
        "scs-chart-mirror/cilium",
        "scs-chart-mirror/metrics-server",
    }


def test_real_charts_render_our_values(
    services_helmfile: Any, chart_mirror: Path, tmp_path: Path
) -> None:
    """The REAL charts turn our values into the objects we mean (helmfile + helm, offline)."""
    settings = services_settings(
        chartMirror=str(chart_mirror),
        ingressNginx={"enabled": True, "values": {"controller": {"replicaCount": 2}}},
        certManager={"enabled": True, "version": "1.18.6"},
    )
    state = services_state_values(settings)
    files = services_helmfile.write_values(state, tmp_path / "values")
    assert {f.stem for f in files} == {
        "cilium",
        "openstack-cloud-controller-manager",
        "metadata-policy",
        "snapshot-controller",
        "openstack-cinder-csi",
        "kubelet-csr-approver",
        "metrics-server",
        "ingress-nginx",
        "cert-manager",
    }
    objects = manifests_of(services_helmfile.template(state))
    metrics = objects[("Deployment", "metrics-server")]["spec"]["template"]["spec"]
    args = metrics["containers"][0]["args"]
    assert args[1:] == list(METRICS_SERVER_ARGS) and args[0].startswith("--secure-port=")
    assert not any("insecure" in a for a in args)
    controller = objects[("Deployment", "ingress-nginx-controller")]["spec"]
    assert controller["replicas"] == 2
    service = objects[("Service", "ingress-nginx-controller")]
    assert service["metadata"]["annotations"] == {PROXY_PROTOCOL_ANNOTATION: "true"}
    assert service["spec"]["type"] == "LoadBalancer"
    assert objects[("ConfigMap", "ingress-nginx-controller")]["data"]["use-proxy-protocol"] == (
        "true"
    )
    cert = objects[("Deployment", "cert-manager")]
    assert cert["metadata"]["labels"]["helm.sh/chart"] == "cert-manager-v1.18.6"
    occm = objects[("DaemonSet", "openstack-cloud-controller-manager")]["spec"]["template"]
    volumes = {v["name"]: v for v in occm["spec"]["volumes"]}
    assert volumes["cloud-config-volume"]["secret"]["secretName"] == "cloud-config"


def with_spec(settings: ClusterSettings, **spec: Any) -> ClusterSettings:
    """``settings`` with top-level ``spec`` sections replaced (camelCase keys)."""
    data = settings.model_dump(by_alias=True, exclude_none=True)
    data["spec"].update(spec)
    return settings_model().model_validate(data)


def container_env(pod: dict[str, Any], container: str) -> dict[str, str]:
    """The plain ``env`` of one container of a pod template, name -> value."""
    (found,) = [c for c in pod["spec"]["containers"] if c["name"] == container]
    return {e["name"]: e.get("value", "") for e in found.get("env", [])}


def test_proxy_only_network_reaches_occm_and_cinder_csi(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    """``network.proxy`` reaches the pods that call the OpenStack APIs: the REAL OCCM and
    Cinder CSI charts render HTTPS_PROXY/HTTP_PROXY/NO_PROXY into their containers."""
    proxy = {"httpProxy": "http://proxy.example:3128", "httpsProxy": "http://proxy.example:3128"}
    settings = with_spec(
        services_settings(chartMirror=str(chart_mirror)),
        network={"proxy": {**proxy, "noProxy": ["keystone.internal"]}},
    )
    objects = manifests_of(services_helmfile.template(services_state_values(settings)))
    occm = objects[("DaemonSet", "openstack-cloud-controller-manager")]["spec"]["template"]
    cinder = [
        objects[("Deployment", "openstack-cinder-csi-controllerplugin")]["spec"]["template"],
        objects[("DaemonSet", "openstack-cinder-csi-nodeplugin")]["spec"]["template"],
    ]
    for env in [
        container_env(occm, "openstack-cloud-controller-manager"),
        *(container_env(pod, "cinder-csi-plugin") for pod in cinder),
    ]:
        assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == "http://proxy.example:3128"
        no_proxy = env["NO_PROXY"].split(",")
        assert no_proxy[0] == "keystone.internal"
        assert {"10.96.0.0/12", "192.168.0.0/16", "10.8.0.0/20", ".svc"} <= set(no_proxy)
    plain = manifests_of(
        services_helmfile.template(
            services_state_values(services_settings(chartMirror=str(chart_mirror)))
        )
    )
    occm = plain[("DaemonSet", "openstack-cloud-controller-manager")]["spec"]["template"]
    assert "HTTPS_PROXY" not in container_env(occm, "openstack-cloud-controller-manager")


# --------------------------------------------------------------------------- services render


def write_settings(path: Path, provider: str = "docker", **services: Any) -> str:
    settings = services_settings(provider, **services)
    path.write_text(
        json.dumps(settings.model_dump(by_alias=True, exclude_none=True, exclude_unset=True))
    )
    return str(path)


def test_services_render_real_charts_offline_and_deterministic(
    services_helmfile: Any, chart_mirror: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scs_templates._cli.main import main

    del services_helmfile  # only its skip: helmfile and helm must be installed
    path = write_settings(
        tmp_path / "s.yaml",
        "openstack",
        chartMirror=f"file://{chart_mirror}",
        gatewayAPI={"enabled": True},
    )
    assert main(["services", "render", path]) == 0
    first = capsys.readouterr().out
    assert main(["services", "render", path]) == 0
    assert capsys.readouterr().out == first  # byte-identical
    objects = manifests_of(first)
    assert ("Deployment", "cilium-operator") in objects
    assert ("CustomResourceDefinition", "gateways.gateway.networking.k8s.io") in objects
    assert ("CustomResourceDefinition", "volumesnapshots.snapshot.storage.k8s.io") in objects
    assert not any(kind == "Secret" for kind, _ in objects), "no generated key material"
    assert 'helm.sh/hook": test' not in first  # test hooks are never installed

    out = tmp_path / "out"
    assert main(["services", "render", path, "--output-dir", str(out)]) == 0
    files = sorted(out.iterdir())
    assert len(files) == len(objects)
    assert files[0].name.startswith("01-customresourcedefinition-")
    assert "".join(f.read_text() for f in files).count("\nkind: ") == first.count("\nkind: ")


def test_services_render_from_a_helm_repository_mirror(
    services_helmfile: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``chartMirror`` that is a helm repository (the real charts served over HTTP,
    tests/support/chartrepo.py): helmfile must ``helm repo add`` it, which ``--skip-deps`` skips;
    without that every chart was "repo scs-chart-mirror not found" (seen first in ``gitops``,
    which renders the Gateway API CRDs this way). The same objects as from the packages."""
    from scs_templates._cli.main import main
    from scs_templates._services.releases import service_releases
    from tests.support import chartrepo

    del services_helmfile
    local = write_settings(
        tmp_path / "local.yaml",
        chartMirror=f"file://{real_charts()}",
        gatewayAPI={"enabled": True},
    )
    releases = service_releases(services_settings("docker", gatewayAPI={"enabled": True}))
    assert "gateway-api-crds" in {r.name for r in releases}
    packages = [f"{r.chart_name}-{r.version}.tgz" for r in releases]
    with chartrepo.serving(tmp_path / "repo", packages) as url:
        served = write_settings(
            tmp_path / "served.yaml", chartMirror=url, gatewayAPI={"enabled": True}
        )
        assert main(["services", "render", served]) == 0, capsys.readouterr().err
        from_repository = capsys.readouterr().out
    assert main(["services", "render", local]) == 0
    assert manifests_of(from_repository) == manifests_of(capsys.readouterr().out)
    assert ("CustomResourceDefinition", "gateways.gateway.networking.k8s.io") in manifests_of(
        from_repository
    )


def test_services_render_exit_codes(
    services_helmfile: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scs_templates._cli.main import main

    del services_helmfile
    sparse = tmp_path / "sparse"
    cilium, csr_approver, metrics = (
        f"{name}-{service_info(name).version}"
        for name in ("cilium", "kubelet-csr-approver", "metrics-server")
    )
    sparse.mkdir()
    shutil.copy(real_charts() / f"{cilium}.tgz", sparse)  # the real cilium; lacks the others
    assert (
        main(["services", "render", write_settings(tmp_path / "a.yaml", chartMirror=str(sparse))])
        == 2
    )
    assert f"{metrics}.tgz" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: x\n")
    assert main(["services", "render", str(bad)]) == 2
    # a FAULT-INJECTION double: packages by the right names that are not charts (no real
    # chart is broken this way), so helm itself fails: exit 1
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in (cilium, csr_approver, metrics):
        (broken / f"{name}.tgz").write_bytes(b"not a chart")
    assert (
        main(["services", "render", write_settings(tmp_path / "b.yaml", chartMirror=str(broken))])
        == 1
    )


# --------------------------------------------------------------------------- defects (issue 14)
# Each test below failed on the code before the fix it names.


def test_fix1_pod_security_labels_for_namespaces_that_need_them() -> None:
    from scs_templates._services.releases import namespace_labels

    calico = services_settings("docker", cni={"type": "calico"})
    releases = service_releases(calico)
    # the Tigera operator uses hostNetwork and hostPath: baseline (our default) refuses it
    assert namespace_labels(calico, releases) == {
        "tigera-operator": {"pod-security.kubernetes.io/enforce": "privileged"}
    }
    data = calico.model_dump(by_alias=True)
    data["spec"]["security"]["podSecurity"]["enforce"] = "privileged"
    assert namespace_labels(settings_model().model_validate(data), releases) == {}
    data["spec"]["security"]["podSecurity"] = {"enforce": "restricted", "exemptNamespaces": []}
    strict = settings_model().model_validate(data)
    assert namespace_labels(strict, service_releases(strict)) == {
        "kube-system": {"pod-security.kubernetes.io/enforce": "baseline"},  # the approver
        "tigera-operator": {"pod-security.kubernetes.io/enforce": "privileged"},
    }
    cilium = services_settings("openstack")
    data = cilium.model_dump(by_alias=True)
    data["spec"]["security"]["podSecurity"] = {"enforce": "restricted", "exemptNamespaces": []}
    strict = settings_model().model_validate(data)
    assert namespace_labels(strict, service_releases(strict)) == {
        "kube-system": {"pod-security.kubernetes.io/enforce": "privileged"}  # Cilium, OCCM
    }


@pytest.mark.parametrize(
    ("example", "control_plane", "worker"),
    [
        ("openstack-clusterclass", "topo-k2b4c-x9z8w", "topo-batch-bcdfg-hjklm-n2456"),
        ("docker-clusterclass", "dev-topology-k2b4c-x9z8w", "dev-topology-md-0-bcdfg-h2j4k-l5m6n"),
        ("openstack-minimal", "capi-demo-control-plane-x9z8w", "capi-demo-workers-bcdfg-h2j4k"),
        ("docker-dev", "dev-capi-dev-control-plane-x9z8w", "dev-capi-dev-md-1-bcdfg-h2j4k"),
    ],
)
def test_clusterclass_machines_get_serving_certificates(
    example: str, control_plane: str, worker: str
) -> None:
    """The approver's PROVIDER_REGEX follows the names Cluster API gives the template's
    Machines: the topology controller's ``<cluster>-<random>`` and
    ``<cluster>-<group>-<random>`` for clusterclass (cluster-api v1.14
    internal/topology/names), our owners' names for the others; tests/plane/test_plane_topology.py
    asks the real controllers."""
    settings = support.settings_from_text((REPO / "examples" / f"{example}.yaml").read_text())
    regex = by_name(settings)["kubelet-csr-approver"].values["providerRegex"]
    assert re.match(regex, control_plane) and re.match(regex, worker)
    for foreign in (
        f"{control_plane}-x",  # one random part too many
        control_plane.replace("-", "-other-", 1),  # a longer-named cluster's
        worker.replace("-", "x", 1),
    ):
        assert not re.match(regex, foreign), foreign


def test_machine_name_shapes_follow_cluster_api_truncation() -> None:
    """A name longer than 63 is cut to 58 plus 5 random characters, as Cluster API does."""
    from scs_templates._core import naming

    cluster, group = "c" * 20, "g" * 30
    shapes = naming.machine_name_shapes("clusterclass", "capi", cluster, [group])
    # MachineDeployment <cluster>-<group>-xxxxx (57), MachineSet + -xxxxx (63), the Machine's
    # 69 characters cut to 58 ("...-xxxxx-") plus 5 random
    assert shapes[1] == f"{cluster}-{group}-*****-*****"
    assert re.fullmatch(naming.shape_pattern(shapes[1]), f"{cluster}-{group}-abcde-fghij")
    assert shapes[0] == f"{cluster}-*****-*****"


def test_fix2_kubelet_serving_certificates_are_approved_without_metrics_server() -> None:
    for provider in ("openstack", "docker"):
        releases = by_name(services_settings(provider, metricsServer={"enabled": False}))
        assert "metrics-server" not in releases
        assert releases["kubelet-csr-approver"].installed


def test_fix3_docker_node_names_carry_capd_cluster_prefix() -> None:
    approver = by_name(services_settings("docker"))["kubelet-csr-approver"].values
    # CAPD: container and host name "<cluster>-<machine>" (MachineContainerName)
    assert re.match(approver["providerRegex"], "demo-capi-demo-workers-abcde-xyz12")
    assert not re.match(approver["providerRegex"], "capi-demo-workers-abcde-xyz12")
    assert not re.match(approver["providerRegex"], "other-capi-demo-workers-abcde")
    assert "providerIpPrefixes" not in approver
    assert not re.match(approver["providerRegex"], "demo-capi-demo-workers-abcde")
    # the 63-character host name budget includes that prefix on Docker only
    name = "a" * 18
    with pytest.raises(SettingsError, match=r"must fit in 32; on Docker"):
        parse_settings_text(
            json.dumps(
                {
                    "apiVersion": "scs-templates.scs.community/v1alpha1",
                    "kind": "ClusterSettings",
                    "metadata": {"name": name},
                    "spec": {"provider": "docker", "workers": [{"name": "w" * 10}]},
                }
            )
        )


def test_fix4_cloud_conf_names_the_ca_file() -> None:
    from scs_templates.providers.openstack.cloud_config import with_ca_file

    conf = '[Global]\nauth-url="https://k.invalid/v3"\n\n[LoadBalancer]\ncreate-monitor=true\n'
    assert with_ca_file(conf) == (
        '[Global]\nauth-url="https://k.invalid/v3"\nca-file=/etc/config/ca.crt\n\n'
        "[LoadBalancer]\ncreate-monitor=true\n"
    )
    for own in ("ca-file=/mine.pem", "tls-insecure=true"):
        assert with_ca_file(f"[Global]\n{own}\n") == f"[Global]\n{own}\n"


def test_fix4_charts_mount_the_ca_where_cloud_conf_points(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    from scs_templates.providers.openstack.cloud_config import CLOUD_CONFIG_CA_FILE

    objects = manifests_of(
        services_helmfile.template(
            services_state_values(services_settings(chartMirror=str(chart_mirror)))
        )
    )
    for kind, name in (
        ("DaemonSet", "openstack-cloud-controller-manager"),
        ("Deployment", "openstack-cinder-csi-controllerplugin"),
    ):
        pod = objects[(kind, name)]["spec"]["template"]["spec"]
        secret_volumes = {
            v["name"]
            for v in pod["volumes"]
            if v.get("secret", {}).get("secretName") == "cloud-config"
        }
        mounts = {
            m["mountPath"]
            for c in pod["containers"]
            for m in c.get("volumeMounts", [])
            if m["name"] in secret_volumes
        }
        assert str(Path(CLOUD_CONFIG_CA_FILE).parent) in mounts, (kind, name)


def test_fix5_mtu_means_the_node_network_on_both_cnis() -> None:
    cilium = by_name(services_settings(network_mtu=1450))
    assert cilium["cilium"].values["MTU"] == 1450
    calico = by_name(services_settings(cni={"type": "calico"}, network_mtu=1450))
    network = calico["tigera-operator"].values["installation"]["calicoNetwork"]
    assert network["mtu"] == 1400  # VXLAN adds 50 bytes


def test_fix6_cloud_conf_without_nip_io_host_names() -> None:
    from scs_templates.providers.openstack.credentials_secret import cloud_conf_from_clouds_yaml

    clouds = "clouds:\n  openstack:\n    auth:\n      auth_url: https://k.invalid/v3\n"
    conf = cloud_conf_from_clouds_yaml(clouds, "openstack")
    assert conf is not None
    assert "enable-ingress-hostname" not in conf.reveal()
    assert "[LoadBalancer]" in conf.reveal()


def test_cilium_1_20_gateway_api_runs_with_kube_proxy_replacement(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    """Issue 40, defect 4 (supersedes issue 14's fix 7, Gateway API on NodePort with
    kube-proxy replacement off): Cilium 1.20's operator switches Gateway API off unless
    kube-proxy replacement is on (cilium v1.20.0 operator/pkg/gateway-api/cell.go, "Gateway
    API support requires kube-proxy-replacement enabled"; its chart has no
    ``nodePort.enabled`` any more). Without Gateway API kube-proxy replacement stays off."""
    settings = services_settings(chartMirror=str(chart_mirror), gatewayAPI={"enabled": True})
    assert by_name(settings)["cilium"].version == "1.20.0"
    objects = manifests_of(services_helmfile.template(services_state_values(settings)))
    config = objects[("ConfigMap", "cilium-config")]["data"]
    assert config["kube-proxy-replacement"] == "true"
    assert config["enable-gateway-api"] == "true"
    assert "k8s-service-host" not in config  # the kubernetes Service (kube-proxy stays)
    plain = services_settings(chartMirror=str(chart_mirror))
    objects = manifests_of(services_helmfile.template(services_state_values(plain)))
    assert objects[("ConfigMap", "cilium-config")]["data"]["kube-proxy-replacement"] == "false"


def test_cilium_k8s_service_host_auto_does_not_serve_the_offline_render(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    """Issue 40, defect 4: why ``k8sServiceHost`` stays unset. ``auto`` reads kubeadm's
    ``kube-public/cluster-info`` with helm's ``lookup``, which an offline render (``helm
    template``, ``services render``) never answers: the real chart then fails."""
    settings = services_settings(
        chartMirror=str(chart_mirror),
        gatewayAPI={"enabled": True},
        cni={"type": "cilium", "values": {"k8sServiceHost": "auto"}},
    )
    with pytest.raises(Exception, match="cluster-info not found"):
        services_helmfile.template(services_state_values(settings))


def test_fix9_cinder_binds_where_the_pod_runs_and_snapshots_have_a_class(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    settings = services_settings(chartMirror=str(chart_mirror))
    objects = manifests_of(services_helmfile.template(services_state_values(settings)))
    classes = {name: obj for (kind, name), obj in objects.items() if kind == "StorageClass"}
    assert set(classes) == {"csi-cinder-delete", "csi-cinder-retain"}
    assert {c["volumeBindingMode"] for c in classes.values()} == {"WaitForFirstConsumer"}
    default = "storageclass.kubernetes.io/is-default-class"
    assert [n for n, c in classes.items() if c["metadata"].get("annotations", {}).get(default)] == [
        "csi-cinder-delete"
    ]
    snapshot = objects[("VolumeSnapshotClass", "csi-cinder-snapshot")]
    assert snapshot["driver"] == "cinder.csi.openstack.org"


def test_fix9_force_remove_never_uninstalls_the_gateway_api_crds() -> None:
    from scs_templates._services.deploy import plan_actions
    from scs_templates._services.releases import plan_releases

    settings = services_settings()  # gatewayAPI off now
    releases = plan_releases(settings, frozenset({"gateway-api-crds", "cilium"}), True)
    crds = next(r for r in releases if r.name == "gateway-api-crds")
    assert crds.installed  # kept, not uninstalled
    wanted = {r.name for r in service_releases(settings)}
    plans = {p.name: p for p in plan_actions(releases, {}, lambda r: {}, wanted)}
    assert plans["gateway-api-crds"].action == "keep"
    assert "never removed" in plans["gateway-api-crds"].reason


# --------------------------------------------------------------------------- autoscaler, ingress


def test_autoscaler_follows_the_groups_unless_set() -> None:
    assert "demo-cluster-autoscaler" not in by_name(services_settings())
    release = by_name(autoscaled())["demo-cluster-autoscaler"]
    assert (release.namespace, release.target, release.needs) == ("default", "management", ())
    assert release.chart_label == "cluster-autoscaler-9.59.0"
    assert "demo-cluster-autoscaler" in by_name(
        services_settings(clusterAutoscaler={"enabled": True})
    )
    off = autoscaled(clusterAutoscaler={"enabled": False})
    assert "demo-cluster-autoscaler" not in by_name(off)
    from scs_templates._settings import rules

    assert any("nothing will scale" in message for _, message in rules.warnings(off))


def test_autoscaler_settings_reach_its_arguments() -> None:
    settings = autoscaled(
        clusterAutoscaler={
            "expander": "most-pods",
            "scaleDown": {"unneededTime": "30m", "utilizationPercent": 30},
        }
    )
    values = by_name(settings)["demo-cluster-autoscaler"].values
    assert values["extraArgs"]["expander"] == "most-pods"
    assert values["extraArgs"]["scale-down-unneeded-time"] == "30m"
    assert values["extraArgs"]["scale-down-utilization-threshold"] == 0.3
    with pytest.raises(SettingsError, match=r"scaleDown\.unneededTime"):
        autoscaled(clusterAutoscaler={"scaleDown": {"unneededTime": "soon"}})


def test_autoscaler_real_chart_on_the_management_cluster(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    settings = autoscaled(chartMirror=str(chart_mirror))
    rendered = [
        d for d in yaml.load_all(services_helmfile.template(services_state_values(settings))) if d
    ]
    mine = [d for d in rendered if "autoscaler" in d["metadata"]["name"]]
    kinds = sorted(d["kind"] for d in mine)
    assert "ClusterRole" not in kinds and "ClusterRoleBinding" not in kinds  # namespace only
    assert {"Deployment", "Role", "RoleBinding", "ServiceAccount"} <= set(kinds)
    deployment = next(d for d in mine if d["kind"] == "Deployment")
    assert deployment["metadata"]["namespace"] == "default"  # next to the Cluster
    pod = deployment["spec"]["template"]["spec"]
    command = pod["containers"][0]["command"]
    for flag in (
        "--cloud-provider=clusterapi",
        "--node-group-auto-discovery=clusterapi:clusterName=demo,namespace=default",
        "--kubeconfig=/etc/kubernetes/value",
        "--clusterapi-cloud-config-authoritative",
        "--expander=least-waste",
        "--scale-down-unneeded-time=10m",
        "--balance-similar-node-groups=true",
    ):
        assert flag in command, flag
    assert {v.get("secret", {}).get("secretName") for v in pod["volumes"]} >= {"demo-kubeconfig"}
    # the image of the cluster's Kubernetes minor (1.37: no 1.37 release, the newest 1.36)
    assert pod["containers"][0]["image"] == "registry.k8s.io/autoscaling/cluster-autoscaler:v1.36.1"
    role = next(d for d in mine if d["kind"] == "Role")
    assert role["metadata"]["namespace"] == "default"
    groups = {(tuple(r["apiGroups"]), tuple(r["resources"])) for r in role["rules"]}
    assert (("infrastructure.cluster.x-k8s.io",), ("openstackmachinetemplates",)) in groups


def test_scale_from_zero_annotations_on_the_machine_deployment() -> None:
    from scs_templates._render.render import render

    objects = render(autoscaled()).objects
    deployment = next(o for o in objects if o["kind"] == "MachineDeployment")
    annotations = deployment["metadata"]["annotations"]
    assert annotations["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"] == "0"
    assert annotations["capacity.cluster-autoscaler.kubernetes.io/labels"] == (
        "scs.community/pool=batch"
    )
    assert annotations["capacity.cluster-autoscaler.kubernetes.io/taints"] == (
        "batch=yes:NoSchedule"
    )


@pytest.mark.parametrize("provider", ["openstack", "docker"])
def test_scale_from_zero_labels_reach_clusterclass_machine_deployments(provider: str) -> None:
    """A clusterclass group that autoscales from zero carries the labels and taints
    annotations in its topology metadata, which the topology controller puts on the
    MachineDeployment it creates (the autoscaler reads them there)."""
    from scs_templates._render.render import render

    data = autoscaled(provider).model_dump(by_alias=True, exclude_none=True)
    data["spec"]["template"] = "clusterclass"
    objects = render(settings_model().model_validate(data)).objects
    cluster = next(o for o in objects if o["kind"] == "Cluster")
    (group,) = cluster["spec"]["topology"]["workers"]["machineDeployments"]
    assert group["metadata"]["annotations"] == {
        "capacity.cluster-autoscaler.kubernetes.io/labels": "scs.community/pool=batch",
        "capacity.cluster-autoscaler.kubernetes.io/taints": "batch=yes:NoSchedule",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "4",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "0",
    }


def test_ingress_nginx_is_deprecated_on_enable_and_in_migrate() -> None:
    from scs_templates._settings import rules
    from scs_templates.providers.openstack.migrate.kaas_v1 import migrate_kaas_v1

    enabled = services_settings(ingressNginx={"enabled": True})
    found = [m for _, m in rules.warnings(enabled) if "ingress-nginx is deprecated" in m]
    assert found and "gatewayAPI" in found[0]
    assert not [m for _, m in rules.warnings(services_settings()) if "ingress-nginx" in m]
    result = migrate_kaas_v1("OPENSTACK_FLAVOR_CONTROL: SCS-2V-4\nDEPLOY_NGINX_INGRESS: true\n")
    assert any("ingress-nginx is deprecated" in line for line in result.report_lines)


def test_gatewayclass_cilium_is_in_services_render_as_apply_installs_it(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    """Issue 40, defect 10: ``apply`` installs the Gateway API CRDs before Cilium, so the
    chart's ``gatewayClass.create: auto`` (only when the API server serves GatewayClass)
    made the GatewayClass ``cilium`` on ``apply`` but never in ``services render``, which
    has no cluster to ask. Created explicitly now: the render is what ``apply`` installs."""
    from scs_templates._services.preview import render_services

    settings = services_settings(
        "docker", chartMirror=str(chart_mirror), gatewayAPI={"enabled": True}
    )
    objects = manifests_of(render_services(settings, helmfile=services_helmfile).manifests)
    gateway_class = objects[("GatewayClass", "cilium")]
    assert gateway_class["spec"]["controllerName"] == "io.cilium/gateway-controller"
    assert ("ValidatingAdmissionPolicy", "gateway.cilium.io") in objects
    # the Gateway API CRDs are those of the version Cilium 1.20 names (v1.6.1, its docs'
    # gateway_api_version and its go.mod), experimental channel (TLSRoute v1alpha2 kept)
    crd = objects[("CustomResourceDefinition", "gatewayclasses.gateway.networking.k8s.io")]
    annotations = crd["metadata"]["annotations"]
    assert annotations["gateway.networking.k8s.io/bundle-version"] == "v1.6.1"
    assert annotations["gateway.networking.k8s.io/channel"] == "experimental"


def test_calico_3_32_crds_come_from_their_own_chart_before_the_operator() -> None:
    """Issue 40, defect 4: from Calico v3.32 the tigera-operator chart ships no CRDs; they
    are the chart crd.projectcalico.org.v1 of the same version, applied server-side before
    the operator (its README: ``helm template ... | kubectl apply --server-side``). Older
    operator versions bring them in ``crds/``: no such release then."""
    from scs_templates._services.releases import helm_releases

    settings = services_settings(cni={"type": "calico"})
    releases = service_releases(settings)
    names = [r.name for r in releases]
    assert names.index("calico-crds") < names.index("tigera-operator")
    by = {r.name: r for r in releases}
    crds, operator = by["calico-crds"], by["tigera-operator"]
    assert (crds.chart_name, crds.version) == ("crd.projectcalico.org.v1", operator.version)
    assert operator.version == "v3.32.1"
    assert crds.info.server_side and crds.info.crds_only
    assert crds.key in operator.needs  # the order (gitops stages it); helmfile never syncs it
    assert "calico-crds" not in [r.name for r in helm_releases(releases)]
    for pinned in ("3.30.7", "v3.30.7"):
        older = services_settings(cni={"type": "calico", "version": pinned})
        assert "calico-crds" not in by_name(older)
    on_1_33 = support.settings_of(
        {
            "provider": "docker",
            "kubernetes": {"version": "1.33.x"},
            "controlPlane": {"replicas": 1},
            "services": {"cni": {"type": "calico"}},
        }
    )
    assert by_name(on_1_33)["tigera-operator"].version == "v3.30.7"
    assert "calico-crds" not in by_name(on_1_33)
    assert "calico-crds" not in by_name(services_settings())  # Cilium


def test_calico_3_32_renders_its_crds_with_the_real_charts(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    from scs_templates._services.preview import render_services

    settings = services_settings("docker", chartMirror=str(chart_mirror), cni={"type": "calico"})
    objects = manifests_of(render_services(settings, helmfile=services_helmfile).manifests)
    assert ("CustomResourceDefinition", "ippools.crd.projectcalico.org") in objects
    assert ("CustomResourceDefinition", "installations.operator.tigera.io") in objects
    assert ("Deployment", "tigera-operator") in objects
    assert objects[("Installation", "default")]["spec"]["calicoNetwork"]["bgp"] == "Disabled"


def test_envoy_gateway_on_calico_with_the_real_chart(
    services_helmfile: Any, chart_mirror: Path
) -> None:
    from scs_templates._services.preview import render_services

    settings = services_settings(
        "docker",
        chartMirror=str(chart_mirror),
        cni={"type": "calico"},
        gatewayAPI={"enabled": True},
    )
    objects = manifests_of(render_services(settings, helmfile=services_helmfile).manifests)
    assert ("Deployment", "envoy-gateway") in objects
    assert ("CustomResourceDefinition", "httproutes.gateway.networking.k8s.io") in objects
    assert ("CustomResourceDefinition", "envoyproxies.gateway.envoyproxy.io") in objects


def test_gateway_proxy_protocol_only_where_octavia_speaks_it() -> None:
    on = by_name(services_settings(gatewayAPI={"enabled": True, "proxyProtocol": True}))
    assert on["cilium"].values["gatewayAPI"]["enableProxyProtocol"] is True
    docker = services_settings("docker", gatewayAPI={"enabled": True, "proxyProtocol": True})
    assert "enableProxyProtocol" not in by_name(docker)["cilium"].values["gatewayAPI"]
    from scs_templates._settings import rules

    assert any("ignored" in m for p, m in rules.warnings(docker) if "proxyProtocol" in p)


def test_server_side_releases_are_not_synced_by_helmfile() -> None:
    """The Gateway API CRDs are applied server-side (their helm release record would exceed
    a Secret's 1 MiB, refused by a real API server: test_services_workload); helmfile gets
    neither the release nor Cilium's need of it, which it would refuse as unknown."""
    from scs_templates._services.releases import helm_releases

    releases = service_releases(services_settings(gatewayAPI={"enabled": True}))
    by = {r.name: r for r in releases}
    assert by["gateway-api-crds"].info.server_side
    assert by["cilium"].needs == ("kube-system/gateway-api-crds",)  # the order, for gitops
    synced = {r.name: r for r in helm_releases(releases)}
    assert "gateway-api-crds" not in synced
    assert synced["cilium"].needs == ()
    assert [r.name for r in helm_releases(releases)] == [r for r in by if r != "gateway-api-crds"]


# --------------------------------------------------------------------------- issue 40


class _Secrets:
    """Stands in for a KubeClient: Secrets by (namespace, name), what was put recorded."""

    def __init__(self, data: dict[tuple[str, str], dict[str, str]]) -> None:
        self.data = data

    def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        return self.data.get((namespace, name))

    def put_secret(self, namespace: str, name: str, content: dict[str, str], **_: Any) -> bool:
        self.data[(namespace, name)] = dict(content)
        return True


def test_extra_networks_nodes_get_serving_certificates() -> None:
    """A machine with ``extraNetworks`` has a second port: OCCM would report its address
    too (kubelet's serving CSR then holds an IP outside network.nodeCIDR, the approver
    refuses it), and the node IP could even be the extra network's. The copied cloud.conf
    pins OCCM's ``internal-network-name`` to the cluster network, so only its addresses
    are the node's (cloud-provider-openstack nodeAddresses drops the others)."""
    from scs_templates._settings import rules
    from scs_templates.providers.openstack.values import internal_network_name
    from scs_templates.providers.openstack.workload import sync_cloud_config

    plain = services_settings("openstack")
    assert internal_network_name(plain) is None  # one network: cloud.conf as it was
    workers = [{"name": "workers", "machineType": "SCS-2V-4", "extraNetworks": ["storage"]}]
    extra = with_spec(plain, workers=workers)
    assert internal_network_name(extra) == "k8s-clusterapi-cluster-default-demo"
    conf = '[Global]\nauth-url="https://k.invalid/v3"\n'
    management = _Secrets({("default", "capi-demo-cloud-config"): {"cloud.conf": conf}})
    workload = _Secrets({})
    assert sync_cloud_config(extra, management, workload) == ""
    assert workload.data[("kube-system", "cloud-config")]["cloud.conf"] == (
        conf + '\n[Networking]\ninternal-network-name="k8s-clusterapi-cluster-default-demo"\n'
    )
    openstack = extra.spec.openstack.model_dump(by_alias=True, exclude_none=True)
    by_name = with_spec(extra, openstack={**openstack, "existingNetwork": {"network": "shared"}})
    assert internal_network_name(by_name) == "shared"
    uuid = "0b6a5c56-1f7e-4a1b-9d1e-6c8f7e5b4a3d"
    by_id = with_spec(extra, openstack={**openstack, "existingNetwork": {"network": uuid}})
    assert internal_network_name(by_id) is None
    assert any(
        path == ("spec", "openstack", "existingNetwork", "network") and "give the name" in text
        for path, text in rules.warnings(by_id)
    )


def test_cloud_conf_internal_network_keeps_the_users_choice() -> None:
    from scs_templates.providers.openstack.cloud_config import with_internal_network

    conf = "[Global]\nx=1\n\n[Networking]\nipv6-support-disabled=true\n\n[LoadBalancer]\ny=2\n"
    assert with_internal_network(conf, 'n"1') == (
        "[Global]\nx=1\n\n[Networking]\nipv6-support-disabled=true\n"
        'internal-network-name="n\\"1"\n\n[LoadBalancer]\ny=2\n'
    )
    own = "[Networking]\ninternal-network-name=mine\n"
    assert with_internal_network(own, "other") == own
