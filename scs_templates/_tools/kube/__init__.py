"""Kubernetes access for install/status/delete: the management cluster's API via ``kubernetes``.

The ``kubernetes`` package is imported only when a :class:`KubeClient` is created: rendering
and ``--help`` never pay for it. Every API failure becomes a one-line
:class:`~scs_templates._core.errors.ToolError` (exit 1); a kubeconfig or context that cannot be
loaded is an :class:`~scs_templates._core.errors.InputError` (exit 2). Secret contents are never
part of a message or a return value that is printed.
"""

from __future__ import annotations

from scs_templates._tools.kube.client import KubeClient, ObjectRef
from scs_templates._tools.kube.cluster import ClusterState, Condition, cluster_state

__all__ = ["ClusterState", "Condition", "KubeClient", "ObjectRef", "cluster_state"]
