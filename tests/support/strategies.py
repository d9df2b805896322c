"""Hypothesis strategies of valid settings documents (tests/unit/test_settings_model.py's
round trip, tests/unit/test_settings_fastpath.py, tests/unit/test_settings_plain.py,
tests/render/test_fleet.py)."""

from __future__ import annotations

import ipaddress
from typing import Any

from hypothesis import strategies as st

from scs_templates._settings.rules import YAML11_NOT_STRING
from scs_templates._versions.kubernetes import TESTED_PATCHES

dns_label = st.from_regex(r"\A[a-z]([a-z0-9-]{0,6}[a-z0-9])?\Z")
label_value = st.from_regex(r"\A([A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?)?\Z")
machine_type = st.sampled_from(["SCS-2V-4-20s", "SCS-4V-16", "m1.large", "on", "0755"])


@st.composite
def worker_group(draw: st.DrawFn, name: str) -> dict[str, Any]:
    group: dict[str, Any] = {"name": name, "machineType": draw(machine_type)}
    if draw(st.booleans()):
        low = draw(st.integers(0, 5))
        group["autoscaling"] = {"min": low, "max": draw(st.integers(max(low, 1), 20))}
    else:
        group["replicas"] = draw(st.integers(0, 50))
    if draw(st.booleans()):
        group["labels"] = draw(st.dictionaries(dns_label, label_value, max_size=3))
    if draw(st.booleans()):
        group["taints"] = [
            {
                "key": key,
                "value": draw(label_value),
                "effect": draw(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])),
            }
            for key in draw(st.lists(dns_label, max_size=2, unique=True))
        ]
    if draw(st.booleans()):
        group["zone"] = draw(st.sampled_from(["az1", "nova", "yes"]))
    group["rootDiskGB"] = draw(st.sampled_from([0, 20, 100]))
    return group


@st.composite
def settings_documents(draw: st.DrawFn) -> dict[str, Any]:
    template = draw(st.sampled_from(["simple", "multi-md"]))
    names = draw(  # worker group names are refused like cluster names (issue #41)
        st.lists(
            dns_label.filter(lambda n: not YAML11_NOT_STRING.match(n)),
            min_size=1,
            max_size=1 if template == "simple" else 4,
            unique=True,
        )
    )
    node_third = draw(st.integers(0, 95))  # 10.96.0.0/12 is the service network
    spec: dict[str, Any] = {
        "template": template,
        "provider": "openstack",
        "prefix": draw(dns_label),
        "kubernetes": {
            "version": draw(
                st.sampled_from([f"1.{minor}.x" for (_, minor) in TESTED_PATCHES] + ["v1.33.1"])
            )
        },
        "controlPlane": {
            "replicas": draw(st.sampled_from([1, 3, 5])),
            "machineType": draw(machine_type),
            "zones": draw(st.lists(st.sampled_from(["az1", "az2", "az3"]), unique=True)),
        },
        "workers": [draw(worker_group(name)) for name in names],
        "network": {
            "nodeCIDR": str(ipaddress.ip_network(f"10.{node_third}.0.0/20", strict=False)),
            "mtu": draw(st.sampled_from([0, 1400, 1500])),
        },
        "etcd": {"unsafeFS": draw(st.booleans()), "quotaGiB": draw(st.integers(1, 8))},
        "services": {"certManager": {"enabled": draw(st.booleans())}},
    }
    return {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        # names YAML 1.1 reads as booleans/null/numbers are refused (rules.YAML11_NOT_STRING)
        "metadata": {"name": draw(dns_label.filter(lambda n: not YAML11_NOT_STRING.match(n)))},
        "spec": spec,
    }
