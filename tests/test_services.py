"""Standard services: catalogue, values builders, state values, helmfile and apply.

The helmfile and ``services render`` tests run the REAL helmfile 0.166 and helm 3.15 offline
with the REAL upstream charts (../shared/charts, used as a local chart mirror). The apply
tests run against REAL kube-apiservers (a management and a workload cluster, fresh for each
test, on the test plane's etcd: :class:`Clusters`) and are about plumbing (state values ->
helmfile -> helm -> the API servers, idempotence, keep/remove, the CNI guard, the cloud
config copy): they use STAND-IN charts (tests/standin_charts.py, a test double: one
ConfigMap echoing the values), since the real charts' Pods need controllers and admission
of a workload cluster (that is test_services_workload.py, with the real charts).
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from ruamel.yaml import YAML

from scs_templates.errors import InputError, ToolNotFoundError
from scs_templates.services import (
    deep_merge,
    service_catalogue,
    service_releases,
    services_state_values,
)
from scs_templates.services.catalogue import service_info
from scs_templates.services.releases import chart_source, normalize_version
from scs_templates.services.values import METRICS_SERVER_ARGS, PROXY_PROTOCOL_ANNOTATION
from scs_templates.settings import ClusterSettings, SettingsError, parse_settings_text
from tests import support
from tests.standin_charts import STAND_IN_LABEL, build_stand_in_mirror, package_stand_in
from tests.support import REPO, real_charts, skip_or_fail

if TYPE_CHECKING:
    from testenv import Plane
    from testenv.kubeapi import KubeAPI

yaml = YAML(typ="safe")
#: How docs/services.md names the namespace of a release on the management cluster.
MANAGEMENT_NAMESPACE_CELL = "(the cluster's, on the management cluster)"


def services_settings(
    provider: str = "openstack", *, network_mtu: int = 0, **services: Any
) -> ClusterSettings:
    """Valid settings with ``spec.services`` = ``services`` (camelCase keys)."""
    spec: dict[str, Any] = {"provider": provider, "services": services}
    if network_mtu:
        spec["network"] = {"mtu": network_mtu}
    if provider == "openstack":
        spec["controlPlane"] = {"replicas": 1, "machineType": "SCS-2V-4"}
        spec["workers"] = [{"name": "workers", "machineType": "SCS-2V-4"}]
    else:
        spec["controlPlane"] = {"replicas": 1}
    return support.settings_of(spec)


def by_name(settings: ClusterSettings) -> dict[str, Any]:
    return {release.name: release for release in service_releases(settings)}


# --------------------------------------------------------------------------- catalogue + docs


def test_catalogue_names_are_unique_and_versions_are_pinned() -> None:
    names = [info.release for info in service_catalogue()]
    assert len(names) == len(set(names))
    for info in service_catalogue():
        assert re.fullmatch(r"v?\d+\.\d+\.\d+", info.version), info
        assert info.repository.startswith(("https://", "oci://")), info


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
    settings = ClusterSettings.model_validate(data)
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
    assert approver["providerRegex"] == r"^capi\-demo-[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
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
    assert releases["cilium"].values["gatewayAPI"] == {"enabled": True}
    assert releases["cilium"].values["kubeProxyReplacement"] is False  # kube-proxy stays
    assert releases["cilium"].values["nodePort"] == {"enabled": True}
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


@pytest.fixture(scope="module")
def services_helmfile() -> Any:
    from scs_templates.services.runner import ServicesHelmfile

    try:
        return ServicesHelmfile()
    except ToolNotFoundError as error:
        skip_or_fail(f"helmfile/helm 3 not available ({error}); run `scs-templates tools install`")


@pytest.fixture(scope="module")
def charts() -> Path:
    """The REAL upstream charts, packaged (../shared/charts), used as a local chart mirror."""
    return real_charts()


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """STAND-IN charts (a test double), only for the apply plumbing tests."""
    directory = tmp_path_factory.mktemp("stand-in-charts")
    build_stand_in_mirror(directory)
    return directory


def manifests_of(text: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Rendered objects by (kind, name)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for document in yaml.load_all(text):
        if document:
            found[(document["kind"], document["metadata"]["name"])] = document
    return found


@pytest.mark.helm
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
    assert [r["name"] for r in rows][:2] == ["gateway-api-crds", "cilium"]


@pytest.mark.helm
def test_helmfile_without_services_state_has_no_releases(services_helmfile: Any) -> None:
    assert services_helmfile.list({}) == []


@pytest.mark.helm
def test_helmfile_build_with_local_mirror(services_helmfile: Any, charts: Path) -> None:
    settings = services_settings(
        chartMirror=f"file://{charts}",
        cni={"version": "1.18.12"},
        certManager={"enabled": True},
        metricsServer={"enabled": False},
    )
    state = services_state_values(settings, installed={"metrics-server"}, force_remove=True)
    built = list(yaml.load_all(services_helmfile.build(state)))
    document = next(d for d in built if d and "releases" in d)
    assert "repositories" not in document  # a local mirror needs no repository at all
    releases = {r["name"]: r for r in document["releases"]}
    assert releases["cilium"]["chart"] == f"{charts}/cilium-1.18.12.tgz"
    assert releases["cilium"]["version"] == "1.18.12"
    cert_manager = service_info("cert-manager").version
    assert releases["cert-manager"]["chart"] == f"{charts}/cert-manager-{cert_manager}.tgz"
    assert releases["cert-manager"]["values"] == [{"crds": {"enabled": True, "keep": True}}]
    assert releases["cert-manager"]["needs"] == [
        "kube-system/cilium",
        "kube-system/openstack-cloud-controller-manager",
    ]
    assert releases["metrics-server"]["installed"] is False
    assert releases["kubelet-csr-approver"]["installed"] is True  # always: kubelet certificates


@pytest.mark.helm
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


@pytest.mark.helm
def test_real_charts_render_our_values(
    services_helmfile: Any, charts: Path, tmp_path: Path
) -> None:
    """The REAL charts turn our values into the objects we mean (helmfile + helm, offline)."""
    settings = services_settings(
        chartMirror=str(charts),
        ingressNginx={"enabled": True, "values": {"controller": {"replicaCount": 2}}},
        certManager={"enabled": True, "version": "1.18.6"},
    )
    state = services_state_values(settings)
    files = services_helmfile.write_values(state, tmp_path / "values")
    assert {f.stem for f in files} == {
        "cilium",
        "openstack-cloud-controller-manager",
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


# --------------------------------------------------------------------------- services render


def write_settings(path: Path, provider: str = "docker", **services: Any) -> str:
    settings = services_settings(provider, **services)
    path.write_text(json.dumps(settings.model_dump(by_alias=True, exclude_none=True)))
    return str(path)


@pytest.mark.helm
def test_services_render_real_charts_offline_and_deterministic(
    services_helmfile: Any, charts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scs_templates.cli.main import main

    del services_helmfile  # only its skip: helmfile and helm 3 must be installed
    path = write_settings(
        tmp_path / "s.yaml",
        "openstack",
        chartMirror=f"file://{charts}",
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


@pytest.mark.helm
def test_services_render_from_a_helm_repository_mirror(
    services_helmfile: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``chartMirror`` that is a helm repository (the real charts served over HTTP,
    tests/chartrepo.py): helmfile must ``helm repo add`` it, which ``--skip-deps`` skips;
    without that every chart was "repo scs-chart-mirror not found" (seen first in ``gitops``,
    which renders the Gateway API CRDs this way). The same objects as from the packages."""
    from scs_templates.cli.main import main
    from scs_templates.services.releases import service_releases
    from tests import chartrepo

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


