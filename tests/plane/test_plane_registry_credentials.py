"""install refuses a registry mirror whose credentials Secret is missing, against a REAL API;
the same for the S3 credentials of the etcd snapshot upload (``etcd.backupS3``).

Without the Secret the bootstrap controller writes no bootstrap data (its condition says
"Failed to prepare spec.files") and the machines never start, long after install returned.
So install checks it first, before helm installs anything. Only a kube-apiserver is needed
(testenv, no managers).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates import api
from scs_templates._core.errors import InputError
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient
from tests.support import helm_tool

if TYPE_CHECKING:
    from testenv import Plane


def _settings(namespace: str, *, credentials: bool = True) -> Any:
    mirror: dict[str, Any] = {
        "registry": "docker.io",
        "endpoints": ["https://harbor.example/v2/dockerhub"],
        "overridePath": True,
    }
    if credentials:
        mirror["credentialsSecret"] = "harbor-pull"
    return api.validate_data(
        {
            "apiVersion": "scs-templates.scs.community/v1alpha1",
            "kind": "ClusterSettings",
            "metadata": {"name": "creds", "namespace": namespace},
            "spec": {
                "provider": "docker",
                "security": {"encryptionAtRest": {"enabled": False}},
                "registryMirrors": [
                    {"registry": "quay.io", "endpoints": ["https://mirror.example/v2/quay"]},
                    mirror,
                ],
            },
        }
    ).settings


def _secret(namespace: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "harbor-pull", "namespace": namespace},
        "type": "kubernetes.io/basic-auth",
        "stringData": data,
    }


def test_install_checks_the_credentials_secret_first(api_plane: Plane, tmp_path: Path) -> None:
    namespace = api_plane.namespace("credentials")
    settings = _settings(namespace)
    kube = KubeClient(str(api_plane.kubeconfig))
    helm = Helm(helm_tool(), kubeconfig=str(api_plane.kubeconfig), home=tmp_path / "helm")
    where = "spec.registryMirrors[1].credentialsSecret"

    with pytest.raises(
        InputError, match=rf"^{re.escape(where)}: Secret {namespace}/harbor-pull does not exist"
    ):
        lifecycle.install(settings, helm=helm, kube=kube)
    assert helm.status("creds", namespace=namespace) is None, "nothing installed"

    api_plane.api.create(
        _secret(namespace, {"username": "robot", "password": ""}), namespace=namespace
    )
    with pytest.raises(InputError, match="has no password") as caught:
        lifecycle.check_node_credentials(kube, settings)
    assert "robot" not in str(caught.value)

    api_plane.api.delete("v1", "Secret", namespace, "harbor-pull")
    api_plane.api.create(
        _secret(namespace, {"username": "robot", "password": "pw"}), namespace=namespace
    )
    lifecycle.check_node_credentials(kube, settings)


def test_no_check_without_credentials(api_plane: Plane) -> None:
    settings = _settings("nowhere", credentials=False)
    lifecycle.check_node_credentials(KubeClient(str(api_plane.kubeconfig)), settings)


def test_install_checks_the_etcd_backup_s3_secret_first(api_plane: Plane) -> None:
    """etcd.backupS3's Secret is read by the control plane's bootstrap data too: missing, or
    without one of its two keys, install refuses (exit 2) naming the field and the keys,
    never a value."""
    from tests.support import settings_of

    namespace = api_plane.namespace("backup-s3")
    s3 = {"endpoint": "https://s3.example", "bucket": "etcd", "credentialsSecret": "etcd-s3"}
    settings = settings_of({"provider": "docker", "etcd": {"backupS3": s3}}, namespace=namespace)
    kube = KubeClient(str(api_plane.kubeconfig))
    where = "spec.etcd.backupS3.credentialsSecret"
    with pytest.raises(
        InputError,
        match=rf"^{re.escape(where)}: Secret {namespace}/etcd-s3 does not exist .*"
        "keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    ):
        lifecycle.check_node_credentials(kube, settings)
    secret = _secret(namespace, {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"})
    secret["metadata"]["name"] = "etcd-s3"
    secret["type"] = "Opaque"
    api_plane.api.create(secret, namespace=namespace)
    with pytest.raises(InputError, match=r"has no AWS_SECRET_ACCESS_KEY$") as caught:
        lifecycle.check_node_credentials(kube, settings)
    assert "AKIDEXAMPLE" not in str(caught.value)
