"""``kubeconfig`` and ``describe`` (issue #39) against the REAL management plane.

The cluster is the in-memory one (tests/support/inmemory.py): the real Cluster API controllers
provision it, write its ``<cluster>-kubeconfig`` Secret and set the conditions ``describe``
shows. Proven: ``kubeconfig --output-file`` writes exactly the Secret's kubeconfig, 0600,
and prints nothing of it; ``describe -o json`` is the tree of the objects the controllers
made (Cluster, DevCluster, KubeadmControlPlane with its Machine, both MachineDeployments
with theirs, each Machine with its DevMachine), all Ready/Available once the cluster is;
the text form lists the same rows.
"""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates._cli.main import main
from scs_templates._core import secrets
from scs_templates._tools.kube import KubeClient
from tests.support import inmemory, settings_from_text

if TYPE_CHECKING:
    from testenv import Plane


_inmemory_provider = inmemory.registered_for_module()


def _labels(node: dict[str, Any], depth: int = 0) -> list[tuple[int, str]]:
    label = node.get("group") or f"{node['kind']}/{node['name']}"
    rows = [(depth, label)]
    for child in node.get("children", []):
        rows += _labels(child, depth + 1)
    return rows


def _ready(node: dict[str, Any]) -> list[tuple[str, str | None]]:
    found = [] if "group" in node else [(node["kind"], (node["ready"] or {}).get("status"))]
    for child in node.get("children", []):
        found += _ready(child)
    return found


def test_kubeconfig_and_describe_of_a_provisioned_cluster(
    plane: Plane, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    namespace = plane.namespace("describe")
    text = inmemory.settings_text(namespace, version="1.36.4")
    settings = settings_from_text(text)
    kube = KubeClient(str(plane.kubeconfig))
    lifecycle.install(
        settings,
        helm=inmemory.plane_helm(plane),
        kube=kube,
        wait=True,
        timeout=inmemory.STEP_TIMEOUT,
        poll_interval=1.0,
    )
    file = tmp_path / "cluster.yaml"
    file.write_text(text)
    management = ["--kubeconfig", str(plane.kubeconfig)]

    target = tmp_path / "workload.kubeconfig"
    try:
        code = main(["kubeconfig", str(file), *management, "--output-file", str(target)])
        out, err = capsys.readouterr()
    finally:
        secrets.forget_all()
    secret = plane.api.get("v1", "Secret", namespace, f"{settings.name}-kubeconfig")
    expected = base64.b64decode(secret["data"]["value"]).decode()
    assert (code, out, err) == (0, "", f"wrote {target}\n")
    assert target.read_text() == expected
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert "client-key-data" in expected or "token" in expected

    assert main(["describe", str(file), *management, "-o", "json"]) == 0
    tree = json.loads(capsys.readouterr().out)
    rows = _labels(tree)
    machines = {
        m["metadata"]["name"]: m for m in plane.api.list(inmemory.CAPI, "Machine", namespace)
    }
    assert len(machines) == 3
    assert rows[0] == (0, f"Cluster/{settings.name}")
    kinds = [label.split("/")[0] for _, label in rows]
    assert kinds.count("Machine") == 3 and kinds.count("DevMachine") == 3
    assert kinds.count("MachineDeployment") == 2 and "KubeadmControlPlane" in kinds
    assert "DevCluster" in kinds and "Workers" in kinds
    assert {label.split("/")[1] for _, label in rows if label.startswith("Machine/")} == set(
        machines
    )
    core = {"Cluster", "KubeadmControlPlane", "MachineDeployment", "Machine"}
    assert all(status == "True" for kind, status in _ready(tree) if kind in core), tree

    assert main(["describe", str(file), *management]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == ["NAME", "READY", "REASON", "MESSAGE"]
    assert [line.lstrip("├└│─ ").split()[0] for line in printed[1:]] == [label for _, label in rows]

    lifecycle.delete(
        settings,
        helm=inmemory.plane_helm(plane),
        kube=kube,
        timeout=inmemory.STEP_TIMEOUT,
        poll_interval=1.0,
    )
