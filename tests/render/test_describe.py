"""``describe`` and ``kubeconfig`` (issue #39), offline: the tree built from recorded
Cluster API objects, its text and data forms, and both commands against a stand-in API
client (the real management plane: tests/plane/test_plane_describe.py).
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from scs_templates._cli.main import main
from scs_templates._core import secrets
from scs_templates._tools.kube.describe import Node, build_tree, ready_of, tree_text
from tests.support import REPO

DOCKER = REPO / "examples" / "docker-dev.yaml"
CAPI = "cluster.x-k8s.io/v1beta2"


def condition(type_: str, status: str, reason: str = "", message: str = "") -> dict[str, str]:
    return {"type": type_, "status": status, "reason": reason, "message": message}


def obj(
    api_version: str,
    kind: str,
    name: str,
    *,
    labels: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    conditions: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
        "spec": spec or {},
        "status": {"conditions": conditions or []},
    }


def ref(group: str, kind: str, name: str) -> dict[str, str]:
    return {"apiGroup": group, "kind": kind, "name": name}


INFRA = "infrastructure.cluster.x-k8s.io"
CLUSTER_LABEL = {"cluster.x-k8s.io/cluster-name": "dev"}


def recorded() -> list[dict[str, Any]]:
    """The objects of a two-worker docker cluster, one worker machine not ready yet
    (shaped like the v1beta2 objects the plane's controllers write)."""
    machine_infra = ref(INFRA, "DockerMachine", "")
    return [
        obj(
            CAPI,
            "Cluster",
            "dev",
            spec={
                "infrastructureRef": ref(INFRA, "DockerCluster", "capi-dev"),
                "controlPlaneRef": ref(
                    "controlplane.cluster.x-k8s.io", "KubeadmControlPlane", "capi-dev-cp"
                ),
            },
            conditions=[
                condition("Available", "False", "NotAvailable", "no workers"),
                condition("InfrastructureReady", "True", "Ready"),
            ],
        ),
        {
            **obj(f"{INFRA}/v1beta1", "DockerCluster", "capi-dev"),
            "status": {
                "conditions": [condition("Ready", "False", "old-shape")],
                "v1beta2": {"conditions": [condition("Ready", "True", "Ready")]},
            },
        },
        obj(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlane",
            "capi-dev-cp",
            conditions=[condition("Available", "True", "Available")],
        ),
        obj(
            CAPI,
            "MachineDeployment",
            "capi-dev-md-1",
            labels=CLUSTER_LABEL,
            conditions=[condition("Available", "False", "WaitingForMachines")],
        ),
        obj(
            CAPI,
            "MachineDeployment",
            "capi-dev-md-0",
            labels=CLUSTER_LABEL,
            conditions=[condition("Available", "True", "Available")],
        ),
        obj(
            CAPI,
            "Machine",
            "capi-dev-cp-abcde",
            labels={**CLUSTER_LABEL, "cluster.x-k8s.io/control-plane": ""},
            spec={"infrastructureRef": {**machine_infra, "name": "capi-dev-cp-abcde"}},
            conditions=[condition("Ready", "True", "Ready")],
        ),
        obj(
            CAPI,
            "Machine",
            "capi-dev-md-1-xyz",
            labels={**CLUSTER_LABEL, "cluster.x-k8s.io/deployment-name": "capi-dev-md-1"},
            spec={"infrastructureRef": {**machine_infra, "name": "capi-dev-md-1-xyz"}},
            conditions=[condition("Ready", "False", "NotReady", "Waiting for\na Node")],
        ),
        obj(
            CAPI,
            "Machine",
            "capi-dev-md-0-abc",
            labels={**CLUSTER_LABEL, "cluster.x-k8s.io/deployment-name": "capi-dev-md-0"},
            spec={"infrastructureRef": {**machine_infra, "name": "capi-dev-md-0-abc"}},
            conditions=[condition("Ready", "True", "Ready")],
        ),
        obj(f"{INFRA}/v1beta2", "DockerMachine", "capi-dev-cp-abcde"),
        obj(f"{INFRA}/v1beta2", "DockerMachine", "capi-dev-md-0-abc"),
        obj(
            f"{INFRA}/v1beta2",
            "DockerMachine",
            "capi-dev-md-1-xyz",
            conditions=[condition("Ready", "Unknown", "Provisioning")],
        ),
    ]


EXPECTED_TEXT = """\
NAME                                     READY    REASON              MESSAGE
Cluster/dev                              False    NotAvailable        no workers
├─DockerCluster/capi-dev                 True
├─KubeadmControlPlane/capi-dev-cp        True
│ └─Machine/capi-dev-cp-abcde            True
│   └─DockerMachine/capi-dev-cp-abcde
└─Workers
  ├─MachineDeployment/capi-dev-md-0      True
  │ └─Machine/capi-dev-md-0-abc          True
  │   └─DockerMachine/capi-dev-md-0-abc
  └─MachineDeployment/capi-dev-md-1      False    WaitingForMachines
    └─Machine/capi-dev-md-1-xyz          False    NotReady            Waiting for a Node
      └─DockerMachine/capi-dev-md-1-xyz  Unknown  Provisioning
"""


def test_the_tree_of_recorded_objects() -> None:
    assert tree_text(build_tree(recorded())) == EXPECTED_TEXT


def test_the_tree_does_not_depend_on_the_order_of_the_objects() -> None:
    assert build_tree(list(reversed(recorded()))) == build_tree(recorded())


def test_a_v1beta1_objects_v1beta2_conditions_win() -> None:
    ready = ready_of(recorded()[1])
    assert ready is not None and (ready.status, ready.reason) == ("True", "Ready")


def test_colour_marks_only_the_ready_column() -> None:
    coloured = tree_text(build_tree(recorded()), colour=True)
    assert "\x1b[32mTrue\x1b[0m" in coloured and "\x1b[31mFalse\x1b[0m" in coloured
    assert "\x1b[33mUnknown\x1b[0m" in coloured
    import re

    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == EXPECTED_TEXT


def test_a_machine_of_no_deployment_is_listed_apart() -> None:
    orphan = obj(CAPI, "Machine", "lonely", labels=CLUSTER_LABEL)
    tree = build_tree([*recorded(), orphan])
    assert tree.children[-1] == Node("", "Other machines", None, (Node("Machine", "lonely"),), True)


def test_the_data_form_is_the_tree() -> None:
    data = build_tree(recorded()).to_dict()
    assert data["kind"] == "Cluster" and data["ready"]["reason"] == "NotAvailable"
    workers = data["children"][2]
    assert workers["group"] == "Workers"
    assert [d["name"] for d in workers["children"]] == ["capi-dev-md-0", "capi-dev-md-1"]


def test_no_cluster_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="expected one Cluster"):
        build_tree(recorded()[1:])


