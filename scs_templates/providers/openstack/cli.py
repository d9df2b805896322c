"""``scs-templates openstack``: per-cluster credentials, preflight checks and cleanup.

openstacksdk is imported only when a command runs (inside :mod:`scs_templates.providers.openstack`).
Secrets are never printed: ``appcred create`` shows the credential ID and name, and writes
the Secret's content only to the file named by ``--write-secret`` (mode 0600, atomic).
"""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import (
    cluster_options,
    path_argument,
    poll_option,
    settings_arguments,
    usage,
)
from scs_templates._clikit.examples import examples_block

#: The example block of each command's help (the key: its words after scs-templates).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "openstack": ("scs-templates openstack preflight cluster.yaml",),
    "openstack appcred": ("scs-templates openstack appcred create cluster.yaml",),
    "openstack appcred create": (
        "scs-templates openstack appcred create cluster.yaml --os-cloud admin",
        "scs-templates openstack appcred create cluster.yaml --write-secret secret.yaml",
    ),
    "openstack appcred delete": ("scs-templates openstack appcred delete cluster.yaml",),
    "openstack appcred rotate": (
        "scs-templates openstack appcred rotate cluster.yaml --dry-run",
        "scs-templates openstack appcred rotate cluster.yaml --kubeconfig mgmt.yaml",
    ),
    "openstack preflight": ("scs-templates openstack preflight cluster.yaml --os-cloud prod",),
    "openstack cleanup": ("scs-templates openstack cleanup cluster.yaml --dry-run",),
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``openstack appcred create|delete|rotate``, ``openstack preflight``,
    ``openstack cleanup``."""
    openstack = subparsers.add_parser(
        "openstack",
        epilog=examples_block(EXAMPLES["openstack"]),
        help="per-cluster OpenStack credentials, preflight checks and cleanup",
        description=(
            "Talk to the OpenStack cloud of a cluster. The cloud entry comes from clouds.yaml "
            "(OS_CLIENT_CONFIG_FILE, ./clouds.yaml, ~/.config/openstack/clouds.yaml, "
            "/etc/openstack/clouds.yaml); its name from --os-cloud or spec.openstack.cloud."
        ),
    )
    openstack.set_defaults(func=lambda _args: usage(openstack))
    actions = openstack.add_subparsers(dest="openstack_command", metavar="ACTION")
    _register_appcred(actions)
    _register_checks(actions)


def _register_appcred(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``openstack appcred create|delete|rotate``."""
    appcred = actions.add_parser(
        "appcred",
        epilog=examples_block(EXAMPLES["openstack appcred"]),
        help="create, rotate or delete the cluster's restricted application credential(s)",
        description=(
            "Manage $PREFIX-$CLUSTER-appcred (and $PREFIX-$CLUSTER-appcred-workload when "
            "spec.openstack.applicationCredential.separateWorkload): restricted application "
            "credentials created with the cloud entry's own (unrestricted) credential."
        ),
    )
    appcred.set_defaults(func=lambda _args: usage(appcred))
    appcred_actions = appcred.add_subparsers(dest="appcred_command", metavar="ACTION")
    _register_appcred_create(appcred_actions)
    delete = appcred_actions.add_parser(
        "delete",
        epilog=examples_block(EXAMPLES["openstack appcred delete"]),
        help="delete the cluster's credential(s); deleting again is harmless",
    )
    _common(delete)
    delete.set_defaults(func="scs_templates.providers.openstack.cli_run:run_appcred_delete")
    _register_appcred_rotate(appcred_actions)


