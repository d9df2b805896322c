"""Generated cluster settings: a mixed fleet (templates, providers, namespaces, versions).

Shared by the benchmarks and by ``tests/render/test_fleet.py``. Deterministic: cluster ``i`` is
always the same, so a fleet of 10 is the first 10 clusters of a fleet of 100.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NAMESPACES = ("default", "team-a", "team-b")
VERSIONS = ("1.33.x", "1.34.x")


def base_settings(provider: str) -> dict[str, Any]:
    """A complete settings document of ``provider`` (the production-like shape)."""
    if provider == "docker":
        return {
            "apiVersion": "scs-templates.scs.community/v1alpha1",
            "kind": "ClusterSettings",
            "metadata": {"name": "dev"},
            "spec": {
                "template": "multi-md",
                "provider": "docker",
                "kubernetes": {"version": "1.34.x"},
                "controlPlane": {"replicas": 1},
                "workers": [
                    {"name": "md-0", "replicas": 1},
                    {"name": "md-1", "replicas": 2, "labels": {"tier": "batch"}},
                ],
                "network": {"podCIDR": "192.168.0.0/16", "serviceCIDR": "10.128.0.0/12"},
                "services": {"ingressNginx": {"enabled": False}},
            },
        }
    return {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "prod1", "namespace": "team-a"},
        "spec": {
            "template": "multi-md",
            "provider": "openstack",
            "prefix": "scs",
            "kubernetes": {"version": "1.34.x"},
            "controlPlane": {
                "replicas": 3,
                "machineType": "SCS-4V-8",
                "zones": ["az1", "az2", "az3"],
                "rootDiskGB": 50,
            },
            "workers": [
                {
                    "name": "general",
                    "replicas": 3,
                    "machineType": "SCS-4V-16",
                    "zone": "az1",
                    "rootDiskGB": 100,
                    "labels": {"node-role.kubernetes.io/worker": ""},
                },
                {
                    "name": "burst",
                    "autoscaling": {"min": 1, "max": 10},
                    "machineType": "SCS-8V-32",
                    "zone": "az2",
                    "rootDiskGB": 100,
                },
                {
                    "name": "gpu",
                    "replicas": 1,
                    "machineType": "SCS-16V-64-1g",
                    "zone": "az3",
                    "rootDiskGB": 200,
                    "image": "ubuntu-gpu-golden-image",  # pinned: does not follow upgrades
                    "labels": {"scs.community/accelerator": "gpu"},
                    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                },
            ],
            "network": {
                "nodeCIDR": "10.20.0.0/20",
                "mtu": 1450,
                "dnsServers": ["9.9.9.9", "149.112.112.112"],
                "apiAccess": {
                    "mode": "cidrs",
                    "cidrs": ["203.0.113.0/24", "198.51.100.17/32"],
                    "managementCIDRs": ["192.0.2.10/32"],
                },
            },
            "services": {
                "cni": {"type": "cilium"},
                "ingressNginx": {"enabled": True, "proxyProtocol": True},
                "certManager": {"enabled": True},
                "flux": {"enabled": True},
            },
            "etcd": {"unsafeFS": True, "quotaGiB": 4, "backupRetention": 7},
            "security": {"podSecurity": {"enforce": "restricted"}},
            "registryMirrors": [
                {
                    "registry": "docker.io",
                    "endpoints": ["https://harbor.example.com/v2/dockerhub"],
                    "overridePath": True,
                }
            ],
            "openstack": {
                "cloud": "prod",
                "sshKeyName": "scs-keypair",
                "serverMetadata": {"workers": {"team": "platform"}},
            },
        },
    }


def cluster_settings(index: int) -> dict[str, Any]:
    """Cluster ``index`` of the benchmark fleet.

    Mix: 3 of 4 on OpenStack, 1 of 4 on Docker; templates ``simple`` and ``multi-md``; three
    namespaces; Kubernetes 1.33 and 1.34; 1-3 worker groups with varying sizes and labels.
    """
    provider = "docker" if index % 4 == 3 else "openstack"
    data = base_settings(provider)
    spec = data["spec"]
    data["metadata"] = {"name": f"c{index:03d}", "namespace": NAMESPACES[index % len(NAMESPACES)]}
    spec["kubernetes"]["version"] = VERSIONS[(index // 2) % len(VERSIONS)]
    if index % 5 == 0:
        spec["template"] = "simple"
        spec["workers"] = spec["workers"][:1]
    else:
        spec["workers"] = spec["workers"][: 1 + index % len(spec["workers"])]
    for group in spec["workers"]:
        if "replicas" in group:
            group["replicas"] = 1 + index % 7
        group.setdefault("labels", {})["fleet.example.com/index"] = str(index)
    if provider == "openstack" and index % 3 == 0:
        spec["controlPlane"]["replicas"] = 1
        spec["controlPlane"]["zones"] = []
        spec["network"]["apiAccess"] = {"mode": "open"}
    return data


def fleet_settings(count: int) -> list[dict[str, Any]]:
    """The first ``count`` clusters of the benchmark fleet."""
    return [cluster_settings(i) for i in range(count)]


def write_fleet(directory: Path, count: int) -> list[Path]:
    """Write the fleet as settings files (JSON, which is YAML) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for data in fleet_settings(count):
        path = directory / f"{data['metadata']['name']}.yaml"
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def variant(data: dict[str, Any]) -> dict[str, Any]:
    """A deep copy to mutate."""
    return copy.deepcopy(data)