@pytest.mark.helm
def test_services_render_exit_codes(
    services_helmfile: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scs_templates.cli.main import main

    del services_helmfile
    sparse = tmp_path / "sparse"
    cilium, csr_approver, metrics = (
        f"{name}-{service_info(name).version}"
        for name in ("cilium", "kubelet-csr-approver", "metrics-server")
    )
    package_stand_in(sparse, "cilium", service_info("cilium").version)  # lacks the others
    assert (
        main(["services", "render", write_settings(tmp_path / "a.yaml", chartMirror=str(sparse))])
        == 2
    )
    assert f"{metrics}.tgz" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: x\n")
    assert main(["services", "render", str(bad)]) == 2
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in (cilium, csr_approver, metrics):
        (broken / f"{name}.tgz").write_bytes(b"not a chart")
    assert (
        main(["services", "render", write_settings(tmp_path / "b.yaml", chartMirror=str(broken))])
        == 1
    )


# --------------------------------------------------------------------------- apply (real API)


def _kubeconfig_of(plane: Plane, server: KubeAPI, path: Path) -> Path:
    """A cluster-admin kubeconfig (context ``testenv``) of ``server``, 0600."""
    from testenv.plane import _kubeconfig, _write_private

    pki = plane.directory / "pki"
    text = _kubeconfig(
        f"https://{server.host}:{server.port}", pki / "ca.crt", pki / "admin.crt", pki / "admin.key"
    )
    _write_private(path, text)
    return path


class Clusters:
    """A REAL management and a REAL workload kube-apiserver, each an empty cluster of its own
    (testenv.plane.extra_apiserver: on the plane's etcd under its own key prefix, started
    fresh for each test). The workload cluster's kubeconfig is the management cluster's
    Secret ``demo-kubeconfig``, as Cluster API writes it. No controllers run: the stand-in
    charts render ConfigMaps, which need none."""

    def __init__(self, plane: Plane, tmp: Path, stack: contextlib.ExitStack) -> None:
        from testenv.plane import extra_apiserver

        tag = secrets.token_hex(3)
        self.management = stack.enter_context(extra_apiserver(plane, f"mgmt-{tag}", ()))
        self.workload = stack.enter_context(extra_apiserver(plane, f"workload-{tag}", ()))
        self.mgmt_kubeconfig = _kubeconfig_of(plane, self.management, tmp / "mgmt.kubeconfig")
        self.workload_kubeconfig = _kubeconfig_of(plane, self.workload, tmp / "workload.kubeconfig")
        value = base64.b64encode(self.workload_kubeconfig.read_bytes()).decode()
        self.management.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "demo-kubeconfig", "namespace": "default"},
                "data": {"value": value},
            }
        )

    @staticmethod
    def _helm_releases(server: KubeAPI) -> dict[str, int]:
        """Helm release Secrets on ``server``: release name -> highest revision."""
        found: dict[str, int] = {}
        for secret in server.list("v1", "Secret", selector="owner=helm"):
            labels = secret["metadata"]["labels"]
            name, version = labels["name"], int(labels["version"])
            found[name] = max(found.get(name, 0), version)
        return found

    def revisions(self) -> dict[str, int]:
        """Helm releases in the workload cluster: release name -> highest revision."""
        return self._helm_releases(self.workload)

    def management_releases(self) -> dict[str, int]:
        return self._helm_releases(self.management)

    def stand_ins(self) -> set[str]:
        return {
            cm["metadata"]["name"].removesuffix("-stand-in")
            for cm in self.workload.list("v1", "ConfigMap", selector=f"{STAND_IN_LABEL}=true")
        }


