"""The clusterclass template: one ClusterClass per provider and release, a topology Cluster
per settings file, and the same settings as a classic cluster (real helm renders; the
install guard with the real helm binaries against the REAL management plane of testenv/, on
the test-only provider ``inmemory``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from scs_templates._cli.main import main
from scs_templates._render.values import cluster_class_name
from tests.support import REPO, helm_tool, inmemory

if TYPE_CHECKING:
    from testenv import Plane

DOCKER = (REPO / "examples" / "docker-dev.yaml").read_text()


# --------------------------------------------------------------------------- install guard


def test_install_refuses_switching_between_classic_and_topology(
    plane: Plane,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The docker example on the test-only provider ``inmemory`` (tests/support/inmemory.py): the
    real webhooks admit both kinds of cluster, the guard refuses the switch before helm."""
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(helm_tool().path))
    ns = plane.namespace("clusterclass")
    classic = inmemory.as_inmemory(DOCKER, ns)
    assert "template: multi-md" in classic
    topology = classic.replace("template: multi-md", "template: clusterclass")
    config = str(plane.kubeconfig)
    capi = "cluster.x-k8s.io/v1beta2"

    def install(text: str, file: str) -> int:
        path = tmp_path / file
        path.write_text(text)
        return main(["install", str(path), "--kubeconfig", config])

    def names(api_version: str, kind: str) -> list[str]:
        return sorted(o["metadata"]["name"] for o in plane.api.list(api_version, kind, ns))

    with inmemory.registered(vm_startup=inmemory.NEVER):  # nothing here needs machines
        assert install(classic, "classic.yaml") == 0
        capsys.readouterr()
        assert install(topology, "topology.yaml") == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "Traceback" not in err
        assert "refusing to switch dev from template 'multi-md' to 'clusterclass'" in err
        assert names(capi, "ClusterClass") == []
        assert len(names("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane")) == 1

        # the other way round: a topology cluster stays one
        other = topology.replace("name: dev", "name: topo")
        assert install(other, "topo.yaml") == 0
        capsys.readouterr()
        assert names(capi, "ClusterClass") == [cluster_class_name("inmemory")]
        assert (
            install(other.replace("template: clusterclass", "template: multi-md"), "t2.yaml") == 2
        )
        assert "refusing to switch topo from template 'clusterclass' to 'multi-md'" in (
            capsys.readouterr().err
        )
    # dev's MachineDeployments are there; none was rendered for topo as a classic cluster
    deployments = names(capi, "MachineDeployment")
    assert [n for n in deployments if n.startswith("capi-dev-")] != []
    assert [n for n in deployments if n.startswith("capi-topo-")] == []
