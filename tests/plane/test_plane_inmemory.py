"""A cluster provisioned, rolled, scaled and deleted by the REAL Cluster API controllers.

The test-only provider chart ``tests/charts/inmemory-cluster`` renders the library chart's
Cluster API objects on CAPD's in-memory backend (DevCluster / DevMachineTemplate): the real
core, kubeadm bootstrap, kubeadm control-plane and CAPD controllers of the session's plane
do everything a real management cluster does, with simulated machines. The lifecycle goes
through our own ``lifecycle.install`` / ``lifecycle.delete`` with the real helm, on the
test-only provider ``inmemory`` (tests/support/inmemory.py), registered in the catalogue while the
module runs.

One cluster walks through the steps in order (each test builds on the previous one):
Available -> kubeadm accepts its bootstrap data -> patch upgrade rolls everything (no template
pruned while the rollout needs them) -> a change to one worker group rolls only that group
(the upgrade's superseded templates pruned by that install) -> scaling changes only replicas
(only templates in use are left) -> delete.
"""

from __future__ import annotations

import base64
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import pytest
import yaml

from scs_templates import _lifecycle as lifecycle
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient
from tests.support import inmemory, settings_from_text, skip_or_fail
from tests.support.inmemory import CAPI, CLONED_FROM, CLONES

if TYPE_CHECKING:
    from testenv import Plane

pytestmark = [pytest.mark.extra_builds]

STEP_TIMEOUT = inmemory.STEP_TIMEOUT
FIRST, UPGRADED = "1.36.1", "1.36.4"

#: The Cluster API objects of a cluster (none is left after delete).
CLUSTER_KINDS = (
    (CAPI, "Cluster"),
    (CAPI, "Machine"),
    (CAPI, "MachineDeployment"),
    (CAPI, "MachineSet"),
    (CAPI, "MachineHealthCheck"),
    ("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"),
    ("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfig"),
    ("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"),
    ("infrastructure.cluster.x-k8s.io/v1beta2", "DevCluster"),
    ("infrastructure.cluster.x-k8s.io/v1beta2", "DevMachine"),
    ("infrastructure.cluster.x-k8s.io/v1beta2", "DevMachineTemplate"),
)