@pytest.fixture
def clusters(api_plane: Plane, tmp_path: Path, services_helmfile: Any) -> Iterator[Clusters]:
    with contextlib.ExitStack() as stack:
        yield Clusters(api_plane, tmp_path, stack)


def run_apply(clusters: Clusters, settings: ClusterSettings, **options: Any) -> Any:
    from scs_templates.services import apply

    return apply(
        settings,
        kubeconfig=str(clusters.mgmt_kubeconfig),
        install_cluster=False,
        poll_interval=0.1,
        kubeconfig_timeout=5,
        api_timeout=5,
        **options,
    )


@pytest.mark.helm
@pytest.mark.plane
def test_apply_sync_is_idempotent_keeps_disabled_and_force_removes(
    clusters: Clusters, mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    services = {"chartMirror": str(mirror), "certManager": {"enabled": True}}
    settings = services_settings("docker", **services)

    first = run_apply(clusters, settings)
    assert set(first.synced) == {"cilium", "kubelet-csr-approver", "metrics-server", "cert-manager"}
    assert {p.action for p in first.plan} == {"install"}
    assert clusters.stand_ins() == set(first.synced)
    revisions = clusters.revisions()
    assert revisions == dict.fromkeys(first.synced, 1)
    assert list(private_tmp.glob("scs-templates-workload-*")) == []  # kubeconfig removed

    second = run_apply(clusters, settings)
    assert second.synced == ()
    assert {p.action for p in second.plan} == {"unchanged"}
    assert clusters.revisions() == revisions  # no new helm revision anywhere

    changed = services_settings("docker", **services, metricsServer={"values": {"replicas": 2}})
    third = run_apply(clusters, changed)
    assert third.synced == ("metrics-server",)
    assert clusters.revisions()["metrics-server"] == 2

    disabled = services_settings("docker", chartMirror=str(mirror), certManager={"enabled": False})
    kept = run_apply(clusters, disabled)
    plans = {p.name: p.action for p in kept.plan}
    assert plans["cert-manager"] == "keep"
    assert "cert-manager" in clusters.stand_ins()
    assert kept.state_values["services"]["releases"][-1]["installed"] is True

    removed = run_apply(clusters, disabled, force_remove=True)
    assert removed.synced == ("cert-manager",)
    assert {p.name: p.action for p in removed.plan}["cert-manager"] == "remove"
    assert "cert-manager" not in clusters.stand_ins()
    assert "cert-manager" not in clusters.revisions()
    assert list(private_tmp.glob("scs-templates-workload-*")) == []


@pytest.mark.helm
@pytest.mark.plane
def test_apply_refuses_a_cni_switch_unless_allowed(clusters: Clusters, mirror: Path) -> None:
    from scs_templates.services import CniSwitchError

    run_apply(clusters, services_settings("docker", chartMirror=str(mirror)))
    calico = services_settings("docker", chartMirror=str(mirror), cni={"type": "calico"})
    with pytest.raises(CniSwitchError) as refused:
        run_apply(clusters, calico)
    assert refused.value.exit_code == 2
    message = str(refused.value)
    assert "pods lose networking" in message and "restart" in message
    assert "maintenance window" in message
    assert "tigera-operator" not in clusters.stand_ins()

    switched = run_apply(clusters, calico, allow_cni_switch=True)
    plans = {p.name: p.action for p in switched.plan}
    assert plans["cilium"] == "remove" and plans["tigera-operator"] == "install"
    assert "cilium" not in clusters.stand_ins() and "tigera-operator" in clusters.stand_ins()
    namespace = clusters.workload.get("v1", "Namespace", "", "tigera-operator")
    assert namespace is not None  # labelled before the sync (fix 1)
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


@pytest.mark.helm
@pytest.mark.plane
def test_cli_apply_dry_run_and_cni_refusal(
    clusters: Clusters, mirror: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scs_templates.cli.main import main

    def write(path: Path, **services: Any) -> str:
        settings = services_settings("docker", chartMirror=str(mirror), **services)
        path.write_text(json.dumps(settings.model_dump(by_alias=True, exclude_none=True)))
        return str(path)

    plain = write(tmp_path / "plain.yaml")
    base = ["apply", "--kubeconfig", str(clusters.mgmt_kubeconfig), "--services-only"]
    assert main([*base, "--dry-run", "--poll-interval", "0.1", plain]) == 0
    out = capsys.readouterr().out
    cilium = service_info("cilium").version
    assert f"would install   kube-system/cilium (cilium-{cilium})" in out
    assert clusters.revisions() == {}  # a dry run changes nothing

    assert main([*base, "--poll-interval", "0.1", plain]) == 0
    assert (
        "services: synced cilium, kubelet-csr-approver, metrics-server" in capsys.readouterr().out
    )
    assert main([*base, "--poll-interval", "0.1", plain]) == 0
    assert "services: nothing to change" in capsys.readouterr().out

    calico = write(tmp_path / "calico.yaml", cni={"type": "calico"})
    assert main([*base, "--poll-interval", "0.1", calico]) == 2
    err = capsys.readouterr().err
    assert "refused" in err and "pods lose networking" in err
    # no workload credential in any output (the client key of its kubeconfig Secret)
    config = json.loads(clusters.workload_kubeconfig.read_text())
    key = config["users"][0]["user"]["client-key-data"]
    assert key[:40] not in out + err


@pytest.mark.helm
@pytest.mark.plane
def test_apply_stops_on_a_local_mirror_without_the_chart(
    clusters: Clusters, tmp_path: Path
) -> None:
    sparse = tmp_path / "sparse"
    package_stand_in(sparse, "cilium", service_info("cilium").version)
    settings = services_settings("docker", chartMirror=str(sparse))
    metrics_server = re.escape(service_info("metrics-server").version)
    with pytest.raises(InputError, match=rf"metrics-server-{metrics_server}\.tgz"):
        run_apply(clusters, settings)


@pytest.mark.helm
@pytest.mark.plane
def test_apply_installs_the_cluster_release_first(
    clusters: Clusters, mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lifecycle.install`` is replaced by a recording SPY (a test double): installing the
    cluster chart for real needs the Cluster API CRDs and controllers (the session plane,
    test_plane_lifecycle.py); here only the order and the arguments are the question."""
    from scs_templates import lifecycle
    from scs_templates.services import apply

    calls: list[dict[str, Any]] = []

    def fake_install(settings: ClusterSettings, **options: Any) -> None:
        calls.append({"name": settings.name, "stand_ins": clusters.stand_ins(), **options})

    monkeypatch.setattr(lifecycle, "install", fake_install)
    settings = services_settings("docker", chartMirror=str(mirror))
    result = apply(
        settings,
        kubeconfig=str(clusters.mgmt_kubeconfig),
        context="testenv",
        secrets={"clouds.yaml": "x"},
        poll_interval=0.1,
        kubeconfig_timeout=5,
        api_timeout=5,
    )
    assert len(calls) == 1
    call = calls[0]
    assert call["name"] == "demo" and call["stand_ins"] == set()  # before any service
    assert (call["kubeconfig"], call["context"], call["wait"]) == (
        str(clusters.mgmt_kubeconfig),
        "testenv",
        False,
    )
    assert call["secrets"] == {"clouds.yaml": "x"}
    assert "cilium" in result.synced

    dry = apply(settings, kubeconfig=str(clusters.mgmt_kubeconfig), dry_run=True)
    assert len(calls) == 1  # a dry run installs nothing
    assert {p.action for p in dry.plan} == {"unchanged"}


@pytest.mark.helm
@pytest.mark.plane
def test_cli_apply_prints_the_templates_the_cluster_install_pruned(
    clusters: Clusters,
    mirror: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``apply`` reports the superseded machine templates its cluster install pruned as
    ``install`` does: each on the progress stream as it goes, and the summary line on stdout.
    Before, apply called install without its progress and printed only the release, so an
    operator of apply never learnt what was removed. ``lifecycle.install`` is a SPY (a test
    double, for the reason above: the real chart needs Cluster API's CRDs and controllers)
    that prunes only through the progress it is given, with the real prune's words
    (scs_templates.template_prune); the real prune after a rollout is proven with the real
    Cluster API in test_plane_inmemory.py (test_scaling_changes_only_replicas)."""
    from scs_templates import lifecycle
    from scs_templates.cli.main import main
    from scs_templates.helm import ReleaseInfo

    pruned = [
        "DockerMachineTemplate default/demo-md-0-0a1b2c3d",
        "KubeadmConfigTemplate default/demo-md-0-4e5f6a7b",
    ]

    def fake_install(settings: ClusterSettings, **options: Any) -> lifecycle.InstallResult:
        say = options.get("progress")
        if say is not None:  # what prune_templates says for each template it deletes
            for ref in pruned:
                say(f"pruned the superseded {ref}")
        release = ReleaseInfo("demo", "default", 2, "deployed", "scs-cluster", "", "")
        return lifecycle.InstallResult(
            lifecycle.target_of(settings), release, "1.36.3", "1.36.3", None, list(pruned)
        )

    monkeypatch.setattr(lifecycle, "install", fake_install)
    path = tmp_path / "cluster.yaml"
    settings = services_settings("docker", chartMirror=str(mirror))
    path.write_text(json.dumps(settings.model_dump(by_alias=True, exclude_none=True)))
    assert main(["apply", "--kubeconfig", str(clusters.mgmt_kubeconfig), str(path)]) == 0
    captured = capsys.readouterr()
    assert "cluster release demo in namespace default: revision 2, deployed" in captured.out
    assert (
        "pruned 2 superseded template(s) no machine uses any more: " + ", ".join(pruned)
        in captured.out.splitlines()
    )
    for ref in pruned:
        assert f"pruned the superseded {ref}" in captured.err
    assert "services: synced cilium" in captured.out


@pytest.mark.plane
def test_apply_copies_cloud_conf_into_the_workload_cluster(
    clusters: Clusters, tmp_path: Path
) -> None:
    """OCCM and Cinder CSI read kube-system/cloud-config: copied API to API, idempotently."""
    from scs_templates.kube import KubeClient
    from scs_templates.providers.openstack.workload import sync_cloud_config

    settings = services_settings("openstack")
    management = KubeClient(str(clusters.mgmt_kubeconfig))
    workload = KubeClient(str(clusters.workload_kubeconfig))

    note = sync_cloud_config(settings, management, workload)
    assert "has no cloud.conf" in note
    assert clusters.workload.get("v1", "Secret", "kube-system", "cloud-config") is None

    conf = '[Global]\nauth-url="https://keystone.invalid/v3"\n'
    clusters.management.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "capi-demo-cloud-config", "namespace": "default"},
            "data": {
                "cloud.conf": base64.b64encode(conf.encode()).decode(),
                "cacert": base64.b64encode(b"PEM").decode(),
                "clouds.yaml": base64.b64encode(b"clouds: {}").decode(),
            },
        }
    )
    assert sync_cloud_config(settings, management, workload) == ""
    copied = workload.secret_data("kube-system", "cloud-config")
    # not clouds.yaml; cloud.conf names the CA copied next to it (OCCM mounts /etc/config)
    assert copied == {"ca.crt": "PEM", "cloud.conf": conf + "ca-file=/etc/config/ca.crt\n"}
    written = clusters.workload.get("v1", "Secret", "kube-system", "cloud-config")
    assert written is not None
    assert sync_cloud_config(settings, management, workload) == ""  # unchanged: no write
    again = clusters.workload.get("v1", "Secret", "kube-system", "cloud-config")
    assert again is not None
    assert again["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]
    assert (
        sync_cloud_config(
            services_settings("openstack", cinderCSI={"enabled": False}), management, workload
        )
        == ""
    )
    management.close()
    workload.close()


# --------------------------------------------------------------------------- defects (issue 14)
# Each test below failed on the code before the fix it names.


def test_fix1_pod_security_labels_for_namespaces_that_need_them() -> None:
    from scs_templates.services.releases import namespace_labels

    calico = services_settings("docker", cni={"type": "calico"})
    releases = service_releases(calico)
    # the Tigera operator uses hostNetwork and hostPath: baseline (our default) refuses it
    assert namespace_labels(calico, releases) == {
        "tigera-operator": {"pod-security.kubernetes.io/enforce": "privileged"}
    }
    data = calico.model_dump(by_alias=True)
    data["spec"]["security"]["podSecurity"]["enforce"] = "privileged"
    assert namespace_labels(ClusterSettings.model_validate(data), releases) == {}
    data["spec"]["security"]["podSecurity"] = {"enforce": "restricted", "exemptNamespaces": []}
    strict = ClusterSettings.model_validate(data)
    assert namespace_labels(strict, service_releases(strict)) == {
        "kube-system": {"pod-security.kubernetes.io/enforce": "baseline"},  # the approver
        "tigera-operator": {"pod-security.kubernetes.io/enforce": "privileged"},
    }
    cilium = services_settings("openstack")
    data = cilium.model_dump(by_alias=True)
    data["spec"]["security"]["podSecurity"] = {"enforce": "restricted", "exemptNamespaces": []}
    strict = ClusterSettings.model_validate(data)
    assert namespace_labels(strict, service_releases(strict)) == {
        "kube-system": {"pod-security.kubernetes.io/enforce": "privileged"}  # Cilium, OCCM
    }


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
    from scs_templates.services.values import with_ca_file

    conf = '[Global]\nauth-url="https://k.invalid/v3"\n\n[LoadBalancer]\ncreate-monitor=true\n'
    assert with_ca_file(conf) == (
        '[Global]\nauth-url="https://k.invalid/v3"\nca-file=/etc/config/ca.crt\n\n'
        "[LoadBalancer]\ncreate-monitor=true\n"
    )
    for own in ("ca-file=/mine.pem", "tls-insecure=true"):
        assert with_ca_file(f"[Global]\n{own}\n") == f"[Global]\n{own}\n"


@pytest.mark.helm
def test_fix4_charts_mount_the_ca_where_cloud_conf_points(
    services_helmfile: Any, charts: Path
) -> None:
    from scs_templates.services.values import CLOUD_CONFIG_CA_FILE

    objects = manifests_of(
        services_helmfile.template(
            services_state_values(services_settings(chartMirror=str(charts)))
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


@pytest.mark.helm
def test_fix7_gateway_api_keeps_kube_proxy(services_helmfile: Any, charts: Path) -> None:
    settings = services_settings(chartMirror=str(charts), gatewayAPI={"enabled": True})
    objects = manifests_of(services_helmfile.template(services_state_values(settings)))
    config = objects[("ConfigMap", "cilium-config")]["data"]
    assert config["kube-proxy-replacement"] == "false"
    assert config["enable-node-port"] == "true"  # what Cilium's Gateway API needs
    assert config["enable-gateway-api"] == "true"


@pytest.mark.helm
def test_fix9_cinder_binds_where_the_pod_runs_and_snapshots_have_a_class(
    services_helmfile: Any, charts: Path
) -> None:
    settings = services_settings(chartMirror=str(charts))
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
    from scs_templates.services.deploy import plan_actions
    from scs_templates.services.releases import plan_releases

    settings = services_settings()  # gatewayAPI off now
    releases = plan_releases(settings, frozenset({"gateway-api-crds", "cilium"}), True)
    crds = next(r for r in releases if r.name == "gateway-api-crds")
    assert crds.installed  # kept, not uninstalled
    wanted = {r.name for r in service_releases(settings)}
    plans = {p.name: p for p in plan_actions(releases, {}, lambda r: {}, wanted)}
    assert plans["gateway-api-crds"].action == "keep"
    assert "never removed" in plans["gateway-api-crds"].reason


# --------------------------------------------------------------------------- autoscaler, ingress


def autoscaled(provider: str = "openstack", **services: Any) -> ClusterSettings:
    """Settings whose one worker group autoscales from zero, with a label and a taint."""
    data = services_settings(provider, **services).model_dump(by_alias=True, exclude_none=True)
    group = data["spec"]["workers"][0]
    group.pop("replicas", None)
    group["autoscaling"] = {"min": 0, "max": 4}
    group["labels"] = {"scs.community/pool": "batch"}
    group["taints"] = [{"key": "batch", "value": "yes", "effect": "NoSchedule"}]
    return ClusterSettings.model_validate(data)


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
    from scs_templates.settings import rules

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


@pytest.mark.helm
def test_autoscaler_real_chart_on_the_management_cluster(
    services_helmfile: Any, charts: Path
) -> None:
    settings = autoscaled(chartMirror=str(charts))
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
    role = next(d for d in mine if d["kind"] == "Role")
    assert role["metadata"]["namespace"] == "default"
    groups = {(tuple(r["apiGroups"]), tuple(r["resources"])) for r in role["rules"]}
    assert (("infrastructure.cluster.x-k8s.io",), ("openstackmachinetemplates",)) in groups


def test_scale_from_zero_annotations_on_the_machine_deployment() -> None:
    from scs_templates.render import render

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


def test_ingress_nginx_is_deprecated_on_enable_and_in_migrate() -> None:
    from scs_templates.migrate import migrate_kaas_v1
    from scs_templates.settings import rules

    enabled = services_settings(ingressNginx={"enabled": True})
    found = [m for _, m in rules.warnings(enabled) if "ingress-nginx is deprecated" in m]
    assert found and "gatewayAPI" in found[0]
    assert not [m for _, m in rules.warnings(services_settings()) if "ingress-nginx" in m]
    result = migrate_kaas_v1("OPENSTACK_FLAVOR_CONTROL: SCS-2V-4\nDEPLOY_NGINX_INGRESS: true\n")
    assert any("ingress-nginx is deprecated" in line for line in result.report_lines)


@pytest.mark.helm
def test_envoy_gateway_on_calico_with_the_real_chart(services_helmfile: Any, charts: Path) -> None:
    from scs_templates.services.preview import render_services

    settings = services_settings(
        "docker", chartMirror=str(charts), cni={"type": "calico"}, gatewayAPI={"enabled": True}
    )
    objects = manifests_of(render_services(settings, helmfile=services_helmfile).manifests)
    assert ("Deployment", "envoy-gateway") in objects
    assert ("CustomResourceDefinition", "httproutes.gateway.networking.k8s.io") in objects
    assert ("CustomResourceDefinition", "envoyproxies.gateway.envoyproxy.io") in objects


def test_gateway_proxy_protocol_only_where_octavia_speaks_it() -> None:
    on = by_name(services_settings(gatewayAPI={"enabled": True, "proxyProtocol": True}))
    assert on["cilium"].values["gatewayAPI"] == {"enabled": True, "enableProxyProtocol": True}
    docker = services_settings("docker", gatewayAPI={"enabled": True, "proxyProtocol": True})
    assert by_name(docker)["cilium"].values["gatewayAPI"] == {"enabled": True}
    from scs_templates.settings import rules

    assert any("ignored" in m for p, m in rules.warnings(docker) if "proxyProtocol" in p)


@pytest.mark.helm
@pytest.mark.plane
def test_apply_installs_the_autoscaler_on_the_management_cluster(
    clusters: Clusters, mirror: Path
) -> None:
    """Plumbing (STAND-IN charts, REAL API servers): the autoscaler release goes to the management
    cluster's namespace of the Cluster, the rest to the workload cluster."""
    settings = autoscaled("docker", chartMirror=str(mirror))
    result = run_apply(clusters, settings)
    assert "demo-cluster-autoscaler" in result.synced
    assert set(clusters.management_releases()) == {"demo-cluster-autoscaler"}
    assert "demo-cluster-autoscaler" not in clusters.revisions()  # not in the workload
    again = run_apply(clusters, settings)
    assert again.synced == ()  # idempotent on both clusters
    off = services_settings("docker", chartMirror=str(mirror), clusterAutoscaler={"enabled": False})
    kept = run_apply(clusters, off)
    assert {p.name: p.action for p in kept.plan}["demo-cluster-autoscaler"] == "keep"
    removed = run_apply(clusters, off, force_remove=True)
    assert removed.synced == ("demo-cluster-autoscaler",)
    assert clusters.management_releases() == {}


def test_server_side_releases_are_not_synced_by_helmfile() -> None:
    """The Gateway API CRDs are applied server-side (their helm release record would exceed
    a Secret's 1 MiB, refused by a real API server: test_services_workload); helmfile gets
    neither the release nor Cilium's need of it, which it would refuse as unknown."""
    from scs_templates.services.releases import helm_releases

    releases = service_releases(services_settings(gatewayAPI={"enabled": True}))
    by = {r.name: r for r in releases}
    assert by["gateway-api-crds"].info.server_side
    assert by["cilium"].needs == ("kube-system/gateway-api-crds",)  # the order, for gitops
    synced = {r.name: r for r in helm_releases(releases)}
    assert "gateway-api-crds" not in synced
    assert synced["cilium"].needs == ()
    assert [r.name for r in helm_releases(releases)] == [r for r in by if r != "gateway-api-crds"]
