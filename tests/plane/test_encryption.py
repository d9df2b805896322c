"""Encryption at rest: the key Secret on the management cluster and its rotation.

Against the REAL management plane (testenv/: kube-apiserver and the Cluster API
controllers); the docker example is installed on the test-only provider ``inmemory``
(tests/support/inmemory.py) whose machines never finish starting (nothing here needs a running
cluster, and a cluster that stays Provisioning costs the plane nothing). What it proves:
the Secret is created once with a fresh 32-byte key, never changed by a later install,
never reaches helm values or the release, and the rotation steps rewrite it in the
documented order and request a control-plane rollout that the real KubeadmControlPlane
webhook admits. That the API server accepts the configuration is proven with a real
kube-apiserver started with it (tests/plane/test_plane_apiserver_files.py).
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates._cli.main import main
from scs_templates._core.errors import InputError
from scs_templates._lifecycle import key_rotation
from scs_templates._render import encryption
from scs_templates._settings.model import ClusterSettings
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient, ObjectRef
from tests.support import REPO, helm_tool, inmemory, settings_from_text

if TYPE_CHECKING:
    from testenv import Plane


DOCKER = (REPO / "examples" / "docker-dev.yaml").read_text()
KCP_API = "controlplane.cluster.x-k8s.io/v1beta2"


class Mgmt:
    """The real plane and this test's namespace (the settings live there)."""

    def __init__(self, plane: Plane, namespace: str) -> None:
        self.plane = plane
        self.namespace = namespace

    def get(self, api_version: str, kind: str, name: str) -> dict[str, Any] | None:
        return self.plane.api.get(api_version, kind, self.namespace, name)

    def text(self, name: str = "dev") -> str:
        return inmemory.as_inmemory(DOCKER.replace("name: dev", f"name: {name}"), self.namespace)


@pytest.fixture(scope="module", autouse=True)
def _inmemory_provider() -> Iterator[None]:
    with inmemory.registered(vm_startup=inmemory.NEVER):
        yield


@pytest.fixture
def mgmt(plane: Plane) -> Mgmt:
    return Mgmt(plane, plane.namespace("encryption"))


@pytest.fixture
def kubeconfig(plane: Plane) -> str:
    return str(plane.kubeconfig)


@pytest.fixture
def kube(kubeconfig: str) -> Iterator[KubeClient]:
    with KubeClient(kubeconfig) as client:
        yield client


def settings(mgmt: Mgmt, name: str = "dev") -> ClusterSettings:
    return settings_from_text(mgmt.text(name))


def stored(mgmt: Mgmt) -> dict[str, object]:
    secret = mgmt.get("v1", "Secret", "capi-dev-encryption")
    assert secret is not None
    text = base64.b64decode(secret["data"][encryption.SECRET_KEY]).decode()
    document: dict[str, object] = json.loads(text)
    return document


def keys(mgmt: Mgmt) -> list[dict[str, str]]:
    document = stored(mgmt)
    (resource,) = document["resources"]  # type: ignore[misc]
    found: list[dict[str, str]] = resource["providers"][0]["secretbox"]["keys"]
    assert resource["providers"][1] == {"identity": {}}
    return found


def test_ensure_secret_creates_once_with_a_fresh_key(mgmt: Mgmt, kube: KubeClient) -> None:
    assert encryption.ensure_secret(kube, settings(mgmt)) is True
    document = stored(mgmt)
    assert document["apiVersion"] == "apiserver.config.k8s.io/v1"
    assert document["kind"] == "EncryptionConfiguration"
    (key,) = keys(mgmt)
    assert len(base64.b64decode(key["secret"])) == 32
    secret = mgmt.get("v1", "Secret", "capi-dev-encryption")
    assert secret is not None
    assert secret["metadata"]["labels"] == {
        "scs.community/cluster": "dev",
        "clusterctl.cluster.x-k8s.io/move": "true",
    }
    assert encryption.ensure_secret(kube, settings(mgmt)) is False
    assert keys(mgmt) == [key], "an existing key must never be replaced"


def test_two_clusters_get_different_keys(mgmt: Mgmt, kube: KubeClient) -> None:
    encryption.ensure_secret(kube, settings(mgmt))
    encryption.ensure_secret(kube, settings(mgmt, "dev2"))
    first = mgmt.get("v1", "Secret", "capi-dev-encryption")
    second = mgmt.get("v1", "Secret", "capi-dev2-encryption")
    assert first is not None and second is not None
    assert first["data"] != second["data"]


