"""Tests of ``scs-templates migrate`` and
:func:`scs_templates.providers.openstack.migrate.migrate_kaas_v1`.

The fixtures in tests/data/kaas-v1 are our own, written from the KaaS v1 key table
(k8s-cluster-api-provider R3 = v4.0.0 .. R6 = v7.0.0): an R3-style file, an R5-style file
with Calico, and an R6-style file with every odd syntax. Every migrated document must
validate, every input key must be reported, and no secret value may ever be printed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from scs_templates._cli.main import main
from scs_templates._core.errors import InputError
from scs_templates._settings.loader import compose_yaml
from scs_templates._settings.validate import validate_data
from scs_templates._versions.kubernetes import SUPPORTED_MINORS
from scs_templates.providers.openstack.migrate import flow, targets
from scs_templates.providers.openstack.migrate.kaas_v1 import (
    KEY_TABLE,
    MigrationResult,
    migrate_kaas_v1,
)
from scs_templates.providers.openstack.migrate.network import PROXY
from scs_templates.providers.openstack.migrate.reading import _nodes
from tests.support import REPO

DATA = REPO / "tests" / "data" / "kaas-v1"
FIXTURES = sorted(DATA.glob("*.yaml"))
DOC = REPO / "docs" / "migration-from-kaas-v1.md"
OLDEST = f"{SUPPORTED_MINORS[0][0]}.{SUPPORTED_MINORS[0][1]}"
STATUSES = ("mapped -> ", "obsolete (", "secret, not copied (", "ignored (", "unknown (")


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def input_keys(text: str) -> list[str]:
    return re.findall(r"^([A-Za-z_][A-Za-z0-9_]*):", text, flags=re.MULTILINE)


def secret_values(text: str) -> list[str]:
    found = re.findall(r"^\w+_B64:[ \t]*(\S+)", text, flags=re.MULTILINE)
    found += re.findall(r"^MY_OWN_SETTING:[ \t]*(\S+)", text, flags=re.MULTILINE)
    return found


def migrate(text: str, **kwargs: str) -> MigrationResult:
    return migrate_kaas_v1(
        text,
        name=kwargs.get("name", "testcluster"),
        prefix=kwargs.get("prefix", "capi"),
        file="clusterctl.yaml",
    )


def spec(result: MigrationResult) -> Any:
    return load(result.text)["spec"]


def report(result: MigrationResult) -> dict[str, str]:
    return {entry.key: entry.line for entry in result.report}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- every fixture


def test_fixtures_exist() -> None:
    names = {path.name for path in FIXTURES}
    assert {"r3.yaml", "r5-calico.yaml", "r6.yaml"} <= names


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_migrates_and_validates(path: Path) -> None:
    result = migrate_kaas_v1(path.read_text(), name="prod1", prefix="scs", file=path.name)
    data = load(result.text)
    loaded = validate_data(data)
    assert loaded.settings.metadata.name == "prod1"
    assert loaded.settings.spec.prefix == "scs"
    assert loaded.settings.spec.provider == "openstack"
    # The CommentedMap is the same document.
    validate_data(result.document)
    assert data["apiVersion"] == "scs-templates.scs.community/v1alpha1"
    assert data["kind"] == "ClusterSettings"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_key_reported_once_in_input_order(path: Path) -> None:
    text = path.read_text()
    result = migrate(text)
    assert [entry.key for entry in result.report] == input_keys(text)
    for entry in result.report:
        key, _status, detail = entry  # a (key, status, detail) tuple
        assert entry.line.startswith(f"{key}: ")
        assert entry.line[len(key) + 2 :].startswith(STATUSES), entry.line
        assert "\n" not in entry.line
        assert detail


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_cli_never_echoes_secrets(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = path.read_text()
    secrets = secret_values(text)
    assert secrets or path.name == "r6.yaml"
    code, out, err = run_cli(["migrate", str(path)], capsys)
    assert code == 0
    for secret in secrets:
        assert secret not in out
        assert secret not in err
    for key in re.findall(r"^(\w+_B64):", text, flags=re.MULTILINE):
        assert f"{key}: secret, not copied (" in err
    assert len(err.strip().splitlines()) >= len(input_keys(text))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_output_is_commented(path: Path) -> None:
    result = migrate(path.read_text())
    assert result.text.startswith("# ClusterSettings migrated by `scs-templates migrate`")
    assert "Credentials are NOT copied" in result.text
    assert "scs-templates openstack appcred create" in result.text
    assert "# from WORKER_MACHINE_COUNT" in result.text
    assert "# from KUBERNETES_VERSION" in result.text
    assert result.text.endswith("\n")


# --------------------------------------------------------------------------- R3 and R6


def test_r3_style_file() -> None:
    result = migrate((DATA / "r3.yaml").read_text())
    s = spec(result)
    lines = report(result)
    assert s["kubernetes"]["version"] == f"{OLDEST}.x"
    upgrade = lines["KUBERNETES_VERSION"]
    assert "one minor at a time" in upgrade
    assert "1.25 -> 1.26, 1.27" in upgrade and f"{OLDEST})" in upgrade
    assert lines["ETCD_PRIO_BOOST"].startswith("ETCD_PRIO_BOOST: obsolete (always on now")
    assert lines["OPENSTACK_CONTROL_PLANE_IP"].startswith("OPENSTACK_CONTROL_PLANE_IP: obsolete (")
    assert lines["CONTROL_PLANE_MACHINE_GEN"] == (
        "CONTROL_PLANE_MACHINE_GEN: obsolete (template names are hashed now, no counters: "
        "a change rolls the machines by itself)"
    )
    assert "etcd" not in s or "prioBoost" not in s.get("etcd", {})
    assert s["services"]["cni"] == {"type": "calico"}
    assert s["openstack"]["image"] == "ubuntu-capi-image-{version}"
    assert s["network"]["dnsServers"] == ["5.1.66.255", "185.150.99.255"]
    assert s["controlPlane"] == {
        "machineType": "SCS-2V-4-20s",
        "replicas": 1,
        "zones": ["nova"],
    }
    assert s["workers"] == [
        {"name": "md-0", "machineType": "SCS-2V-8-20s", "replicas": 3, "zone": "nova"}
    ]
    assert s["openstack"]["antiAffinity"] == {"controlPlane": "none", "workers": "none"}
    assert s["openstack"]["cloud"] == "gx-scs"
    assert s["services"]["ingressNginx"] == {"enabled": True, "proxyProtocol": False}
    assert lines["OPENSTACK_DNS_NAMESERVERS"] == (
        "OPENSTACK_DNS_NAMESERVERS: mapped -> spec.network.dnsServers"
    )


def test_r6_style_file() -> None:
    result = migrate((DATA / "r6.yaml").read_text())
    s = spec(result)
    lines = report(result)
    assert s["kubernetes"]["version"] == f"{OLDEST}.x"
    assert s["openstack"]["image"] == "ubuntu-capi-image-{version}"
    services = s["services"]
    assert services["cloudControllerManager"] == {"enabled": True, "version": "v1.28.2"}
    assert "manifest" in lines["DEPLOY_OCCM"] and "chart" in lines["DEPLOY_OCCM"]
    assert services["cinderCSI"] == {"enabled": True}
    assert "'master'" in lines["DEPLOY_CINDERCSI"]
    assert services["cni"] == {"type": "cilium", "version": "v1.15.1"}
    assert lines["CALICO_VERSION"].startswith("CALICO_VERSION: ignored (")
    assert services["ingressNginx"] == {"enabled": True, "version": "v1.9.6", "proxyProtocol": True}
    assert services["gatewayAPI"] == {"enabled": True}
    assert services["certManager"] == {"enabled": True, "version": "v1.14.2"}
    assert s["openstack"]["loadBalancerProvider"] == "amphora"
    assert "auto" in lines["USE_OVN_LB_PROVIDER"]
    assert s["openstack"]["serverMetadata"] == {
        "controlPlane": {"team": "platform", "cost-center": "k8s-42"},
        "workers": {"team": "apps"},
    }
    assert s["controlPlane"]["replicas"] == 3
    assert "rounded up to 3" in lines["CONTROL_PLANE_MACHINE_COUNT"]
    assert s["controlPlane"]["rootDiskGB"] == 25
    assert s["workers"][0]["rootDiskGB"] == 0
    assert s["etcd"] == {"unsafeFS": True}
    assert s["network"] == {
        "nodeCIDR": "10.9.0.0/20",
        "serviceCIDR": "10.96.0.0/12",
        "podCIDR": "172.16.0.0/16",
        "mtu": 1450,
        "apiAccess": {"mode": "cidrs", "cidrs": ["203.0.113.0/24", "198.51.100.17/32"]},
        "dnsServers": ["9.9.9.9", "149.112.112.112"],
    }
    assert "externalNetworkID" not in s["openstack"]
    assert "empty" in lines["OPENSTACK_EXTERNAL_NETWORK_ID"]
    assert s["openstack"]["antiAffinity"] == {"controlPlane": "soft", "workers": "soft"}
    assert s["openstack"]["sshKeyName"] == "scs-keypair"
    # OPENSTACK_CLOUD named KaaS v1's per-cluster credential entry; the original is used.
    assert s["openstack"]["cloud"] == "gx-scs"
    assert lines["OPENSTACK_CLOUD"].startswith("OPENSTACK_CLOUD: obsolete (")
    assert lines["OLD_OPENSTACK_CLOUD"].startswith(
        "OLD_OPENSTACK_CLOUD: mapped -> spec.openstack.cloud"
    )
    for key in (
        "PROXY_CMD",
        "OPENSTACK_CLUSTER_GEN",
        "OPENSTACK_IMAGE_RAW",
        "OPENSTACK_SRVGRP_CONTROLLER",
        "CLUSTER_API_OPENSTACK_INSTANCE_CREATE_TIMEOUT",
    ):
        assert lines[key].startswith(f"{key}: obsolete ("), key
    assert "5d1a7c3e" not in result.text  # server group IDs are not carried over
    assert "# NOTE: an even count (2)" in result.text


def test_r5_calico_file() -> None:
    result = migrate((DATA / "r5-calico.yaml").read_text())
    s = spec(result)
    lines = report(result)
    assert s["services"]["cni"] == {"type": "calico", "version": "v3.26.1"}
    assert s["services"]["gatewayAPI"] == {"enabled": True}
    assert "Envoy Gateway" in lines["DEPLOY_GATEWAY_API"]
    assert s["services"]["cloudControllerManager"] == {"enabled": True}
    assert "must stay" in lines["DEPLOY_OCCM"]
    assert s["controlPlane"]["machineType"] == "SCS-2V-4-20s"
    assert s["controlPlane"]["zones"] == ["az1", "az2", "az3"]
    assert s["workers"][0]["zone"] == "az1"
    assert s["workers"][0]["replicas"] == 0
    assert s["network"]["apiAccess"] == {"mode": "internal"}
    assert s["openstack"]["image"] == "my-ubuntu-2204-k8s"
    assert s["openstack"]["loadBalancerProvider"] == "ovn"
    assert "sshKeyName" not in s["openstack"]
    assert lines["MY_OWN_SETTING"] == (
        "MY_OWN_SETTING: unknown (not a KaaS v1 clusterctl.yaml key; ignored)"
    )


# --------------------------------------------------------------------------- edge cases

BASE = "KUBERNETES_VERSION: v1.33.x\n"


def get(data: Any, path: str) -> Any:
    node = data
    for part in path.split("."):
        node = node[int(part)] if part.isdigit() else node[part]
    return node


EDGE_CASES = [
    # (input line(s), path in spec, expected value, expected text in the report line or "")
    ('RESTRICT_KUBEAPI: "[ ]"', "network.apiAccess", {"mode": "open"}, "(open)"),
    ("RESTRICT_KUBEAPI: [ ]", "network.apiAccess", {"mode": "open"}, "(open)"),
    ("RESTRICT_KUBEAPI: '[  ]'", "network.apiAccess", {"mode": "open"}, "(open)"),
    ("RESTRICT_KUBEAPI:", "network.apiAccess", {"mode": "open"}, "(open)"),
    ('RESTRICT_KUBEAPI: "[ none ]"', "network.apiAccess", {"mode": "internal"}, "internal"),
    ('RESTRICT_KUBEAPI: "[ none, ]"', "network.apiAccess", {"mode": "internal"}, "internal"),
    ('RESTRICT_KUBEAPI: [ "none" ]', "network.apiAccess", {"mode": "internal"}, "internal"),
    (
        'RESTRICT_KUBEAPI: "[ 10.0.0.0/8, 192.0.2.1, ]"',
        "network.apiAccess",
        {"mode": "cidrs", "cidrs": ["10.0.0.0/8", "192.0.2.1/32"]},
        "192.0.2.1/32",
    ),
    (
        "RESTRICT_KUBEAPI: [ none, 10.0.0.0/8, ]",
        "network.apiAccess",
        {"mode": "cidrs", "cidrs": ["10.0.0.0/8"]},
        "'none' next to CIDRs",
    ),
    (
        'RESTRICT_KUBEAPI: "[ 2001:db8::1, ]"',
        "network.apiAccess.cidrs",
        ["2001:db8::1/128"],
        "",
    ),
    ('OPENSTACK_DNS_NAMESERVERS: "[ 9.9.9.9, ]"', "network.dnsServers", ["9.9.9.9"], ""),
    ("OPENSTACK_DNS_NAMESERVERS: [9.9.9.9]", "network.dnsServers", ["9.9.9.9"], ""),
    (
        'OPENSTACK_DNS_NAMESERVERS: "[ \'9.9.9.9\' , \\"1.1.1.1\\",, ]"',
        "network.dnsServers",
        ["9.9.9.9", "1.1.1.1"],
        "",
    ),
    ("OPENSTACK_DNS_NAMESERVERS: 9.9.9.9", "network.dnsServers", ["9.9.9.9"], ""),
    ('OPENSTACK_DNS_NAMESERVERS: "[ ]"', "network.dnsServers", [], "no DNS servers"),
    ("CONTROL_PLANE_MACHINE_COUNT: 0", "controlPlane.replicas", 1, "no test cluster"),
    ("CONTROL_PLANE_MACHINE_COUNT: 1", "controlPlane.replicas", 1, ""),
    ("CONTROL_PLANE_MACHINE_COUNT: 2", "controlPlane.replicas", 3, "rounded up to 3"),
    ("CONTROL_PLANE_MACHINE_COUNT: 3", "controlPlane.replicas", 3, ""),
    ("CONTROL_PLANE_MACHINE_COUNT: 4", "controlPlane.replicas", 5, "rounded up to 5"),
    ('CONTROL_PLANE_MACHINE_COUNT: "5"', "controlPlane.replicas", 5, ""),
    ("CONTROL_PLANE_MACHINE_COUNT: 7", "controlPlane.replicas", 5, "5 is used"),
    ("WORKER_MACHINE_COUNT: 12", "workers.0.replicas", 12, ""),
    ("DEPLOY_OCCM: false", "services.cloudControllerManager", {"enabled": True}, "must stay"),
    ("DEPLOY_OCCM: master", "services.cloudControllerManager", {"enabled": True}, "master"),
    ("DEPLOY_FLUX: v2.2", "services.flux", {"enabled": True}, "not a full X.Y.Z"),
    ("DEPLOY_FLUX: True", "services.flux", {"enabled": True}, ""),
    ("DEPLOY_METRICS: false", "services.metricsServer", {"enabled": False}, ""),
    ("USE_CILIUM: true", "services.cni", {"type": "cilium"}, ""),
    (
        "USE_CILIUM: false\nCALICO_VERSION: v3.27.3",
        "services.cni",
        {"type": "calico", "version": "v3.27.3"},
        "",
    ),
    (
        "USE_CILIUM: false\nDEPLOY_GATEWAY_API: true",
        "services.gatewayAPI",
        {"enabled": True},
        "Envoy Gateway",
    ),
    ("USE_OVN_LB_PROVIDER: true", "openstack.loadBalancerProvider", "ovn", ""),
    ("USE_OVN_LB_PROVIDER: false", "openstack.loadBalancerProvider", "amphora", ""),
    ("USE_OVN_LB_PROVIDER: auto", "openstack.loadBalancerProvider", "amphora", "auto"),
    ("NGINX_INGRESS_PROXY: false", "services.ingressNginx.proxyProtocol", False, ""),
    ("ETCD_UNSAFE_FS: true", "etcd.unsafeFS", True, ""),
    ("MTU_VALUE: 1400", "network.mtu", 1400, ""),
    (
        "OPENSTACK_IMAGE_NAME: ubuntu-capi-image-v1.33.4",
        "openstack.image",
        "ubuntu-capi-image-{version}",
        "",
    ),
    ("OPENSTACK_IMAGE_NAME: capi-v1.33.x-gpu", "openstack.image", "capi-{version}-gpu", ""),
    (
        "OPENSTACK_IMAGE_NAME: my-golden-image",
        "openstack.image",
        "my-golden-image",
        "change it on every upgrade",
    ),
    ("OPENSTACK_FAILURE_DOMAIN: [ az1, az2 ]", "controlPlane.zones", ["az1", "az2"], "az1"),
    ("OPENSTACK_FAILURE_DOMAIN: az9", "workers.0.zone", "az9", ""),
    (
        "OPENSTACK_NODE_MACHINE_METADATA: \"{ a: 'x, y', 'b c': \\\"z\\\", }\"",
        "openstack.serverMetadata.workers",
        {"a": "x, y", "b c": "z"},
        "",
    ),
    (
        "OPENSTACK_ANTI_AFFINITY: true",
        "openstack.antiAffinity",
        {"controlPlane": "hard", "workers": "soft"},
        "",
    ),
    (
        "OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER: true",
        "openstack.antiAffinity",
        {"controlPlane": "soft"},
        "",
    ),
    ("OPENSTACK_EXTERNAL_NETWORK_ID: abc-123", "openstack.externalNetworkID", "abc-123", ""),
    ("OPENSTACK_CLOUD: mycloud", "openstack.cloud", "mycloud", ""),
    ("WORKER_ROOT_DISKSIZE: 40", "workers.0.rootDiskGB", 40, ""),
    (
        "OPENSTACK_NODE_MACHINE_FLAVOR: SCS-2V-4-20s\nWORKER_ROOT_DISKSIZE: 40",
        "workers.0.rootDiskGB",
        40,
        "seems to have one",
    ),
]


@pytest.mark.parametrize(("lines", "path", "expected", "said"), EDGE_CASES)
def test_edge_case(lines: str, path: str, expected: Any, said: str) -> None:
    result = migrate(BASE + lines + "\n")
    validate_data(load(result.text))
    assert get(spec(result), path) == expected
    if said:
        last_key = lines.splitlines()[-1].split(":")[0]
        assert said in report(result)[last_key], report(result)[last_key]


def test_image_of_another_kubernetes_version_is_refused() -> None:
    # KaaS v1 ran such a cluster with a kubelet of another minor; the settings refuse it.
    with pytest.raises(
        InputError,
        match=r"OPENSTACK_IMAGE_NAME: image 'ubuntu-capi-image-v1\.30\.2' names Kubernetes "
        r"1\.30\.2",
    ):
        migrate(BASE + "OPENSTACK_IMAGE_NAME: ubuntu-capi-image-v1.30.2\n")


@pytest.mark.parametrize(
    ("version", "expected", "note"),
    [
        ("v1.33.x", "1.33.x", False),
        ("1.34.x", "1.34.x", False),
        ("v1.35.1", "1.35.1", False),
        (f"v{OLDEST}.3", f"{OLDEST}.3", False),
        ("v1.25.2", f"{OLDEST}.x", True),
        ("v1.30.x", f"{OLDEST}.x", True),
    ],
)
def test_kubernetes_versions(version: str, expected: str, note: bool) -> None:
    result = migrate(f"KUBERNETES_VERSION: {version}\n")
    assert spec(result)["kubernetes"]["version"] == expected
    line = report(result)["KUBERNETES_VERSION"]
    assert ("older than the supported" in line) is note
    assert ("# NOTE: KaaS v1 ran Kubernetes" in result.text) is note


def test_missing_flavors_get_the_kaas_v1_default() -> None:
    result = migrate("WORKER_MACHINE_COUNT: 2\n")
    s = spec(result)
    assert s["controlPlane"]["machineType"] == "SCS-2V-4-20s"
    assert s["workers"][0]["machineType"] == "SCS-2V-4-20s"
    assert any("OPENSTACK_NODE_MACHINE_FLAVOR is missing" in note for note in result.notes)
    assert report(result) == {
        "WORKER_MACHINE_COUNT": "WORKER_MACHINE_COUNT: mapped -> spec.workers[0].replicas"
    }


def test_validation_warnings_are_attached_to_the_source_key() -> None:
    result = migrate("CONTROL_PLANE_MACHINE_COUNT: 1\nETCD_UNSAFE_FS: true\n")
    assert "warning: spec.etcd.unsafeFS" in report(result)["ETCD_UNSAFE_FS"]


def test_secret_of_any_shape_is_not_read() -> None:
    text = "OPENSTACK_CLOUD_YAML_B64: [ c2VjcmV0LWxpc3Q=, ]\nOPENSTACK_CLOUD_CACERT_B64: {a: b}\n"
    result = migrate(BASE + text)
    assert "c2VjcmV0LWxpc3Q" not in result.text
    assert all("c2VjcmV0LWxpc3Q" not in line for line in result.report_lines)
    assert report(result)["OPENSTACK_CLOUD_CACERT_B64"].startswith(
        "OPENSTACK_CLOUD_CACERT_B64: secret, not copied ("
    )


SECRET = "c2VjcmV0LWFsaWFz"
SECRET_ALIASES = [
    (
        "anchor-on-secret",
        f"OPENSTACK_CLOUD_YAML_B64: &a {SECRET}\nOPENSTACK_NODE_MACHINE_FLAVOR: *a\n",
        2,
    ),
    (
        "anchor-on-flavor",
        f"OPENSTACK_NODE_MACHINE_FLAVOR: &a {SECRET}\nOPENSTACK_CLOUD_YAML_B64: *a\n",
        1,
    ),
    (
        "alias-in-a-list",
        f"OPENSTACK_CLOUD_CACERT_B64: &a {SECRET}\nOPENSTACK_DNS_NAMESERVERS: [ *a ]\n",
        2,
    ),
]


@pytest.mark.parametrize(
    ("text", "line"), [c[1:] for c in SECRET_ALIASES], ids=[c[0] for c in SECRET_ALIASES]
)
def test_finding10_migrate_never_copies_a_secret_through_a_yaml_alias(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int
) -> None:
    """A key whose value IS a secret key's value (an anchor and an alias, either way round) is
    refused, exit 2, naming both keys; the value is in no output, report or error line."""
    path = tmp_path / "clusterctl.yaml"
    path.write_text(BASE + text)
    code, out, err = run_cli(["migrate", str(path)], capsys)
    assert code == 2
    assert SECRET not in out + err
    assert f"{path}:{BASE.count(chr(10)) + line}: " in err
    assert "the value of the secret OPENSTACK_CLOUD_" in err
    assert out == ""


def alias_bomb(levels: int, width: int) -> str:
    """A flow value of ``levels`` nested anchors, each list ``width`` aliases of the one
    before: a few hundred bytes whose values, aliases expanded, number ``width ** levels``."""
    value = "&a0 [" + ", ".join(["x"] * width) + "]"
    for level in range(1, levels + 1):
        value = f"&a{level} [{value}, " + ", ".join([f"*a{level - 1}"] * (width - 1)) + "]"
    return value


def test_the_reader_walks_each_node_once() -> None:
    """An alias is the anchored node itself once composed: the walk behind the secret check
    visits it once, so an alias bomb costs the time of its text, not of its expansion
    (``migrate`` hung on one: 9 levels of 9 aliases are 387 million values)."""
    root = compose_yaml(f"K: {alias_bomb(10, 3)}\n")
    nodes = _nodes(root)
    assert len({id(node) for node in nodes}) == len(nodes) < 100  # 265722 before


def test_an_alias_bomb_is_read_like_any_other_value() -> None:
    """Under a key that takes one value: refused as nested; under a secret: never read."""
    bomb = alias_bomb(9, 9)
    with pytest.raises(InputError, match="WORKER_MACHINE_COUNT: nested lists or maps are not"):
        migrate(BASE + f"WORKER_MACHINE_COUNT: {bomb}\n")
    secret = report(migrate(BASE + f"OPENSTACK_CLOUD_YAML_B64: {bomb}\n"))
    assert secret["OPENSTACK_CLOUD_YAML_B64"].startswith(
        "OPENSTACK_CLOUD_YAML_B64: secret, not copied ("
    )


# --------------------------------------------------------------------------- errors


ERRORS = [
    ("WORKER_MACHINE_COUNT: abc", 2, "WORKER_MACHINE_COUNT: expected a whole number, found 'abc'"),
    ("WORKER_MACHINE_COUNT: -1", 2, "WORKER_MACHINE_COUNT: expected 0 or more machines"),
    ("WORKER_MACHINE_COUNT: 5000", 2, "WORKER_MACHINE_COUNT: "),
    ("CONTROL_PLANE_MACHINE_COUNT: three", 2, "CONTROL_PLANE_MACHINE_COUNT: expected a whole"),
    ("CONTROL_PLANE_MACHINE_COUNT: -3", 2, "CONTROL_PLANE_MACHINE_COUNT: expected 0 or more ma"),
    ("WORKER_ROOT_DISKSIZE: -20", 2, "WORKER_ROOT_DISKSIZE: expected a size in GB (0 or more), fo"),
    ("DEPLOY_FLUX: maybe", 2, "DEPLOY_FLUX: expected true, false, master or a version"),
    ("NGINX_INGRESS_PROXY: yes", 2, "NGINX_INGRESS_PROXY: expected true or false, found 'yes'"),
    ("USE_OVN_LB_PROVIDER: sometimes", 2, "USE_OVN_LB_PROVIDER: expected true, false or auto"),
    ("MTU_VALUE: 99999", 2, "MTU_VALUE: "),
    ("NODE_CIDR: 10.8.0.1/20", 2, "NODE_CIDR: '10.8.0.1/20' has host bits set"),
    ("SERVICE_CIDR: 10.96.0.0/12\nPOD_CIDR: 10.96.0.0/16", 2, "SERVICE_CIDR: 10.96.0.0/12 over"),
    ('OPENSTACK_DNS_NAMESERVERS: "[ 9.9.9.9, dns.example, ]"', 2, "OPENSTACK_DNS_NAMESERVERS: "),
    ('OPENSTACK_DNS_NAMESERVERS: "[ 9.9.9.9, "', 2, "OPENSTACK_DNS_NAMESERVERS: expected a list"),
    ("RESTRICT_KUBEAPI: { a: b }", 2, "RESTRICT_KUBEAPI: expected a list"),
    ('RESTRICT_KUBEAPI: "[ 10.0.0.0/33, ]"', 2, "RESTRICT_KUBEAPI: "),
    ('OPENSTACK_NODE_MACHINE_METADATA: "{ novalue, }"', 2, "is not a 'key: value' pair"),
    ("OPENSTACK_NODE_MACHINE_METADATA: [ a ]", 2, "expected a map"),
    ("WORKER_MACHINE_COUNT: [ 1, 2 ]", 2, "WORKER_MACHINE_COUNT: expected a single value"),
    ("CALICO_VERSION: latest\nUSE_CILIUM: false", 2, "CALICO_VERSION: expected a version"),
]


@pytest.mark.parametrize(("lines", "line", "message"), ERRORS)
def test_wrong_values_are_one_line_errors(lines: str, line: int, message: str) -> None:
    with pytest.raises(InputError) as caught:
        migrate(BASE + lines + "\n")
    text = str(caught.value)
    assert caught.value.exit_code == 2
    assert "\n" not in text
    assert text.startswith(f"clusterctl.yaml:{line}: ")
    assert message in text


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("v1.99.x", "newer than this release of scs-templates supports"),
        ("latest", "'latest' is not a Kubernetes version"),
        ("v2.1.x", "newer than"),
    ],
)
def test_bad_kubernetes_versions(version: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        migrate(f"KUBERNETES_VERSION: {version}\n")
    assert str(caught.value).startswith("clusterctl.yaml:1: KUBERNETES_VERSION: ")


def test_all_shape_errors_are_reported_together() -> None:
    with pytest.raises(InputError) as caught:
        migrate("WORKER_MACHINE_COUNT: abc\nMTU_VALUE: big\n")
    lines = str(caught.value).splitlines()
    assert lines == [
        "clusterctl.yaml:1: WORKER_MACHINE_COUNT: expected a whole number, found 'abc'",
        "clusterctl.yaml:2: MTU_VALUE: expected a whole number, found 'big'",
    ]


def test_error_on_a_default_names_the_key() -> None:
    with pytest.raises(InputError) as caught:
        migrate("POD_CIDR: 10.96.0.0/16\n")
    assert str(caught.value) == (
        "clusterctl.yaml: SERVICE_CIDR (not set; the default spec.network.serviceCIDR): "
        "10.96.0.0/12 overlaps podCIDR 10.96.0.0/16"
    )


def test_error_never_contains_a_secret() -> None:
    text = "OPENSTACK_CLOUD_YAML_B64: c2VjcmV0LXZhbHVl\nWORKER_MACHINE_COUNT: abc\n"
    with pytest.raises(InputError) as caught:
        migrate(text)
    assert "c2VjcmV0LXZhbHVl" not in str(caught.value)


def test_duplicate_key() -> None:
    with pytest.raises(
        InputError,
        match=r"clusterctl.yaml:3: NODE_CIDR: duplicate key \(first "
        r"at line 1\)",
    ):
        migrate("NODE_CIDR: 10.8.0.0/20\nMTU_VALUE: 0\nNODE_CIDR: 10.9.0.0/20\n")


def test_bad_name_and_prefix() -> None:
    with pytest.raises(InputError, match=r"^--name: 'Bad_Name' must be a DNS-1123 label"):
        migrate(BASE, name="Bad_Name")
    with pytest.raises(InputError, match=r"^--prefix: "):
        migrate(BASE, prefix="-x")


def test_no_kaas_v1_keys() -> None:
    with pytest.raises(InputError, match="no KaaS v1 settings found"):
        migrate("apiVersion: v1\nmetadata: {}\n")
    with pytest.raises(InputError, match="already a ClusterSettings settings file"):  # #39
        migrate("apiVersion: v1\nkind: ClusterSettings\n")


# --------------------------------------------------------------------------- CLI


def test_cli_success(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        ["migrate", str(DATA / "r6.yaml"), "--name", "prod1", "--prefix", "scs"], capsys
    )
    assert code == 0
    data = load(out)
    assert data["metadata"]["name"] == "prod1"
    assert data["spec"]["prefix"] == "scs"
    validate_data(data)
    assert "WORKER_MACHINE_COUNT: mapped -> spec.workers[0].replicas" in err.splitlines()
    assert "ETCD_UNSAFE_FS: mapped -> spec.etcd.unsafeFS" in err.splitlines()


def test_cli_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run_cli(["migrate", str(DATA / "r3.yaml")], capsys)
    assert code == 0
    data = load(out)
    assert data["metadata"]["name"] == "testcluster"
    assert data["spec"]["prefix"] == "capi"


def test_cli_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "settings.yaml"
    code, out, err = run_cli(
        ["migrate", str(DATA / "r3.yaml"), "--output-file", str(target)], capsys
    )
    assert code == 0
    assert out == ""
    validate_data(load(target.read_text()))
    assert "KUBERNETES_VERSION: mapped" in err
    code, _out, err = run_cli(
        ["migrate", str(DATA / "r3.yaml"), "--output-file", str(target)], capsys
    )
    assert code == 2
    assert "exists already" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"\x00\x01\x02binary", "binary data"),
        (b"\xff\xfe\xfa", "not UTF-8 text"),
        (b"KEY: [unclosed\n", "not valid YAML"),
        (b"- a\n- b\n", "found a list"),
        (b"just a string\n", "found a single value"),
        (b"# only a comment\n", "file is empty"),
        (b"", "file is empty"),
        (b"FOO: bar\n", "no KaaS v1 settings found"),
    ],
)
def test_cli_unreadable_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, message: str
) -> None:
    path = tmp_path / "clusterctl.yaml"
    if content is not None:
        path.write_bytes(content)
    code, out, err = run_cli(["migrate", str(path)], capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert str(path) in err
    assert message in err


def test_cli_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_cli(["migrate", str(tmp_path)], capsys)
    assert code == 2
    assert "is a directory" in err


def test_cli_bad_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "clusterctl.yaml"
    path.write_text("KUBERNETES_VERSION: v1.33.x\nWORKER_MACHINE_COUNT: abc\n")
    code, out, err = run_cli(["migrate", str(path)], capsys)
    assert code == 2
    assert out == ""
    assert err.strip() == (
        f"scs-templates: error: {path}:2: WORKER_MACHINE_COUNT: expected a whole number, "
        "found 'abc'"
    )


# --------------------------------------------------------------------------- flow syntax


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[ 5.1.66.255, 185.150.99.255, ]", ["5.1.66.255", "185.150.99.255"]),
        ("[ ]", []),
        ("[]", []),
        ("", []),
        ("[ a ]", ["a"]),
        ("[ 'a, b', \"c\" , ]", ["a, b", "c"]),
        ("[ 'it''s', ]", ["it's"]),
        ("a, b", ["a", "b"]),
    ],
)
def test_parse_list(text: str, expected: list[str]) -> None:
    assert flow.parse_list(text) == expected


@pytest.mark.parametrize("text", ["[ a", "a ]", "[ [a], ]", "[ 'a ]"])
def test_parse_list_errors(text: str) -> None:
    with pytest.raises(ValueError):
        flow.parse_list(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{ k: 'v', }", {"k": "v"}),
        ("{ }", {}),
        ("", {}),
        ("{ a: 'x: y', 'b': c, }", {"a": "x: y", "b": "c"}),
    ],
)
def test_parse_map(text: str, expected: dict[str, str]) -> None:
    assert flow.parse_map(text) == expected


@pytest.mark.parametrize("text", ["k: v", "{ k }", "{ : v }", "{ a: 1, a: 2 }"])
def test_parse_map_errors(text: str) -> None:
    with pytest.raises(ValueError):
        flow.parse_map(text)


# --------------------------------------------------------------------------- documentation


def _doc_table_keys() -> dict[str, str]:
    rows: dict[str, str] = {}
    for line in DOC.read_text().splitlines():
        match = re.match(r"^\| `([A-Z0-9_]+)` \| (\w+) \|", line)
        if match:
            rows[match[1]] = match[2]
    return rows


def test_doc_table_lists_every_key_with_its_status() -> None:
    rows = _doc_table_keys()
    for info in KEY_TABLE:
        assert info.key in rows, f"{info.key} missing from {DOC.name}"
        assert rows[info.key] == info.status, info.key
    assert set(rows) == {info.key for info in KEY_TABLE}


def test_doc_table_names_the_settings_fields_of_each_key() -> None:
    fields: dict[str, str] = {}
    for line in DOC.read_text().splitlines():
        match = re.match(r"^\| `([A-Z0-9_]+)` \| \w+ \| ([^|]+) \|", line)
        if match:
            fields[match[1]] = ", ".join(re.findall(r"`([^`]+)`", match[2]))
    assert fields == {info.key: info.target for info in KEY_TABLE}


def test_every_key_maps_onto_fields_of_the_settings_model() -> None:
    """A settings field renamed or moved in the model fails here until the key table follows."""
    for info in KEY_TABLE:
        assert bool(info.targets) == (info.status == "mapped"), info.key
        assert (info.migrate is not None) == (info.status == "mapped"), info.key
        for target in info.targets:
            targets.model_field(target)  # raises KeyError naming the part that is not a field
    targets.model_field(PROXY)


@pytest.mark.parametrize(
    "renamed",
    [
        "spec.network.nodeCidr",  # the field is nodeCIDR
        "spec.controlPlane.machineTypes",
        "spec.workers.machineType",  # workers is a list
        "spec.workers[0]",  # an item, not a field
        "spec.services.cni.type.name",  # type has no fields
    ],
)
def test_a_target_the_model_does_not_have_is_refused(renamed: str) -> None:
    with pytest.raises(KeyError):
        targets.model_field(targets.path(renamed))


def test_empty_values_quote_the_model_defaults() -> None:
    result = migrate("NODE_CIDR:\nSERVICE_CIDR: ''\nWORKER_MACHINE_COUNT: 3\n")
    lines = report(result)
    assert lines["NODE_CIDR"].endswith("(empty: the default 10.8.0.0/20 is kept)")
    assert lines["SERVICE_CIDR"].endswith("(empty: the default 10.96.0.0/12 is kept)")


def test_key_table_covers_the_anchor_keys() -> None:
    keys = {info.key for info in KEY_TABLE}
    for key in (
        "ETCD_PRIO_BOOST",
        "OPENSTACK_CONTROL_PLANE_IP",
        "PROXY_CMD",
        "OLD_OPENSTACK_CLOUD",
        "OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER",
        "OPENSTACK_NODE_MACHINE_METADATA",
        "CONTROL_PLANE_ROOT_DISKSIZE",
        "CLUSTER_API_OPENSTACK_INSTANCE_CREATE_TIMEOUT",
    ):
        assert key in keys
    secrets = {info.key for info in KEY_TABLE if info.status == "secret"}
    assert secrets == {
        "OPENSTACK_CLOUD_YAML_B64",
        "OPENSTACK_CLOUD_PROVIDER_CONF_B64",
        "OPENSTACK_CLOUD_CACERT_B64",
    }


# --------------------------------------------------------------------------- proxy profile


def test_proxy_profile_becomes_the_network_proxy(tmp_path: Path) -> None:
    from scs_templates.providers.openstack.migrate.network import parse_proxy_profile

    profile = (
        "# proxy for the management host\n"
        'export HTTP_PROXY="http://proxy.corp:3128"\n'
        "export http_proxy=http://ignored:1\n"
        "export https_proxy='http://proxy.corp:3129'\n"
        "NO_PROXY=localhost, .corp,10.0.0.0/8  # internal\n"
    )
    assert parse_proxy_profile(profile) == {
        "HTTP_PROXY": "http://proxy.corp:3128",
        "HTTPS_PROXY": "http://proxy.corp:3129",
        "NO_PROXY": "localhost, .corp,10.0.0.0/8",
    }
    text = (DATA / "r6.yaml").read_text()
    result = migrate_kaas_v1(text, proxy_profile=profile, proxy_file="proxy.sh")
    proxy = result.document["spec"]["network"]["proxy"]
    assert dict(proxy) == {
        "httpProxy": "http://proxy.corp:3128",
        "httpsProxy": "http://proxy.corp:3129",
        "noProxy": ["localhost", ".corp", "10.0.0.0/8"],
    }
    assert "# from proxy.sh HTTP_PROXY" in result.text
    assert not [n for n in result.notes if "PROXY_CMD" in n]


def test_proxy_profile_refuses_shell_expansions() -> None:
    from scs_templates.providers.openstack.migrate.network import parse_proxy_profile

    with pytest.raises(InputError, match=r"p.sh:2: HTTPS_PROXY: not a plain value"):
        parse_proxy_profile("x=1\nexport HTTPS_PROXY=$HTTP_PROXY\n", "p.sh")


@pytest.mark.parametrize("url", ["http://user:s3cret-pw@proxy:3128", "s3cret-pw@proxy:3128"])
def test_proxy_profile_refuses_credentials_without_echoing_them(url: str) -> None:
    from scs_templates.providers.openstack.migrate.network import parse_proxy_profile

    with pytest.raises(InputError, match=r"p.sh:1: HTTP_PROXY: the proxy URL carries") as caught:
        parse_proxy_profile(f"export HTTP_PROXY='{url}'\n", "p.sh")
    assert "s3cret-pw" not in str(caught.value)


def test_proxy_cmd_without_profile_says_how(capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        (DATA / "r6.yaml")
        .read_text()
        .replace('PROXY_CMD: ""', 'PROXY_CMD: ". /etc/profile.d/proxy.sh; "')
    )
    result = migrate_kaas_v1(text)
    assert any("--proxy-profile /etc/profile.d/proxy.sh" in note for note in result.notes)
    assert "proxy" not in result.document["spec"]["network"]
