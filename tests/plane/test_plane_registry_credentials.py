"""install refuses a registry mirror whose credentials Secret is missing, against a REAL API.

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
        lifecycle.check_registry_credentials(kube, settings)
    assert "robot" not in str(caught.value)

    api_plane.api.delete("v1", "Secret", namespace, "harbor-pull")
    api_plane.api.create(
        _secret(namespace, {"username": "robot", "password": "pw"}), namespace=namespace
    )
    lifecycle.check_registry_credentials(kube, settings)


def test_no_check_without_credentials(api_plane: Plane) -> None:
    settings = _settings("nowhere", credentials=False)
    lifecycle.check_registry_credentials(KubeClient(str(api_plane.kubeconfig)), settings)
