"""The OpenStack options of the lifecycle commands (``install``, ``apply``, ``delete``): where
the cluster's credentials come from and whether the cloud may be touched.

Found through the entry-point group ``scs_templates.cloud_options`` (the entry point's name
is the provider's), so the lifecycle commands never name a provider. Importing it stays
cheap: every parser of those commands adds these options.
"""

from __future__ import annotations

from scs_templates._clikit.arguments import path_argument

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse

    from scs_templates.providers.interface import CloudOptions

__all__ = ["add_arguments", "cloud_options"]


def add_arguments(parser: argparse.ArgumentParser, *, credentials: bool) -> None:
    """``--os-cloud`` and ``--skip-openstack``; with ``credentials`` (install, apply) first
    ``--clouds-yaml`` and ``--cacert``, the credentials Secret's content given by the user."""
    if credentials:
        parser.add_argument(
            "--clouds-yaml",
            type=path_argument,
            metavar="FILE",
            help="OpenStack: use this clouds.yaml (entry spec.openstack.cloud) for the "
            "cluster's credentials Secret instead of a per-cluster application credential "
            "(never printed)",
        )
        parser.add_argument(
            "--cacert",
            type=path_argument,
            metavar="FILE",
            help="OpenStack: CA certificate for the Secret",
        )
    parser.add_argument(
        "--os-cloud",
        metavar="NAME",
        help="OpenStack: clouds.yaml entry of YOUR credential, used to create or delete the "
        "per-cluster application credential and server groups (default: spec.openstack.cloud)",
    )
    parser.add_argument(
        "--skip-openstack",
        action="store_true",
        help="OpenStack: do not touch the cloud (no credentials, server groups or cleanup)",
    )


def cloud_options(args: argparse.Namespace) -> CloudOptions:
    """The options as the provider's :class:`~scs_templates.providers.interface.CloudOptions` (the
    files' content is read here and never printed)."""
    # deferred: scs_templates.providers.interface
    from scs_templates.providers.interface import CloudOptions

    # deferred: scs_templates.providers.openstack.credentials_secret
    from scs_templates.providers.openstack.credentials_secret import read_credentials_file

    # deferred: scs_templates.providers.openstack.values
    from scs_templates.providers.openstack.values import CACERT_KEY, CLOUDS_YAML_KEY

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
        credentials = {CLOUDS_YAML_KEY: clouds_yaml}
        if cacert is not None:
            credentials[CACERT_KEY] = cacert
    return CloudOptions(
        touch=not args.skip_openstack, account=args.os_cloud, credentials=credentials
    )
