"""The operator features of issue #16, one section each: the settings' rules and what the
charts render from them (through the real pinned helm; manifests CRD-checked in
tests/render/test_snapshots.py)."""

from __future__ import annotations

from typing import Any

import pytest

from scs_templates import api
from scs_templates._settings import certificates
from scs_templates._settings.model import ClusterSettings
from scs_templates._settings.problems import SettingsError, format_path
from scs_templates._settings.validate import validate_data
from scs_templates._tools.helm import Helm
from tests import support
from tests.support import pinned_helm


def feature_settings(spec: dict[str, Any], provider: str = "openstack") -> ClusterSettings:
    body: dict[str, Any] = {
        "provider": provider,
        "controlPlane": {"machineType": "cp"} if provider == "openstack" else {},
        "workers": [
            {"name": "w", "machineType": "w"} if provider == "openstack" else {"name": "w"}
        ],
    }
    for key, value in spec.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return support.settings_of(body, name="feat", file="f.yaml")


def problems(spec: dict[str, Any], provider: str = "openstack") -> list[str]:
    with pytest.raises(SettingsError) as caught:
        feature_settings(spec, provider)
    return [f"{format_path(p.path)}: {p.message}" for p in caught.value.problems]


@pytest.fixture(scope="module")
def helm() -> Helm:
    helm: Helm = pinned_helm()
    return helm


def kinds(result: api.RenderResult, kind: str) -> list[dict[str, Any]]:
    return [o for o in result.objects if o["kind"] == kind]


# --------------------------------------------------------------------------- rollout


def test_control_plane_max_surge_zero_needs_three_replicas() -> None:
    assert problems({"controlPlane": {"replicas": 1, "rollout": {"maxSurge": 0}}}) == [
        "spec.controlPlane.rollout.maxSurge: maxSurge 0 (delete before create) needs 3 or 5 "
        "control-plane replicas: with one, the control plane would be gone during the update"
    ]
    feature_settings({"controlPlane": {"replicas": 3, "rollout": {"maxSurge": 0}}})


def test_worker_rollout_must_make_progress() -> None:
    group = {"name": "gpu", "machineType": "g", "rollout": {"maxSurge": 0}}
    assert problems({"workers": [group]}) == [
        "spec.workers[0].rollout.maxSurge: maxSurge and maxUnavailable cannot both be 0: a "
        "rolling update could never replace a machine"
    ]
    feature_settings({"workers": [{**group, "rollout": {"maxSurge": 0, "maxUnavailable": 1}}]})


def test_rollout_defaults_render_what_they_rendered_before(helm: Helm) -> None:
    result = api.render(feature_settings({}, "docker"), helm=helm)
    (kcp,) = kinds(result, "KubeadmControlPlane")
    (md,) = kinds(result, "MachineDeployment")
    assert kcp["spec"]["rollout"]["strategy"]["rollingUpdate"] == {"maxSurge": 1}
    assert "deletion" not in kcp["spec"]["machineTemplate"]["spec"]
    assert md["spec"]["rollout"]["strategy"]["rollingUpdate"] == {
        "maxSurge": 1,
        "maxUnavailable": 0,
    }
    assert "deletion" not in md["spec"]["template"]["spec"]
    checks = {o["metadata"]["name"]: o["spec"] for o in kinds(result, "MachineHealthCheck")}
    assert checks["capi-feat-control-plane"]["checks"]["nodeStartupTimeoutSeconds"] == 1200
    assert "remediation" not in checks["capi-feat-control-plane"]
    assert checks["capi-feat-w"]["checks"]["nodeStartupTimeoutSeconds"] == 600
    assert checks["capi-feat-w"]["remediation"]["triggerIf"] == {
        "unhealthyLessThanOrEqualTo": "40%"
    }


