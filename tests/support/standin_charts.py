"""STAND-IN charts for the service tests: tiny charts named like the real ones.

The real service charts (cilium, ingress-nginx, ...) cannot be downloaded here (no network
except PyPI), so the tests build STAND-INS: each has the real chart name and the pinned
version in its ``Chart.yaml`` (so chart sources, ``NAME-VERSION.tgz`` file names, versions
in ``helm list`` and helmfile's output are the real ones), and one template that renders a
ConfigMap ``<release>-stand-in`` echoing the release's values as JSON. They say so in their
description, annotations and labels. They prove the plumbing (state values -> helmfile ->
helm -> Kubernetes API), never the behaviour of the real charts.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable
from pathlib import Path

from scs_templates.services import service_catalogue

STAND_IN_LABEL = "scs-templates.scs.community/stand-in"

_TEMPLATE = (
    "apiVersion: v1\n"
    "kind: ConfigMap\n"
    "metadata:\n"
    "  name: {{ .Release.Name }}-stand-in\n"
    "  namespace: {{ .Release.Namespace }}\n"
    "  labels:\n"
    f'    {STAND_IN_LABEL}: "true"\n'
    "  annotations:\n"
    '    scs-templates.scs.community/stand-in-for: "{{ .Chart.Name }}-{{ .Chart.Version }}"\n'
    "data:\n"
    '  chart: "{{ .Chart.Name }}-{{ .Chart.Version }}"\n'
    "  values.json: {{ toJson .Values | quote }}\n"
)


def chart_files(name: str, version: str) -> dict[str, str]:
    """The files of one stand-in chart, by path inside the chart directory."""
    chart_yaml = (
        "apiVersion: v2\n"
        f"name: {name}\n"
        f"version: {version}\n"
        f"description: STAND-IN for the {name} chart (test double, renders one ConfigMap)\n"
        "type: application\n"
        "annotations:\n"
        f'  {STAND_IN_LABEL}: "true"\n'
    )
    return {
        "Chart.yaml": chart_yaml,
        "values.yaml": "standIn: true\n",
        "templates/configmap.yaml": _TEMPLATE,
    }


def package_stand_in(directory: Path, name: str, version: str) -> Path:
    """Write ``DIRECTORY/NAME-VERSION.tgz`` (the layout ``helm package`` produces)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{name}-{version}.tgz"
    with tarfile.open(target, "w:gz") as archive:
        for path, text in chart_files(name, version).items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{path}")
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
    return target


def build_stand_in_mirror(
    directory: Path, extra: Iterable[tuple[str, str]] = ()
) -> dict[str, Path]:
    """A local chart mirror with a stand-in of every catalogued chart at its tested version.

    ``extra`` adds more ``(name, version)`` stand-ins (e.g. an overridden version).
    Returns the packaged files by ``NAME-VERSION``.
    """
    wanted = [(info.chart, info.version) for info in service_catalogue()]
    wanted += list(extra)
    return {f"{n}-{v}": package_stand_in(directory, n, v) for n, v in wanted}