def test_rotation_steps_in_order(mgmt: Mgmt, kube: KubeClient, tmp_path: Path) -> None:
    """The rollout request lands on the real KubeadmControlPlane of an installed cluster."""
    helm = Helm(helm_tool(), kubeconfig=str(mgmt.plane.kubeconfig), home=tmp_path / "helm")
    lifecycle.install(settings(mgmt), helm=helm)
    kcp = ObjectRef(KCP_API, "KubeadmControlPlane", mgmt.namespace, "capi-dev-control-plane")
    (original,) = keys(mgmt)
    with pytest.raises(InputError, match="needs two keys"):
        key_rotation.rotate(kube, settings(mgmt), "promote")

    moment = datetime.datetime(2026, 12, 1, 8, 30, tzinfo=datetime.UTC)
    result = key_rotation.rotate(kube, settings(mgmt), "add", now=moment)
    old, new = keys(mgmt)
    assert old == original and new["name"] == "key-20261201T083000Z"
    assert result.keys == [original["name"], new["name"]]
    obj = mgmt.get(kcp.api_version, kcp.kind, kcp.name)
    assert obj is not None and obj["spec"]["rollout"]["after"] == "2026-12-01T08:30:00Z"
    assert obj["spec"]["replicas"] == 1, "a merge patch keeps the rest"
    with pytest.raises(InputError, match="finish the running rotation"):
        key_rotation.rotate(kube, settings(mgmt), "add")

    key_rotation.rotate(kube, settings(mgmt), "promote", now=moment)
    assert keys(mgmt) == [new, original]
    key_rotation.rotate(kube, settings(mgmt), "remove", now=moment)
    assert keys(mgmt) == [new]


def test_rotate_without_a_secret_is_an_input_error(mgmt: Mgmt, kube: KubeClient) -> None:
    with pytest.raises(
        InputError, match=f"no encryption Secret {mgmt.namespace}/capi-dev-encryption"
    ):
        key_rotation.rotate(kube, settings(mgmt), "add")


def test_install_creates_the_key_outside_helm(mgmt: Mgmt, kubeconfig: str, tmp_path: Path) -> None:
    helm = Helm(helm_tool(), kubeconfig=kubeconfig, home=tmp_path / "helm")
    lifecycle.install(settings(mgmt), helm=helm)
    (key,) = keys(mgmt)
    values = json.dumps(helm.get_values("dev", namespace=mgmt.namespace))
    manifest = helm.get_manifest("dev", namespace=mgmt.namespace)
    assert key["secret"] not in values and key["secret"] not in manifest
    assert '"secretName": "capi-dev-encryption"' in values
    lifecycle.install(settings(mgmt), helm=helm)
    assert keys(mgmt) == [key]


def test_cli_status_prints_names_never_keys(
    mgmt: Mgmt,
    kube: KubeClient,
    kubeconfig: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "dev.yaml"
    path.write_text(mgmt.text())
    encryption.ensure_secret(kube, settings(mgmt))
    (key,) = keys(mgmt)
    assert main(["encryption-key", "status", str(path), "--kubeconfig", kubeconfig]) == 0
    out = capsys.readouterr()
    assert key["name"] in out.out and key["secret"] not in out.out + out.err


def test_cli_create_makes_the_secret_once_and_prints_no_key(
    mgmt: Mgmt, kubeconfig: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GitOps users have no `install` to create the key: `encryption-key create` does."""
    path = tmp_path / "dev.yaml"
    path.write_text(mgmt.text())
    assert main(["encryption-key", "create", str(path), "--kubeconfig", kubeconfig]) == 0
    (key,) = keys(mgmt)
    first = capsys.readouterr()
    ns = mgmt.namespace
    assert f"created the encryption key Secret {ns}/capi-dev-encryption" in first.out
    assert main(["encryption-key", "create", str(path), "--kubeconfig", kubeconfig]) == 0
    assert keys(mgmt) == [key]
    second = capsys.readouterr()
    assert "exists; kept" in second.out
    assert key["secret"] not in first.out + first.err + second.out + second.err