class Walk:
    """The one cluster of this module and the plane it lives on."""

    def __init__(self, plane: Plane, helm: Helm, namespace: str) -> None:
        self.plane = plane
        self.helm = helm
        self.namespace = namespace
        self.kube = KubeClient(str(plane.kubeconfig))
        self.passed: set[str] = set()
        self.first_templates: set[tuple[str, str]] = set()
        self.md1_before: set[tuple[str, str]] = set()

    @classmethod
    def on(cls, plane: Plane, namespace: str) -> Self:
        """The walk of a fresh namespace ``namespace-*`` of the plane, with the plane's helm."""
        return cls(plane, inmemory.plane_helm(plane), plane.namespace(namespace))

    def after(self, step: str) -> None:
        """This step builds on ``step`` (the tests of this module walk one cluster in order)."""
        if step not in self.passed:
            pytest.fail(f"needs the step {step!r} of this module to pass first (run the module)")

    def install(self, text: str) -> lifecycle.InstallResult:
        return lifecycle.install(
            settings_from_text(text),
            helm=self.helm,
            kube=self.kube,
            wait=True,
            timeout=STEP_TIMEOUT,
            poll_interval=1.0,
        )

    def machines(self) -> dict[str, dict[str, Any]]:
        items = self.plane.api.list(CAPI, "Machine", self.namespace)
        return {m["metadata"]["name"]: m for m in items}

    def group(self, machine: dict[str, Any]) -> str:
        labels = machine["metadata"].get("labels", {})
        if "cluster.x-k8s.io/control-plane" in labels:
            return "control-plane"
        return str(labels.get("cluster.x-k8s.io/deployment-name", "?"))

    def by_group(self) -> dict[str, set[str]]:
        groups: dict[str, set[str]] = {}
        for name, machine in self.machines().items():
            groups.setdefault(self.group(machine), set()).add(name)
        return groups

    def templates(self) -> set[tuple[str, str]]:
        """(kind, name) of every machine template in the namespace."""
        return inmemory.machine_templates(self.plane.api, self.namespace)

    def group_templates(self) -> dict[str, set[tuple[str, str]]]:
        """Worker group -> the templates its MachineDeployment points at now."""
        groups: dict[str, set[tuple[str, str]]] = {}
        for md in self.plane.api.list(CAPI, "MachineDeployment", self.namespace):
            spec = md["spec"]["template"]["spec"]
            refs = (spec["bootstrap"]["configRef"], spec["infrastructureRef"])
            groups[md["metadata"]["name"]] = {(r["kind"], r["name"]) for r in refs}
        return groups

    def in_use(self) -> set[tuple[str, str]]:
        """(kind, name) of the templates Cluster API uses now (tests/support/inmemory.py)."""
        return inmemory.templates_in_use(self.plane.api, self.namespace)

    def assert_templates_of_machines_exist(self) -> None:
        """Every bootstrap config and infra machine still finds the template it was cloned from.

        The controllers need it while the machine lives (remediation, a MachineSet scaling
        back up): the charts keep old hashed templates, ``delete`` removes them at the end.
        """
        existing = self.templates()
        for version, kind, template_kind in CLONES:
            for obj in self.plane.api.list(version, kind, self.namespace):
                source = (obj["metadata"].get("annotations") or {}).get(CLONED_FROM)
                if source is not None:
                    assert (template_kind, source) in existing, (
                        f"{kind} {obj['metadata']['name']} lost its template {source}"
                    )

    def wait(self, what: str, done: Callable[[], bool], timeout: float = STEP_TIMEOUT) -> None:
        """Poll ``done`` until it holds; on every poll, machines keep their templates."""
        deadline = time.monotonic() + timeout
        while not done():
            self.plane.check()
            self.assert_templates_of_machines_exist()
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}; machines: {self.summary()}")
            time.sleep(1.0)

    def settled(self, expected: dict[str, int], version: str) -> bool:
        """Every group has exactly its replicas, all Running at ``version``, none deleting."""
        machines = list(self.machines().values())
        counts: dict[str, int] = {}
        for machine in machines:
            if machine["metadata"].get("deletionTimestamp"):
                return False
            if machine["spec"].get("version") != f"v{version}":
                return False
            if (machine.get("status") or {}).get("phase") != "Running":
                return False
            counts[self.group(machine)] = counts.get(self.group(machine), 0) + 1
        return counts == expected

    #: Every kind in the namespace whose names could pass for a node's (everything the
    #: release and the controllers create for the cluster).
    NAMED_KINDS = (*CLUSTER_KINDS, ("v1", "Secret"), ("v1", "ConfigMap"))

    def assert_approver_matches_the_machines(self, text: str) -> None:
        """kubelet-csr-approver's PROVIDER_REGEX for these settings matches the host name of
        every Machine the real controllers created (the Machine name behind the provider's
        host-name prefix) and no other name in the namespace."""
        import re

        from scs_templates._services.values import kubelet_csr_approver_values
        from scs_templates.providers.registry import provider_of

        settings = settings_from_text(text)
        regex = re.compile(kubelet_csr_approver_values(settings)["providerRegex"])
        provider = provider_of(settings)
        machines = set(self.machines())
        assert machines
        hosts = {provider.node_name_prefix(settings.name, m) + m for m in machines}
        assert {h for h in hosts if not regex.match(h)} == set()
        others = {
            o["metadata"]["name"]
            for version, kind in self.NAMED_KINDS
            for o in self.plane.api.list(version, kind, self.namespace)
        }
        # bootstrap configs and infra machines carry their Machine's name (Cluster API)
        assert {n for n in others - machines if regex.match(n)} == set()

    def summary(self) -> str:
        return ", ".join(
            f"{name}={self.group(m)}/{(m.get('status') or {}).get('phase')}"
            f"/{m['spec'].get('version')}"
            for name, m in sorted(self.machines().items())
        )


_inmemory_provider = inmemory.registered_for_module()


