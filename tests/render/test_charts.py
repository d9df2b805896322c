"""The cluster charts: every object of every template x provider renders and is CRD-valid.

Also proven here: `helm lint --strict` is clean, rendering is deterministic, template names
change exactly when their spec changes (rolling upgrades without counters), and chart_for()
serves a ready chart from its cache.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import scs_templates._render.charts as charts_module
from scs_templates._render.catalogue import TEMPLATES, catalogue, template_names
from scs_templates._render.charts import LIBRARY_CHART, chart_for
from scs_templates._render.values import build_values
from scs_templates._settings.model import TEMPLATES as MODEL_TEMPLATES
from scs_templates._settings.model import ClusterSettings
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import load_settings
from scs_templates._tools.toolchain.resolve import cache_root
from scs_templates._versions.kubernetes import TESTED_PATCHES, resolve_version
from scs_templates.providers.openstack.values import credentials_secret_name
from scs_templates.providers.registry import provider_names, shipped_providers
from tests.support import (
    EXAMPLES,
    REPO,
    SHIPPED_PROVIDERS,
    crd_validation,
    settings_of,
    skip_or_fail,
)

CHARTS = REPO / "charts"
KUBE_VERSION = "1.34.1"
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# The user's cache, resolved before the tests point SCS_TEMPLATES_CACHE_DIR at a temp dir
# for the assembled charts: the pinned helm binaries live in the user's cache.
TOOLS_CACHE = cache_root()
HASHED = re.compile(r"^(?P<base>.+)-[0-9a-f]{8}$")


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module", autouse=True)
def _chart_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Assemble charts in a private cache (never the user's).

    Module scope: a session-scoped autouse fixture would keep the variable set for every
    later test module of the session, hiding the user's tools cache from them.
    """
    mp = pytest.MonkeyPatch()
    mp.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    yield
    mp.undo()


@pytest.fixture(scope="session")
def helm_path() -> Path:
    """The pinned helm's path (skip, or fail in CI, when it is not installed)."""
    from scs_templates._core.errors import ToolNotFoundError
    from scs_templates._tools.toolchain.resolve import find_helm

    try:
        return find_helm(cache_dir=TOOLS_CACHE).path
    except ToolNotFoundError as error:
        skip_or_fail(f"helm not found: {error}")
        raise


@pytest.fixture(scope="session")
def crds() -> None:
    reason = crd_validation.skip_or_fail_reason()
    if reason:
        skip_or_fail(reason)


# --------------------------------------------------------------------------- settings


def _docker_simple() -> ClusterSettings:
    return settings_of(
        {
            "template": "simple",
            "provider": "docker",
            "kubernetes": {"version": "1.33.x"},
            "controlPlane": {"replicas": 3},
            "workers": [{"name": "md-0", "autoscaling": {"min": 1, "max": 3}}],
            "etcd": {"defrag": {"enabled": False}},
            "registryMirrors": [
                {
                    "registry": "docker.io",
                    "endpoints": ["http://localhost:5000"],
                    "skipVerify": True,
                }
            ],
        },
        name="kind1",
    )


def _openstack_variant() -> ClusterSettings:
    """The other OpenStack options: existing Secret, internal API, no anti-affinity."""
    return settings_of(
        {
            "template": "simple",
            "provider": "openstack",
            "kubernetes": {"version": "1.35.x"},
            "controlPlane": {"replicas": 5, "machineType": "SCS-4V-8", "rootDiskGB": 30},
            "workers": [
                {"name": "w", "replicas": 0, "machineType": "SCS-2V-4", "labels": {"a": "b"}}
            ],
            "network": {"apiAccess": {"mode": "internal", "managementCIDRs": ["192.0.2.0/24"]}},
            "openstack": {
                "credentialsSecret": "shared-creds",
                "antiAffinity": {"controlPlane": "none", "workers": "none"},
                "sshKeyName": "k",
            },
            "etcd": {"backupRetention": 0},
        },
        name="var",
        namespace="ns1",
    )


