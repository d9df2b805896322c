"""The values builder: pure, deterministic, and it decides what the charts must not.

No helm needed here: these tests pin the values contract that both charts consume (and the
charts' own values.schema.json accepts every value the builder produces).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator

from scs_templates._core.labels import credentials_secret_labels
from scs_templates._render.values import build_values
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import load_settings
from scs_templates._versions import table
from scs_templates._versions.kubernetes import TESTED_PATCHES
from scs_templates.providers.openstack.values import server_groups
from tests.support import EXAMPLES, REPO, settings_of

PATCH_133 = f"v1.33.{TESTED_PATCHES[(1, 33)]}"


def openstack_spec(**extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "provider": "openstack",
        "kubernetes": {"version": "1.33.x"},
        "controlPlane": {"replicas": 1, "machineType": "SCS-2V-4-20s"},
        "workers": [{"name": "workers", "replicas": 3, "machineType": "SCS-2V-4-20s"}],
    }
    spec.update(extra)
    return spec


def schema_of(provider: str) -> Draft7Validator:
    path = REPO / "charts" / f"{provider}-cluster" / "values.schema.json"
    return Draft7Validator(json.loads(path.read_text()))


def _keys_sorted(value: Any) -> bool:
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(_keys_sorted(v) for v in value.values())
    if isinstance(value, list):
        return all(_keys_sorted(v) for v in value)
    return True


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_examples_build_schema_valid_sorted_and_deterministic(example: Path) -> None:
    settings = load_settings(example).settings
    values = build_values(settings)
    again = build_values(settings.model_copy(deep=True))
    assert json.dumps(values) == json.dumps(again)
    assert json.loads(json.dumps(values)) == values  # JSON-serialisable, nothing lost
    assert _keys_sorted(values)
    errors = [e.message for e in schema_of(settings.spec.provider).iter_errors(values)]
    assert errors == []


def test_names_version_and_images_are_decided_in_python() -> None:
    values = build_values(settings_of(openstack_spec()))
    assert values["cluster"]["name"] == "demo"
    assert values["cluster"]["infraName"] == "capi-demo"
    assert values["kubernetes"]["version"] == PATCH_133
    cp = values["controlPlane"]
    assert cp["name"] == "capi-demo-control-plane"
    assert cp["templateBase"] == "capi-demo-control-plane"
    assert cp["image"] == f"ubuntu-capi-image-{PATCH_133}"
    assert cp["serverGroup"] == "capi-demo-control-plane"
    (group,) = values["workers"]
    assert group["deploymentName"] == "capi-demo-workers"
    assert group["replicas"] == 3
    assert "autoscaling" not in group
    assert values["openstack"]["credentials"]["secretName"] == "capi-demo-cloud-config"
    assert values["labels"] == {
        "app.kubernetes.io/managed-by": "Helm",
        "scs.community/cluster": "demo",
    }


def test_image_override_and_docker_images() -> None:
    spec = openstack_spec()
    spec["workers"][0]["image"] = "my-image-{version}-gpu"
    values = build_values(settings_of(spec))
    assert values["workers"][0]["image"] == f"my-image-{PATCH_133}-gpu"
    docker = build_values(settings_of({"provider": "docker", "kubernetes": {"version": "1.34.x"}}))
    # the published kind image of the table's newest 1.34 patch, pinned by its digest
    kind = table().minor((1, 34)).kind_images[0]  # type: ignore[union-attr]
    assert kind.version == f"v1.34.{TESTED_PATCHES[(1, 34)]}"
    assert docker["kubernetes"]["version"] == kind.version
    assert docker["controlPlane"]["image"] == f"kindest/node:{kind.version}@{kind.digest}"
    assert docker["workers"][0]["image"] == docker["controlPlane"]["image"]
    assert kind.digest.startswith("sha256:")
    assert "openstack" not in docker
    assert "cloud-provider" not in docker["kubelet"]["extraArgs"]
    assert docker["apiServer"]["certSANs"]


def test_credentials_are_referenced_never_values() -> None:
    settings = settings_of(openstack_spec())
    assert build_values(settings)["openstack"]["credentials"] == {
        "secretName": "capi-demo-cloud-config"
    }
    assert credentials_secret_labels(settings.name) == {
        "app.kubernetes.io/managed-by": "scs-templates",
        "clusterctl.cluster.x-k8s.io/move": "true",
        "scs.community/cluster": "demo",
    }


def test_existing_credentials_secret_is_referenced() -> None:
    spec = openstack_spec(openstack={"credentialsSecret": "my-creds"})
    credentials = build_values(settings_of(spec))["openstack"]["credentials"]
    assert credentials == {"secretName": "my-creds"}


@pytest.mark.parametrize(
    ("access", "expected"),
    [
        ({"mode": "open"}, []),
        (
            {"mode": "internal", "managementCIDRs": ["192.0.2.10/32"]},
            ["10.8.0.0/20", "192.0.2.10/32"],
        ),
        (
            {"mode": "cidrs", "cidrs": ["203.0.113.0/24"], "managementCIDRs": ["192.0.2.10/32"]},
            ["203.0.113.0/24", "10.8.0.0/20", "192.0.2.10/32"],
        ),
        # Duplicates collapse, the user's order stays.
        (
            {"mode": "cidrs", "cidrs": ["10.8.0.0/20", "198.51.100.0/24"]},
            ["10.8.0.0/20", "198.51.100.0/24"],
        ),
    ],
)
def test_api_allowed_cidrs_follow_kaas_v1_restrict_kubeapi(
    access: dict[str, Any], expected: list[str]
) -> None:
    values = build_values(settings_of(openstack_spec(network={"apiAccess": access})))
    assert values["network"]["apiAllowedCIDRs"] == expected


def test_autoscaling_group_has_no_replicas() -> None:
    spec = openstack_spec(template="multi-md")
    spec["workers"] = [
        {"name": "base", "replicas": 2, "machineType": "m"},
        {"name": "burst", "autoscaling": {"min": 1, "max": 5}, "machineType": "m"},
    ]
    base, burst = build_values(settings_of(spec))["workers"]
    assert base["replicas"] == 2 and "autoscaling" not in base
    assert burst["autoscaling"] == {"max": 5, "min": 1} and "replicas" not in burst


def test_node_labels_split_between_kubelet_and_machine() -> None:
    spec = openstack_spec()
    spec["workers"][0]["labels"] = {
        "node-role.kubernetes.io/worker": "",
        "tier": "batch",
        "scs.community/accelerator": "gpu",
    }
    (group,) = build_values(settings_of(spec))["workers"]
    # The kubelet may not set node-role.kubernetes.io labels; Cluster API syncs them.
    assert group["machineLabels"] == {"node-role.kubernetes.io/worker": ""}
    assert group["nodeLabels"] == {"scs.community/accelerator": "gpu", "tier": "batch"}


def test_anti_affinity_none_means_no_server_group() -> None:
    spec = openstack_spec(openstack={"antiAffinity": {"controlPlane": "none", "workers": "none"}})
    values = build_values(settings_of(spec))
    assert values["controlPlane"]["serverGroup"] == ""
    assert values["workers"][0]["serverGroup"] == ""


def test_etcd_and_security_settings_flow_through() -> None:
    spec = openstack_spec(
        etcd={
            "quotaGiB": 4,
            "unsafeFS": True,
            "backupRetention": 7,
            "backupDirectory": "/mnt/etcd-backups",
            "defrag": {"schedule": "Sun 03:00"},
        },
        security={
            "apiRateLimits": {"eventQPS": 10, "eventBurst": 20},
            "certificateRolloutDays": 30,
        },
    )
    values = build_values(settings_of(spec))
    assert values["etcd"]["quotaBackendBytes"] == 4 * 1024**3
    assert values["etcd"]["unsafeFS"] is True
    assert values["etcd"]["heartbeatInterval"] == 250
    assert values["etcd"]["electionTimeout"] == 2500
    assert values["etcd"]["defrag"] == {
        "backupRetention": 7,
        "backupDirectory": "/mnt/etcd-backups",
        "enabled": True,
        "schedule": "Sun 03:00",
    }
    assert values["admission"]["eventRateLimit"] == {"burst": 20, "qps": 10}
    assert values["controlPlane"]["certificateExpiryDays"] == 30


def test_registry_mirrors_keep_order_and_know_docker_hub() -> None:
    spec = openstack_spec(
        registryMirrors=[
            {
                "registry": "ghcr.io",
                "endpoints": ["https://a.example/v2/ghcr"],
                "overridePath": True,
            },
            {"registry": "docker.io", "endpoints": ["https://m1.example", "https://m2.example"]},
        ]
    )
    mirrors = build_values(settings_of(spec))["registryMirrors"]
    assert [m["registry"] for m in mirrors] == ["ghcr.io", "docker.io"]
    assert mirrors[0]["server"] == "https://ghcr.io"
    assert mirrors[1]["server"] == "https://registry-1.docker.io"
    assert [h["url"] for h in mirrors[1]["hosts"]] == ["https://m1.example", "https://m2.example"]


def test_server_metadata_sorted_key_value_list() -> None:
    spec = openstack_spec(openstack={"serverMetadata": {"workers": {"b": "2", "a": "1"}}})
    metadata = build_values(settings_of(spec))["openstack"]["serverMetadata"]
    assert metadata == {
        "controlPlane": [],
        "workers": [{"key": "a", "value": "1"}, {"key": "b", "value": "2"}],
    }


def test_server_groups_match_the_names_the_machine_templates_reference() -> None:
    settings = settings_of(openstack_spec())
    values = build_values(settings)
    assert server_groups(settings) == [
        (values["controlPlane"]["serverGroup"], "anti-affinity"),
        (values["workers"][0]["serverGroup"], "soft-anti-affinity"),
    ]
    spec = openstack_spec(openstack={"antiAffinity": {"controlPlane": "soft", "workers": "none"}})
    assert server_groups(settings_of(spec)) == [("capi-demo-control-plane", "soft-anti-affinity")]
    docker = settings_of({"provider": "docker", "kubernetes": {"version": "1.34.x"}})
    assert server_groups(docker) == []


def test_unsafe_fs_is_never_rendered_for_docker() -> None:
    """kind nodes are containers: a remount of their root would fail the bootstrap."""
    spec = {"provider": "docker", "etcd": {"unsafeFS": True}, "controlPlane": {"replicas": 3}}
    assert build_values(settings_of(spec))["etcd"]["unsafeFS"] is False
    openstack = openstack_spec(etcd={"unsafeFS": True})
    assert build_values(settings_of(openstack))["etcd"]["unsafeFS"] is True


@pytest.mark.parametrize(
    ("key", "on_machine"),
    [
        # the domains Cluster API syncs from the Machine (labels.CAPI_SYNCED_LABEL_DOMAINS)
        ("node-role.kubernetes.io/worker", True),
        ("node-restriction.kubernetes.io/pool", True),
        ("team.node-restriction.kubernetes.io/pool", True),
        ("node.cluster.x-k8s.io/pool", True),
        ("team.node.cluster.x-k8s.io/pool", True),
        # what the kubelet sets itself
        ("node.kubernetes.io/pool", False),
        ("example.com/pool", False),
    ],
)
def test_a_label_in_each_synced_domain_is_accepted_and_put_on_the_machine(
    key: str, on_machine: bool
) -> None:
    """The rules accept what Cluster API syncs and the builder puts exactly that on the
    Machine (both ask labels.synced_by_capi): a label the rules accept never ends up where
    neither the kubelet nor Cluster API may set it."""
    spec = openstack_spec()
    spec["workers"][0]["labels"] = {key: "x"}
    (group,) = build_values(settings_of(spec))["workers"]
    assert (key in group["machineLabels"], key in group["nodeLabels"]) == (
        on_machine,
        not on_machine,
    )


def test_a_subdomain_of_node_role_is_refused() -> None:
    """Cluster API syncs node-role.kubernetes.io itself only, and the kubelet may not set it."""
    spec = openstack_spec()
    spec["workers"][0]["labels"] = {"team.node-role.kubernetes.io/worker": ""}
    with pytest.raises(SettingsError, match="reserved Kubernetes namespace"):
        settings_of(spec)


def test_a_render_resolves_the_kubernetes_version_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #12: the values builder resolves the version once and everything in the render
    (the OIDC AuthenticationConfiguration's apiVersion, ``--kube-version``) uses that."""
    import scs_templates._render.render
    import scs_templates._render.values
    from scs_templates._render.render import prepare_render
    from scs_templates._versions.kubernetes import resolve_version

    calls: list[str] = []

    def counted(text: str, kind_node_images: bool = False) -> Any:
        calls.append(text)
        return resolve_version(text, kind_node_images)

    for module in (scs_templates._render.values, scs_templates._render.render):
        monkeypatch.setattr(module, "resolve_version", counted)
    settings = load_settings(REPO / "examples" / "openstack-all-features.yaml").settings
    assert settings.spec.security.oidc  # the second resolution was the OIDC one
    job = prepare_render(settings)
    assert calls == [settings.spec.kubernetes.version]
    assert job.values["apiServer"]["authentication"]["apiVersion"].startswith(
        "apiserver.config.k8s.io/"
    )