@pytest.fixture(scope="module")
def walk(plane: Plane) -> Walk:
    return Walk.on(plane, "inmem")


def test_install_reaches_available(walk: Walk) -> None:
    result = walk.install(inmemory.settings_text(walk.namespace, version=FIRST))
    assert result.cluster is not None and result.cluster.available
    walk.wait(
        "3 machines Running",
        lambda: walk.settled({"control-plane": 1, "capi-mem-md-0": 1, "capi-mem-md-1": 1}, FIRST),
    )
    walk.passed.add("install")


def test_multi_md_machines_get_serving_certificates(walk: Walk) -> None:
    """The approver's PROVIDER_REGEX matches the names the real KubeadmControlPlane and
    MachineSet controllers gave this multi-md cluster's Machines, and nothing else."""
    walk.after("install")
    walk.assert_approver_matches_the_machines(inmemory.settings_text(walk.namespace, version=FIRST))


def _kubeadm_files(plane: Plane, namespace: str) -> dict[str, str]:
    """role -> kubeadm config file, from the bootstrap Secrets the real controller wrote."""
    files: dict[str, str] = {}
    for config in plane.api.list("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfig", namespace):
        secret_name = (config.get("status") or {}).get("dataSecretName")
        if not secret_name:
            continue
        secret = plane.api.get("v1", "Secret", namespace, secret_name)
        assert secret is not None
        cloud_config = yaml.safe_load(base64.b64decode(secret["data"]["value"]))
        for entry in cloud_config.get("write_files", []):
            if entry["path"] in (
                "/run/kubeadm/kubeadm.yaml",
                "/run/kubeadm/kubeadm-join-config.yaml",
            ):
                role = "init" if entry["path"].endswith("kubeadm.yaml") else "join"
                files.setdefault(role, entry["content"])
    return files


