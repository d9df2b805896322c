"""The catalogue: which cluster templates exist, on which providers, and when to use which.

This is the one place to register a template on the Python side (the chart side is the
``template`` handling inside the charts). Providers are plug-ins, found through their
entry points (:mod:`scs_templates.providers`); the catalogue pairs every template with every
known provider. A template's name is written
once, in the settings model's ``TemplateName`` (``spec.template`` needs it as a type): each
:class:`Template` row here is typed by it, and a test fails while a name has no row.
``scs-templates templates`` prints :func:`catalogue`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._core.records import record
from scs_templates.providers.registry import providers

if TYPE_CHECKING:
    from scs_templates._settings.model import TemplateName

__all__ = ["TEMPLATES", "CatalogueRow", "Template", "catalogue", "template_names"]


@record
class Template:
    """A cluster template: the shape of the cluster (control plane + worker groups)."""

    name: TemplateName
    description: str
    when_to_use: str


@record
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


def template_names() -> tuple[str, ...]:
    return tuple(t.name for t in TEMPLATES)


def catalogue() -> list[CatalogueRow]:
    """Every template on every provider, templates in catalogue order, then providers."""
    return [
        CatalogueRow(
            template=template.name,
            provider=entry.name,
            chart=entry.chart,
            description=template.description,
            when_to_use=template.when_to_use,
        )
        for template in TEMPLATES
        for entry in providers()
    ]
