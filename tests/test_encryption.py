"""Encryption at rest: the key Secret on the management cluster and its rotation.

Against the FAKE Kubernetes API (tests/fakekube, a test double: no controllers run). What it
proves: the Secret is created once with a fresh 32-byte key, never changed by a later
install, never reaches helm values or the release, and the rotation steps rewrite it in
the documented order and request a control-plane rollout. That the API server accepts the
configuration is proven with the real kube-apiserver where the testenv is available.
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from scs_templates import encryption, lifecycle
from scs_templates.cli.main import main
from scs_templates.errors import InputError
from scs_templates.helm import Helm
from scs_templates.kube import KubeClient, ObjectRef
from scs_templates.settings import parse_settings_text
from scs_templates.settings.model import ClusterSettings
from tests.fakekube import FakeKubeAPI
from tests.fakekube.helpers import helm_tool
from tests.support import REPO

pytestmark = [
    pytest.mark.fakekube,
    pytest.mark.filterwarnings("ignore:HTTPResponse.getheaders:DeprecationWarning"),
]

DOCKER = (REPO / "examples" / "docker-dev.yaml").read_text()
KCP = ObjectRef(
    "controlplane.cluster.x-k8s.io/v1beta2",
    "KubeadmControlPlane",
    "default",
    "capi-dev-control-plane",
)


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeKubeAPI]:
    """The fake API, its kubeconfig at tmp_path/kubeconfig (context "fake")."""
    with FakeKubeAPI() as api:
        api.write_kubeconfig(tmp_path / "kubeconfig", contexts=("fake",))
        yield api


@pytest.fixture
def kubeconfig(fake: FakeKubeAPI, tmp_path: Path) -> str:
    del fake
    return str(tmp_path / "kubeconfig")


@pytest.fixture
def kube(kubeconfig: str) -> Iterator[KubeClient]:
    with KubeClient(kubeconfig) as client:
        yield client


def settings() -> ClusterSettings:
    return parse_settings_text(DOCKER).settings


def stored(fake: FakeKubeAPI) -> dict[str, object]:
    secret = fake.get("Secret", "default", "capi-dev-encryption")
    assert secret is not None
    text = base64.b64decode(secret["data"][encryption.SECRET_KEY]).decode()
    document: dict[str, object] = json.loads(text)
    return document


def keys(fake: FakeKubeAPI) -> list[dict[str, str]]:
    document = stored(fake)
    (resource,) = document["resources"]  # type: ignore[misc]
    found: list[dict[str, str]] = resource["providers"][0]["secretbox"]["keys"]
    assert resource["providers"][1] == {"identity": {}}
    return found


def test_ensure_secret_creates_once_with_a_fresh_key(fake: FakeKubeAPI, kube: KubeClient) -> None:
    assert encryption.ensure_secret(kube, settings()) is True
    document = stored(fake)
    assert document["apiVersion"] == "apiserver.config.k8s.io/v1"
    assert document["kind"] == "EncryptionConfiguration"
    (key,) = keys(fake)
    assert len(base64.b64decode(key["secret"])) == 32
    secret = fake.get("Secret", "default", "capi-dev-encryption")
    assert secret is not None
    assert secret["metadata"]["labels"] == {
        "scs.community/cluster": "dev",
        "clusterctl.cluster.x-k8s.io/move": "true",
    }
    assert encryption.ensure_secret(kube, settings()) is False
    assert keys(fake) == [key], "an existing key must never be replaced"


def test_two_clusters_get_different_keys(fake: FakeKubeAPI, kube: KubeClient) -> None:
    other = parse_settings_text(DOCKER.replace("name: dev", "name: dev2")).settings
    encryption.ensure_secret(kube, settings())
    encryption.ensure_secret(kube, other)
    first = fake.get("Secret", "default", "capi-dev-encryption")
    second = fake.get("Secret", "default", "capi-dev2-encryption")
    assert first is not None and second is not None
    assert first["data"] != second["data"]


def test_rotation_steps_in_order(fake: FakeKubeAPI, kube: KubeClient) -> None:
    fake.add_object(
        {
            "apiVersion": KCP.api_version,
            "kind": KCP.kind,
            "metadata": {"name": KCP.name, "namespace": KCP.namespace},
            "spec": {"replicas": 1},
        }
    )
    encryption.ensure_secret(kube, settings())
    (original,) = keys(fake)
    with pytest.raises(InputError, match="needs two keys"):
        encryption.rotate(kube, settings(), "promote")

    moment = datetime.datetime(2026, 12, 1, 8, 30, tzinfo=datetime.UTC)
    result = encryption.rotate(kube, settings(), "add", now=moment)
    old, new = keys(fake)
    assert old == original and new["name"] == "key-20261201T083000Z"
    assert result.keys == [original["name"], new["name"]]
    obj = fake.get(KCP.kind, KCP.namespace, KCP.name)
    assert obj is not None and obj["spec"]["rollout"] == {"after": "2026-12-01T08:30:00Z"}
    assert obj["spec"]["replicas"] == 1, "a merge patch keeps the rest"
    with pytest.raises(InputError, match="finish the running rotation"):
        encryption.rotate(kube, settings(), "add")

    encryption.rotate(kube, settings(), "promote", now=moment)
    assert keys(fake) == [new, original]
    encryption.rotate(kube, settings(), "remove", now=moment)
    assert keys(fake) == [new]


def test_rotate_without_a_secret_is_an_input_error(kube: KubeClient) -> None:
    with pytest.raises(InputError, match="no encryption Secret default/capi-dev-encryption"):
        encryption.rotate(kube, settings(), "add")


def test_install_creates_the_key_outside_helm(
    fake: FakeKubeAPI, kubeconfig: str, tmp_path: Path
) -> None:
    helm = Helm(helm_tool(3), kubeconfig=kubeconfig, home=tmp_path / "helm")
    lifecycle.install(settings(), helm=helm)
    (key,) = keys(fake)
    values = json.dumps(helm.get_values("dev", namespace="default"))
    manifest = helm.get_manifest("dev", namespace="default")
    assert key["secret"] not in values and key["secret"] not in manifest
    assert '"secretName": "capi-dev-encryption"' in values
    lifecycle.install(settings(), helm=helm)
    assert keys(fake) == [key]


def test_cli_status_prints_names_never_keys(
    fake: FakeKubeAPI,
    kube: KubeClient,
    kubeconfig: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "dev.yaml"
    path.write_text(DOCKER)
    encryption.ensure_secret(kube, settings())
    (key,) = keys(fake)
    assert main(["encryption-key", "status", str(path), "--kubeconfig", kubeconfig]) == 0
    out = capsys.readouterr()
    assert key["name"] in out.out and key["secret"] not in out.out + out.err


def test_cli_create_makes_the_secret_once_and_prints_no_key(
    fake: FakeKubeAPI, kubeconfig: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GitOps users have no `install` to create the key: `encryption-key create` does."""
    path = tmp_path / "dev.yaml"
    path.write_text(DOCKER)
    assert main(["encryption-key", "create", str(path), "--kubeconfig", kubeconfig]) == 0
    (key,) = keys(fake)
    first = capsys.readouterr()
    assert "created the encryption key Secret default/capi-dev-encryption" in first.out
    assert main(["encryption-key", "create", str(path), "--kubeconfig", kubeconfig]) == 0
    assert keys(fake) == [key]
    second = capsys.readouterr()
    assert "exists; kept" in second.out
    assert key["secret"] not in first.out + first.err + second.out + second.err
