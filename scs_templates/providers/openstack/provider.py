"""OpenStack via Cluster API Provider OpenStack (CAPO): SCS clouds.

Its settings rules (flavors are required, the cloud controller manager must stay on), its
part of the values (:mod:`.values`), the credentials and server groups created before
install and removed after delete (:mod:`.provision`), and what the
standard services may rely on: real load balancers, node addresses in ``network.nodeCIDR``,
the cloud controller manager first, ``cloud.conf`` copied into the workload cluster.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from scs_templates.providers.api_access import DEFAULT_API_PORT, OVN_RESTRICTED_API_PORT
from scs_templates.providers.interface import (
    Finding,
    Provider,
)
from scs_templates.providers.openstack import rules as os_rules
from scs_templates.providers.openstack import values as os_values
from scs_templates.providers.openstack.section import section

if TYPE_CHECKING:
    from typing import Any, ClassVar

    from pydantic import BaseModel

    from scs_templates._contract.contract import ValuesModel
    from scs_templates._settings.model import ClusterSettings, WorkerGroup
    from scs_templates._settings.problems import Path as FieldPath
    from scs_templates._versions import Provider as ProviderRelease
    from scs_templates._versions import VersionTable
    from scs_templates._versions.kubernetes import ResolvedVersion
    from scs_templates.providers.openstack.values_model import (
        OpenStackControlPlaneKeys,
        OpenStackNetworkKeys,
        OpenStackSections,
        OpenStackWorkerKeys,
    )

__all__ = ["OPENSTACK", "OpenStackProvider"]

_FLAVOR_REQUIRED = "required for provider 'openstack' (a flavor name)"


class OpenStackProvider(Provider):
    name: ClassVar[str] = "openstack"
    operations: ClassVar[str | None] = "scs_templates.providers.openstack.operations:OPERATIONS"
    description: ClassVar[str] = "OpenStack via Cluster API Provider OpenStack (CAPO): SCS clouds."
    catalogue_order: ClassVar[int] = 0  # the default provider
    machine_template_kinds: ClassVar[tuple[tuple[str, str], ...]] = (
        ("infrastructure.cluster.x-k8s.io/v1beta1", "OpenStackMachineTemplate"),
    )
    load_balancer_services: ClassVar[bool] = True
    # CAPO's additionalBlockDevices entry; its device name depends on the image's disk bus
    # (virtio-blk vdX, virtio-scsi sdX): the node finds it by size (scs.etcdDiskScript)
    etcd_volumes: ClassVar[bool] = True
    credentials_hint: ClassVar[str] = (
        "let install create a per-cluster application credential (without "
        "--skip-openstack), pass --clouds-yaml, or apply the manifest of `scs-templates "
        "openstack appcred create --write-secret FILE` first"
    )
    field_notes: ClassVar[tuple[tuple[str, str], ...]] = (
        ("spec.controlPlane.machineType", "The Nova flavor; required."),
        ("spec.controlPlane.zones", "Nova availability zones."),
        ("spec.controlPlane.rootDiskType", "A Cinder volume type."),
        ("spec.controlPlane.extraNetworks", "Neutron networks, by name or ID."),
        ("spec.workers[].machineType", "The Nova flavor; required."),
        ("spec.workers[].zone", "A Nova availability zone."),
        ("spec.workers[].rootDiskType", "A Cinder volume type."),
        ("spec.workers[].extraNetworks", "Neutron networks, by name or ID."),
        ("spec.network.nodeCIDR", "The subnet of the cluster's Neutron network."),
        ("spec.services.cloudControllerManager", "The OpenStack cloud controller manager."),
        (
            "spec.services.gatewayAPI.proxyProtocol",
            "Only with the amphora load balancer (`spec.openstack.loadBalancerProvider`; "
            "OVN does not speak it); each Gateway needs the Octavia annotation "
            "(docs/services.md).",
        ),
        ("spec.etcd.volume", "A Cinder volume."),
        ("spec.etcd.volume.type", "A Cinder volume type."),
    )
    # nodes stay uninitialized without the cloud controller manager
    node_initializers: ClassVar[tuple[str, ...]] = ("openstack-cloud-controller-manager",)

    # ----------------------------------------------------------------------- settings

    def errors(self, settings: ClusterSettings) -> Iterator[Finding]:
        spec = settings.spec
        for index, group in enumerate(spec.workers):
            if group.machine_type is None:
                yield ("spec", "workers", index, "machineType"), _FLAVOR_REQUIRED
        if spec.control_plane.machine_type is None:
            yield ("spec", "controlPlane", "machineType"), _FLAVOR_REQUIRED
        if not spec.services.cloud_controller_manager.enabled:
            yield (
                ("spec", "services", "cloudControllerManager", "enabled"),
                (
                    "must stay enabled on OpenStack: nodes stay uninitialized without the "
                    "cloud controller manager"
                ),
            )
        yield from os_rules.security_group_rule_errors(settings)
        yield from os_rules.security_group_prefix_errors(settings)

    def warnings(self, settings: ClusterSettings) -> Iterator[Finding]:
        yield from os_rules.deprecated_field_warnings(settings)
        yield from os_rules.cloud_chart_warnings(settings)
        existing = section(settings).existing_network
        if (
            existing is not None
            and os_values.has_extra_networks(settings)
            and os_values.internal_network_name(settings) is None
        ):
            yield (
                ("spec", "openstack", "existingNetwork", "network"),
                "an ID: with extraNetworks, OCCM's internal-network-name needs the network's "
                "name to keep node addresses (and serving certificates) on it; give the name",
            )

    def settings_section(self) -> tuple[type[BaseModel], str] | None:
        from scs_templates.providers.openstack.settings import OpenStack  # deferred: pydantic

        return OpenStack, "OpenStack specifics (provider openstack)."

    def foreign_document(self, data: Mapping[str, Any]) -> tuple[str, str, str] | None:
        from scs_templates.providers.openstack.migrate.key_table import KEYS  # deferred: ruamel

        key = next((key for key in data if isinstance(key, str) and key in KEYS), None)
        return None if key is None else (key, "a KaaS v1 clusterctl.yaml", "migrate")

    # ----------------------------------------------------------------------- values

    def node_image(
        self, settings: ClusterSettings, resolved: ResolvedVersion, override: str | None
    ) -> str:
        image = override or section(settings).image
        return image.replace("{version}", str(resolved.version))

    def control_plane_values(self, settings: ClusterSettings) -> OpenStackControlPlaneKeys:
        return os_values.control_plane_values(settings)

    def worker_values(self, settings: ClusterSettings, group: WorkerGroup) -> OpenStackWorkerKeys:
        return os_values.worker_values(settings, group)

    def network_values(self, settings: ClusterSettings) -> OpenStackNetworkKeys:
        return os_values.network_values(settings)

    def kubelet_extra_args(self, settings: ClusterSettings) -> dict[str, str]:
        del settings
        return dict(os_values.KUBELET_ARGS)

    def credentials_secret_name(self, settings: ClusterSettings) -> str | None:
        return os_values.credentials_secret_name(settings)

    def with_recorded(
        self, settings: ClusterSettings, installed_values: Mapping[str, Any]
    ) -> ClusterSettings:
        return os_values.with_recorded_cloud_cluster_name(settings, installed_values)

    def kubelet_node_name(self, settings: ClusterSettings) -> str:
        del settings
        return os_values.NODE_NAME

    def provider_images(self, settings: ClusterSettings) -> list[tuple[FieldPath, str | None]]:
        return [(("spec", "openstack", "image"), section(settings).image)]

    def api_access_enforcement(self, settings: ClusterSettings) -> tuple[str, int]:
        if section(settings).load_balancer_provider == "ovn":
            return "security-group", OVN_RESTRICTED_API_PORT
        return "load-balancer", DEFAULT_API_PORT

    def values(self, settings: ClusterSettings) -> OpenStackSections:
        return {"openstack": os_values.openstack_values(settings)}

    @property
    def values_model(self) -> ValuesModel:
        # deferred: pydantic
        from scs_templates.providers.openstack.values_model import VALUES_MODEL

        return VALUES_MODEL

    # ----------------------------------------------------------------------- lifecycle

    def gitops_secrets(self, settings: ClusterSettings) -> list[str]:
        return [f"{os_values.credentials_secret_name(settings)} (cloud credentials for CAPO)"]

    # ----------------------------------------------------------------------- services

    def node_cidr(self, settings: ClusterSettings) -> str | None:
        return settings.spec.network.node_cidr

    def proxy_protocol(self, settings: ClusterSettings) -> bool:
        # Octavia's OVN provider cannot speak the PROXY protocol
        return section(settings).load_balancer_provider == "amphora"

    def version_summary(self, release: ProviderRelease, versions: VersionTable) -> str:
        del versions
        return (
            f"OpenStack provider (CAPO) {release.release} (contract {release.contract}; "
            f"Cluster API {release.note})"
        )

    def version_row(
        self, release: ProviderRelease, versions: VersionTable
    ) -> tuple[str, str, str, str, str]:
        del versions
        return (
            "OpenStack (CAPO)",
            f"`{release.release}`",
            release.contract,
            f"`../shared/crds/{release.crds}`",
            f"needs Cluster API {release.note}",
        )


OPENSTACK = OpenStackProvider()