def test_rollout_tuning_reaches_the_objects(helm: Helm) -> None:
    deletion = {"nodeDrainTimeoutSeconds": 900, "nodeDeletionTimeoutSeconds": 0}
    spec = {
        "controlPlane": {"replicas": 3, "rollout": {"maxSurge": 0, "deletion": deletion}},
        "workers": [
            {
                "name": "w",
                "rollout": {"maxSurge": 0, "maxUnavailable": 2, "deletion": deletion},
                "healthCheck": {"unhealthyTimeoutSeconds": 60, "maxUnhealthyPercent": 100},
            }
        ],
    }
    result = api.render(feature_settings(spec, "docker"), helm=helm)
    (kcp,) = kinds(result, "KubeadmControlPlane")
    (md,) = kinds(result, "MachineDeployment")
    assert kcp["spec"]["rollout"]["strategy"]["rollingUpdate"] == {"maxSurge": 0}
    assert kcp["spec"]["machineTemplate"]["spec"]["deletion"] == deletion
    assert md["spec"]["rollout"]["strategy"]["rollingUpdate"] == {
        "maxSurge": 0,
        "maxUnavailable": 2,
    }
    assert md["spec"]["template"]["spec"]["deletion"] == deletion
    (check,) = [o for o in kinds(result, "MachineHealthCheck") if "w" in o["metadata"]["name"][-2:]]
    assert check["spec"]["remediation"]["triggerIf"] == {"unhealthyLessThanOrEqualTo": "100%"}
    assert {c["timeoutSeconds"] for c in check["spec"]["checks"]["unhealthyNodeConditions"]} == {60}


@pytest.mark.parametrize("percent", [0, 34, 100])
@pytest.mark.parametrize("template", ["simple", "clusterclass"])
def test_the_control_planes_share_of_unhealthy_machines_stops_remediation(
    helm: Helm, template: str, percent: int
) -> None:
    """controlPlane.healthCheck.maxUnhealthyPercent becomes the control-plane health
    check's remediation.triggerIf, as a worker group's does: on the MachineHealthCheck of a
    classic cluster and on the topology's control-plane healthCheck of a ClusterClass
    cluster (Cluster API creates the MachineHealthCheck from it). 0 (never remediate) is a
    value, not "unset"."""
    spec = {"template": template, "controlPlane": {"healthCheck": {"maxUnhealthyPercent": percent}}}
    result = api.render(feature_settings(spec, "docker"), helm=helm)
    stop = {"triggerIf": {"unhealthyLessThanOrEqualTo": f"{percent}%"}}
    if template == "clusterclass":
        (cluster,) = kinds(result, "Cluster")
        assert cluster["spec"]["topology"]["controlPlane"]["healthCheck"]["remediation"] == stop
    else:
        checks = {o["metadata"]["name"]: o["spec"] for o in kinds(result, "MachineHealthCheck")}
        assert checks["capi-feat-control-plane"]["remediation"] == stop


def test_the_control_planes_share_of_unhealthy_machines_is_a_percentage() -> None:
    assert problems({"controlPlane": {"healthCheck": {"maxUnhealthyPercent": 101}}}) == [
        "spec.controlPlane.healthCheck.maxUnhealthyPercent: must be less than or equal to 100"
    ]


# --------------------------------------------------------------------------- audit, OIDC


def kcp_files(result: api.RenderResult) -> dict[str, dict[str, Any]]:
    (kcp,) = kinds(result, "KubeadmControlPlane")
    return {f["path"]: f for f in kcp["spec"]["kubeadmConfigSpec"]["files"]}


def api_args(result: api.RenderResult) -> dict[str, str]:
    (kcp,) = kinds(result, "KubeadmControlPlane")
    api_server = kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"]
    return {a["name"]: a["value"] for a in api_server["extraArgs"]}


def test_audit_is_on_by_default_with_metadata_only(helm: Helm) -> None:
    import yaml

    result = api.render(feature_settings({}, "docker"), helm=helm)
    args = api_args(result)
    assert args["audit-policy-file"] == "/etc/kubernetes/audit/policy.yaml"
    assert args["audit-log-path"] == "/var/log/kubernetes/audit/audit.log"
    assert (args["audit-log-maxage"], args["audit-log-maxbackup"], args["audit-log-maxsize"]) == (
        "30",
        "10",
        "100",
    )
    policy = yaml.safe_load(kcp_files(result)["/etc/kubernetes/audit/policy.yaml"]["content"])
    levels = {rule["level"] for rule in policy["rules"]}
    assert levels == {"None", "Metadata"}, "bodies (Request/RequestResponse) must never be logged"
    assert policy["rules"][-1] == {"level": "Metadata"}
    assert "authentication-config" not in args


