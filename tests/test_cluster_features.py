"""The operator features of issue #16, one section each: the settings' rules and what the
charts render from them (through the real pinned helm; manifests CRD-checked in
tests/test_snapshots.py)."""

from __future__ import annotations

from typing import Any

import pytest

from scs_templates import api
from scs_templates.settings import SettingsError, validate_data
from scs_templates.settings.model import ClusterSettings
from scs_templates.settings.problems import format_path
from tests.support import pinned_helm


def settings_of(spec: dict[str, Any], provider: str = "openstack") -> ClusterSettings:
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
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "feat"},
        "spec": body,
    }
    return validate_data(data, file="f.yaml").settings


def problems(spec: dict[str, Any], provider: str = "openstack") -> list[str]:
    with pytest.raises(SettingsError) as caught:
        settings_of(spec, provider)
    return [f"{format_path(p.path)}: {p.message}" for p in caught.value.problems]


@pytest.fixture(scope="module")
def helm() -> api.Helm:
    helm: api.Helm = pinned_helm()
    return helm


def kinds(result: api.RenderResult, kind: str) -> list[dict[str, Any]]:
    return [o for o in result.objects if o["kind"] == kind]


# --------------------------------------------------------------------------- rollout


def test_control_plane_max_surge_zero_needs_three_replicas() -> None:
    assert problems({"controlPlane": {"replicas": 1, "rollout": {"maxSurge": 0}}}) == [
        "spec.controlPlane.rollout.maxSurge: maxSurge 0 (delete before create) needs 3 or 5 "
        "control-plane replicas: with one, the control plane would be gone during the update"
    ]
    settings_of({"controlPlane": {"replicas": 3, "rollout": {"maxSurge": 0}}})


def test_worker_rollout_must_make_progress() -> None:
    group = {"name": "gpu", "machineType": "g", "rollout": {"maxSurge": 0}}
    assert problems({"workers": [group]}) == [
        "spec.workers[0].rollout.maxSurge: maxSurge and maxUnavailable cannot both be 0: a "
        "rolling update could never replace a machine"
    ]
    settings_of({"workers": [{**group, "rollout": {"maxSurge": 0, "maxUnavailable": 1}}]})


def test_rollout_defaults_render_what_they_rendered_before(helm: api.Helm) -> None:
    result = api.render(settings_of({}, "docker"), helm=helm)
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
    assert checks["capi-feat-w"]["checks"]["nodeStartupTimeoutSeconds"] == 600
    assert checks["capi-feat-w"]["remediation"]["triggerIf"] == {
        "unhealthyLessThanOrEqualTo": "40%"
    }


def test_rollout_tuning_reaches_the_objects(helm: api.Helm) -> None:
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
    result = api.render(settings_of(spec, "docker"), helm=helm)
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


# --------------------------------------------------------------------------- audit, OIDC


def kcp_files(result: api.RenderResult) -> dict[str, dict[str, Any]]:
    (kcp,) = kinds(result, "KubeadmControlPlane")
    return {f["path"]: f for f in kcp["spec"]["kubeadmConfigSpec"]["files"]}


def api_args(result: api.RenderResult) -> dict[str, str]:
    (kcp,) = kinds(result, "KubeadmControlPlane")
    api_server = kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"]
    return {a["name"]: a["value"] for a in api_server["extraArgs"]}


def test_audit_is_on_by_default_with_metadata_only(helm: api.Helm) -> None:
    import yaml

    result = api.render(settings_of({}, "docker"), helm=helm)
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


def test_audit_can_be_switched_off(helm: api.Helm) -> None:
    result = api.render(
        settings_of({"security": {"audit": {"enabled": False}}}, "docker"), helm=helm
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
def test_oidc_renders_structured_authentication(
    helm: api.Helm, version: str, api_version: str
) -> None:
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
    result = api.render(settings_of(spec, "docker"), helm=helm)
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


def test_encryption_key_comes_from_the_secret_as_a_0600_file(helm: api.Helm) -> None:
    result = api.render(settings_of({}, "openstack"), helm=helm)
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


def test_encryption_can_be_switched_off(helm: api.Helm) -> None:
    spec = {"security": {"encryptionAtRest": {"enabled": False}}}
    result = api.render(settings_of(spec, "docker"), helm=helm)
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
