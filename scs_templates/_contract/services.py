"""The record of one standard service release: what the services layer installs, and what a
provider adds to it (:meth:`scs_templates.providers.operations.Operations.services`).

It sits below the providers so that a provider can describe its own releases (OpenStack:
the cloud controller manager and Cinder CSI) without importing the services layer; the
catalogue (:mod:`scs_templates._services.catalogue`) composes the common rows and each
provider's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from scs_templates._core.records import record
from scs_templates._versions import table

if TYPE_CHECKING:
    from typing import Any

    from scs_templates._settings.model import ClusterSettings

__all__ = ["PACKAGED", "ServiceInfo", "default_chart_version"]

#: The ``repository`` of a chart of our own, shipped inside the package (``charts/NAME``):
#: ``apply`` and ``services render`` take it from there, ``gitops`` from the cluster
#: chart's source (``--chart-source``), never from a chart mirror.
PACKAGED = "scs-templates"


@record
class ServiceInfo:
    """One release of a standard service.

    ``release``: helm release name (unique, also the catalogue key). ``namespace``: where it
    goes in the workload cluster. ``chart``: the chart's real name (also the file name stem
    ``CHART-VERSION.tgz`` in a local mirror, and the last path element in an OCI mirror).
    ``repository``: the upstream chart repository (``https://`` helm repository or
    ``oci://`` registry path). ``version``: the default chart version for new clusters
    (:func:`default_version` gives it per Kubernetes minor). ``setting``:
    the ``spec.services`` key (camelCase, as in the settings file) that enables it and whose
    ``version``/``values`` apply to it; ``None`` for companion releases that follow another
    service's switch. ``providers``: where it applies (empty = every provider). ``cni``: the
    CNI it belongs to or needs (``cilium``/``calico``), if any. ``pod_security``: the Pod
    Security level its Pods need (None = ``restricted`` is fine). ``crds_only``: a release
    of CRDs that ``--force-remove`` never uninstalls (that would delete every object of
    those kinds in the cluster). ``server_side``: a ``crds_only`` release that is NOT a
    helm release: ``apply`` renders the chart (helm template, same values) and applies its
    objects server-side (field manager :attr:`field_manager`), because helm cannot store
    the release (the Gateway API CRD chart makes a release record larger than the 1 MiB a
    Secret may hold). ``target``: ``workload`` (installed into the workload
    cluster) or ``management`` (installed next to the Cluster on the management cluster,
    in the cluster's namespace, as ``<cluster>-<release>``; ``namespace`` is empty then).
    ``workload_credentials``: it reads the credentials the provider copies into the workload
    cluster (:meth:`~scs_templates.providers.operations.Operations.prepare_workload`; under GitOps a
    ClusterResourceSet does it). ``follows_kubernetes_minor``: the chart's release line
    follows the Kubernetes minor (chart 2.M.x is for Kubernetes 1.M), which
    ``update-versions`` keeps. ``enabled_by``: for a release without a ``spec.services``
    switch, the predicate of the settings that switches it (a provider's own setting). A
    ``repository`` of :data:`PACKAGED` is a chart of ours (:attr:`packaged`).
    """

    release: str
    namespace: str
    chart: str
    repository: str
    version: str
    setting: str | None
    values: Callable[[ClusterSettings], dict[str, Any]]
    description: str
    providers: tuple[str, ...] = ()
    cni: str | None = None
    companion_of: str | None = None
    pod_security: str | None = None
    crds_only: bool = False
    server_side: bool = False
    target: str = "workload"
    needs: tuple[str, ...] = ()
    before_cni: bool = False
    version_of: str | None = None
    since: str | None = None
    workload_credentials: bool = False
    follows_kubernetes_minor: bool = False
    enabled_by: Callable[[ClusterSettings], bool] | None = None

    @property
    def packaged(self) -> bool:
        """A chart of our own, shipped inside the package (``charts/<chart>``)."""
        return self.repository == PACKAGED

    @property
    def field_manager(self) -> str:
        """The server-side apply field manager of a ``server_side`` release's objects (how
        ``apply`` finds them again: no helm release records them)."""
        return f"scs-templates/{self.release}"

    @property
    def repository_is_oci(self) -> bool:
        return self.repository.startswith("oci://")


def default_chart_version(release: str) -> str:
    """The chart version of ``release`` for new clusters: the versions table's, for its
    default Kubernetes minor."""
    versions = table()
    return versions.service_version(release, versions.default_minor.minor)
