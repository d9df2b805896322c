"""The release of a ClusterClass: one per namespace and class, shared by the topology clusters
that use it.

A topology cluster (template ``clusterclass``) runs on the ClusterClass
``scs-<provider>-v<chart version>`` of its namespace. Rendered alone (``render``, the helmfile
path) the chart prints the class with the cluster; installed (``install``, ``gitops``) the
class and its templates live in a release of their own, named after the class, and the
cluster's release holds only the Cluster. So several clusters of one namespace share the
class, and deleting one of them leaves the class the others use. Both values are pure
functions of the cluster's values (:func:`scs_templates._render.values.build_values`): the class's
values are its name and namespace, nothing of a cluster, so every cluster of the class
writes the same class release.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scs_templates._core import naming
from scs_templates._core.errors import InputError

__all__ = [
    "HELM_RELEASE_NAME_LIMIT",
    "TOPOLOGY_TEMPLATE",
    "ClassRelease",
    "class_release_of",
    "cluster_release_values",
]

#: helm refuses release names longer than 53 characters.
HELM_RELEASE_NAME_LIMIT = 53
#: The template whose clusters are Cluster API topologies (a ClusterClass owns their objects).
TOPOLOGY_TEMPLATE = "clusterclass"


@dataclass(frozen=True)
class ClassRelease:
    """The release of a ClusterClass in a namespace: release name, namespace, the class's
    name and the release's values."""

    release: str
    namespace: str
    class_name: str

    @property
    def values(self) -> dict[str, Any]:
        """The chart's values of this release: the class's name and namespace only."""
        return {"clusterClass": {"name": self.class_name, "namespace": self.namespace}}


def class_release_of(values: Mapping[str, Any], cluster_release: str) -> ClassRelease | None:
    """The release of the ClusterClass that a cluster's values use; None for a classic cluster.

    Named after the class (helm release names are namespaced, so one per namespace and
    class). InputError (exit 2) when the cluster's own release has that name: installing
    the class would then replace the cluster.
    """
    cluster = values.get("cluster")
    if not isinstance(cluster, Mapping) or cluster.get("template") != TOPOLOGY_TEMPLATE:
        return None
    class_name = str(cluster["className"])
    found = ClassRelease(
        naming.fit(class_name, HELM_RELEASE_NAME_LIMIT), str(cluster["namespace"]), class_name
    )
    if found.release == cluster_release:
        raise InputError(
            f"metadata.name: {cluster_release!r} is the name of the release of ClusterClass "
            f"{class_name!r} in namespace {found.namespace}; choose another cluster name"
        )
    return found


def cluster_release_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values of a cluster's release: a topology cluster's without its ClusterClass
    (``cluster.classObjects: false``; the class has its own release), a classic cluster's
    as they are."""
    cluster = values.get("cluster")
    if not isinstance(cluster, Mapping) or cluster.get("template") != TOPOLOGY_TEMPLATE:
        return dict(values)
    return {**values, "cluster": {**cluster, "classObjects": False}}
