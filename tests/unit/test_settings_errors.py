"""Bad settings: every case gets its exact one-line message with file:line:col.

Table-driven: (case id, YAML text, expected problem lines). The file name in messages is
"s.yaml". Keep the messages here exact: they are the user interface.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scs_templates._cli.main import main
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import load_settings, parse_settings_text

HEAD = """apiVersion: scs-templates.scs.community/v1alpha1
kind: ClusterSettings
metadata:
  name: demo
spec:
  provider: docker
"""


def spec(body: str) -> str:
    """HEAD plus an indented spec body (lines 7.. of the document)."""
    return HEAD + "".join(f"  {line}\n" for line in body.strip("\n").splitlines())


CASES: list[tuple[str, str, list[str]]] = [
    (
        "unknown-key-did-you-mean",
        spec("templat: simple"),
        ["s.yaml:7:3: spec.templat: unknown key 'templat'; did you mean 'template'?"],
    ),
    (
        "unknown-key-case",
        spec("network:\n  podCidr: 10.0.0.0/16"),
        ["s.yaml:8:5: spec.network.podCidr: unknown key 'podCidr'; did you mean 'podCIDR'?"],
    ),
    (
        "unknown-key-no-suggestion",
        spec("zzzzzz: 1"),
        ["s.yaml:7:3: spec.zzzzzz: unknown key 'zzzzzz'"],
    ),
    (
        "wrong-template",
        spec("template: simpel"),
        [
            "s.yaml:7:3: spec.template: 'simpel' is not allowed; expected 'simple', "
            "'multi-md' or 'clusterclass'; did you mean 'simple'?"
        ],
    ),
    (
        "even-control-plane",
        spec("controlPlane:\n  replicas: 2"),
        ["s.yaml:8:5: spec.controlPlane.replicas: 2 is not allowed; expected 1, 3 or 5"],
    ),
    (
        "replicas-as-string",
        spec("workers:\n  - name: w\n    replicas: '3'"),
        ["s.yaml:9:7: spec.workers[0].replicas: expected a whole number, found str '3'"],
    ),
    (
        "negative-replicas",
        spec("workers:\n  - name: w\n    replicas: -1"),
        [
            "s.yaml:9:7: spec.workers[0].replicas: must be greater than or equal to 0",
        ],
    ),
    (
        "group-name-not-dns",
        spec("workers:\n  - name: Big_Group"),
        [
            "s.yaml:8:7: spec.workers[0].name: 'Big_Group' must be a DNS-1123 label: lower-case "
            "letters, digits and '-', starting and ending with a letter or digit"
        ],
    ),
    (
        "yaml11-boolean",
        spec("etcd:\n  unsafeFS: yes"),
        [
            "s.yaml:8:15: spec.etcd.unsafeFS: ambiguous value 'yes' (a boolean in YAML 1.1, a "
            "string in YAML 1.2): write true/false, or quote it if you mean the string"
        ],
    ),
    (
        "yaml11-on",
        spec("services:\n  flux:\n    enabled: on"),
        [
            "s.yaml:9:16: spec.services.flux.enabled: ambiguous value 'on' (a boolean in YAML "
            "1.1, a string in YAML 1.2): write true/false, or quote it if you mean the string"
        ],
    ),
    (
        "octal-looking",
        spec("etcd:\n  quotaGiB: 04"),
        [
            "s.yaml:8:15: spec.etcd.quotaGiB: ambiguous number '04' (octal in YAML 1.1, decimal "
            "in YAML 1.2): write it without the leading zero, or quote it"
        ],
    ),
    (
        "tagged-float-that-is-no-number",
        spec("etcd:\n  quotaGiB: !!float x"),
        ["s.yaml:8:15: spec.etcd.quotaGiB: cannot read 'x' as a number"],
    ),
    (
        "tagged-bool-that-is-no-bool",
        spec("etcd:\n  unsafeFS: !!bool maybe"),
        ["s.yaml:8:15: spec.etcd.unsafeFS: cannot read 'maybe' as true or false"],
    ),
    (
        "quoted-bool-is-not-bool",
        spec("etcd:\n  unsafeFS: 'true'"),
        ["s.yaml:8:5: spec.etcd.unsafeFS: expected true or false, found str 'true'"],
    ),
    (
        "duplicate-key",
        spec("prefix: a\nprefix: b"),
        ["s.yaml:8:3: spec.prefix: duplicate key (first defined on line 7)"],
    ),
    (
        "tab-indentation",
        HEAD + "\tprefix: a\n",
        ["s.yaml:7:1: (document): invalid YAML: tab character; YAML indentation must use spaces"],
    ),
    (
        "list-instead-of-mapping",
        "- a\n- b\n",
        [
            "s.yaml:1:1: (document): expected a mapping (apiVersion, kind, metadata, spec), "
            "found a list"
        ],
    ),
    (
        "scalar-instead-of-mapping",
        "hello\n",
        [
            "s.yaml:1:1: (document): expected a mapping (apiVersion, kind, metadata, spec), "
            "found a single value"
        ],
    ),
    (
        "empty-document",
        "# only a comment\n",
        ["s.yaml: (document): file is empty; expected a ClusterSettings document"],
    ),
    (
        "unknown-api-version",
        HEAD.replace("v1alpha1", "v9"),
        [
            "s.yaml:1:1: apiVersion: unknown version 'scs-templates.scs.community/v9'; this "
            "release reads scs-templates.scs.community/v1alpha1"
        ],
    ),
    (
        "unknown-kind",
        HEAD.replace("kind: ClusterSettings", "kind: Cluster"),
        ["s.yaml:2:1: kind: unknown kind 'Cluster'; expected ClusterSettings"],
    ),
    (
        "missing-name",
        HEAD.replace("  name: demo\n", "  namespace: x\n"),
        ["s.yaml:3:1: metadata.name: required but missing"],
    ),
    (
        "cidr-host-bits",
        spec("network:\n  nodeCIDR: 10.8.0.1/20"),
        [
            "s.yaml:8:5: spec.network.nodeCIDR: '10.8.0.1/20' has host bits set; did you mean "
            "'10.8.0.0/20'?"
        ],
    ),
    (
        "cidr-garbage",
        spec("network:\n  podCIDR: banana"),
        ["s.yaml:8:5: spec.network.podCIDR: 'banana' is not a CIDR such as 10.8.0.0/20"],
    ),
    (
        "cidr-overlap",
        spec("network:\n  nodeCIDR: 10.96.0.0/20"),
        [
            "s.yaml:8:5: spec.network.nodeCIDR: 10.96.0.0/20 overlaps serviceCIDR 10.96.0.0/12",
        ],
    ),
    (
        "autoscale-min-gt-max",
        spec("workers:\n  - name: w\n    autoscaling:\n      min: 5\n      max: 2"),
        ["s.yaml:10:9: spec.workers[0].autoscaling.min: min (5) is greater than max (2)"],
    ),
    (
        "replicas-and-autoscaling",
        spec(
            "workers:\n  - name: w\n    replicas: 2\n    autoscaling:\n      min: 1\n      max: 2"
        ),
        ["s.yaml:9:7: spec.workers[0].replicas: set either replicas or autoscaling, not both"],
    ),
    (
        "simple-takes-one-group",
        spec("workers:\n  - name: a\n  - name: b"),
        [
            "s.yaml:7:3: spec.workers: template 'simple' takes exactly one worker group, found "
            "2; use template 'multi-md' for more"
        ],
    ),
    (
        "duplicate-group-names",
        spec("template: multi-md\nworkers:\n  - name: a\n  - name: a"),
        ["s.yaml:10:7: spec.workers[1].name: duplicate group name 'a' (also workers[0])"],
    ),
    (
        "version-out-of-range",
        spec("kubernetes:\n  version: 1.20.x"),
        [
            "s.yaml:8:5: spec.kubernetes.version: Kubernetes 1.20 is outside the supported "
            "range (1.31 to 1.37, the workload cluster versions of Cluster API v1.14.2)"
        ],
    ),
    (
        "version-garbage",
        spec("kubernetes:\n  version: latest"),
        [
            "s.yaml:8:5: spec.kubernetes.version: 'latest' is not a Kubernetes version; write "
            "it as 1.37.x (newest patch in the versions table) or 1.37.2"
        ],
    ),
    (
        "name-budget",
        spec("prefix: a-very-long-prefix-for-names\nworkers:\n  - name: a-long-worker-group"),
        [
            # Docker: CAPD's node host names start with "<cluster>-" (5 more characters)
            "s.yaml:4:3: metadata.name: 'a-very-long-prefix-for-names-demo-control-plane' is 47 "
            "characters; $PREFIX-$CLUSTER-control-plane must fit in 46; on Docker the node host "
            "name also starts with '<cluster>-': shorten the prefix or the cluster name",
            "s.yaml:9:7: spec.workers[0].name: 'a-very-long-prefix-for-names-demo-a-long-worker-"
            "group' is 53 characters; $PREFIX-$CLUSTER-$GROUP must fit in 46 (machine names add "
            "12; on Docker the node host name also starts with '<cluster>-' and must stay <= 63)",
        ],
    ),
    (
        "openstack-needs-machine-type",
        HEAD.replace("provider: docker", "provider: openstack"),
        [
            "s.yaml:5:1: spec.controlPlane.machineType: required for provider 'openstack' (a "
            "flavor name)",
            "s.yaml:5:1: spec.workers[0].machineType: required for provider 'openstack' (a "
            "flavor name)",
        ],
    ),
    (
        "occm-cannot-be-disabled",
        HEAD.replace("provider: docker", "provider: openstack")
        + "  controlPlane: {machineType: m}\n  workers: [{name: w, machineType: m}]\n"
        + "  services: {cloudControllerManager: {enabled: false}}\n",
        [
            "s.yaml:9:39: spec.services.cloudControllerManager.enabled: must stay enabled on "
            "OpenStack: nodes stay uninitialized without the cloud controller manager"
        ],
    ),
    (
        "api-access-cidrs-without-list",
        spec("network:\n  apiAccess:\n    mode: cidrs"),
        ["s.yaml:8:5: spec.network.apiAccess.cidrs: mode 'cidrs' needs at least one CIDR"],
    ),
    (
        "api-access-list-with-open",
        spec("network:\n  apiAccess:\n    cidrs: [1.2.3.0/24]"),
        [
            "s.yaml:9:7: spec.network.apiAccess.cidrs: cidrs are only used with mode 'cidrs' "
            "(mode is 'open')"
        ],
    ),
    (
        "dns-server-not-ip",
        spec("network:\n  dnsServers: [dns.example]"),
        ["s.yaml:8:18: spec.network.dnsServers[0]: 'dns.example' is not an IP address"],
    ),
    (
        "reserved-node-label",
        spec(
            "workers:\n  - name: w\n    labels:\n      node-role.kubernetes.io/worker: ''\n"
            "      kubernetes.io/role: worker\n      topology.kubernetes.io/zone: az1"
        ),
        [
            "s.yaml:11:9: spec.workers[0].labels.kubernetes.io/role: label 'kubernetes.io/role' "
            "is in a reserved Kubernetes namespace: kubelets may only set "
            "kubelet.kubernetes.io/*, node.kubernetes.io/* and the well-known topology labels, "
            "and Cluster API syncs node-role.kubernetes.io/*; use your own domain"
        ],
    ),
    (
        "mapping-expected",
        spec("etcd: 3"),
        ["s.yaml:7:3: spec.etcd: expected a mapping, found int 3"],
    ),
    (
        "list-expected",
        spec("workers: {name: w}"),
        ["s.yaml:7:3: spec.workers: expected a list, found a mapping"],
    ),
    (
        "merge-key",
        spec("etcd:\n  <<: {quotaGiB: 2}"),
        [
            "s.yaml:8:5: spec.etcd: merge keys (<<) are not supported; write the values out",
        ],
    ),
    (
        "several-problems-at-once",
        spec("templat: simple\ncontrolPlane:\n  replicas: 4\netcd:\n  quotaGiB: 99"),
        [
            "s.yaml:7:3: spec.templat: unknown key 'templat'; did you mean 'template'?",
            "s.yaml:9:5: spec.controlPlane.replicas: 4 is not allowed; expected 1, 3 or 5",
            "s.yaml:11:5: spec.etcd.quotaGiB: must be less than or equal to 8",
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_messages(text: str, expected: list[str]) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings_text(text, file="s.yaml")
    assert [str(p) for p in caught.value.problems] == expected


def test_cli_validate_prints_every_problem_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = CASES[-1][1], CASES[-1][2]
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [line.replace("s.yaml", str(path), 1) for line in expected]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"\x00\x01\x02binary", "binary data, not a YAML text file"),
        (b"name: \xff\xfe", "not UTF-8 text (invalid byte at offset 6)"),
        (b"a: " + b"x" * (1024 * 1024), "file is too large (1048579 bytes; limit 1048576)"),
        (b"", "file is empty; expected a ClusterSettings document"),
    ],
    ids=["missing", "binary", "not-utf8", "too-large", "empty"],
)
def test_unreadable_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, message: str
) -> None:
    path = tmp_path / "s.yaml"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    assert str(caught.value) == f"{path}: (document): {message}"
    assert main(["validate", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"{path}: (document): {message}\n"
    assert "Traceback" not in captured.err


def test_deprecated_settings_warn_but_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    # 1.36.x: a version with a published kind image, so the only warning is the one tested
    path.write_text(spec("etcd:\n  prioBoost: true\nkubernetes:\n  version: 1.36.x"))
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == (  # a docker cluster: no allow-list to speak of (#39)
        f"{path}: valid\n{path}: API access open: provider docker has no allow-list, "
        "network.apiAccess is not enforced; the API is reachable wherever the provider "
        "publishes it (CAPD's load balancer container, on a random port of every address of "
        "the Docker host)\n"
    )
    assert captured.err == (
        f"{path}:8:5: warning: spec.etcd.prioBoost: obsolete and ignored: etcd heartbeat, "
        "election timeout and I/O priority are always tuned now; remove it\n"
    )


@pytest.mark.parametrize(
    ("body", "refused"),
    [
        # another minor, another patch of the same minor, a short v1.NN form
        ("controlPlane:\n  image: kindest/node:v1.33.5", "names Kubernetes 1.33.5"),
        ("controlPlane:\n  image: kindest/node:v1.36.0", "names Kubernetes 1.36.0"),
        ("controlPlane:\n  image: kube-v1.32-golden", "names Kubernetes 1.32"),
    ],
)
def test_literal_image_of_another_kubernetes_version_is_refused(body: str, refused: str) -> None:
    text = spec("kubernetes:\n  version: 1.36.4\n" + body)
    with pytest.raises(SettingsError, match=refused):
        parse_settings_text(text)


@pytest.mark.parametrize(
    "body",
    [
        "controlPlane:\n  image: kindest/node:v1.36.4",  # the right version, but pinned
        "controlPlane:\n  image: ubuntu-22.04-golden",  # a distribution version is not Kubernetes'
        "controlPlane:\n  image: my-golden-image",
    ],
)
def test_literal_image_without_version_warns(body: str) -> None:
    loaded = parse_settings_text(spec("kubernetes:\n  version: 1.36.4\n" + body))
    assert [w.message for w in loaded.warnings if "has no {version}" in w.message]


@pytest.mark.parametrize(
    ("provider", "warned"),
    [
        ("docker", True),
        ("openstack\n  openstack:\n    loadBalancerProvider: ovn", True),
        ("openstack", False),  # amphora, the default, speaks it
    ],
)
def test_a_proxy_protocol_no_load_balancer_speaks_warns_naming_the_provider(
    provider: str, warned: bool
) -> None:
    text = HEAD.replace("provider: docker", f"provider: {provider}") + (
        "  controlPlane:\n    machineType: m1\n  workers:\n  - name: w\n    machineType: m1\n"
        "  services:\n    gatewayAPI:\n      proxyProtocol: true\n"
    )
    loaded = parse_settings_text(text)
    found = [w.message for w in loaded.warnings if "PROXY protocol" in w.message]
    name = provider.split()[0]
    assert found == (
        [
            f"ignored: the load balancers of provider '{name}' do not speak the PROXY "
            "protocol here (docs/settings.md, what each provider makes of it)"
        ]
        if warned
        else []
    )


def test_image_with_version_placeholder_is_quiet() -> None:
    loaded = parse_settings_text(
        spec("kubernetes:\n  version: 1.36.4\ncontrolPlane:\n  image: kind/{version}-v1.30.0")
    )
    assert loaded.warnings == ()


def test_a_comment_ruamel_cannot_place_is_a_syntax_error_with_its_place() -> None:
    """Found by a generated document (tests/unit/test_yaml_composers.py): ruamel.yaml raised
    NotImplementedError ("overlap in comment"), which the CLI reported as an internal error
    (exit 1) instead of the file's problem (exit 2)."""
    from scs_templates._settings.problems import SettingsError
    from scs_templates._settings.validate import parse_settings_text

    with pytest.raises(SettingsError, match=r"1:4.*a comment here cannot be read"):
        parse_settings_text("a: #|+\n  keep\n\nb: |-\n  strip\n", file="x.yaml")
