"""What an infrastructure provider is, on the Python side: one class, one instance each.

The charts already have a provider abstraction (the four hooks of ``_provider.tpl``); this
is its Python twin. Everything that differs between providers is a member of
:class:`Provider`, and nothing outside :mod:`scs_templates.providers` asks which provider a
cluster uses: it asks the cluster's provider (``catalogue.provider_of(settings)``) instead.

The members, in the order a cluster meets them:

* the chart (``chart``, ``chart_source``) and the machine-template kinds it keeps
  across upgrades (``machine_template_kinds``, removed by ``delete``);
* its settings rules (``errors``, ``warnings``), run after the common ones;
* its part of the cluster chart's values (``node_image``, ``control_plane_values``,
  ``worker_values``, ``network_values``, ``kubelet_extra_args``, ``api_cert_sans``,
  ``remountable_root`` and its own top-level sections from ``values``) and of their
  contract (``values_model``: typed models, generated into the chart's ``values.schema.json``);
* what the standard services may assume of it (``load_balancer_services``, ``node_cidr``,
  ``proxy_protocol``) and which of its releases every later service waits for
  (``node_initializers``);
* ``operations``: its second object (:mod:`scs_templates.providers.operations`), what it
  does to a cloud and a workload cluster: ``prepare`` before install and ``release`` after
  delete, its own service releases, what it copies into the workload cluster, its part of
  the versions table. ``validate`` and ``render`` never load it.

The defaults describe a provider with no cloud behind it (nothing to prepare or release,
no load balancers); a provider overrides what differs. A provider added for tests only is
registered with :func:`scs_templates.providers.registered_provider`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates._contract.contract import ValuesModel
from scs_templates._core import naming
from scs_templates._core.progress import Progress
from scs_templates._core.records import record
from scs_templates._settings.problems import Path as FieldPath
from scs_templates._settings.rules import Finding

if TYPE_CHECKING:
    from typing import Any, ClassVar

    from pydantic import BaseModel

    from scs_templates._settings.model import ClusterSettings, WorkerGroup
    from scs_templates._tools.kube import KubeClient
    from scs_templates._versions import Provider as ProviderRelease
    from scs_templates._versions import VersionTable
    from scs_templates._versions.kubernetes import ResolvedVersion

__all__ = ["CloudOptions", "Finding", "Management", "Progress", "Provider"]


@record
class CloudOptions:
    """How install and delete may touch the provider's cloud.

    ``touch``: False leaves the cloud alone (no credentials, server groups or cleanup).
    ``account``: the user's own credential to create and delete the cluster's resources
    with (OpenStack: a clouds.yaml entry; default: the one the settings name).
    ``credentials``: the credentials Secret's content given by the user instead of created
    ones (OpenStack: ``clouds.yaml`` and ``cacert``); the provider derives the rest.
    Every value of ``credentials`` is a secret: never print or log it.
    """

    touch: bool = True
    account: str | None = None
    credentials: Mapping[str, str] | None = None
    dry_run: bool = False
    """delete: report what would be removed, remove nothing."""
    keep_volumes: bool = False
    """delete: keep (and list) the cluster's volumes and snapshots."""


@record
class Management:
    """How to reach the management cluster: a client, or a kubeconfig and context."""

    kubeconfig: str | None = None
    context: str | None = None
    kube: KubeClient | None = None


