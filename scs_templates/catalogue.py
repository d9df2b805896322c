"""The catalogue: which cluster templates and providers exist, and when to use which.

This is the one place to register a template or a provider on the Python side (the chart
side is ``charts/<provider>-cluster`` for a provider, and the ``template`` handling inside
the charts). A provider is one row of :data:`PROVIDERS` pointing at its
:class:`~scs_templates.providers.Provider` (a test-only provider is added for the
duration of a test with :func:`registered_provider`); ``spec.provider`` is validated against
these rows and the published schema lists the shipped ones. A template's name is written
once, in the settings model's ``TemplateName`` (``spec.template`` needs it as a type): each
:class:`Template` row here is typed by it, and a test fails while a name has no row.
``scs-templates templates`` prints :func:`catalogue`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from scs_templates.errors import InputError
from scs_templates.providers import Provider
from scs_templates.providers.docker import DOCKER
from scs_templates.providers.openstack import OPENSTACK
from scs_templates.records import record

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from scs_templates.settings.model import ClusterSettings, TemplateName

__all__ = [
    "PROVIDERS",
    "TEMPLATES",
    "CatalogueRow",
    "Provider",
    "Template",
    "catalogue",
    "provider",
    "provider_names",
    "provider_of",
    "providers",
    "registered_provider",
    "template_names",
]


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

#: The shipped providers, in catalogue order (the first is the settings' default).
PROVIDERS: tuple[Provider, ...] = (OPENSTACK, DOCKER)

_extra: list[Provider] = []


def providers() -> tuple[Provider, ...]:
    """The shipped providers, then those registered with :func:`registered_provider`."""
    return (*PROVIDERS, *_extra)


@contextmanager
def registered_provider(extra: Provider) -> Iterator[Provider]:
    """Make ``extra`` a known provider while the ``with`` block runs (tests, plug-ins)."""
    if extra.name in provider_names():
        raise ValueError(f"provider {extra.name!r} is registered already")
    _extra.append(extra)
    try:
        yield extra
    finally:
        _extra.remove(extra)


def provider(name: str) -> Provider:
    """The provider called ``name``; InputError naming the known ones otherwise."""
    for candidate in providers():
        if candidate.name == name:
            return candidate
    raise InputError(f"unknown provider {name!r}; known: {', '.join(provider_names())}")


def provider_of(settings: ClusterSettings) -> Provider:
    """The provider of a settings file (``spec.provider``)."""
    return provider(settings.spec.provider)


def template_names() -> tuple[str, ...]:
    return tuple(t.name for t in TEMPLATES)


def provider_names() -> tuple[str, ...]:
    return tuple(p.name for p in providers())


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
