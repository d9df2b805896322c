"""TEST ONLY: the in-memory provider (CAPD's in-memory backend) and its settings.

CAPD's in-memory backend simulates machines, nodes, etcd and API servers inside the CAPD
process of the test plane: the real Cluster API controllers provision, roll and delete such a
cluster in seconds.

The provider is added in exactly the steps of docs/architecture.md, "Adding a provider", and
nothing else in scs_templates knows about it: (1) its chart folder
(``tests/charts/inmemory-cluster``: the library chart's objects with DevCluster /
DevMachineTemplate; its ``values.schema.json`` generated from the common values models and
:class:`InMemorySections`), (2) this provider module (:class:`InMemoryProvider`, its values
model :class:`InMemorySections`), (3) its catalogue
row - for a test-only provider ``catalogue.registered_provider(...)`` while a test runs
(:func:`registered`). Settings say ``provider: inmemory`` (:func:`as_inmemory` turns a docker
example into one).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypedDict

import pytest

from scs_templates._contract.contract import S, ValuesModel
from scs_templates._tools.helm import Helm
from scs_templates.providers import registry as catalogue
from scs_templates.providers.docker import DockerProvider
from tests.support import REPO, helm_tool

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from testenv import Plane
    from testenv.kubeapi import KubeAPI

#: The API versions of the objects the in-memory chart renders.
CAPI = "cluster.x-k8s.io/v1beta2"
KCP_API = "controlplane.cluster.x-k8s.io/v1beta2"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta2"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta2"

#: The annotation Cluster API writes on a clone (a machine's bootstrap config and infra
#: machine) naming the template it was cloned from; (version, kind, template kind) of each.
CLONED_FROM = "cluster.x-k8s.io/cloned-from-name"
CLONES = (
    (BOOTSTRAP, "KubeadmConfig", "KubeadmConfigTemplate"),
    (INFRA, "DevMachine", "DevMachineTemplate"),
)

CHARTS = REPO / "tests" / "charts"
CHART = CHARTS / "inmemory-cluster"
#: Seconds for a provisioning or rollout step: simulated machines take ~5 s each, a step
#: ~30-90 s on a loaded 2-core machine; the deadline is generous, the tests poll conditions.
STEP_TIMEOUT = 600.0
#: How long a simulated VM takes to start by default: a rollout stays observable but short.
VM_STARTUP = "2s"
#: A VM start-up that never ends within a test: the cluster stays Provisioning, for tests of
#: what happens while it is not Available (deterministic, no race against the controllers).
NEVER = "24h"


class InMemorySection(TypedDict):
    """``inMemory``: how the in-memory backend simulates the cluster's machines."""

    vmStartup: Annotated[str, S(pattern="^([0-9]+(ns|us|ms|s|m|h))+$")]  # a Go duration


class InMemorySections(TypedDict):
    """The in-memory chart's own top-level sections (its part of the values contract)."""

    inMemory: InMemorySection


#: The chart's schema, generated from the models (tests/unit/test_providers.py keeps it current).
SCHEMA = CHART / "values.schema.json"


class InMemoryProvider(DockerProvider):
    """Simulated machines of CAPD's in-memory backend. Everything else is the docker
    provider's (kubelet flags, certificate SANs, name budget, no load balancers): CAPD runs
    both backends, and the machine images are never pulled.

    ``vm_startup``: how long each simulated VM takes to start (the chart's
    ``inMemory.vmStartup``; :data:`NEVER` keeps the cluster Provisioning)."""

    name: ClassVar[str] = "inmemory"
    description: ClassVar[str] = "CAPD's in-memory backend (TEST ONLY): simulated machines."
    machine_template_kinds: ClassVar[tuple[tuple[str, str], ...]] = (
        ("infrastructure.cluster.x-k8s.io/v1beta2", "DevMachineTemplate"),
    )
    # simulated machines boot no image: the version is the table's patch, not a kind image's
    kind_node_images: ClassVar[bool] = False

    def __init__(self, vm_startup: str = VM_STARTUP) -> None:
        self.vm_startup = vm_startup

    def chart_source(self, charts: Path) -> Path:
        del charts  # not shipped: the chart lives with the tests
        return CHARTS / self.chart

    def settings_section(self) -> None:
        return None  # no section of its own (the docker provider's is spec.docker)

    @property
    def values_model(self) -> ValuesModel:
        return ValuesModel(sections=InMemorySections)

    def values(self, settings: ClusterSettings) -> dict[str, Any]:
        section: InMemorySection = {"vmStartup": self.vm_startup}
        return {**super().values(settings), "inMemory": section}


INMEMORY = InMemoryProvider()


@contextmanager
def registered(vm_startup: str = VM_STARTUP) -> Iterator[InMemoryProvider]:
    """The in-memory provider's catalogue row, while the ``with`` block runs."""
    provider = INMEMORY if vm_startup == VM_STARTUP else InMemoryProvider(vm_startup)
    with catalogue.registered_provider(provider):
        yield provider