def all_cases() -> dict[str, ClusterSettings]:
    """Every template x provider, the examples and the remaining option variants."""
    cases = {name: load_settings(path).settings for name, path in ((p.stem, p) for p in EXAMPLES)}
    cases["docker-simple"] = _docker_simple()
    cases["openstack-variant"] = _openstack_variant()
    covered = {(s.spec.template, s.spec.provider) for s in cases.values()}
    assert covered == {(t, p) for t in MODEL_TEMPLATES for p in SHIPPED_PROVIDERS}
    return cases


CASES = all_cases()


def render(settings_: ClusterSettings, helm: Path) -> str:
    chart = chart_for(settings_.spec.provider)
    return crd_validation.helm_template(
        helm,
        chart.path,
        build_values(settings_),
        release=settings_.name,
        namespace=settings_.metadata.namespace,
        kube_version=KUBE_VERSION,
    )


def objects(text: str) -> list[dict[str, Any]]:
    return list(crd_validation.documents(text))


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def names(objs: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(kind, base name) -> full name; the base drops a template hash suffix."""
    result = {}
    for obj in objs:
        name = obj["metadata"]["name"]
        match = HASHED.match(name)
        base = match["base"] if match and "resource-policy" in str(obj["metadata"]) else name
        result[(obj["kind"], base)] = name
    return result


# --------------------------------------------------------------------------- catalogue


def test_catalogue_matches_model_and_charts() -> None:
    assert template_names() == MODEL_TEMPLATES  # every name of the model has its row
    assert provider_names()[: len(SHIPPED_PROVIDERS)] == SHIPPED_PROVIDERS
    assert len(catalogue()) == len(TEMPLATES) * len(provider_names())  # plug-ins too
    for provider in shipped_providers():
        chart_yaml = yaml.safe_load((CHARTS / provider.chart / "Chart.yaml").read_text())
        assert chart_yaml["name"] == provider.chart
        assert chart_yaml["dependencies"] == [
            {"name": LIBRARY_CHART, "version": "0.1.0", "repository": f"file://../{LIBRARY_CHART}"}
        ]
    assert yaml.safe_load((CHARTS / LIBRARY_CHART / "Chart.yaml").read_text())["type"] == "library"


@pytest.mark.parametrize("chart", sorted(p.name for p in CHARTS.iterdir() if p.is_dir()))
def test_values_schema_is_self_contained_draft07(chart: str) -> None:
    from jsonschema import Draft7Validator

    text = (CHARTS / chart / "values.schema.json").read_text()
    schema = json.loads(text)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(schema)
    refs = re.findall(r'"\$ref":\s*"([^"]*)"', text)
    assert all(ref.startswith("#/") for ref in refs), refs
    assert schema.get("additionalProperties") is False


# --------------------------------------------------------------------------- chart_for


def test_chart_for_assembles_once_and_reuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path))
    first = chart_for("openstack")
    assert first.name == "openstack-cluster" and first.version == "0.1.0"
    assert first.path.is_relative_to(tmp_path / "charts")
    assert (first.path / "charts" / LIBRARY_CHART / "Chart.yaml").is_file()
    marker = first.path / "templates" / "cluster-api.yaml"
    inode = marker.stat().st_ino
    again = chart_for("openstack")
    assert again == first and marker.stat().st_ino == inode  # fast path: nothing copied
    assert not [p for p in first.path.parent.iterdir() if p.name.startswith(".")]


def test_chart_for_is_content_addressed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path / "cache"))
    copy = tmp_path / "charts"
    shutil.copytree(CHARTS, copy)
    monkeypatch.setattr(charts_module, "charts_dir", lambda: copy)
    before = chart_for("docker").path
    (copy / LIBRARY_CHART / "templates" / "_helpers.tpl").write_text(
        (copy / LIBRARY_CHART / "templates" / "_helpers.tpl").read_text() + "\n{{/* x */}}\n"
    )
    after = chart_for("docker").path
    assert before != after and before.is_dir() and after.is_dir()


def _settled_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the charts that chart_for may remember (files count as settled at once)."""
    import shutil

    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path / "cache"))
    copy = tmp_path / "charts"
    shutil.copytree(CHARTS, copy)
    monkeypatch.setattr(charts_module, "charts_dir", lambda: copy)
    monkeypatch.setattr(charts_module, "SETTLED_SECONDS", 0.0)
    monkeypatch.setattr(charts_module, "_memo", {})
    return copy


