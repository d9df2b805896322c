"""Docker via the Cluster API Docker provider (CAPD): kind nodes, development and tests.

Nothing to prepare or release (no cloud), no load balancers for Services, and nodes are
containers whose root file system cannot be remounted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from scs_templates.providers.interface import Finding, Provider

if TYPE_CHECKING:
    from typing import ClassVar

    from pydantic import BaseModel

    from scs_templates._settings.model import ClusterSettings
    from scs_templates._versions import Provider as ProviderRelease
    from scs_templates._versions import VersionTable
    from scs_templates._versions.kubernetes import ResolvedVersion
    from scs_templates.providers.docker.settings import Docker

__all__ = ["DOCKER", "DockerProvider"]

# Kubelet flags of kind nodes, as the CAPD quickstart sets them: disk pressure on the
# developer's machine must not evict everything.
_KUBELET_ARGS = {"eviction-hard": "nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%"}
_API_CERT_SANS = ["localhost", "127.0.0.1", "0.0.0.0", "host.docker.internal"]  # noqa: S104


class DockerProvider(Provider):
    name: ClassVar[str] = "docker"
    operations: ClassVar[str | None] = "scs_templates.providers.docker.operations:OPERATIONS"
    description: ClassVar[str] = (
        "Docker via the Cluster API Docker provider (CAPD): local development "
        "and tests only, no cloud needed."
    )
    catalogue_order: ClassVar[int] = 1
    machine_template_kinds: ClassVar[tuple[tuple[str, str], ...]] = (
        ("infrastructure.cluster.x-k8s.io/v1beta2", "DockerMachineTemplate"),
    )
    # kind nodes are containers: their root cannot be remounted
    remountable_root: ClassVar[bool] = False
    kind_node_images: ClassVar[bool] = True
    field_notes: ClassVar[tuple[tuple[str, str], ...]] = (
        ("spec.controlPlane.machineType", "Ignored (warned): kind nodes are containers."),
        ("spec.controlPlane.extraNetworks", "Ignored: one network per node container."),
        ("spec.workers[].machineType", "Ignored (warned): kind nodes are containers."),
        ("spec.workers[].extraNetworks", "Ignored: one network per node container."),
        ("spec.etcd.unsafeFS", "Ignored (warned): a container's root cannot be remounted."),
        ("spec.etcd.volume", "Ignored (warned): kind nodes have no volumes."),
    )
    node_name_note: ClassVar[str] = "on Docker the node host name also starts with '<cluster>-'"

    def node_name_prefix(self, cluster: str, machine_owner: str) -> str:
        """What CAPD puts in front of a Machine name to make its container and node host
        name: ``<cluster>-`` unless the name already starts with the cluster name (upstream
        test/infrastructure/docker, ``MachineContainerName``). Host names stay <= 63 chars,
        so on Docker the machine-name budget shrinks by this much."""
        return "" if machine_owner.startswith(cluster) else f"{cluster}-"

    def settings_section(self) -> tuple[type[BaseModel], str] | None:
        from scs_templates.providers.docker.settings import Docker  # deferred: pydantic

        return Docker, "Docker specifics (provider docker, development)."

    def warnings(self, settings: ClusterSettings) -> Iterator[Finding]:
        spec = settings.spec
        if spec.etcd.volume is not None:
            yield (
                ("spec", "etcd", "volume"),
                "ignored by provider 'docker' (kind nodes have no volumes)",
            )
        if spec.etcd.unsafe_fs:
            yield (
                ("spec", "etcd", "unsafeFS"),
                (
                    "ignored by provider 'docker': kind nodes are containers whose root file "
                    "system cannot be remounted"
                ),
            )
        for index, group in enumerate(spec.workers):
            if group.machine_type is not None:
                yield ("spec", "workers", index, "machineType"), "ignored by provider 'docker'"
        if spec.control_plane.machine_type is not None:
            yield ("spec", "controlPlane", "machineType"), "ignored by provider 'docker'"

    def node_image(
        self, settings: ClusterSettings, resolved: ResolvedVersion, override: str | None
    ) -> str:
        if override:
            return override
        kind = resolved.kind_image
        digest = f"@{kind.digest}" if kind is not None else ""
        return f"{section(settings).node_image_repository}:{resolved.version}{digest}"

    def kubelet_extra_args(self, settings: ClusterSettings) -> dict[str, str]:
        del settings
        return dict(_KUBELET_ARGS)

    def api_cert_sans(self, settings: ClusterSettings) -> list[str]:
        del settings
        return list(_API_CERT_SANS)

    def version_summary(self, release: ProviderRelease, versions: VersionTable) -> str:
        return (
            f"Docker provider (CAPD) {release.release}; kind images from "
            f"{release.module}@{versions.kind_mapper_from}"
        )

    def version_row(
        self, release: ProviderRelease, versions: VersionTable
    ) -> tuple[str, str, str, str, str]:
        # CAPD is part of the Cluster API release: its contract and CRDs are core's
        capi = versions.cluster_api
        return (
            "Docker (CAPD)",
            f"`{release.release}`",
            capi.contract,
            f"`../shared/crds/{capi.crds}`",
            f"kind images from `{release.module}@{versions.kind_mapper_from}`",
        )


DOCKER = DockerProvider()


def section(settings: ClusterSettings) -> Docker:
    """``spec.docker``, typed (the composed settings model adds it)."""
    found: Docker = settings.spec.docker  # type: ignore[attr-defined]
    return found