class Provider:
    """An infrastructure provider: the defaults are those of a provider without a cloud."""

    #: The ``spec.provider`` value.
    name: ClassVar[str]
    #: Its :class:`~scs_templates.providers.operations.Operations` (what it does to a cloud
    #: and a workload cluster), as ``module:attribute``; loaded only by the commands that
    #: touch one (:func:`~scs_templates.providers.operations.operations_of`). None: the
    #: defaults of a provider without a cloud.
    operations: ClassVar[str | None] = None
    #: One line for ``scs-templates templates``.
    description: ClassVar[str]
    #: Where it is listed among the providers of its distribution (the first shipped one is
    #: the settings' default ``spec.provider``); equal orders list by name.
    catalogue_order: ClassVar[int] = 100
    #: (apiVersion, kind) of the machine templates its chart keeps across upgrades.
    machine_template_kinds: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: Services of type LoadBalancer get a real load balancer (else NodePort is used).
    load_balancer_services: ClassVar[bool] = False
    #: The node's root file system can be remounted (etcd's unsafe-FS option).
    remountable_root: ClassVar[bool] = True
    #: The control plane can get its etcd volume (spec.etcd.volume).
    etcd_volumes: ClassVar[bool] = False
    #: Catalogue releases that every later service waits for (after the CNI).
    node_initializers: ClassVar[tuple[str, ...]] = ()
    #: Its nodes boot published kind node images: the Kubernetes version resolves to a patch
    #: that has one (:func:`scs_templates._versions.kubernetes.resolve_version`).
    kind_node_images: ClassVar[bool] = False
    #: What the provider makes of neutral settings that mean something of its own, or that it
    #: ignores: (field path as docs/settings.md writes it, one line), in the reference's
    #: order. docs/settings.md lists them under the provider's name; the neutral model's
    #: descriptions never name a provider.
    field_notes: ClassVar[tuple[tuple[str, str], ...]] = ()

    @property
    def chart(self) -> str:
        """The cluster chart's name (and folder under ``charts/``)."""
        return f"{self.name}-cluster"

    def chart_source(self, charts: Path) -> Path:
        """The chart's source folder, given the folder holding the shipped charts."""
        return charts / self.chart

    def __repr__(self) -> str:
        return f"<provider {self.name}>"

    @property
    def machine_template_resources(self) -> tuple[tuple[str, str], ...]:
        """(API group, resource) of :attr:`machine_template_kinds`, for RBAC rules."""
        return tuple(
            (api_version.split("/", 1)[0], f"{kind.lower()}s")
            for api_version, kind in self.machine_template_kinds
        )

    # ----------------------------------------------------------------------- names

    #: Why :meth:`node_name_prefix` shrinks the name budget (said in the settings error).
    node_name_note: ClassVar[str] = ""

    def node_name_prefix(self, cluster: str, machine_owner: str) -> str:
        """What the provider puts in front of a Machine name of ``machine_owner`` (a
        MachineDeployment or KubeadmControlPlane name) to make the node's host name."""
        del cluster, machine_owner
        return ""

    def machine_owner_budget(self, cluster: str, machine_owner: str) -> int:
        """The longest a MachineDeployment/KubeadmControlPlane name may be: machine names
        add 12 characters, and with the :meth:`node_name_prefix` host names stay <= 63."""
        return naming.MACHINE_OWNER_BUDGET - len(self.node_name_prefix(cluster, machine_owner))

    # ----------------------------------------------------------------------- settings

    def errors(self, settings: ClusterSettings) -> Iterator[Finding]:
        """(path, message) for every provider rule the settings break."""
        del settings
        return iter(())

    def warnings(self, settings: ClusterSettings) -> Iterator[Finding]:
        """(path, message) for settings this provider ignores or questions."""
        del settings
        return iter(())

    def settings_section(self) -> tuple[type[BaseModel], str] | None:
        """The provider's own section of the settings (``spec.<name>``): its model class (a
        :class:`~scs_templates._settings.model.SettingsModel`) and one line describing it;
        None: it has none. The settings model composes it in; the class's module is imported
        only when a document is validated by the model (it imports pydantic)."""
        return None

    def foreign_document(self, data: Mapping[str, Any]) -> tuple[str, str, str] | None:
        """A document given as settings that this provider's tooling converts (OpenStack: a
        KaaS v1 clusterctl.yaml): (the key that gives it away, what it is, the command that
        converts it); None for anything else. ``validate`` then says what to run."""
        del data
        return None

    # ----------------------------------------------------------------------- values

    def version_summary(self, release: ProviderRelease, versions: VersionTable) -> str:
        """Its line in ``scs-templates versions``: the release the charts target (``release``:
        its entry of the versions table)."""
        del versions
        return f"{self.name} provider {release.release} (contract {release.contract})"

    def version_row(
        self, release: ProviderRelease, versions: VersionTable
    ) -> tuple[str, str, str, str, str]:
        """Its row of docs/versions.md's providers table: component, release, contract, the
        CRDs it is validated against, notes."""
        del versions
        return (
            self.name,
            f"`{release.release}`",
            release.contract,
            f"`../shared/crds/{release.crds}`",
            release.note,
        )

    def node_image(
        self, settings: ClusterSettings, resolved: ResolvedVersion, override: str | None
    ) -> str:
        """The machine image of a node of the ``resolved`` Kubernetes version (``override``:
        the group's own image, if any)."""
        raise NotImplementedError

    def control_plane_values(self, settings: ClusterSettings) -> Mapping[str, Any]:
        """Provider keys of ``controlPlane`` in the values."""
        del settings
        return {}

    def worker_values(self, settings: ClusterSettings, group: WorkerGroup) -> Mapping[str, Any]:
        """Provider keys of one ``workers[]`` entry in the values."""
        del settings, group
        return {}

    def network_values(self, settings: ClusterSettings) -> Mapping[str, Any]:
        """Provider keys of ``network`` in the values (e.g. the node network it creates)."""
        del settings
        return {}

    def kubelet_extra_args(self, settings: ClusterSettings) -> dict[str, str]:
        """``kubelet.extraArgs`` of every node."""
        del settings
        return {}

    def credentials_secret_name(self, settings: ClusterSettings) -> str | None:
        """The cluster's cloud credentials Secret that install writes through the Kubernetes
        API (never a helm value) and delete removes; None without cloud credentials."""
        del settings
        return None

    #: How a user gets the credentials Secret when install is not to write it (install
    #: refuses to go on without it): the end of that one-line error.
    credentials_hint: ClassVar[str] = "create it first"

    def with_recorded(
        self, settings: ClusterSettings, installed_values: Mapping[str, Any]
    ) -> ClusterSettings:
        """``settings`` with what the installed cluster release (its values) recorded and an
        upgrade or delete must keep (OpenStack: the cloud integrations' cluster name)."""
        del installed_values
        return settings

    def kubelet_node_name(self, settings: ClusterSettings) -> str:
        """``nodeRegistration.name`` of every node (cloud-init Jinja); empty: the host name."""
        del settings
        return ""

    def provider_images(self, settings: ClusterSettings) -> list[tuple[FieldPath, str | None]]:
        """The provider's own image settings besides the groups' ``image`` (path, value):
        checked for a literal name of another Kubernetes version like the groups' images."""
        del settings
        return []

    def api_access_enforcement(self, settings: ClusterSettings) -> tuple[str, int]:
        """How a restricted ``network.apiAccess`` is enforced, and the API server's port:
        ``("load-balancer" | "security-group" | "not-enforced", port)``; see
        :mod:`scs_templates.providers.api_access`."""
        del settings
        return "not-enforced", 6443

    def api_cert_sans(self, settings: ClusterSettings) -> list[str]:
        """Extra subject alternative names of the API server certificate."""
        del settings
        return []

    def values(self, settings: ClusterSettings) -> Mapping[str, Any]:
        """The provider's own top-level sections of the values (e.g. ``openstack``); never a
        credential (credentials Secrets are written through the Kubernetes API)."""
        del settings
        return {}

    @property
    def values_model(self) -> ValuesModel:
        """The provider's part of its chart's values contract, as typed models
        (:class:`scs_templates._contract.contract.ValuesModel`: its keys of ``controlPlane``,
        ``workers[]`` and ``network``, its top-level sections), from which with the common
        part the chart's ``values.schema.json`` is generated
        (:mod:`scs_templates._render.values.schema`).
        The default adds nothing."""
        return ValuesModel()

    # ----------------------------------------------------------------------- lifecycle

    def gitops_secrets(self, settings: ClusterSettings) -> list[str]:
        """The Secrets the cluster needs next to it that no GitOps output holds (the user
        creates them), each with what it is for."""
        del settings
        return []

    # ----------------------------------------------------------------------- services

    def node_cidr(self, settings: ClusterSettings) -> str | None:
        """The CIDR that every node address lies in, if the provider guarantees one."""
        del settings
        return None

    def proxy_protocol(self, settings: ClusterSettings) -> bool:
        """The provider's load balancers can speak the PROXY protocol to ingress-nginx."""
        del settings
        return False