def test_chart_for_remembers_its_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _settled_copy(tmp_path, monkeypatch)
    first = chart_for("docker")

    def no_hashing(charts: list[Path]) -> str:
        raise AssertionError("hashed again although nothing changed")

    monkeypatch.setattr(charts_module, "_digest", no_hashing)
    assert chart_for("docker") == first


def test_chart_digest_is_hashlibs_sha256(tmp_path: Path) -> None:
    """The chart cache key is hashed with CPython's built-in sha256 (no OpenSSL at start-up,
    issue #19): the same digest hashlib gives, so every existing cache entry keeps its name."""
    import hashlib

    for name, data in (("a.yaml", b"x: 1\n"), ("templates/b.tpl", b"\0" * 70000)):
        (tmp_path / "c" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "c" / name).write_bytes(data)
    expected = hashlib.sha256(
        b"c/a.yaml\0x: 1\n\0" + b"c/templates/b.tpl\0" + b"\0" * 70000 + b"\0"
    ).hexdigest()
    assert charts_module._digest([tmp_path / "c"]) == expected
    import importlib.util

    if any(importlib.util.find_spec(name) for name in ("_sha2", "_sha256")):  # CPython
        assert charts_module.sha256.__module__ in ("_sha2", "_sha256")


def test_chart_for_memo_sees_an_edit_that_keeps_size_and_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memo is never stale: an in-place edit of the same length with the old mtime
    forged back still changes the file's ctime, which the kernel alone sets."""
    import os
    import time

    copy = _settled_copy(tmp_path, monkeypatch)
    before = chart_for("docker").path
    helpers = copy / LIBRARY_CHART / "templates" / "_helpers.tpl"
    text = helpers.read_text()
    status = helpers.stat()
    time.sleep(0.05)  # past the kernel's timestamp tick
    with helpers.open("r+") as file:  # same inode, same size
        file.write("{{/*" if not text.startswith("{{/*") else "{{- ")
    os.utime(helpers, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert helpers.stat().st_size == status.st_size
    assert helpers.stat().st_mtime_ns == status.st_mtime_ns
    assert helpers.stat().st_ino == status.st_ino
    after = chart_for("docker").path
    assert after != before
    assert (after / "charts" / LIBRARY_CHART / "templates" / "_helpers.tpl").read_text() == (
        helpers.read_text()
    )


def test_chart_for_does_not_remember_freshly_written_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written within SETTLED_SECONDS may still change in the same timestamp tick:
    then every call hashes (git's racily-clean rule)."""
    _settled_copy(tmp_path, monkeypatch)
    monkeypatch.setattr(charts_module, "SETTLED_SECONDS", 3600.0)
    chart_for("docker")
    assert charts_module._memo == {}


def test_chart_for_rebuilds_a_removed_cache_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    _settled_copy(tmp_path, monkeypatch)
    first = chart_for("docker")
    shutil.rmtree(first.path)
    again = chart_for("docker")
    assert again == first and (again.path / "Chart.yaml").is_file()
    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path / "other-cache"))
    assert chart_for("docker").path.is_relative_to(tmp_path / "other-cache")


def test_chart_for_unknown_provider() -> None:
    from scs_templates._core.errors import InputError

    with pytest.raises(InputError, match="unknown provider"):
        chart_for("vsphere")


# --------------------------------------------------------------------------- rendering


