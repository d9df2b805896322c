"""The files we render for the workload API server are loaded by a REAL kube-apiserver.

The admission configuration (PodSecurity defaults, EventRateLimit) travels in the
KubeadmControlPlane's ``files`` and is named by ``--admission-control-config-file``. A second
kube-apiserver of the test plane is started with exactly the rendered file and the rendered
plugin list: it must start, and it must then enforce what the file says (a privileged pod
is refused under ``restricted``). A broken file must make it refuse to start, which shows
that the check can fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import api
from scs_templates._tools.helm import Helm
from tests.support.scenarios import settings_for
from tests.support.workload_cluster import apiserver_flags

if TYPE_CHECKING:
    from testenv import Plane


def _control_plane(helm: Helm, provider: str) -> dict[str, Any]:
    result = api.render(settings_for("simple", provider, "production"), helm=helm)
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    spec: dict[str, Any] = kcp["spec"]["kubeadmConfigSpec"]
    return spec


PRIVILEGED_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "privileged", "namespace": "default"},
    "spec": {
        "automountServiceAccountToken": False,
        "containers": [
            {"name": "c", "image": "registry.invalid/x:1", "securityContext": {"privileged": True}}
        ],
    },
}


@pytest.mark.parametrize("provider", ["docker", "openstack"])
def test_rendered_admission_configuration_is_loaded_and_enforced(
    plane: Plane, helm: Helm, tmp_path: Path, provider: str
) -> None:
    from testenv import APIError
    from testenv.plane import extra_apiserver

    flags = apiserver_flags(_control_plane(helm, provider), tmp_path)
    with extra_apiserver(plane, f"admission-{provider}", flags) as server:
        server.create(
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
            namespace="default",
        )
        with pytest.raises(APIError) as refused:
            server.create(PRIVILEGED_POD, dry_run=True)
    assert refused.value.status == 403
    assert "violates PodSecurity" in str(refused.value)


def test_a_broken_admission_configuration_stops_the_api_server(
    plane: Plane, helm: Helm, tmp_path: Path
) -> None:
    from testenv import PlaneError
    from testenv.plane import extra_apiserver

    flags = apiserver_flags(_control_plane(helm, "docker"), tmp_path)
    config = tmp_path / "admission-config.yaml"
    config.write_text(config.read_text().replace("enforce: restricted", "enforce: strictest"))
    with (
        pytest.raises(PlaneError, match="exited"),
        extra_apiserver(plane, "admission-broken", flags),
    ):
        pass
