"""validate is as strict as the cluster (issue #41, findings 5, 6 and 11).

Every value that render (the chart schema), kubelet, kube-apiserver, kubeadm, etcd, Neutron or
systemd would refuse is refused by ``validate`` with exit 2 and one ``FILE:LINE:COL: path:``
line naming the field. Each rule's source is named where it is written
(scs_templates/_settings/model.py, strict.py, calendar.py, versions.py); the values that the
rules must keep accepting are pinned too.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from scs_templates._cli.main import main
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import validate_data
from scs_templates._versions.kubernetes import TESTED_PATCHES

MINOR, NEWEST = max(TESTED_PATCHES), TESTED_PATCHES[max(TESTED_PATCHES)]
VERSION = f"{MINOR[0]}.{MINOR[1]}"


def document(**spec: Any) -> dict[str, Any]:
    """An OpenStack settings document with ``spec`` merged over a minimal one."""
    base: dict[str, Any] = {
        "template": "multi-md",
        "provider": "openstack",
        "kubernetes": {"version": f"{VERSION}.x"},
        "controlPlane": {"replicas": 1, "machineType": "m"},
        "workers": [{"name": "md-0", "replicas": 1, "machineType": "m"}],
    }
    base.update(spec)
    return {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "demo"},
        "spec": base,
    }


def proxied(**network: Any) -> dict[str, Any]:
    return document(network={"proxy": {"httpProxy": "http://proxy.example:3128"}, **network})


def policy(*rules: Any) -> dict[str, Any]:
    return document(
        security={
            "audit": {
                "policy": {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": list(rules)}
            }
        }
    )


def encrypted(*resources: str) -> dict[str, Any]:
    return document(security={"encryptionAtRest": {"resources": list(resources)}})


def group(**fields: Any) -> dict[str, Any]:
    return document(workers=[{"name": "md-0", "replicas": 1, "machineType": "m", **fields}])


def sg_rule(**fields: Any) -> dict[str, Any]:
    return document(openstack={"nodeSecurityGroupRules": [{"name": "office", **fields}]})


def validate_file(
    tmp_path: Path, data: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> tuple[int, list[str], str]:
    """Run ``scs-templates validate`` on ``data`` written as YAML: exit code, stderr lines, file."""
    stream = io.StringIO()
    YAML().dump(data, stream)
    path = tmp_path / "settings.yaml"
    path.write_text(stream.getvalue())
    code = main(["validate", str(path)])
    return code, capsys.readouterr().err.splitlines(), str(path)


def assert_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any], field: str, words: str
) -> None:
    code, lines, path = validate_file(tmp_path, data, capsys)
    assert code == 2, lines
    errors = [line for line in lines if f": {field}: " in line]
    assert errors, lines
    line = errors[0]
    position = line.split(f": {field}: ")[0]
    file, row, column = position.rsplit(":", 2)
    assert file == path and int(row) > 0 and int(column) > 0, line
    assert words in line, line


FINDING_5 = [
    (
        "noproxy-comma",
        proxied(proxy={"httpProxy": "http://p:3128", "noProxy": ["a,b"]}),
        "spec.network.proxy.noProxy[0]",
        "NO_PROXY entry",
    ),
    (
        "noproxy-blank",
        proxied(proxy={"httpProxy": "http://p:3128", "noProxy": ["a b"]}),
        "spec.network.proxy.noProxy[0]",
        "NO_PROXY entry",
    ),
    (
        "service-domain-blank",
        proxied(serviceDomain="my domain"),
        "spec.network.serviceDomain",
        "DNS-1123 subdomain",
    ),
    (
        "service-domain-comma",
        document(network={"serviceDomain": "a,b"}),
        "spec.network.serviceDomain",
        "DNS-1123 subdomain",
    ),
]


@pytest.mark.parametrize(
    ("data", "field", "words"), [c[1:] for c in FINDING_5], ids=[c[0] for c in FINDING_5]
)
def test_finding5_validate_refuses_what_render_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any], field: str, words: str
) -> None:
    assert_refused(tmp_path, capsys, data, field, words)


LONG_LABEL = "a" * 250
FINDING_6 = [
    (
        "label-prefix-250-char-label",
        group(labels={f"{LONG_LABEL}.example/x": "v"}),
        f"spec.workers[0].labels.{LONG_LABEL}.example/x",
        "label key",
    ),
    (
        "label-prefix-over-253",
        group(labels={".".join(["a" * 60] * 5) + "/x": "v"}),
        "spec.workers[0].labels." + ".".join(["a" * 60] * 5) + "/x",
        "at most 253",
    ),
    (
        "label-name-64",
        group(labels={"example.com/" + "a" * 64: "v"}),
        "spec.workers[0].labels.example.com/" + "a" * 64,
        "label key",
    ),
    (
        "taint-key-over-253",
        group(taints=[{"key": ".".join(["b" * 60] * 5) + "/t", "effect": "NoSchedule"}]),
        "spec.workers[0].taints[0].key",
        "at most 253",
    ),
    (
        "audit-level-bogus",
        policy({"level": "Bogus"}),
        "spec.security.audit.policy.rules[0].level",
        "not an audit level",
    ),
    (
        "audit-level-missing",
        policy({"resources": [{"group": ""}]}),
        "spec.security.audit.policy.rules[0].level",
        "not an audit level",
    ),
    (
        "audit-url-without-slash",
        policy({"level": "None", "nonResourceURLs": ["healthz"]}),
        "spec.security.audit.policy.rules[0].nonResourceURLs[0]",
        "starts with '/'",
    ),
    (
        "audit-urls-and-resources",
        policy({"level": "None", "nonResourceURLs": ["/x"], "resources": [{"group": ""}]}),
        "spec.security.audit.policy.rules[0].nonResourceURLs",
        "both",
    ),
    (
        "audit-group-not-dns",
        policy({"level": "None", "resources": [{"group": "rbac.authorization.k8s.io/v1"}]}),
        "spec.security.audit.policy.rules[0].resources[0].group",
        "not an API group",
    ),
    (
        "encryption-duplicate",
        encrypted("secrets", "secrets"),
        "spec.security.encryptionAtRest.resources[1]",
        "listed once",
    ),
    (
        "encryption-duplicate-trailing-dot",
        encrypted("secrets", "secrets."),
        "spec.security.encryptionAtRest.resources[1]",
        "listed once",
    ),
    (
        "encryption-overlap",
        encrypted("secrets", "*."),
        "spec.security.encryptionAtRest.resources",
        "overlapping",
    ),
    ("encryption-star", encrypted("*"), "spec.security.encryptionAtRest.resources[0]", "'*.'"),
    (
        "encryption-across-groups",
        encrypted("secrets.*"),
        "spec.security.encryptionAtRest.resources[0]",
        "across groups",
    ),
    (
        "encryption-events-group",
        encrypted("events.events.k8s.io"),
        "spec.security.encryptionAtRest.resources[0]",
        "'events'",
    ),
    (
        "defrag-every-day",
        document(etcd={"defrag": {"schedule": "every day"}}),
        "spec.etcd.defrag.schedule",
        "OnCalendar",
    ),
    (
        "defrag-hour-24",
        document(etcd={"defrag": {"schedule": "*-*-* 24:00"}}),
        "spec.etcd.defrag.schedule",
        "OnCalendar",
    ),
    (
        "defrag-range-backwards",
        document(etcd={"defrag": {"schedule": "Fri..Mon 02:00"}}),
        "spec.etcd.defrag.schedule",
        "OnCalendar",
    ),
    (
        "retention-forever",
        document(etcd={"autoCompactionRetention": "forever and ever"}),
        "spec.etcd.autoCompactionRetention",
        "Go duration",
    ),
    (
        "retention-negative",
        document(etcd={"autoCompactionRetention": "-1h"}),
        "spec.etcd.autoCompactionRetention",
        "Go duration",
    ),
    (
        "retention-overflow",
        document(etcd={"autoCompactionRetention": "3000000"}),
        "spec.etcd.autoCompactionRetention",
        "292 years",
    ),
    (
        "kubernetes-patch-missing",
        document(kubernetes={"version": f"{VERSION}.99"}),
        "spec.kubernetes.version",
        f"the newest patch of {VERSION} is {VERSION}.{NEWEST}",
    ),
    (
        "sg-ipv6-prefix-ipv4-rule",
        sg_rule(etherType="IPv4", remoteIPPrefix="fd00::/64"),
        "spec.openstack.nodeSecurityGroupRules[0].remoteIPPrefix",
        "Neutron",
    ),
    (
        "sg-ipv4-prefix-ipv6-rule",
        sg_rule(etherType="IPv6", remoteIPPrefix="10.0.0.0/8"),
        "spec.openstack.nodeSecurityGroupRules[0].remoteIPPrefix",
        "Neutron",
    ),
    (
        "sg-prefix-not-cidr",
        sg_rule(remoteIPPrefix="office"),
        "spec.openstack.nodeSecurityGroupRules[0].remoteIPPrefix",
        "not a CIDR",
    ),
    ("mtu-100", document(network={"mtu": 100}), "spec.network.mtu", "below 118"),
    (
        "mtu-ipv6-1300",
        document(
            network={
                "mtu": 1300,
                "nodeCIDR": "fd00:1::/64",
                "podCIDR": "fd00:2::/56",
                "serviceCIDR": "fd00:3::/112",
            }
        ),
        "spec.network.mtu",
        "below 1350",
    ),
    (
        "pod-cidr-32",
        document(network={"podCIDR": "10.244.0.0/32"}),
        "spec.network.podCIDR",
        "smaller than one node's pod network",
    ),
    (
        "pod-cidr-25",
        document(network={"podCIDR": "10.244.0.0/25"}),
        "spec.network.podCIDR",
        "smaller than one node's pod network",
    ),
    (
        "pod-cidr-ipv4-too-large",
        document(network={"podCIDR": "64.0.0.0/2"}),
        "spec.network.podCIDR",
        "use a /8",
    ),
    (
        "service-cidr-too-large",
        document(network={"serviceCIDR": "10.0.0.0/8", "podCIDR": "172.16.0.0/16"}),
        "spec.network.serviceCIDR",
        "use a /12",
    ),
]


@pytest.mark.parametrize(
    ("data", "field", "words"), [c[1:] for c in FINDING_6], ids=[c[0] for c in FINDING_6]
)
def test_finding6_validate_refuses_what_the_cluster_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any], field: str, words: str
) -> None:
    assert_refused(tmp_path, capsys, data, field, words)


FINDING_11 = ["0", "1", "yes", "no", "on", "off", "y", "n", "true", "false", "null", "0x1f"]


@pytest.mark.parametrize("name", FINDING_11)
def test_finding11_worker_group_named_like_a_yaml11_trap_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    data = document(workers=[{"name": name, "replicas": 1, "machineType": "m"}])
    assert_refused(tmp_path, capsys, data, "spec.workers[0].name", "YAML 1.1")


STILL_VALID = [
    (
        "noproxy-domain-and-cidr",
        proxied(proxy={"httpProxy": "http://p:3128", "noProxy": [".corp.example", "10.0.0.0/8"]}),
    ),
    ("service-domain-subdomain", document(network={"serviceDomain": "k8s.corp.example"})),
    ("label-prefix-253", group(labels={".".join(["a" * 62] * 4) + "/x": "v"})),
    ("label-name-63", group(labels={"example.com/" + "A" * 63: "v" * 63})),
    (
        "audit-every-level",
        policy(*({"level": level} for level in ("None", "Metadata", "Request", "RequestResponse"))),
    ),
    ("audit-urls", policy({"level": "None", "nonResourceURLs": ["/healthz*", "*"]})),
    ("encryption-several", encrypted("secrets", "configmaps", "*.apps")),
    ("encryption-everything", encrypted("*.*")),
    ("defrag-forms", document(etcd={"defrag": {"schedule": "Sat,Sun *-*-1..7 03:00 UTC"}})),
    ("defrag-shorthand", document(etcd={"defrag": {"schedule": "weekly"}})),
    ("retention-hours", document(etcd={"autoCompactionRetention": "8"})),
    ("retention-duration", document(etcd={"autoCompactionRetention": "1h30m"})),
    ("retention-fraction", document(etcd={"autoCompactionRetention": "1.5h"})),
    ("kubernetes-newest-patch", document(kubernetes={"version": f"{VERSION}.{NEWEST}"})),
    ("sg-ipv6", sg_rule(etherType="IPv6", remoteIPPrefix="fd00::/64")),
    ("mtu-ipv4-118", document(network={"mtu": 118})),
    ("mtu-1450", document(network={"mtu": 1450})),
    ("pod-cidr-24", document(network={"podCIDR": "10.244.0.0/24"})),
    (
        "pod-cidr-8",
        document(
            network={
                "podCIDR": "10.0.0.0/8",
                "nodeCIDR": "172.16.0.0/20",
                "serviceCIDR": "172.20.0.0/16",
            }
        ),
    ),
    (
        "worker-group-yes-like",
        document(workers=[{"name": "yes-please", "replicas": 1, "machineType": "m"}]),
    ),
]


@pytest.mark.parametrize("data", [c[1] for c in STILL_VALID], ids=[c[0] for c in STILL_VALID])
def test_the_strict_rules_keep_accepting_what_the_cluster_takes(data: dict[str, Any]) -> None:
    try:
        validate_data(data)
    except SettingsError as error:
        pytest.fail(str(error))