def _register_appcred_create(
    appcred_actions: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """``openstack appcred create``: create or reuse, optionally writing the Secret."""
    create = appcred_actions.add_parser(
        "create",
        epilog=examples_block(EXAMPLES["openstack appcred create"]),
        help="create the credential(s), or reuse them when the stored secret still works",
        description=(
            "Create the restricted credential(s), or reuse existing ones whose secret (read "
            "from --existing-secret, default: the --write-secret file if it exists) still "
            "authenticates; otherwise they are deleted and created again. Prints ID and name "
            "only, never the secret."
        ),
    )
    _common(create)
    create.add_argument(
        "--write-secret",
        type=path_argument,
        metavar="FILE",
        help="write the cluster's credentials Secret (a Kubernetes Secret manifest with "
        "clouds.yaml and cloud.conf) to FILE, mode 0600, atomically",
    )
    create.add_argument(
        "--existing-secret",
        type=path_argument,
        metavar="FILE",
        help="a credentials Secret manifest from an earlier run whose secrets are reused "
        "(default: the --write-secret FILE when it exists)",
    )
    create.set_defaults(func="scs_templates.providers.openstack.cli_run:run_appcred_create")


def _register_appcred_rotate(
    appcred_actions: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """``openstack appcred rotate``: the next credential generation, switched to safely."""
    rotate = appcred_actions.add_parser(
        "rotate",
        epilog=examples_block(EXAMPLES["openstack appcred rotate"]),
        help="make a new credential, switch the cluster's Secret and its users to it, then "
        "delete the old one",
        description=(
            "Create the next generation of the cluster's restricted credential(s), write it "
            "into the credentials Secret on the management cluster (through the Kubernetes "
            "API, never helm), ask CAPO to reconcile the cluster, rewrite the workload "
            "cluster's kube-system/cloud-config and restart OCCM and Cinder CSI onto it, "
            "wait for their rollouts and for CAPO to have reconciled the OpenStackCluster "
            "with the new credential (its Ready condition), and only then delete the old "
            "credential(s). A run "
            "that stopped half way is finished by running it again. Prints names and IDs "
            "only, never a secret. Exit 0 done, 2 nothing scs-templates can rotate (no "
            "Secret, a credential the user brings), 1 OpenStack or an API failed or a "
            "restart or CAPO's reconcile did not finish (the old credential is then kept)."
        ),
    )
    cluster_options(rotate)
    _os_cloud(rotate)
    rotate.add_argument(
        "--dry-run", action="store_true", help="list what would be done; change nothing"
    )
    rotate.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="how long to wait for CAPO's reconcile with the new credential and for the "
        "OCCM and Cinder CSI restarts (default 600)",
    )
    poll_option(rotate)
    rotate.set_defaults(func="scs_templates.providers.openstack.cli_run:run_appcred_rotate")


def _register_checks(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``openstack preflight`` and ``openstack cleanup``."""
    preflight = actions.add_parser(
        "preflight",
        epilog=examples_block(EXAMPLES["openstack preflight"]),
        help="check the cloud before installing: external network, node CIDR, names, "
        "flavors, images",
        description=(
            "Print one line per check (ok / failed / skipped). Exit 0 when nothing failed, "
            "2 when a failure is in the settings (a named network, flavor or image is missing, "
            "the node CIDR overlaps), 1 when only the cloud's state is at fault."
        ),
    )
    _common(preflight)
    preflight.set_defaults(func="scs_templates.providers.openstack.cli_run:run_openstack_preflight")

    cleanup = actions.add_parser(
        "cleanup",
        epilog=examples_block(EXAMPLES["openstack cleanup"]),
        help="delete the leftover ports, security groups, subnet and network of a deleted cluster",
    )
    _common(cleanup)
    cleanup.add_argument(
        "--dry-run", action="store_true", help="list what would be deleted; change nothing"
    )
    cleanup.set_defaults(func="scs_templates.providers.openstack.cli_run:run_cleanup")


def _common(parser: argparse.ArgumentParser) -> None:
    settings_arguments(parser)
    _os_cloud(parser)


def _os_cloud(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--os-cloud",
        metavar="NAME",
        help="clouds.yaml entry to use (default: spec.openstack.cloud of the settings)",
    )


# --------------------------------------------------------------------------- appcred


# --------------------------------------------------------------------------- preflight


# --------------------------------------------------------------------------- cleanup


# --------------------------------------------------------------------------- Secret files
