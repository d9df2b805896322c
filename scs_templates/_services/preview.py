"""``scs-templates services render``: the workload cluster's service manifests, offline.

What it renders is exactly what :func:`scs_templates._services.deploy.apply` installs into a new
workload cluster: the same releases (:func:`plan_releases` with nothing deployed), the same
chart sources (``spec.services.chartMirror`` honoured; a local ``file://`` mirror needs no
network at all), the same values, through the same helmfile state file. It adds what
``helmfile sync`` installs besides the templates (the charts' CRDs) and leaves out what it
never installs (test hooks). The Kubernetes version of the settings is passed to helm, so
charts that branch on it render the same on every machine. The one release ``apply`` puts
on the management cluster (``<cluster>-cluster-autoscaler``, in the cluster's namespace) is
part of the output too; the namespaces ``apply`` labels for Pod Security come first.

Determinism: same settings and charts -> byte-identical output. The charts' own random
material is switched off by our values (Cilium's Hubble certificates come from its
in-cluster certgen job instead of helm's ``genCA``), and a test keeps it that way.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml import YAML

from scs_templates._core import atomic
from scs_templates._render.render import (
    _is_manifest_file,
    kube_version_of,
    object_file_names,
    parse_object,
    split_texts,
)
from scs_templates._services.releases import (
    STATE_KEY,
    ServiceRelease,
    check_local_mirror,
    namespace_labels,
    plan_releases,
    state_of,
)
from scs_templates._services.runner import ServicesHelmfile

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings

__all__ = ["TARGETS", "ServicesRender", "render_services", "write_services"]

#: Where an object goes: the workload cluster, or the management cluster (next to the
#: Cluster: the cluster-autoscaler). Printed as a ``# target: ...`` line per document.
TARGETS = ("workload", "management")
TARGET_HEADER = "# target: "
_SOURCE = "# Source: "


@dataclass(frozen=True)
class ServicesRender:
    """The rendered services of one workload cluster.

    ``manifests``: multi-document YAML exactly as helmfile/helm printed it.
    ``documents``: one text per object, same order. ``releases``: what was rendered.
    """

    manifests: str = field(repr=False)
    documents: tuple[str, ...] = field(repr=False)
    releases: tuple[ServiceRelease, ...]
    kube_version: str

    @functools.cached_property
    def objects(self) -> tuple[dict[str, Any], ...]:
        return tuple(parse_object(text) for text in self.documents)

    def file_names(self) -> list[str]:
        """``NN-kind-name.yaml`` per object, in helmfile's order (as ``render -o``)."""
        return object_file_names(self.objects)

    @functools.cached_property
    def targets(self) -> tuple[str, ...]:
        """The cluster each document goes to (:data:`TARGETS`), from the chart its
        ``# Source:`` line names (each release has its own chart); the namespaces
        ``apply`` labels, and anything without a chart, go to the workload cluster."""
        by_chart = {release.chart_name: release.target for release in self.releases}
        return tuple(_target(text, by_chart) for text in self.documents)

    def selected(self, target: str | None = None) -> list[int]:
        """The indexes of the documents that go to ``target`` (None: every one)."""
        return [i for i, where in enumerate(self.targets) if target in (None, where)]

    def marked(self, target: str | None = None) -> str:
        """The documents of ``target`` (None: all), each headed by ``# target: WHERE``:
        what ``services render`` prints."""
        return "".join(
            f"---\n{TARGET_HEADER}{self.targets[i]}\n{self.documents[i]}"
            for i in self.selected(target)
        )


def render_services(
    settings: ClusterSettings, *, helmfile: ServicesHelmfile | None = None
) -> ServicesRender:
    """Render every workload-cluster service release of ``settings`` offline.

    Raises InputError (exit 2) when a local chart mirror lacks a chart, HelmfileError
    (exit 1) when helmfile or helm fail (e.g. upstream repositories without network).
    """

    releases = plan_releases(settings, frozenset(), False)
    check_local_mirror(releases, settings.spec.services.chart_mirror)
    kube_version = kube_version_of(settings)
    runner = helmfile if helmfile is not None else ServicesHelmfile()
    charts = runner.render({STATE_KEY: state_of(releases)}, kube_version=kube_version)
    manifests = _namespaces(namespace_labels(settings, releases)) + charts
    return ServicesRender(
        manifests=manifests,
        documents=tuple(split_texts(manifests)),
        releases=tuple(releases),
        kube_version=kube_version,
    )


def _namespaces(labels: dict[str, dict[str, str]]) -> str:
    """The namespaces ``apply`` labels for Pod Security before the sync, as YAML documents
    (first: they exist before any release is installed into them)."""
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    text = ""
    for name, namespace_labels_ in labels.items():
        stream = io.StringIO()
        yaml.dump(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": namespace_labels_},
            },
            stream,
        )
        text += (
            f"---\n# Source: scs-templates (Pod Security label, set by apply)\n{stream.getvalue()}"
        )
    return text


def _target(text: str, by_chart: dict[str, str]) -> str:
    for line in text.splitlines():
        if line.startswith(_SOURCE):
            chart = line.removeprefix(_SOURCE).split("/", 1)[0]
            return by_chart.get(chart, TARGETS[0])
    return TARGETS[0]


def write_services(
    result: ServicesRender, directory: str | Path, target: str | None = None
) -> list[Path]:
    """One file per object of ``target`` (None: all) into ``directory``, each headed by its
    ``# target:`` line, atomically (same rules as ``render --output-dir``)."""
    chosen = result.selected(target)
    names = object_file_names([result.objects[i] for i in chosen])
    files = {
        name: f"{TARGET_HEADER}{result.targets[i]}\n{result.documents[i]}"
        for name, i in zip(names, chosen, strict=True)
    }
    written = atomic.write_directory(directory, files, replaceable=_is_manifest_file)
    return [written / name for name in names]