def test_audit_can_be_switched_off(helm: Helm) -> None:
    result = api.render(
        feature_settings({"security": {"audit": {"enabled": False}}}, "docker"), helm=helm
    )
    assert not [a for a in api_args(result) if a.startswith("audit-")]
    assert "/etc/kubernetes/audit/policy.yaml" not in kcp_files(result)
    assert "/var/log/kubernetes/audit" not in str(kinds(result, "KubeadmControlPlane"))


def test_audit_policy_replacement_must_be_a_policy() -> None:
    bad = {"security": {"audit": {"policy": {"kind": "Policy", "rules": []}}}}
    assert problems(bad) == [
        "spec.security.audit.policy: must be a complete audit.k8s.io/v1 Policy (apiVersion, kind)",
        "spec.security.audit.policy.rules: a Policy needs a list of rules",
    ]


@pytest.mark.parametrize(("version", "api_version"), [("1.33.x", "v1beta1"), ("1.34.x", "v1")])
def test_oidc_renders_structured_authentication(helm: Helm, version: str, api_version: str) -> None:
    import yaml

    issuers = [
        {"issuerURL": "https://a.example", "clientID": "k8s"},
        {
            "issuerURL": "https://b.example/realm",
            "clientID": "c",
            "extraAudiences": ["d", "c"],
            "groupsClaim": None,
            "usernameClaim": "email",
            "usernamePrefix": "",
        },
    ]
    spec = {"kubernetes": {"version": version}, "security": {"oidc": issuers}}
    result = api.render(feature_settings(spec, "docker"), helm=helm)
    assert api_args(result)["authentication-config"] == "/etc/kubernetes/authentication/config.yaml"
    config = yaml.safe_load(
        kcp_files(result)["/etc/kubernetes/authentication/config.yaml"]["content"]
    )
    assert config["apiVersion"] == f"apiserver.config.k8s.io/{api_version}"
    assert config["kind"] == "AuthenticationConfiguration"
    first, second = config["jwt"]
    assert first == {
        "issuer": {"url": "https://a.example", "audiences": ["k8s"]},
        "claimMappings": {
            "username": {"claim": "sub", "prefix": "oidc:"},
            "groups": {"claim": "groups", "prefix": "oidc:"},
        },
    }
    assert second["issuer"] == {
        "url": "https://b.example/realm",
        "audiences": ["c", "d"],
        "audienceMatchPolicy": "MatchAny",
    }
    assert second["claimMappings"] == {"username": {"claim": "email", "prefix": ""}}
    assert not [a for a in api_args(result) if a.startswith("oidc-")]


def test_oidc_issuers_are_https_and_unique() -> None:
    issuer = {"issuerURL": "https://a.example", "clientID": "k8s"}
    assert problems({"security": {"oidc": [issuer, issuer]}}) == [
        "spec.security.oidc[1].issuerURL: duplicate issuer 'https://a.example'"
    ]
    found = problems({"security": {"oidc": [{**issuer, "issuerURL": "http://a.example"}]}})
    assert len(found) == 1 and found[0].startswith("spec.security.oidc[0].issuerURL:")
    found = problems({"security": {"oidc": [{**issuer, "certificateAuthority": "not a pem"}]}})
    assert len(found) == 1 and found[0].startswith("spec.security.oidc[0].certificateAuthority:")


# --------------------------------------------------------------------------- encryption


def test_encryption_key_comes_from_the_secret_as_a_0600_file(helm: Helm) -> None:
    result = api.render(feature_settings({}, "openstack"), helm=helm)
    args = api_args(result)
    path = args["encryption-provider-config"]
    assert path == "/etc/kubernetes/encryption/config.yaml"
    entry = kcp_files(result)[path]
    assert entry == {
        "path": path,
        "owner": "root:root",
        "permissions": "0600",
        "contentFrom": {
            "secret": {"name": "capi-feat-encryption", "key": "encryption-config.yaml"}
        },
    }
    secrets = [o["metadata"]["name"] for o in kinds(result, "Secret")]
    assert "capi-feat-encryption" not in secrets, "the key Secret is never rendered"


def test_encryption_can_be_switched_off(helm: Helm) -> None:
    spec = {"security": {"encryptionAtRest": {"enabled": False}}}
    result = api.render(feature_settings(spec, "docker"), helm=helm)
    assert "encryption-provider-config" not in api_args(result)
    assert "encryption" not in result.manifests


