"""The test-only in-memory provider chart (tests/charts/inmemory-cluster) and its settings.

CAPD's in-memory backend simulates machines, nodes, etcd and API servers inside the CAPD
process of the test plane: the real Cluster API controllers provision, roll and delete such a
cluster in seconds. The chart renders the library chart's objects with DevCluster /
DevMachineTemplate; its values are the docker provider's (the same values builder), so a
test swaps only the chart (:func:`use_chart`).

The same chart is the test-only provider ``inmemory`` (:class:`InMemoryProvider`), added in
exactly the steps of docs/architecture.md, "Adding a provider", and nothing else in
scs_templates knows about it: (1) its chart folder ``tests/charts/inmemory-cluster``, (2)
this provider module, (3) its catalogue row - for a test-only provider
``catalogue.registered_provider(INMEMORY)`` while a test runs (:func:`registered`); its
settings say ``provider: inmemory`` (``settings_text(..., provider="inmemory")``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import pytest

from scs_templates import catalogue
from scs_templates.charts import LIBRARY_CHART, ChartRef, charts_dir
from scs_templates.providers.docker import DockerProvider
from scs_templates.settings import parse_settings_text
from scs_templates.settings.model import ClusterSettings
from tests.support import REPO

CHARTS = REPO / "tests" / "charts"
CHART = CHARTS / "inmemory-cluster"
#: Seconds for a provisioning or rollout step: simulated machines take ~5 s each, a step
#: ~30-90 s on a loaded 2-core machine; the deadline is generous, the tests poll conditions.
STEP_TIMEOUT = 600.0


class InMemoryProvider(DockerProvider):
    """Simulated machines of CAPD's in-memory backend. Everything else is the docker
    provider's (kubelet flags, certificate SANs, name budget, no load balancers): CAPD runs
    both backends, and the machine images are never pulled."""

    name: ClassVar[str] = "inmemory"
    description: ClassVar[str] = "CAPD's in-memory backend (TEST ONLY): simulated machines."
    machine_template_kinds: ClassVar[tuple[tuple[str, str], ...]] = (
        ("infrastructure.cluster.x-k8s.io/v1beta2", "DevMachineTemplate"),
    )

    def chart_source(self, charts: Path) -> Path:
        del charts  # not shipped: the chart lives with the tests
        return CHARTS / self.chart


INMEMORY = InMemoryProvider()


@contextmanager
def registered() -> Iterator[InMemoryProvider]:
    """The in-memory provider's catalogue row, while the ``with`` block runs."""
    with catalogue.registered_provider(INMEMORY):
        yield INMEMORY


def settings_text(
    namespace: str,
    *,
    version: str,
    md0: int = 1,
    md1_labels: str = "",
    provider: str = "docker",
    template: str = "multi-md",
) -> str:
    labels = f"\n      labels:\n        {md1_labels}" if md1_labels else ""
    return f"""apiVersion: scs-templates.scs.community/v1alpha1
kind: ClusterSettings
metadata:
  name: mem
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


def settings_of(text: str) -> ClusterSettings:
    return parse_settings_text(text).settings


def assemble_chart(directory: Path) -> ChartRef:
    """The test chart with the library chart in its charts/ folder (as charts.py does)."""
    target = directory / "inmemory-cluster"
    shutil.copytree(CHART, target)
    shutil.copytree(charts_dir() / LIBRARY_CHART, target / "charts" / LIBRARY_CHART)
    return ChartRef("inmemory-cluster", "0.1.0", target)


def use_chart(monkeypatch: pytest.MonkeyPatch, chart: ChartRef) -> None:
    """Make render/install/diff use the in-memory chart for the docker provider's values."""
    monkeypatch.setattr("scs_templates.charts.chart_for", lambda provider: chart)
    monkeypatch.setattr("scs_templates.render.chart_for", lambda provider: chart)
