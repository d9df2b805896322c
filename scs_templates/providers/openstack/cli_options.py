"""The OpenStack options of the lifecycle commands (``install``, ``apply``, ``delete``): where
the cluster's credentials come from and whether the cloud may be touched.

Found through the entry-point group ``scs_templates.cloud_options`` (the entry point's name
is the provider's), so the lifecycle commands never name a provider. It only declares the
options (every parser of those commands adds them, ``--help`` too); what they ask for,
:meth:`~scs_templates.providers.openstack.operations.OpenStackOperations.cloud_options`
reads.
"""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import path_argument

__all__ = ["add_arguments"]


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
