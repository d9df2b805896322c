"""Cloud credentials never reach helm's release history: proven on the REAL management plane.

install, upgrade and a credential rotation with the real helm against the real kube-apiserver
(testenv/: real CRDs and the real CAPI/CAPO webhooks admit every object). The library writes
the credentials Secret through the Kubernetes API (labelled for the cluster and for
``clusterctl move``); the chart only references it. Every release revision helm stored
(helm's storage driver: one ``helm.sh/release.v1`` Secret per revision) is read back and
decoded, and none holds a credential.
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates._settings.model import ClusterSettings
from scs_templates._settings.validate import parse_settings_text
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient
from scs_templates.providers.interface import CloudOptions
from tests.support import REPO, pinned_helm

if TYPE_CHECKING:
    from testenv import Plane


OPENSTACK = (REPO / "examples" / "openstack-minimal.yaml").read_text()
FIRST_SECRET = "S3CR3T-VALUE-42"
ROTATED_SECRET = "R0TATED-VALUE-43"


def _credentials(secret: str) -> dict[str, str]:
    clouds = (
        "clouds:\n  openstack:\n    auth:\n      auth_url: https://keystone.invalid/v3\n"
        "      application_credential_id: app-cred-id\n"
        f"      application_credential_secret: {secret}\n"
    )
    return {
        "clouds.yaml": clouds,
        "cloud.conf": f'[Global]\napplication-credential-secret="{secret}"\n',
        "cacert": "",
    }


def _settings(namespace: str, replicas: int) -> ClusterSettings:
    text = OPENSTACK.replace("replicas: 3", f"replicas: {replicas}")
    assert "metadata:\n  name: demo\n" in text
    text = text.replace(
        "metadata:\n  name: demo\n", f"metadata:\n  name: demo\n  namespace: {namespace}\n"
    )
    return parse_settings_text(text).settings


@pytest.fixture
def kube(plane: Plane) -> Iterator[KubeClient]:
    with KubeClient(str(plane.kubeconfig), "testenv") as client:
        yield client


@pytest.fixture
def helm(plane: Plane, tmp_path: Path) -> Helm:
    pinned = pinned_helm()
    return Helm(pinned.tool, kubeconfig=str(plane.kubeconfig), home=tmp_path / "helm")


def _release_texts(plane: Plane, namespace: str) -> list[str]:
    texts = []
    for secret in plane.api.list("v1", "Secret", namespace):
        if secret.get("type") != "helm.sh/release.v1":
            continue
        stored = base64.b64decode(secret["data"]["release"])
        texts.append(gzip.decompress(base64.b64decode(stored)).decode())
    return texts


def test_no_release_revision_holds_credentials(plane: Plane, helm: Helm, kube: KubeClient) -> None:
    namespace = plane.namespace("credentials")
    first, rotated = _credentials(FIRST_SECRET), _credentials(ROTATED_SECRET)
    lifecycle.install(_settings(namespace, 3), helm=helm, kube=kube, secrets=first)  # install
    upgraded = _settings(namespace, 1)
    lifecycle.install(upgraded, helm=helm, kube=kube, secrets=first)  # upgrade
    lifecycle.install(upgraded, helm=helm, kube=kube, secrets=rotated)  # rotation
    # --skip-openstack: no cloud here to make a credential with; the Secret exists
    lifecycle.install(upgraded, helm=helm, kube=kube, cloud=CloudOptions(touch=False))

    releases = _release_texts(plane, namespace)
    assert len(releases) == 4
    for text in releases:
        assert "OpenStackCluster" in text  # sanity: the decoded release is the manifest
        for value in (FIRST_SECRET, ROTATED_SECRET, "app-cred-id", "[Global]"):
            assert value not in text
    assert kube.secret_data(namespace, "capi-demo-cloud-config") == rotated
    secret = plane.api.get("v1", "Secret", namespace, "capi-demo-cloud-config")
    assert secret is not None
    meta = secret["metadata"]
    assert meta["labels"] == {
        "app.kubernetes.io/managed-by": "scs-templates",
        "clusterctl.cluster.x-k8s.io/move": "true",
        "scs.community/cluster": "demo",
    }
    assert meta["annotations"] == {"helm.sh/resource-policy": "keep"}
    assert "kind: Secret" not in helm.get_manifest("demo", namespace=namespace)
    # the real OpenStackCluster (admitted by CAPO's webhooks) names the Secret
    (cluster,) = plane.api.list(
        "infrastructure.cluster.x-k8s.io/v1beta1", "OpenStackCluster", namespace
    )
    assert cluster["spec"]["identityRef"]["name"] == "capi-demo-cloud-config"
