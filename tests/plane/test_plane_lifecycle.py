"""install / status / diff / delete with the real helm 4 against the REAL plane.

The cluster is the in-memory one (tests/support/inmemory.py): the real controllers make it
Available, so ``install --wait`` waits for what a user waits for, and delete waits for the real
controllers to remove the machines before the release goes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates._core.errors import InputError
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient
from tests.support import helm_tool, inmemory, settings_from_text

if TYPE_CHECKING:
    from testenv import Plane


@pytest.fixture(autouse=True)
def _inmemory_provider() -> Iterator[None]:
    with inmemory.registered():
        yield


def test_install_status_diff_guard_delete(plane: Plane) -> None:
    namespace = plane.namespace("life")
    helm = Helm(helm_tool(), kubeconfig=str(plane.kubeconfig), home=plane.directory / "h")
    kube = KubeClient(str(plane.kubeconfig))
    settings = settings_from_text(inmemory.settings_text(namespace, version="1.36.4"))

    before = lifecycle.status(settings, helm=helm, kube=kube)
    assert before.release is None and before.cluster is None

    result = lifecycle.install(
        settings, helm=helm, kube=kube, wait=True, timeout=inmemory.STEP_TIMEOUT, poll_interval=1.0
    )
    assert result.cluster is not None and result.cluster.available
    assert result.kubernetes_version == "v1.36.4" and result.previous_version is None

    state = lifecycle.status(settings, helm=helm, kube=kube)
    assert state.release is not None and state.kubernetes_version == "v1.36.4"
    assert state.cluster is not None and state.cluster.available

    unchanged = lifecycle.diff(settings, helm=helm)
    assert unchanged.installed and not unchanged.has_changes
    scaled = settings_from_text(inmemory.settings_text(namespace, version="1.36.4", md0=2))
    changed = lifecycle.diff(scaled, helm=helm)
    assert [(c.kind, c.change) for c in changed.changes] == [("MachineDeployment", "changed")]

    older = settings_from_text(inmemory.settings_text(namespace, version="1.35.x"))
    with pytest.raises(InputError, match="refusing to downgrade"):
        lifecycle.install(older, helm=helm, kube=kube)
    assert lifecycle.status(settings, helm=helm, kube=kube).kubernetes_version == "v1.36.4"

    lifecycle.delete(
        settings, helm=helm, kube=kube, timeout=inmemory.STEP_TIMEOUT, poll_interval=1.0
    )
    assert plane.api.list("cluster.x-k8s.io/v1beta2", "Cluster", namespace) == []
    assert plane.api.list("cluster.x-k8s.io/v1beta2", "Machine", namespace) == []
    assert lifecycle.status(settings, helm=helm, kube=kube).release is None
