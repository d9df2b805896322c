"""What the OpenStack provider does to a cloud and a workload cluster (its
:class:`~scs_templates.providers.operations.Operations`): read ``--clouds-yaml`` and
``--cacert``, create the credentials and server groups before install (:mod:`.provision`),
remove what the cluster left in the cloud after delete, its service releases (OCCM, Cinder
CSI: :mod:`.services`), ``cloud.conf`` copied into the workload cluster (:mod:`.workload`)
and CAPO's part of the versions table (:mod:`.versions_source`). Only the commands that
touch a cloud or a cluster load it; ``validate`` and ``render`` load :mod:`.provider`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from scs_templates._core.errors import ToolError
from scs_templates._core.progress import Progress, quiet
from scs_templates.providers.interface import CloudOptions, Management
from scs_templates.providers.openstack import provision, versions_source
from scs_templates.providers.openstack import values as os_values
from scs_templates.providers.openstack.credentials_secret import (
    parse_credentials_secret,
    read_credentials_file,
)
from scs_templates.providers.openstack.provider import OPENSTACK
from scs_templates.providers.openstack.section import section
from scs_templates.providers.openstack.services import PROXY_PROTOCOL_ANNOTATION, SERVICES
from scs_templates.providers.openstack.workload import sync_cloud_config
from scs_templates.providers.operations import Operations

if TYPE_CHECKING:
    import argparse

    from scs_templates._contract.services import ServiceInfo
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.kube import KubeClient
    from scs_templates._versions.upstream import ProviderVersions, Upstream

__all__ = ["OPERATIONS", "OpenStackOperations"]


class OpenStackOperations(Operations):
    """OpenStack's cloud calls, credentials and service releases."""

    def cloud_options(self, args: argparse.Namespace) -> CloudOptions:
        """``--os-cloud``, ``--skip-openstack`` and (install, apply) ``--clouds-yaml`` with
        ``--cacert`` (:mod:`.cli_options`); the files' content is read here and never
        printed."""
        credentials: dict[str, str] | None = None
        if getattr(args, "clouds_yaml", None) is not None:
            cacert = None
            if args.cacert is not None:
                cacert = read_credentials_file(
                    args.cacert, kind="a CA bundle", named=f"--cacert {args.cacert}"
                )
            clouds_yaml = read_credentials_file(
                args.clouds_yaml, kind="a clouds.yaml", named=f"--clouds-yaml {args.clouds_yaml}"
            )
            credentials = {os_values.CLOUDS_YAML_KEY: clouds_yaml}
            if cacert is not None:
                credentials[os_values.CACERT_KEY] = cacert
        return CloudOptions(
            touch=not args.skip_openstack, account=args.os_cloud, credentials=credentials
        )

    def prepare(
        self,
        settings: ClusterSettings,
        options: CloudOptions,
        management: Management,
        progress: Progress = quiet,
    ) -> dict[str, str] | None:
        """The credentials Secret content: from the user's clouds.yaml (``credentials``),
        or a per-cluster application credential ensured now (reused when it still works,
        after the preflight checks, with the server groups), or None."""
        if options.credentials is not None:
            return provision.secrets_from_files(
                settings,
                options.credentials[os_values.CLOUDS_YAML_KEY],
                options.credentials.get(os_values.CACERT_KEY),
            )
        if not options.touch or not provision.manages_credentials(settings):
            return None
        return provision.cluster_secrets_via(
            settings, management, os_cloud=options.account, progress=progress
        )

    def release(
        self,
        settings: ClusterSettings,
        options: CloudOptions,
        *,
        progress: Progress = quiet,
        credentials: Mapping[str, str] | None = None,
    ) -> None:
        """Step (c) of delete: the cluster's load balancers, floating IPs, security groups,
        volumes, leftover ports and network, server groups and per-cluster credentials
        (those named as the cluster's, and a legacy-named one ``credentials``, the removed
        credentials Secret, held)."""
        if not options.touch:
            return
        stored = parse_credentials_secret(credentials or {}, section(settings).cloud)
        problems = provision.release_cluster_resources(
            settings,
            os_cloud=options.account,
            progress=progress,
            dry_run=options.dry_run,
            keep_volumes=options.keep_volumes,
            held=frozenset(credential.id for credential in stored.values()),
        )
        if problems:
            raise ToolError(
                f"OpenStack leftovers of {settings.name} remain ({len(problems)}): "
                f"{problems[0]}; see `scs-templates openstack cleanup`"
            )

    def proxy_protocol_annotations(self) -> dict[str, str]:
        return {PROXY_PROTOCOL_ANNOTATION: "true"}

    def services(self) -> tuple[ServiceInfo, ...]:
        return SERVICES

    def prepare_workload(
        self, settings: ClusterSettings, management: KubeClient, workload: KubeClient
    ) -> str:
        return sync_cloud_config(settings, management, workload)

    def read_versions(self, upstream: Upstream) -> ProviderVersions:
        """CAPO's probed release, contract, compatibility and CRDs (:mod:`.versions_source`)."""
        return versions_source.read_versions(upstream, OPENSTACK.name)


OPERATIONS = OpenStackOperations()