EXPECTED_KINDS = {
    "openstack": {"OpenStackCluster", "OpenStackMachineTemplate"},
    "docker": {"DockerCluster", "DockerMachineTemplate"},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_object_renders_and_is_crd_valid(case: str, helm_path: Path, crds: None) -> None:
    settings_ = CASES[case]
    text = render(settings_, helm_path)
    objs = objects(text)
    assert crd_validation.validate_all(objs) == []

    kinds = Counter(o["kind"] for o in objs)
    groups = len(settings_.spec.workers)
    provider = settings_.spec.provider
    machine_template = (
        "OpenStackMachineTemplate" if provider == "openstack" else "DockerMachineTemplate"
    )
    topology = settings_.spec.template == "clusterclass"
    assert kinds["Secret"] == 0  # credentials never go through helm
    if topology:
        # the class and its templates; the topology controller creates the rest
        infra_cluster = "OpenStackCluster" if provider == "openstack" else "DockerCluster"
        assert kinds["Cluster"] == kinds["ClusterClass"] == 1
        assert kinds["KubeadmControlPlaneTemplate"] == kinds[f"{infra_cluster}Template"] == 1
        assert kinds[machine_template] == 2 and kinds["KubeadmConfigTemplate"] == 1
        assert set(kinds) <= {
            "Cluster",
            "ClusterClass",
            "KubeadmControlPlaneTemplate",
            "KubeadmConfigTemplate",
            f"{infra_cluster}Template",
            machine_template,
        }
    else:
        assert kinds["Cluster"] == kinds["KubeadmControlPlane"] == 1
        assert kinds[machine_template] == groups + 1
        assert kinds["KubeadmConfigTemplate"] == kinds["MachineDeployment"] == groups
        assert kinds["MachineHealthCheck"] == groups + 1
        assert set(kinds) <= {
            "Cluster",
            "KubeadmControlPlane",
            "KubeadmConfigTemplate",
            "MachineDeployment",
            "MachineHealthCheck",
            *EXPECTED_KINDS[provider],
        }

    for obj in objs:
        meta = obj["metadata"]
        assert DNS_LABEL.match(meta["name"]) and len(meta["name"]) <= 63, meta["name"]
        assert meta["namespace"] == settings_.metadata.namespace
        class_object = topology and obj["kind"] not in ("Cluster", "Secret")
        if class_object:  # shared by the clusters of the namespace: no cluster label
            assert "scs.community/cluster" not in meta["labels"]
            assert meta["labels"]["scs.community/cluster-class"]
        else:
            assert meta["labels"]["scs.community/cluster"] == settings_.name
        assert meta["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        assert not any(k.startswith("helm.sh/") for k in meta["labels"])
        immutable = not topology and obj["kind"] in (machine_template, "KubeadmConfigTemplate")
        assert (meta.get("annotations", {}).get("helm.sh/resource-policy") == "keep") == immutable
    assert "# Source:" in text  # sanity: this is helm output


@pytest.mark.parametrize("provider", ["openstack", "docker"])
def test_helm_lint_strict(provider: str, helm_path: Path) -> None:
    example = {"openstack": "openstack-production", "docker": "docker-dev"}[provider]
    settings_ = CASES[example]
    chart = chart_for(provider)
    result = subprocess.run(
        [
            str(helm_path),
            "lint",
            "--strict",
            str(chart.path),
            "-f",
            "-",
            "-n",
            settings_.metadata.namespace,
            "--kube-version",
            KUBE_VERSION,
        ],
        input=json.dumps(build_values(settings_)),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout


def test_schema_rejects_unknown_values(helm_path: Path) -> None:
    values = build_values(CASES["openstack-minimal"])
    values["controlPlane"]["flavour"] = "typo"
    result = subprocess.run(
        [
            str(helm_path),
            "template",
            "demo",
            str(chart_for("openstack").path),
            "-n",
            "default",
            "--kube-version",
            KUBE_VERSION,
            "-f",
            "-",
        ],
        input=json.dumps(values),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0 and "flavour" in result.stderr


# --------------------------------------------------------------------------- behaviour


def test_openstack_objects(helm_path: Path) -> None:
    objs = objects(render(CASES["openstack-production"], helm_path))
    (cluster,) = by_kind(objs, "OpenStackCluster")
    spec = cluster["spec"]
    # ovn: CAPO drops allowedCIDRs, so the restriction is in the control-plane security group
    # on a port CAPO does not open to everyone (test_api_access has every mode x provider).
    assert spec["apiServerLoadBalancer"] == {"enabled": True, "provider": "ovn"}
    assert spec["apiServerPort"] == 6444
    assert spec["identityRef"] == {
        "type": "Secret",
        "name": "scs-prod1-cloud-config",
        "cloudName": "prod",
    }
    assert spec["externalNetwork"] == {"id": "3c1a0f2e-5b7d-4e0a-9a55-0d1c2e3f4a5b"}
    assert spec["managedSubnets"] == [
        {"cidr": "10.20.0.0/20", "dnsNameservers": ["9.9.9.9", "149.112.112.112"]}
    ]
    assert spec["networkMTU"] == 1450
    assert [
        r["remoteIPPrefix"]
        for r in spec["managedSecurityGroups"]["controlPlaneNodesSecurityGroupRules"]
    ] == ["203.0.113.0/24", "198.51.100.17/32", "10.20.0.0/20", "192.0.2.10/32"]
    assert spec["controlPlaneAvailabilityZones"] == ["az1", "az2", "az3"]

    templates = {
        o["metadata"]["name"]: o["spec"]["template"]["spec"]
        for o in by_kind(objs, "OpenStackMachineTemplate")
    }
    cp = next(s for n, s in templates.items() if n.startswith("scs-prod1-control-plane-"))
    assert cp["flavor"] == "SCS-4V-8"
    v137 = f"v1.37.{TESTED_PATCHES[(1, 37)]}"  # examples/openstack-production.yaml: 1.37.x
    assert cp["image"] == {"filter": {"name": f"ubuntu-capi-image-{v137}"}}
    assert cp["rootVolume"] == {"sizeGiB": 50}
    assert cp["serverGroup"] == {"filter": {"name": "scs-prod1-control-plane"}}
    assert cp["serverMetadata"] == [{"key": "team", "value": "platform"}]
    assert cp["sshKeyName"] == "scs-keypair"
    gpu = next(s for n, s in templates.items() if n.startswith("scs-prod1-gpu-"))
    assert gpu["image"] == {"filter": {"name": f"ubuntu-capi-image-gpu-{v137}"}}

    # A minimal cluster: no external network (CAPO picks the only one), open API.
    minimal = objects(render(CASES["openstack-minimal"], helm_path))
    (cluster,) = by_kind(minimal, "OpenStackCluster")
    assert "externalNetwork" not in cluster["spec"]
    assert "allowedCIDRs" not in cluster["spec"]["apiServerLoadBalancer"]
    assert "networkMTU" not in cluster["spec"]


def test_existing_secret_internal_access_no_server_groups(helm_path: Path) -> None:
    objs = objects(render(CASES["openstack-variant"], helm_path))
    assert by_kind(objs, "Secret") == []
    (cluster,) = by_kind(objs, "OpenStackCluster")
    assert cluster["spec"]["identityRef"]["name"] == "shared-creds"
    assert cluster["spec"]["apiServerLoadBalancer"]["allowedCIDRs"] == [
        "10.8.0.0/20",
        "192.0.2.0/24",
    ]
    for template in by_kind(objs, "OpenStackMachineTemplate"):
        assert "serverGroup" not in template["spec"]["template"]["spec"]
    (kcp,) = by_kind(objs, "KubeadmControlPlane")
    paths = [f["path"] for f in kcp["spec"]["kubeadmConfigSpec"]["files"]]
    assert "/usr/local/sbin/etcd-defrag.sh" in paths
    script = next(
        f["content"]
        for f in kcp["spec"]["kubeadmConfigSpec"]["files"]
        if f["path"].endswith("defrag.sh")
    )
    assert "RETENTION=0" in script


def test_the_chart_references_the_credentials_secret_and_never_renders_one(helm_path: Path) -> None:
    # Credentials go through the Kubernetes API (lifecycle.store_credentials), not helm.
    for case in ("openstack-minimal", "openstack-production"):
        objs = objects(render(CASES[case], helm_path))
        assert by_kind(objs, "Secret") == []
        (cluster,) = by_kind(objs, "OpenStackCluster")
        name = credentials_secret_name(CASES[case])
        assert cluster["spec"]["identityRef"]["name"] == name


def _kcp(objs: list[dict[str, Any]]) -> dict[str, Any]:
    (kcp,) = by_kind(objs, "KubeadmControlPlane")
    return kcp["spec"]


def _args(items: list[dict[str, str]]) -> dict[str, str]:
    return {item["name"]: item["value"] for item in items}


def test_control_plane_hardening(helm_path: Path) -> None:
    objs = objects(render(CASES["openstack-production"], helm_path))
    kcp = _kcp(objs)
    assert kcp["rollout"]["before"] == {"certificatesExpiryDays": 30}
    assert kcp["remediation"] == {"maxRetry": 3}
    config = kcp["kubeadmConfigSpec"]
    cluster_config = config["clusterConfiguration"]
    etcd = _args(cluster_config["etcd"]["local"]["extraArgs"])
    assert etcd == {
        "auto-compaction-mode": "periodic",
        "auto-compaction-retention": "8h",
        "election-timeout": "2500",
        "heartbeat-interval": "250",
        "quota-backend-bytes": str(4 * 1024**3),
        "snapshot-count": "6400",
    }
    api = _args(cluster_config["apiServer"]["extraArgs"])
    assert api["enable-admission-plugins"] == "NodeRestriction,EventRateLimit"
    assert api["max-requests-inflight"] == "400"
    assert api["max-mutating-requests-inflight"] == "200"
    assert api["min-request-timeout"] == "1800"
    admission_file = api["admission-control-config-file"]
    volumes = {v["name"]: v for v in cluster_config["apiServer"]["extraVolumes"]}
    assert admission_file.startswith(volumes["admission-config"]["mountPath"] + "/")
    assert set(volumes) == {"admission-config", "audit-policy", "audit-logs", "encryption-config"}
    files = {f["path"]: f for f in config["files"]}
    admission = yaml.safe_load(files[admission_file]["content"])
    plugins = {p["name"]: p["configuration"] for p in admission["plugins"]}
    assert plugins["PodSecurity"]["defaults"]["enforce"] == "restricted"
    assert plugins["PodSecurity"]["defaults"]["warn"] == "restricted"
    assert plugins["PodSecurity"]["exemptions"]["namespaces"] == ["kube-system"]
    assert plugins["EventRateLimit"]["limits"] == [{"type": "Server", "qps": 5000, "burst": 20000}]
    # Node registration as CAPO's reference template (templates/cluster-template.yaml).
    for section in ("initConfiguration", "joinConfiguration"):
        registration = config[section]["nodeRegistration"]
        assert _args(registration["kubeletExtraArgs"]) == {
            "cloud-provider": "external",
            "provider-id": "openstack:///'{{ instance_id }}'",
        }
        assert registration["name"] == "{{ local_hostname }}"
    patch_dir = config["initConfiguration"]["patches"]["directory"]
    patch = json.loads(files[f"{patch_dir}/kubeletconfiguration0+merge.json"]["content"])
    assert patch["serverTLSBootstrap"] is True
    assert patch["authentication"]["anonymous"]["enabled"] is False
    # etcd maintenance: script, service, timer on the schedule, enabled after kubeadm.
    assert "OnCalendar=*-*-* 03:15:00" in files["/etc/systemd/system/etcd-defrag.timer"]["content"]
    script = files["/usr/local/sbin/etcd-defrag.sh"]["content"]
    assert "RETENTION=7" in script and "move-leader" in script and "fstrim" in script
    assert (
        script.index("defragmenting follower")
        < script.index("move-leader")
        < script.index("snapshot save")
    )
    assert len(script) <= 10240  # kubeadm files content limit of the CRD
    assert "systemctl enable --now etcd-defrag.timer" in config["postKubeadmCommands"]
    assert "systemctl enable --now etcd-priority.timer" in config["postKubeadmCommands"]
    priority = files["/usr/local/sbin/etcd-priority.sh"]["content"]
    assert "ionice -c 2 -n 0" in priority and "renice -n -10" in priority
    assert config["preKubeadmCommands"] == [
        "systemctl daemon-reload",
        "systemctl enable --now etcd-unsafe-fs.service",
    ]
    unit = files["/etc/systemd/system/etcd-unsafe-fs.service"]["content"]
    assert "ExecStart=/bin/mount -o remount,barrier=0,commit=20 /" in unit
    assert "Before=kubelet.service" in unit
    # Registry mirrors on control plane and workers.
    hosts = files["/etc/containerd/certs.d/docker.io/hosts.toml"]["content"]
    assert 'server = "https://registry-1.docker.io"' in hosts
    assert '[host."https://harbor.example.com/v2/dockerhub"]' in hosts
    assert 'capabilities = ["pull", "resolve"]' in hosts and "override_path = true" in hosts
    for kct in by_kind(objs, "KubeadmConfigTemplate"):
        worker_files = {f["path"] for f in kct["spec"]["template"]["spec"]["files"]}
        assert "/etc/containerd/certs.d/registry.k8s.io/hosts.toml" in worker_files
        assert "/usr/local/sbin/etcd-defrag.sh" not in worker_files


def test_minimal_has_no_unsafe_fs_and_docker_has_no_cloud_provider(helm_path: Path) -> None:
    assert (
        "preKubeadmCommands"
        not in _kcp(objects(render(CASES["openstack-minimal"], helm_path)))["kubeadmConfigSpec"]
    )
    objs = objects(render(CASES["docker-simple"], helm_path))
    config = _kcp(objs)["kubeadmConfigSpec"]
    assert "cloud-provider" not in _args(
        config["initConfiguration"]["nodeRegistration"]["kubeletExtraArgs"]
    )
    # defrag disabled: only etcd's priority timer (always on) is installed and enabled
    assert config["postKubeadmCommands"] == [
        "systemctl daemon-reload",
        "systemctl enable --now etcd-priority.timer",
    ]
    assert sorted(f["path"] for f in config["files"] if f["path"].startswith("/etc/systemd/")) == [
        "/etc/systemd/system/etcd-priority.service",
        "/etc/systemd/system/etcd-priority.timer",
    ]
    (template,) = [
        t for t in by_kind(objs, "DockerMachineTemplate") if "md-0" in t["metadata"]["name"]
    ]
    assert template["spec"]["template"]["spec"] == {
        # the published kind image, pinned by digest (docker-simple runs 1.33.x)
        "customImage": resolve_version("1.33.x", kind_node_images=True).kind_image.image,  # type: ignore[union-attr]
        "extraMounts": [
            {"containerPath": "/var/run/docker.sock", "hostPath": "/var/run/docker.sock"}
        ],
    }
    hosts = next(f["content"] for f in config["files"] if f["path"].endswith("hosts.toml"))
    assert "skip_verify = true" in hosts


def test_worker_groups(helm_path: Path) -> None:
    objs = objects(render(CASES["openstack-production"], helm_path))
    deployments = {d["metadata"]["name"]: d for d in by_kind(objs, "MachineDeployment")}
    burst = deployments["scs-prod1-burst"]
    assert "replicas" not in burst["spec"]
    assert burst["metadata"]["annotations"] == {
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "10",
    }
    general = deployments["scs-prod1-general"]
    assert general["spec"]["replicas"] == 3 and "annotations" not in general["metadata"]
    assert general["spec"]["template"]["spec"]["failureDomain"] == "az1"
    assert general["spec"]["template"]["metadata"]["labels"]["node-role.kubernetes.io/worker"] == ""
    kcts = {
        k["metadata"]["name"]: k["spec"]["template"]["spec"]
        for k in by_kind(objs, "KubeadmConfigTemplate")
    }
    gpu = kcts[
        deployments["scs-prod1-gpu"]["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"]
    ]
    registration = gpu["joinConfiguration"]["nodeRegistration"]
    assert registration["taints"] == [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    ]
    assert _args(registration["kubeletExtraArgs"])["node-labels"] == "scs.community/accelerator=gpu"
    checks = {m["metadata"]["name"]: m["spec"] for m in by_kind(objs, "MachineHealthCheck")}
    assert (
        checks["scs-prod1-gpu"]["selector"]["matchLabels"]["cluster.x-k8s.io/deployment-name"]
        == "scs-prod1-gpu"
    )
    assert (
        checks["scs-prod1-control-plane"]["selector"]["matchLabels"][
            "cluster.x-k8s.io/control-plane"
        ]
        == ""
    )


# --------------------------------------------------------------------------- rolling upgrades


def _changed(
    settings_: ClusterSettings, update: dict[str, Any], helm: Path
) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    data = settings_.model_dump(by_alias=True, exclude_unset=True)
    spec = {**data["spec"], **update}
    changed = settings_of(spec, settings_.name, settings_.metadata.namespace)
    before = names(objects(render(settings_, helm)))
    after = names(objects(render(changed, helm)))
    assert before.keys() == after.keys()
    return before, after


def _renamed(
    before: dict[tuple[str, str], str], after: dict[tuple[str, str], str]
) -> set[tuple[str, str]]:
    return {key for key in before if before[key] != after[key]}


def test_replicas_change_renames_nothing(helm_path: Path) -> None:
    prod = CASES["openstack-production"]
    workers = [w.model_dump(by_alias=True, exclude_unset=True) for w in prod.spec.workers]
    workers[0]["replicas"] = 7
    workers[1]["autoscaling"] = {"min": 2, "max": 20}
    before, after = _changed(
        prod,
        {
            "workers": workers,
            "network": {
                **prod.spec.network.model_dump(by_alias=True, exclude_unset=True),
                "apiAccess": {"mode": "open"},
            },
        },
        helm_path,
    )
    assert _renamed(before, after) == set()


def test_machine_type_change_renames_only_that_groups_machine_template(helm_path: Path) -> None:
    prod = CASES["openstack-production"]
    workers = [w.model_dump(by_alias=True, exclude_unset=True) for w in prod.spec.workers]
    workers[2]["machineType"] = "SCS-32V-128-1g"
    before, after = _changed(prod, {"workers": workers}, helm_path)
    assert _renamed(before, after) == {("OpenStackMachineTemplate", "scs-prod1-gpu")}


def test_kubernetes_version_change_renames_every_machine_template(helm_path: Path) -> None:
    minimal = CASES["openstack-minimal"]
    before, after = _changed(minimal, {"kubernetes": {"version": "1.34.x"}}, helm_path)
    assert _renamed(before, after) == {
        ("OpenStackMachineTemplate", "capi-demo-control-plane"),
        ("OpenStackMachineTemplate", "capi-demo-workers"),
    }
    # The docker image carries the version too.
    dev = CASES["docker-dev"]
    before, after = _changed(dev, {"kubernetes": {"version": "1.35.x"}}, helm_path)
    assert _renamed(before, after) == {k for k in before if k[0] == "DockerMachineTemplate"}


def test_bootstrap_change_renames_kubeadm_config_templates_only(helm_path: Path) -> None:
    dev = CASES["docker-dev"]
    mirrors = [{"registry": "ghcr.io", "endpoints": ["https://mirror.example/v2/ghcr"]}]
    before, after = _changed(dev, {"registryMirrors": mirrors}, helm_path)
    assert _renamed(before, after) == {k for k in before if k[0] == "KubeadmConfigTemplate"}


# --------------------------------------------------------------------------- properties

label = st.from_regex(r"\A[a-z]([-a-z0-9]{0,14}[a-z0-9])?\Z")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(
    prefix=label,
    cluster=label,
    groups=st.lists(label, min_size=1, max_size=3, unique=True),
    provider=st.sampled_from(["openstack", "docker"]),
    replicas=st.integers(min_value=0, max_value=5),
)
def test_rendering_is_deterministic_and_names_fit(
    helm_path: Path, prefix: str, cluster: str, groups: list[str], provider: str, replicas: int
) -> None:
    machine = {"machineType": "m"} if provider == "openstack" else {}
    try:
        settings_ = settings_of(
            {
                "template": "multi-md",
                "provider": provider,
                "prefix": prefix,
                "controlPlane": machine,
                "workers": [{"name": g, "replicas": replicas, **machine} for g in groups],
            },
            name=cluster,
        )
    except SettingsError:
        assume(False)
        raise
    first = render(settings_, helm_path)
    assert render(settings_.model_copy(deep=True), helm_path) == first
    for obj in objects(first):
        name = obj["metadata"]["name"]
        assert DNS_LABEL.match(name) and len(name) <= 63, name
