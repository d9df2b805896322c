"""The names Cluster API Provider OpenStack (CAPO) gives the cloud resources of a cluster.

Preflight looks for foreign resources under these names and delete cleans up what CAPO left
under them, so both build them exactly as CAPO v0.14 does (read in its source,
pkg/utils/names and pkg/cloud/services/networking):

- CAPO's ``clusterResourceName`` is ``<namespace>-<name>`` of the Cluster;
- network, subnet and router: ``k8s-clusterapi-cluster-<clusterResourceName>``, with the
  description ``Created by cluster-api-provider-openstack cluster <clusterResourceName>``;
- security groups: ``k8s-cluster-<clusterResourceName>-secgroup-{controlplane,worker,bastion}``,
  with the description ``Cluster API managed group``.

They are not our names (:mod:`scs_templates._core.naming` builds those): CAPO does not fit
them to 63 characters (OpenStack allows 255), so fitting them would look for names CAPO never
makes. This module is the one place that writes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings

CAPO_NETWORK_PREFIX = "k8s-clusterapi-cluster"
CAPO_SECGROUP_PREFIX = "k8s-cluster"
CAPO_SECGROUP_SUFFIXES = ("controlplane", "worker", "bastion")
CAPO_SECGROUP_DESCRIPTION = "Cluster API managed group"


def capo_resource_name(settings: ClusterSettings) -> str:
    """CAPO's ``clusterResourceName``: ``<namespace>-<name>``."""
    return "-".join([settings.metadata.namespace, settings.name])


def capo_network_name(settings: ClusterSettings) -> str:
    """The name CAPO gives the cluster's network, subnet and router."""
    return "-".join([CAPO_NETWORK_PREFIX, capo_resource_name(settings)])


def capo_description(settings: ClusterSettings) -> str:
    """The description CAPO puts on the network, subnet and router it creates."""
    return "Created by cluster-api-provider-openstack cluster " + capo_resource_name(settings)


def capo_security_group_pattern(settings: ClusterSettings) -> str:
    """The names of CAPO's security groups for the cluster as a glob (for messages)."""
    return _security_group_name(settings, "*")


def capo_security_group_names(settings: ClusterSettings) -> list[str]:
    """The names of the security groups CAPO manages for the cluster."""
    return [_security_group_name(settings, suffix) for suffix in CAPO_SECGROUP_SUFFIXES]


def _security_group_name(settings: ClusterSettings, suffix: str) -> str:
    return "-".join([CAPO_SECGROUP_PREFIX, capo_resource_name(settings), "secgroup", suffix])