# --------------------------------------------------------------------------- the commands

KUBECONFIG_SECRET = """\
apiVersion: v1
kind: Config
clusters:
- cluster: {server: 'https://10.0.0.1:6443', certificate-authority-data: Q0EK}
  name: dev
users:
- name: dev-admin
  user: {client-certificate-data: Q0VSVC1zZWNyZXQtY2VydA==, client-key-data: S0VZLXRvcC1zZWNyZXQ=}
contexts:
- context: {cluster: dev, user: dev-admin}
  name: dev-admin@dev
current-context: dev-admin@dev
"""


class FakeKube:
    """Stands in for KubeClient: the recorded objects and the kubeconfig Secret."""

    kubeconfig: str | None = KUBECONFIG_SECRET

    def __init__(self, kubeconfig: str | None = None, context: str | None = None) -> None:
        self.args = (kubeconfig, context)

    def __enter__(self) -> FakeKube:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def cluster_kubeconfig(self, namespace: str, cluster: str) -> str | None:
        assert (namespace, cluster) == ("default", "dev")
        return self.kubeconfig

    def get(self, ref: Any) -> dict[str, Any] | None:
        return next(
            (o for o in recorded() if (o["kind"], o["metadata"]["name"]) == (ref.kind, ref.name)),
            None,
        )

    def list(self, api_version: str, kind: str, namespace: str, **_: str) -> list[Any]:
        return [o for o in recorded() if o["kind"] == kind]

    def group_version(self, group: str) -> str:
        return f"{group}/v1beta2"


@pytest.fixture
def fake_kube(monkeypatch: pytest.MonkeyPatch) -> type[FakeKube]:
    import scs_templates._cli.run.inspect

    monkeypatch.setattr(scs_templates._cli.run.inspect, "KubeClient", FakeKube)
    yield FakeKube
    secrets.forget_all()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_kubeconfig_prints_or_writes_0600(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fake_kube: type[FakeKube]
) -> None:
    assert run(capsys, "kubeconfig", str(DOCKER)) == (0, KUBECONFIG_SECRET, "")
    target = tmp_path / "dev.kubeconfig"
    code, out, err = run(capsys, "kubeconfig", str(DOCKER), "--output-file", str(target))
    assert (code, out, err) == (0, "", f"wrote {target}\n")
    assert target.read_text() == KUBECONFIG_SECRET
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert "S0VZLXRvcC1zZWNyZXQ=" in secrets.registered()  # never in a message from here on


def test_kubeconfig_never_shows_the_secret_when_writing_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fake_kube: type[FakeKube]
) -> None:
    code, out, err = run(
        capsys, "kubeconfig", str(DOCKER), "--output-file", str(tmp_path / "no" / "such" / "f")
    )
    assert code == 2 and out == ""
    assert "S0VZ" not in err and "Q0VSVC1z" not in err


def test_kubeconfig_of_a_cluster_without_the_secret_is_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fake_kube: type[FakeKube]
) -> None:
    monkeypatch.setattr(FakeKube, "kubeconfig", None)
    code, out, err = run(capsys, "kubeconfig", str(DOCKER))
    assert (code, out) == (1, "")
    assert "Secret default/dev-kubeconfig not found" in err


def test_describe_prints_the_tree_or_its_data(
    capsys: pytest.CaptureFixture[str], fake_kube: type[FakeKube]
) -> None:
    assert run(capsys, "describe", str(DOCKER)) == (0, EXPECTED_TEXT, "")
    code, out, _ = run(capsys, "describe", str(DOCKER), "-o", "json")
    assert code == 0 and json.loads(out) == build_tree(recorded()).to_dict()
    code, out, _ = run(capsys, "describe", str(DOCKER), "-o", "yaml")
    from ruamel.yaml import YAML

    assert code == 0 and YAML(typ="safe").load(out) == build_tree(recorded()).to_dict()