@pytest.mark.parametrize("name", ["on", "no", "null", "1234", "0x1f"])
def test_names_yaml_reads_as_something_else_are_refused(name: str) -> None:
    """Found by hypothesis (test_charts): a cluster named ``on`` rendered ``name: on``,
    which helm's YAML 1.1 reader turns into ``true``."""
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": name, "namespace": name},
        "spec": {"provider": "docker"},
    }
    with pytest.raises(SettingsError) as caught:
        validate_data(data, file="f.yaml")
    assert [format_path(p.path) for p in caught.value.problems] == [
        "metadata.name",
        "metadata.namespace",
    ]


# --------------------------------------------------------------------------- proxy, CAs


PEM = support.CA_PEM


#: Another real one (a second trusted CA).
OTHER_PEM = (
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBfDCCASOgAwIBAgIUfrlc4zb8ksHTFz98m0evt9DqzKswCgYIKoZIzj0EAwIw\n"
    "NDEyMDAGA1UEAwwpc2NzLXRlbXBsYXRlcyBzZWNvbmQgdGVzdCBDQSAodGVzdHMg\n"
    "b25seSkwHhcNMjYwMTAxMDAwMDAwWhcNMzUxMjMwMDAwMDAwWjA0MTIwMAYDVQQD\n"
    "DClzY3MtdGVtcGxhdGVzIHNlY29uZCB0ZXN0IENBICh0ZXN0cyBvbmx5KTBZMBMG\n"
    "ByqGSM49AgEGCCqGSM49AwEHA0IABGy+d+eLpdWxh3I81CHXAU1By0aLYgeIANKg\n"
    "WKS9W4tYhb1qX2yatwDUQXd5bDHWEVZFdL1z1jAX5vPXK1sSDYOjEzARMA8GA1Ud\n"
    "EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIgYv8/SJ15qLFJRK55VXVHThDT\n"
    "vXSSBXjEgOGFwc6FWMQCIFKlGGBmdHzpRORh3IJb/O0Tq5avcvCE984V8Eelg7WH\n"
    "-----END CERTIFICATE-----\n"
)

#: PEM that only looks like a certificate (the kind the snapshots and the all-features
#: example carried before): the real kube-apiserver refuses it as an OIDC issuer's CA
#: (tests/plane/test_plane_cluster_features.py), containerd and update-ca-certificates on the node.
MADE_UP_PEM = (
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUEXAMPLE\n-----END CERTIFICATE-----\n"
)


def test_made_up_certificates_are_refused_in_every_pem_field() -> None:
    """Every PEM field: a block that is not an X.509 certificate is refused naming the field."""
    issuer = {"issuerURL": "https://a.example", "clientID": "k8s"}
    found = problems(
        {
            "security": {
                "trustedCAs": [PEM, MADE_UP_PEM],
                "oidc": [{**issuer, "certificateAuthority": MADE_UP_PEM}],
            },
            "registryMirrors": [
                {"registry": "docker.io", "endpoints": ["https://h"], "caCertificate": PEM},
                {"registry": "quay.io", "endpoints": ["https://h"], "caCertificate": MADE_UP_PEM},
            ],
        }
    )
    assert sorted(f.split(":", 1)[0] for f in found) == [
        "spec.registryMirrors[1].caCertificate",
        "spec.security.oidc[0].certificateAuthority",
        "spec.security.trustedCAs[1]",
    ], found
    assert all("not an X.509 certificate" in f or "base64" in f for f in found), found


def test_real_certificates_and_bundles_with_comments_are_accepted() -> None:
    bundle = f"{PEM}\n# Subject: the same again\n{PEM}"
    assert certificates.problem(PEM) is None
    assert certificates.problem(bundle) is None
    feature_settings({"security": {"trustedCAs": [bundle]}})


def test_a_certificate_with_a_line_lost_is_refused() -> None:
    """Each line of the base64 dropped in turn (copying mistakes): refused every time."""
    lines = PEM.splitlines(keepends=True)
    for index in range(1, len(lines) - 1):
        assert certificates.problem("".join(lines[:index] + lines[index + 1 :])), index
    # valid base64, but no certificate inside (the all-features example's earlier CA)
    made_up = "MIIBfTCCASOgAwIBAgIUCorpProxyRootCAExampleOnly0wCgYIKoZIzj0EAwIw"
    problem = certificates.problem(
        f"-----BEGIN CERTIFICATE-----\n{made_up}\n-----END CERTIFICATE-----"
    )
    assert problem and "not an X.509 certificate" in problem
    assert certificates.problem("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----")
    assert certificates.problem("no block at all")


