"""The snapshot scenarios: every template x provider x scenario of settings
(tests/render/test_snapshots.py renders each; tests/unit/test_settings_plain.py,
tests/plane/test_plane_admission.py and tests/plane/test_plane_apiserver_files.py read them)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from scs_templates import api
from scs_templates._settings.model import TEMPLATES
from tests import support
from tests.support import SHIPPED_PROVIDERS

Spec = dict[str, Any]


def _workers(spec: Spec) -> list[dict[str, Any]]:
    workers: list[dict[str, Any]] = spec["workers"]
    return workers


def minimal(spec: Spec) -> None:
    del spec


def production(spec: Spec) -> None:
    spec["prefix"] = "scs"
    spec["controlPlane"].update(replicas=3, zones=["az1", "az2", "az3"], rootDiskGB=50)
    for group in _workers(spec):
        group["rootDiskGB"] = 100
    spec["services"] = {"certManager": {"enabled": True}, "flux": {"enabled": True}}
    spec["security"] = {"podSecurity": {"enforce": "restricted"}, "certificateRolloutDays": 30}


def autoscaling(spec: Spec) -> None:
    group = _workers(spec)[0]
    group.pop("replicas", None)
    group["autoscaling"] = {"min": 1, "max": 5}


def taints_labels(spec: Spec) -> None:
    group = _workers(spec)[-1]
    group["labels"] = {"scs.community/accelerator": "gpu", "node-role.kubernetes.io/worker": ""}
    group["taints"] = [
        {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
        {"key": "dedicated", "effect": "NoExecute"},
    ]


def api_cidrs(spec: Spec) -> None:
    spec["network"] = {
        "apiAccess": {
            "mode": "cidrs",
            "cidrs": ["203.0.113.0/24", "198.51.100.17/32"],
            "managementCIDRs": ["192.0.2.10/32"],
        }
    }


def api_internal(spec: Spec) -> None:
    spec["network"] = {"apiAccess": {"mode": "internal", "managementCIDRs": ["192.0.2.10/32"]}}


def registry_mirrors(spec: Spec) -> None:
    spec["registryMirrors"] = [
        {
            "registry": "docker.io",
            "endpoints": ["https://harbor.example.com/v2/dockerhub"],
            "overridePath": True,
        },
        {"registry": "ghcr.io", "endpoints": ["https://mirror.example.com"], "skipVerify": True},
    ]


def unsafe_fs_etcd(spec: Spec) -> None:
    spec["controlPlane"]["replicas"] = 3
    spec["etcd"] = {
        "unsafeFS": True,
        "quotaGiB": 4,
        "snapshotCount": 10000,
        "autoCompactionRetention": "4h",
        "defrag": {"schedule": "*-*-* 03:15:00"},
        "backupRetention": 7,
    }


def calico_services_off(spec: Spec) -> None:
    spec["services"] = {
        "cni": {"type": "calico"},
        "cinderCSI": {"enabled": False},
        "metricsServer": {"enabled": False},
        "ingressNginx": {"enabled": False},
    }


def network_k8s_135(spec: Spec) -> None:
    spec["kubernetes"] = {"version": "1.35.x"}
    spec["network"] = {
        "podCIDR": "172.16.0.0/16",
        "serviceCIDR": "10.128.0.0/12",
        "nodeCIDR": "10.20.0.0/20",
        "mtu": 1450,
        "dnsServers": ["9.9.9.9"],
    }


def rollout_tuning(spec: Spec) -> None:
    """A GPU-like last group without spare capacity; slow drains; stricter health checks."""
    spec["controlPlane"].update(
        replicas=3,
        rollout={"maxSurge": 0, "deletion": {"nodeDrainTimeoutSeconds": 600}},
        healthCheck={
            "nodeStartupTimeoutSeconds": 1800,
            "unhealthyTimeoutSeconds": 120,
            "maxUnhealthyPercent": 34,
        },
    )
    group = _workers(spec)[-1]
    group["rollout"] = {
        "maxSurge": 0,
        "maxUnavailable": 1,
        "deletion": {
            "nodeDrainTimeoutSeconds": 900,
            "nodeVolumeDetachTimeoutSeconds": 300,
            "nodeDeletionTimeoutSeconds": 0,
        },
    }
    group["healthCheck"] = {"nodeStartupTimeoutSeconds": 0, "maxUnhealthyPercent": 100}


def audit_oidc(spec: Spec) -> None:
    """Two OIDC issuers (one with its own CA, extra audiences, no groups) and the user's own
    audit policy with shorter retention."""
    spec["security"] = {
        "oidc": [
            {"issuerURL": "https://keycloak.example.com/realms/k8s", "clientID": "kubernetes"},
            {
                "issuerURL": "https://dex.example.org",
                "clientID": "k8s",
                "extraAudiences": ["kubectl"],
                "usernameClaim": "email",
                "usernamePrefix": "",
                "groupsClaim": None,
                "certificateAuthority": support.CA_PEM,
            },
        ],
        "audit": {
            "maxAgeDays": 7,
            "maxBackups": 3,
            "maxSizeMB": 50,
            "policy": {
                "apiVersion": "audit.k8s.io/v1",
                "kind": "Policy",
                "rules": [
                    {
                        "level": "RequestResponse",
                        "resources": [{"group": "rbac.authorization.k8s.io"}],
                    },
                    {"level": "Metadata"},
                ],
            },
        },
    }


def proxy_cas_registries(spec: Spec) -> None:
    """A corporate network: proxy, its CA in the trust store, a private registry mirror with
    its own CA and credentials from a Secret."""
    spec["network"] = {
        "proxy": {
            "httpProxy": "http://proxy.corp.example:3128",
            "httpsProxy": "http://proxy.corp.example:3128",
            "noProxy": [".corp.example", "10.0.0.0/8"],
        }
    }
    spec["security"] = {"trustedCAs": [support.CA_PEM]}
    spec["registryMirrors"] = [
        {
            "registry": "docker.io",
            "endpoints": ["https://harbor.corp.example/v2/dockerhub"],
            "overridePath": True,
            "caCertificate": support.CA_PEM,
            "credentialsSecret": "harbor-pull",
        },
        {"registry": "quay.io", "endpoints": ["https://harbor.corp.example"]},
    ]


def openstack_network_volumes(spec: Spec) -> None:
    """An existing network, an internal-only API, extra node rules, a storage network on the
    last group, typed root volumes and etcd on its own volume (Docker ignores all but the
    names; its cluster gets no ``openstack`` section, which is refused there)."""
    spec["network"] = {"nodeCIDR": "10.30.0.0/24"}
    if spec["provider"] == "openstack":
        _openstack_network(spec)
    spec["controlPlane"].update(rootDiskGB=50, rootDiskType="ssd")
    spec["etcd"] = {"volume": {"sizeGiB": 20, "type": "ssd-high-iops"}}
    group = _workers(spec)[-1]
    group.update(rootDiskGB=100, rootDiskType="standard", extraNetworks=["storage-net"])


def _openstack_network(spec: Spec) -> None:
    """The scenario's OpenStack section: an existing network, no API floating IP, node
    security-group rules."""
    spec["openstack"] = {
        "existingNetwork": {
            "network": "project-net",
            "subnet": "9E1B3C2A-0D4F-4B5A-8C6D-7E8F9A0B1C2D",
        },
        "apiFloatingIP": False,
        "nodeSecurityGroupRules": [
            {
                "name": "nodeports-office",
                "description": "NodePorts from the office",
                "protocol": "tcp",
                "portRangeMin": 30000,
                "portRangeMax": 32767,
                "remoteIPPrefix": "198.51.100.0/24",
            },
            {"name": "icmp", "protocol": "icmp"},
        ],
    }


def all_features(spec: Spec) -> None:
    """Every operator feature of docs/cluster-features.md in one cluster (issue #16's "a
    settings file using every feature"), on both providers: rollout, drain and health
    tuning, audit with the user's policy, two OIDC issuers, encryption at rest of Secrets and
    ConfigMaps, proxy, trusted CAs, registry mirrors with CA and credentials, the OpenStack
    network choices, typed root volumes, etcd on its own volume and its snapshots uploaded
    to an S3 bucket."""
    rollout_tuning(spec)
    audit_oidc(spec)
    security = spec["security"]
    openstack_network_volumes(spec)
    spec["etcd"]["backupS3"] = {
        "endpoint": "https://objects.example.com",
        "bucket": "etcd-backups",
        "credentialsSecret": "etcd-backup-s3",
    }
    network = spec["network"]
    proxy_cas_registries(spec)
    spec["network"] = {**network, **spec["network"]}
    spec["security"] = {
        **security,
        **spec["security"],
        "encryptionAtRest": {"resources": ["secrets", "configmaps"]},
    }


SCENARIOS: dict[str, Callable[[Spec], None]] = {
    "minimal": minimal,
    "production": production,
    "autoscaling": autoscaling,
    "taints-labels": taints_labels,
    "api-cidrs": api_cidrs,
    "api-internal": api_internal,
    "registry-mirrors": registry_mirrors,
    "unsafe-fs-etcd": unsafe_fs_etcd,
    "calico-services-off": calico_services_off,
    "network-k8s-1.35": network_k8s_135,
    "rollout-tuning": rollout_tuning,
    "audit-oidc": audit_oidc,
    "proxy-cas-registries": proxy_cas_registries,
    "openstack-network-volumes": openstack_network_volumes,
    "all-features": all_features,
}


def settings_for(template: str, provider: str, scenario: str) -> api.ClusterSettings:
    """The scenario's settings on one template and provider."""
    group: dict[str, Any] = {"name": "md-0", "replicas": 2}
    workers = [group] if template == "simple" else [group, {"name": "md-1", "replicas": 1}]
    spec: Spec = {
        "template": template,
        "provider": provider,
        "kubernetes": {"version": "1.34.x"},
        "controlPlane": {"replicas": 1},
        "workers": copy.deepcopy(workers),
    }
    SCENARIOS[scenario](spec)
    if provider == "openstack":
        spec["controlPlane"]["machineType"] = "SCS-2V-4"
        for worker in _workers(spec):
            worker["machineType"] = "SCS-4V-8"
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "snap", "namespace": "snapshots"},
        "spec": spec,
    }
    return api.validate_data(data, file=f"{template}-{provider}-{scenario}").settings


CASES = [
    pytest.param(t, p, s, id=f"{t}-{p}-{s}")
    for t in TEMPLATES
    for p in SHIPPED_PROVIDERS
    for s in SCENARIOS
]
