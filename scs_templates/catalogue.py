"""The catalogue: which cluster templates and providers exist, and when to use which.

This is the one place to register a template or a provider on the Python side (the chart
side is ``charts/<provider>-cluster`` for a provider, and the ``template`` handling inside
the charts). ``scs-templates templates`` prints :func:`catalogue`; the settings model's
``Literal`` types list the same names, and a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "PROVIDERS",
    "TEMPLATES",
    "CatalogueRow",
    "Provider",
    "Template",
    "catalogue",
    "provider_names",
    "template_names",
]


@dataclass(frozen=True)
class Template:
    """A cluster template: the shape of the cluster (control plane + worker groups)."""

    name: str
    description: str
    when_to_use: str


@dataclass(frozen=True)
class Provider:
    """An infrastructure provider and the chart that renders its clusters."""

    name: str
    chart: str
    description: str


@dataclass(frozen=True)
class CatalogueRow:
    """One line of ``scs-templates templates``: a template on a provider."""

    template: str
    provider: str
    chart: str
    description: str
    when_to_use: str


TEMPLATES: tuple[Template, ...] = (
    Template(
        name="simple",
        description="One control plane and exactly one worker group (MachineDeployment): "
        "the KaaS v1 shape.",
        when_to_use="Most clusters, and every cluster migrated from KaaS v1: homogeneous "
        "worker nodes, one machine type.",
    ),
    Template(
        name="multi-md",
        description="One control plane and any number of named worker groups, each with "
        "its own machine type, zone, size or autoscaling range, labels and taints.",
        when_to_use="Mixed workloads: GPU or large-memory nodes, nodes per zone, "
        "autoscaled burst capacity next to a fixed base.",
    ),
    Template(
        name="clusterclass",
        description="The multi-md cluster as a Cluster API topology: one ClusterClass per "
        "provider and scs-templates release, and a Cluster with spec.topology (version, "
        "control plane, one machineDeployment per worker group, variables).",
        when_to_use="Management clusters that let Cluster API's topology controller "
        "reconcile and roll clusters (feature gate ClusterTopology), fleets managed by GitOps.",
    ),
)

PROVIDERS: tuple[Provider, ...] = (
    Provider(
        name="openstack",
        chart="openstack-cluster",
        description="OpenStack via Cluster API Provider OpenStack (CAPO): SCS clouds.",
    ),
    Provider(
        name="docker",
        chart="docker-cluster",
        description="Docker via the Cluster API Docker provider (CAPD): local development "
        "and tests only, no cloud needed.",
    ),
)


def template_names() -> tuple[str, ...]:
    return tuple(t.name for t in TEMPLATES)


def provider_names() -> tuple[str, ...]:
    return tuple(p.name for p in PROVIDERS)


def catalogue() -> list[CatalogueRow]:
    """Every template on every provider, templates in catalogue order, then providers."""
    return [
        CatalogueRow(
            template=template.name,
            provider=provider.name,
            chart=provider.chart,
            description=template.description,
            when_to_use=template.when_to_use,
        )
        for template in TEMPLATES
        for provider in PROVIDERS
    ]