def bootstrap_specs(result: api.RenderResult) -> list[dict[str, Any]]:
    """The KubeadmControlPlane's and every KubeadmConfigTemplate's bootstrap spec."""
    (kcp,) = kinds(result, "KubeadmControlPlane")
    specs = [kcp["spec"]["kubeadmConfigSpec"]]
    specs += [t["spec"]["template"]["spec"] for t in kinds(result, "KubeadmConfigTemplate")]
    return specs


def test_proxy_reaches_containerd_and_kubelet_with_the_cluster_in_no_proxy(
    helm: Helm,
) -> None:
    spec = {
        "network": {
            "serviceDomain": "k8s.internal",
            "proxy": {"httpsProxy": "http://proxy:3128", "noProxy": [".corp", "localhost"]},
        }
    }
    result = api.render(feature_settings(spec, "docker"), helm=helm)
    for bootstrap in bootstrap_specs(result):
        files = {f["path"]: f for f in bootstrap["files"]}
        for unit in ("containerd", "kubelet"):
            dropin = files[f"/etc/systemd/system/{unit}.service.d/http-proxy.conf"]["content"]
            assert 'Environment="HTTPS_PROXY=http://proxy:3128"' in dropin
            assert "HTTP_PROXY" not in dropin.replace("HTTPS_PROXY", "")
            assert (
                'Environment="NO_PROXY=.corp,localhost,127.0.0.1,::1,192.168.0.0/16,'
                '10.96.0.0/12,10.8.0.0/20,k8s.internal,.k8s.internal,.svc"'
            ) in dropin
        assert bootstrap["preKubeadmCommands"][0] == "/usr/local/sbin/scs-node-setup.sh"
        script = files["/usr/local/sbin/scs-node-setup.sh"]["content"]
        assert "/run/kubeadm/kubeadm-join-config.yaml" in script, "endpoint added at boot"
        assert script.rstrip().endswith("systemctl restart containerd")


@pytest.mark.parametrize(
    "url", ["http://user:s3cret-pw@proxy:3128", "http://s3cret-pw@proxy:3128", "ftp://s3cret-pw"]
)
def test_proxy_urls_carry_no_credentials_and_errors_never_echo_them(url: str) -> None:
    found = problems({"network": {"proxy": {"httpProxy": url, "httpsProxy": url}}})
    assert [p.split(":")[0] for p in found] == [
        "spec.network.proxy.httpProxy",
        "spec.network.proxy.httpsProxy",
    ]
    assert all("s3cret-pw" not in p and "without user information" in p for p in found), found


def test_proxy_no_proxy_needs_a_proxy() -> None:
    assert problems({"network": {"proxy": {"noProxy": ["a"]}}}) == [
        "spec.network.proxy.noProxy: noProxy without httpProxy or httpsProxy does nothing"
    ]


def test_node_setup_script_runs_shell_clean(helm: Helm, tmp_path: Any) -> None:
    """bash -n of the rendered script with every part on (syntax errors fail the test)."""
    import subprocess

    spec = {
        "network": {"proxy": {"httpProxy": "http://p:1"}},
        "security": {"trustedCAs": [PEM]},
        "registryMirrors": [
            {"registry": "r.example", "endpoints": ["https://m"], "credentialsSecret": "creds"}
        ],
    }
    result = api.render(feature_settings(spec, "docker"), helm=helm)
    script = kcp_files(result)["/usr/local/sbin/scs-node-setup.sh"]["content"]
    path = tmp_path / "setup.sh"
    path.write_text(script)
    checked = subprocess.run(
        ["bash", "-n", str(path)], capture_output=True, text=True, timeout=30, check=False
    )
    assert checked.returncode == 0, checked.stderr
    assert "update-ca-certificates" in script and "r.example" in script


