"""helmfile over helmfile.d against the REAL management plane (testenv/): ``sync`` and
``destroy`` on the test-only provider ``inmemory`` (tests/support/inmemory.py), where the real
controllers make the cluster Available and tear it down. The offline helmfile commands:
tests/render/test_helmfile.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates._lifecycle.helmfile import Helmfile
from tests.support import REPO, helmfile_tool, inmemory, settings_from_text
from tests.support.inmemory import BOOTSTRAP, CAPI, INFRA

if TYPE_CHECKING:
    from testenv import Plane


def test_helmfile_sync_and_destroy_on_the_real_plane(plane: Plane, tmp_path: Path) -> None:
    """``sync`` installs the same objects as ``install`` and, as install does, creates the
    encryption key Secret first: the real controllers make the cluster Available (without
    the key the control plane gets no bootstrap data); after a worker group's change has
    rolled out, the next ``sync`` prunes its superseded templates as install does.
    ``destroy`` deletes the Cluster first and waits for the real controllers, then the
    release, kept templates and Secrets."""
    from scs_templates import _lifecycle as lifecycle
    from scs_templates._tools.helm import Helm
    from tests.support import helm_tool

    ns = plane.namespace("helmfile")
    kubeconfig = str(plane.kubeconfig)
    text = inmemory.as_inmemory((REPO / "examples" / "docker-dev.yaml").read_text(), ns)
    runner = Helmfile(helmfile_tool(), helm_tool(), kubeconfig=kubeconfig, home=tmp_path / "hf")
    helm = Helm(helm_tool(), kubeconfig=kubeconfig, home=tmp_path / "helm")

    def key() -> object:
        secret = plane.api.get("v1", "Secret", ns, "capi-dev-encryption")
        return None if secret is None else secret["data"]

    def available() -> bool:
        cluster = plane.api.get(CAPI, "Cluster", ns, "dev") or {}
        conditions = (cluster.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Available" and c["status"] == "True" for c in conditions)

    with inmemory.registered():
        settings = settings_from_text(text)
        assert key() is None
        runner.sync(settings)
        first_key = key()
        assert first_key is not None
        release = helm.status("dev", namespace=ns)
        assert release is not None and release.status == "deployed"
        assert lifecycle.diff(settings, helm=helm).changes == []  # same objects as install
        deadline = time.monotonic() + inmemory.STEP_TIMEOUT
        while not available():
            plane.check()
            assert time.monotonic() < deadline, "the Cluster did not become Available"
            time.sleep(1)
        runner.sync(settings)  # again: a new revision, the key is kept
        again = helm.status("dev", namespace=ns)
        assert again is not None and again.revision == 2
        assert key() == first_key

        # A change to one worker group gives it new hashed templates; the superseded ones are
        # kept while its rollout needs them and pruned by the next sync after it, as install
        # prunes them (lifecycle.prune_superseded_templates).
        first = inmemory.machine_templates(plane.api, ns)
        assert first == inmemory.templates_in_use(plane.api, ns)
        changed = settings_from_text(text.replace("tier: batch\n", "tier: stream\n", 1))
        pruned: list[str] = []
        runner.sync(changed, progress=pruned.append)
        superseded = first - inmemory.machine_templates(plane.api, ns)
        assert superseded == set() and pruned == [], "kept while the rollout needs them"
        # md-1's MachineDeployment names its new templates at once; its old MachineSet and
        # machines use the old ones until the rollout ends
        superseded = first - inmemory.templates_named(plane.api, ns)
        assert superseded, "the group change gave md-1 new templates"
        deadline = time.monotonic() + inmemory.STEP_TIMEOUT
        while superseded & inmemory.templates_in_use(plane.api, ns) or not available():
            plane.check()
            assert time.monotonic() < deadline, "md-1's rollout did not finish"
            time.sleep(1)
        runner.sync(changed, progress=pruned.append)
        left = inmemory.machine_templates(plane.api, ns)
        assert not superseded & left, f"the superseded templates are pruned: {pruned}"
        assert left == inmemory.templates_in_use(plane.api, ns)
        assert sorted(pruned) == sorted(
            f"pruned the superseded {kind} {ns}/{name}" for kind, name in superseded
        )

        result = runner.destroy(settings, timeout=inmemory.STEP_TIMEOUT, poll_interval=0.5)
    assert result.cluster_deleted and result.release_uninstalled
    assert helm.status("dev", namespace=ns) is None
    for api_version, kind in (
        (CAPI, "Cluster"),
        (CAPI, "Machine"),
        (INFRA, "DevCluster"),
        (INFRA, "DevMachine"),
        (INFRA, "DevMachineTemplate"),
        (BOOTSTRAP, "KubeadmConfigTemplate"),
    ):
        assert plane.api.list(api_version, kind, ns) == [], kind
    assert key() is None