def test_kubeadm_accepts_the_generated_bootstrap_data(walk: Walk, tmp_path: Path) -> None:
    walk.after("install")
    from testenv import PlaneError, build

    files = _kubeadm_files(walk.plane, walk.namespace)
    assert set(files) == {"init", "join"}, files.keys()
    try:
        kubeadm = build.build_kubeadm(build.kubeadm_release(FIRST))
    except PlaneError as error:
        skip_or_fail(f"no kubeadm of {FIRST}: {error}")
        raise
    for role, content in sorted(files.items()):
        path = tmp_path / f"{role}.yaml"
        path.write_text(content)
        done = subprocess.run(
            [str(kubeadm), "config", "validate", "--config", str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (
            f"kubeadm rejects the {role} configuration:\n{done.stderr}\n{content}"
        )


def test_patch_upgrade_rolls_every_machine(walk: Walk) -> None:
    walk.after("install")
    before = set(walk.machines())
    templates = walk.first_templates = walk.templates()
    result = walk.install(inmemory.settings_text(walk.namespace, version=UPGRADED))
    assert result.pruned == [], "nothing is pruned while the rollout needs the old templates"
    walk.wait(
        "the rollout to the new patch",
        lambda: walk.settled(
            {"control-plane": 1, "capi-mem-md-0": 1, "capi-mem-md-1": 1}, UPGRADED
        ),
    )
    assert not before & set(walk.machines()), "every machine is replaced"
    assert templates <= walk.templates(), "the old templates are kept through the rollout"
    walk.passed.add("upgrade")


def test_one_group_change_rolls_only_that_group(walk: Walk) -> None:
    walk.after("upgrade")
    before = walk.by_group()
    templates, refs, used = walk.templates(), walk.group_templates(), walk.in_use()
    superseded = templates - used  # (a patch upgrade of this chart renames no template)
    result = walk.install(
        inmemory.settings_text(
            walk.namespace, version=UPGRADED, md1_labels="scs.community/pool: blue"
        ),
    )
    # The upgrade's rollout has finished: what it left unused goes, the used ones stay.
    assert sorted(result.pruned) == sorted(
        f"{kind} {walk.namespace}/{name}" for kind, name in superseded
    )
    assert not superseded & walk.templates()
    assert used <= walk.templates()
    new_refs = walk.group_templates()
    assert new_refs["capi-mem-md-0"] == refs["capi-mem-md-0"]
    assert new_refs["capi-mem-md-1"] != refs["capi-mem-md-1"], "a new hashed template"
    walk.wait(
        "md-1 replaced",
        lambda: not (walk.by_group().get("capi-mem-md-1", set()) & before["capi-mem-md-1"]),
    )
    walk.wait(
        "the rollout of md-1",
        lambda: walk.settled(
            {"control-plane": 1, "capi-mem-md-0": 1, "capi-mem-md-1": 1}, UPGRADED
        ),
    )
    # The rollout ends when Cluster API has let go of md-1's old templates too: the old
    # machines' KubeadmConfigs (cloned from the old template) go through the garbage
    # collector after their Machines, which lags at load. Without this wait the next test's
    # install found the old KubeadmConfigTemplate still in use and rightly kept it (a cold
    # CI run, 2026-12-02: `pruned []`, KubeadmConfigTemplate capi-mem-md-1-7ba29b7c in use).
    md1_old = refs["capi-mem-md-1"] - walk.group_templates()["capi-mem-md-1"]
    walk.wait("md-1's old templates out of use", lambda: not md1_old & walk.in_use())
    after = walk.by_group()
    assert after["control-plane"] == before["control-plane"]
    assert after["capi-mem-md-0"] == before["capi-mem-md-0"]
    assert templates - superseded <= walk.templates(), "md-1's old template is kept"
    walk.md1_before = refs["capi-mem-md-1"]
    walk.passed.add("group")


def test_scaling_changes_only_replicas(walk: Walk) -> None:
    walk.after("group")
    before = walk.by_group()
    templates, refs = walk.templates(), walk.group_templates()
    result = walk.install(
        inmemory.settings_text(
            walk.namespace, version=UPGRADED, md0=2, md1_labels="scs.community/pool: blue"
        ),
    )
    # md-1's rollout has finished: only templates Cluster API uses are left, no pile-up.
    assert walk.templates() == walk.in_use(), f"pruned {result.pruned}"
    md1_old = walk.md1_before - walk.group_templates()["capi-mem-md-1"]
    assert md1_old, "the group change gave md-1 a new template"
    assert not md1_old & walk.in_use() and not md1_old & walk.templates(), result.pruned
    assert {f"{kind} {walk.namespace}/{name}" for kind, name in md1_old} <= set(result.pruned)
    walk.wait(
        "md-0 scaled to 2",
        lambda: walk.settled(
            {"control-plane": 1, "capi-mem-md-0": 2, "capi-mem-md-1": 1}, UPGRADED
        ),
    )
    after = walk.by_group()
    assert before["capi-mem-md-0"] < after["capi-mem-md-0"]
    assert after["control-plane"] == before["control-plane"]
    assert after["capi-mem-md-1"] == before["capi-mem-md-1"]
    assert walk.group_templates() == refs and walk.templates() <= templates, "no new template"
    walk.passed.add("scale")


def test_delete_removes_everything(walk: Walk) -> None:
    walk.after("install")
    text = inmemory.settings_text(
        walk.namespace, version=UPGRADED, md0=2, md1_labels="scs.community/pool: blue"
    )
    lifecycle.delete(
        settings_from_text(text),
        helm=walk.helm,
        kube=walk.kube,
        timeout=STEP_TIMEOUT,
        poll_interval=1.0,
    )
    api = walk.plane.api
    left = {
        kind: [o["metadata"]["name"] for o in api.list(version, kind, walk.namespace)]
        for version, kind in CLUSTER_KINDS
    }
    assert {k: v for k, v in left.items() if v} == {}
    # owned Secrets (kubeconfig, CA, bootstrap data) go with the garbage collector
    walk.wait(
        "owned Secrets collected",
        lambda: (
            not [
                s
                for s in api.list("v1", "Secret", walk.namespace)
                if s["metadata"]["name"].startswith(("mem-", "capi-mem"))
            ]
        ),
        timeout=120,
    )