def test_trusted_cas_and_registry_credentials_by_reference(helm: Helm) -> None:
    spec = {
        "security": {"trustedCAs": [PEM, OTHER_PEM]},
        "registryMirrors": [
            {
                "registry": "docker.io",
                "endpoints": ["https://harbor/v2/hub"],
                "caCertificate": PEM,
                "credentialsSecret": "pull-creds",
            }
        ],
    }
    result = api.render(feature_settings(spec, "openstack"), helm=helm)
    for bootstrap in bootstrap_specs(result):
        files = {f["path"]: f for f in bootstrap["files"]}
        assert files["/usr/local/share/ca-certificates/scs-trusted-0.crt"]["content"] == PEM
        assert files["/usr/local/share/ca-certificates/scs-trusted-1.crt"]["content"] == OTHER_PEM
        hosts = files["/etc/containerd/certs.d/docker.io/hosts.toml"]
        assert hosts["permissions"] == "0600"
        assert 'ca = "/etc/containerd/certs.d/docker.io/ca.crt"' in hosts["content"]
        assert 'Authorization = "@SCS_REGISTRY_AUTH@"' in hosts["content"]
        assert files["/etc/containerd/certs.d/docker.io/ca.crt"]["content"] == PEM
        for key in ("username", "password"):
            entry = files[f"/etc/containerd/scs-credentials/docker.io/{key}"]
            assert entry["permissions"] == "0600" and "content" not in entry
            assert entry["contentFrom"] == {"secret": {"name": "pull-creds", "key": key}}


def test_without_proxy_cas_or_credentials_nothing_runs_before_kubeadm(helm: Helm) -> None:
    result = api.render(feature_settings({}, "docker"), helm=helm)
    for bootstrap in bootstrap_specs(result):
        assert "preKubeadmCommands" not in bootstrap
        assert "/usr/local/sbin/scs-node-setup.sh" not in str(bootstrap["files"])


def test_node_setup_adds_the_api_endpoint_and_registry_auth(helm: Helm, tmp_path: Any) -> None:
    """Run the rendered script for real, in a sandbox: its absolute paths moved under
    tmp_path, systemctl a stub (support.run_node_setup). The join configuration names the
    endpoint as Cluster API writes it; a second run must change nothing."""
    import base64

    spec = {
        "network": {"proxy": {"httpProxy": "http://p:1"}},
        "registryMirrors": [
            {"registry": "r.example", "endpoints": ["https://m"], "credentialsSecret": "creds"}
        ],
    }
    result = api.render(feature_settings(spec, "docker"), helm=helm)
    (template,) = kinds(result, "KubeadmConfigTemplate")
    root = tmp_path / "root"
    support.run_node_setup(
        template["spec"]["template"]["spec"]["files"],
        root,
        tmp_path,
        {
            "/etc/containerd/scs-credentials/r.example/username": "robot",
            "/etc/containerd/scs-credentials/r.example/password": "s3cr3t",
            "/run/kubeadm/kubeadm-join-config.yaml": (
                "discovery:\n  bootstrapToken:\n    apiServerEndpoint: 203.0.113.7:6443\n"
            ),
        },
    )
    dropin = (root / "etc/systemd/system/kubelet.service.d/http-proxy.conf").read_text()
    assert dropin.count(",203.0.113.7") == 1 and dropin.rstrip().endswith(',.svc,203.0.113.7"')
    hosts = (root / "etc/containerd/certs.d/r.example/hosts.toml").read_text()
    auth = base64.b64encode(b"robot:s3cr3t").decode()
    assert f'Authorization = "Basic {auth}"' in hosts


# --------------------------------------------------------------------------- OpenStack


def by_name(result: api.RenderResult, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in kinds(result, kind)}


def test_existing_network_internal_api_and_rules(helm: Helm) -> None:
    spec = {
        "network": {"nodeCIDR": "10.30.0.0/24"},
        "openstack": {
            "existingNetwork": {"network": "net", "subnet": "1f0e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"},
            "apiFloatingIP": False,
            "nodeSecurityGroupRules": [
                {
                    "name": "np",
                    "protocol": "tcp",
                    "portRangeMin": 30000,
                    "remoteIPPrefix": "192.0.2.0/24",
                }
            ],
        },
    }
    result = api.render(feature_settings(spec), helm=helm)
    (cluster,) = kinds(result, "OpenStackCluster")
    assert cluster["spec"]["network"] == {"filter": {"name": "net"}}
    assert cluster["spec"]["subnets"] == [{"id": "1f0e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"}]
    assert "managedSubnets" not in cluster["spec"]
    assert cluster["spec"]["disableAPIServerFloatingIP"] is True
    assert cluster["spec"]["managedSecurityGroups"]["allNodesSecurityGroupRules"] == [
        {
            "name": "np",
            "direction": "ingress",
            "etherType": "IPv4",
            "protocol": "tcp",
            "portRangeMin": 30000,
            "portRangeMax": 30000,
            "remoteIPPrefix": "192.0.2.0/24",
        }
    ]


