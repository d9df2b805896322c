"""``install``, ``status``, ``diff`` and ``delete``: the cluster on the management cluster.

Exit codes follow :mod:`scs_templates._cli.main`: 0 success, 2 bad input (invalid settings,
refused version change, unreadable kubeconfig, missing ``--yes``), 1 when helm or the API
fails or a wait times out. ``diff`` exits 0 and prints a summary; with ``--exit-code`` it
exits 3 when there are differences. Progress goes to stderr (one rewritten line on a
terminal, plain lines otherwise); results go to stdout. Secrets are never printed.
"""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import (
    cluster_options,
    parse_duration,
    poll_option,
    provider_options,
    report_format_option,
)

#: ``diff --exit-code`` when the installed release differs from the rendered manifests.
EXIT_DIFFERENCES = 3


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``install``, ``status``, ``diff`` and ``delete`` (each names what runs it)."""
    _register_install(subparsers)
    _register_status(subparsers)
    _register_diff(subparsers)
    _register_delete(subparsers)


def _register_install(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``install``: helm upgrade --install, optionally waiting for the Cluster."""
    install = subparsers.add_parser(
        "install",
        help="install or upgrade the cluster on the management cluster (helm upgrade --install)",
        description=(
            "Install or upgrade the cluster described by SETTINGS: helm upgrade --install into "
            "the settings' namespace (created if missing), rolled back if it fails. Kubernetes "
            "may move up one minor version at a time and never back (exit 2 otherwise). With "
            "--wait, follow the Cluster's conditions until it is Available (exit 1 on "
            "timeout). A clusterclass cluster stays on its installed ClusterClass unless "
            "--rebase-class (exit 2 otherwise). Exit 0 ok, 2 bad input, 1 helm/API failure "
            "or timeout."
        ),
    )
    cluster_options(install)
    install.add_argument(
        "--rebase-class",
        action="store_true",
        help="move a clusterclass cluster onto this release's ClusterClass (the topology "
        "controller rolls what changes); refused without it",
    )
    install.add_argument(
        "--wait", action="store_true", help="wait until the Cluster's Available condition is True"
    )
    install.add_argument(
        "--timeout",
        type=parse_duration,
        default=1800.0,
        metavar="DURATION",
        help="how long --wait waits (default 30m; e.g. 45m, 1h, 90s)",
    )
    provider_options(install, credentials=True)
    poll_option(install)
    install.set_defaults(func="scs_templates._cli.run.lifecycle:run_install")


def _register_status(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``status``: the release and the Cluster's conditions."""
    status = subparsers.add_parser(
        "status",
        help="show the release and the Cluster's phase and conditions",
        description=(
            "Show the helm release of SETTINGS and the Cluster object's phase and conditions. "
            "Exit 0 also when nothing is installed (the output says so)."
        ),
    )
    cluster_options(status)

    report_format_option(status)
    status.set_defaults(func="scs_templates._cli.run.lifecycle:run_status")


def _register_diff(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``diff``: the rendered manifests against the installed release."""
    diff = subparsers.add_parser(
        "diff",
        help="compare the rendered manifests with the installed release",
        description=(
            "Render SETTINGS and compare each object (by kind/namespace/name) with the installed "
            "release's manifest (helm get manifest): a unified diff per added, removed or "
            "changed object, then a summary. Secret values are never compared or shown. Exit 0 "
            f"(with --exit-code: {EXIT_DIFFERENCES} when there are differences); 1 is kept for "
            "helm/API failures."
        ),
    )
    cluster_options(diff)
    diff.add_argument(
        "--exit-code",
        action="store_true",
        help=f"exit {EXIT_DIFFERENCES} when there are differences",
    )
    diff.set_defaults(func="scs_templates._cli.run.lifecycle:run_diff")


def _register_delete(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``delete``: the cluster, its release and its leftovers, in order."""
    delete = subparsers.add_parser(
        "delete",
        help="delete the cluster: the Cluster object first, then the release and its leftovers",
        description=(
            "Delete the cluster of SETTINGS, in order: (a) while the workload cluster is "
            "reachable, its Gateways, LoadBalancer Services and PersistentVolumeClaims, "
            "waiting until the cloud controller manager and CSI driver removed their load "
            "balancers and volumes; (b) the Cluster object, waiting until Cluster API has "
            "removed it, then the release, the kept templates and the credentials Secret; "
            "(c) what the provider finds left in the cloud that belongs to the cluster (load "
            "balancers, floating IPs, security groups, volumes and snapshots, ports, the "
            "network, server groups, application credentials). Everything removed or kept is "
            "printed. On timeout nothing else is deleted (exit 1). Asks for confirmation "
            "unless --yes or --dry-run."
        ),
    )
    cluster_options(delete)
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    provider_options(delete, credentials=False)
    delete.add_argument(
        "--timeout",
        type=parse_duration,
        default=1800.0,
        metavar="DURATION",
        help="how long to wait for the Cluster to disappear (default 30m)",
    )
    delete.add_argument(
        "--keep-volumes",
        action="store_true",
        help="keep the cluster's volumes: its PersistentVolumeClaims and the Cinder volumes "
        "and snapshots of the cluster are listed, not deleted",
    )
    delete.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing: list what delete would remove and keep, step by step",
    )
    poll_option(delete)
    delete.set_defaults(func="scs_templates._cli.run.lifecycle:run_delete")


# --------------------------------------------------------------------------- helpers


# --------------------------------------------------------------------------- commands