def registered_for_module() -> Any:
    """The fixture of a plane test module on this provider: registered in the catalogue
    while the module's tests run (module scope, autouse). A module says
    ``_inmemory_provider = inmemory.registered_for_module()``."""

    @pytest.fixture(scope="module", autouse=True)
    def _inmemory_provider() -> Iterator[InMemoryProvider]:
        with registered() as provider:
            yield provider

    return _inmemory_provider


def plane_helm(plane: Plane) -> Helm:
    """The pinned helm against the plane, its own home under the plane's directory (what
    the plane tests' ``install`` and ``delete`` run)."""
    return Helm(helm_tool(), kubeconfig=str(plane.kubeconfig), home=plane.directory / "helm-home")


def settings_text(
    namespace: str,
    *,
    version: str,
    md0: int = 1,
    md1_labels: str = "",
    provider: str = "inmemory",
    template: str = "multi-md",
    name: str = "mem",
) -> str:
    labels = f"\n      labels:\n        {md1_labels}" if md1_labels else ""
    return f"""apiVersion: scs-templates.scs.community/v1alpha1
kind: ClusterSettings
metadata:
  name: {name}
  namespace: {namespace}
spec:
  template: {template}
  provider: {provider}
  kubernetes:
    version: {version}
  controlPlane:
    replicas: 1
  workers:
    - name: md-0
      replicas: {md0}
    - name: md-1
      replicas: 1{labels}
"""


def as_inmemory(text: str, namespace: str) -> str:
    """A docker settings text (an example without ``metadata.namespace``) on the in-memory
    provider, placed in ``namespace``."""
    assert text.count("\n  provider: docker\n") == 1, "a docker settings text"
    return in_namespace(
        text.replace("\n  provider: docker\n", "\n  provider: inmemory\n"), namespace
    )


def in_namespace(text: str, namespace: str) -> str:
    """A settings text (an example without ``metadata.namespace``) placed in ``namespace``."""
    head, sep, rest = text.partition("\nmetadata:\n")
    assert sep and "\n  namespace:" not in rest.split("\nspec:", 1)[0], "no namespace yet"
    return f"{head}{sep}  namespace: {namespace}\n{rest}"


def write_kubeconfig(
    plane: Plane, path: Path, *, contexts: tuple[str, ...] = (), server: str | None = None
) -> str:
    """A 0600 copy of the plane's cluster-admin kubeconfig with more context names.

    ``server`` replaces the API server's address (e.g. a port nobody listens on).
    """
    config = json.loads(plane.kubeconfig.read_text())
    if server is not None:
        config["clusters"][0]["cluster"]["server"] = server
    context = config["contexts"][0]
    config["contexts"] += [{"name": name, "context": context["context"]} for name in contexts]
    path.touch(mode=0o600)
    path.write_text(json.dumps(config, indent=2) + "\n")
    return str(path)


def machine_templates(api: KubeAPI, namespace: str) -> set[tuple[str, str]]:
    """(kind, name) of every machine template in ``namespace``."""
    return {
        (kind, t["metadata"]["name"])
        for version, kind in ((BOOTSTRAP, "KubeadmConfigTemplate"), (INFRA, "DevMachineTemplate"))
        for t in api.list(version, kind, namespace)
    }


def templates_named(api: KubeAPI, namespace: str) -> set[tuple[str, str]]:
    """(kind, name) of the templates the cluster's spec names now: its MachineDeployments' and
    its KubeadmControlPlane's, what the last install wrote (a group's old templates stay in
    use by its old MachineSet and machines until its rollout ends)."""
    named: set[tuple[str, str]] = set()
    for obj in api.list(CAPI, "MachineDeployment", namespace):
        spec = obj["spec"]["template"]["spec"]
        for ref in (spec["bootstrap"]["configRef"], spec["infrastructureRef"]):
            named.add((ref["kind"], ref["name"]))
    for kcp in api.list(KCP_API, "KubeadmControlPlane", namespace):
        ref = kcp["spec"]["machineTemplate"]["spec"]["infrastructureRef"]
        named.add((ref["kind"], ref["name"]))
    return named


def templates_in_use(api: KubeAPI, namespace: str) -> set[tuple[str, str]]:
    """(kind, name) of the templates Cluster API uses now: named by a MachineDeployment,
    MachineSet or the KubeadmControlPlane, or the source of a live machine's clone."""
    used = templates_named(api, namespace)
    for obj in api.list(CAPI, "MachineSet", namespace):
        spec = obj["spec"]["template"]["spec"]
        for ref in (spec["bootstrap"]["configRef"], spec["infrastructureRef"]):
            used.add((ref["kind"], ref["name"]))
    for version, kind, template_kind in CLONES:
        for obj in api.list(version, kind, namespace):
            source = (obj["metadata"].get("annotations") or {}).get(CLONED_FROM)
            if source is not None:
                used.add((template_kind, source))
    return used