def test_defaults_keep_the_managed_network(helm: Helm) -> None:
    result = api.render(feature_settings({}), helm=helm)
    (cluster,) = kinds(result, "OpenStackCluster")
    assert "network" not in cluster["spec"] and "disableAPIServerFloatingIP" not in cluster["spec"]
    assert cluster["spec"]["managedSecurityGroups"] == {"allowAllInClusterTraffic": True}
    for template in kinds(result, "OpenStackMachineTemplate"):
        machine = template["spec"]["template"]["spec"]
        assert "ports" not in machine and "additionalBlockDevices" not in machine
    (kcp,) = kinds(result, "KubeadmControlPlane")
    assert "diskSetup" not in kcp["spec"]["kubeadmConfigSpec"]


def test_etcd_volume_root_volume_type_and_extra_networks(helm: Helm) -> None:
    spec = {
        "controlPlane": {"rootDiskGB": 40, "rootDiskType": "fast"},
        "etcd": {"volume": {"sizeGiB": 10, "type": "nvme"}},
        "workers": [{"name": "w", "machineType": "w", "extraNetworks": ["storage", "backup"]}],
    }
    result = api.render(feature_settings(spec), helm=helm)
    templates = kinds(result, "OpenStackMachineTemplate")
    (cp,) = [t for t in templates if "control-plane" in t["metadata"]["name"]]
    (worker,) = [t for t in templates if "control-plane" not in t["metadata"]["name"]]
    machine = cp["spec"]["template"]["spec"]
    assert machine["rootVolume"] == {"sizeGiB": 40, "type": "fast"}
    assert machine["additionalBlockDevices"] == [
        {"name": "etcd", "sizeGiB": 10, "storage": {"type": "Volume", "volume": {"type": "nvme"}}}
    ]
    assert worker["spec"]["template"]["spec"]["ports"] == [
        {},
        {"network": {"filter": {"name": "storage"}}},
        {"network": {"filter": {"name": "backup"}}},
    ]
    (kcp,) = kinds(result, "KubeadmControlPlane")
    bootstrap = kcp["spec"]["kubeadmConfigSpec"]
    # the disk is found by its size, whatever its bus (tests/render/test_etcd_disk.py runs it)
    assert "diskSetup" not in bootstrap and "mounts" not in bootstrap
    assert bootstrap["preKubeadmCommands"][0] == "/usr/local/sbin/scs-etcd-disk.sh"
    (script,) = [f for f in bootstrap["files"] if f["path"].endswith("scs-etcd-disk.sh")]
    assert "size=$(( 10 * 1073741824 ))" in script["content"]


def test_openstack_choices_are_checked() -> None:
    assert problems({"controlPlane": {"rootDiskType": "ssd"}}) == [
        "spec.controlPlane.rootDiskType: a root volume type needs a root volume: set rootDiskGB too"
    ]
    rules = [
        {"name": "a", "portRangeMin": 80},
        {"name": "a", "protocol": "tcp", "portRangeMin": 90, "portRangeMax": 80},
    ]
    assert problems({"openstack": {"nodeSecurityGroupRules": rules}}) == [
        "spec.openstack.nodeSecurityGroupRules[0].protocol: port ranges need protocol tcp, "
        "udp or sctp",
        "spec.openstack.nodeSecurityGroupRules[1].name: duplicate rule name 'a'",
        "spec.openstack.nodeSecurityGroupRules[1].portRangeMax: 80 is below portRangeMin 90",
    ]


def test_docker_ignores_the_etcd_volume_with_a_warning(helm: Helm) -> None:
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "feat"},
        "spec": {"provider": "docker", "etcd": {"volume": {"sizeGiB": 5}}},
    }
    loaded = validate_data(data, file="f.yaml")
    warned = [format_path(w.path) for w in loaded.warnings]
    assert [path for path in warned if path.startswith("spec.etcd")] == ["spec.etcd.volume"]
    result = api.render(loaded.settings, helm=helm)
    (kcp,) = kinds(result, "KubeadmControlPlane")
    assert "diskSetup" not in kcp["spec"]["kubeadmConfigSpec"]
