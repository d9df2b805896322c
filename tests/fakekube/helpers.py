"""Helpers for tests that drive the real helm binaries against the FAKE API (test double):
a hermetic helm environment, a runner and a trivial chart. The lookup of the real helm and
helmfile binaries is in tests/support.py (``helm_tool``, ``helmfile_tool``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scs_templates.toolchain import Tool


def helm_env(home: Path, kubeconfig: Path) -> dict[str, str]:
    """A hermetic environment for running helm against the fake API."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("HELM_")}
    env.update(
        KUBECONFIG=str(kubeconfig),
        HELM_CACHE_HOME=str(home / "cache"),
        HELM_CONFIG_HOME=str(home / "config"),
        HELM_DATA_HOME=str(home / "data"),
        HELM_CONTENT_CACHE=str(home / "content"),
    )
    return env


def run_helm(
    tool: Tool, args: list[str], env: dict[str, str], *, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run helm; on an unexpected exit code fail with its stderr."""
    done = subprocess.run(
        [str(tool.path), *args], env=env, capture_output=True, text=True, timeout=120
    )
    if check and done.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done


def write_trivial_chart(directory: Path) -> Path:
    """A chart with a ConfigMap, a Cluster (CAPI kind) and a kept template, in ``directory``."""
    chart = directory / "trivial"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: trivial\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text('value: one\ncidr: "192.168.0.0/16"\n')
    (chart / "templates" / "objects.yaml").write_text(
        """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cm
  labels:
    scs.community/cluster: {{ .Release.Name }}
data:
  value: {{ .Values.value | quote }}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: {{ .Release.Name }}
  labels:
    scs.community/cluster: {{ .Release.Name }}
spec:
  clusterNetwork:
    pods:
      cidrBlocks: [{{ .Values.cidr | quote }}]
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata:
  name: {{ .Release.Name }}-md-{{ .Values.value }}
  labels:
    scs.community/cluster: {{ .Release.Name }}
  annotations:
    helm.sh/resource-policy: keep
spec:
  template:
    spec: {}
"""
    )
    return chart
