"""``apply``: the cluster plus its standard services (CNI, CCM, CSI, metrics-server, ...).

Exit codes follow :mod:`scs_templates._cli.main`: 0 success (also when nothing changed),
2 bad input (invalid settings, a refused CNI switch, a local chart mirror missing charts,
an unreadable kubeconfig), 1 when helm, helmfile or the API fails. The plan (one line per
release: install, upgrade, unchanged, keep, remove) goes to stdout, with the superseded
machine templates the cluster release's install pruned (the line ``install`` prints);
progress to stderr. The workload kubeconfig is never printed.
"""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import (
    chart_mirror_option,
    cluster_options,
    parse_duration,
    poll_option,
    provider_options,
)

#: ``apply --help``.
DESCRIPTION = (
    "Install or upgrade the cluster of SETTINGS on the management cluster, read the "
    "workload cluster's kubeconfig from the Secret <cluster>-kubeconfig, then `helmfile "
    "sync` the standard services (CNI, the provider's cloud controller manager and CSI "
    "driver, metrics-server, Gateway API, cert-manager, Flux, the deprecated "
    "ingress-nginx) into the workload "
    "cluster and the cluster-autoscaler (when a group autoscales) next to the Cluster on "
    "the management cluster. Only releases whose chart, version or values differ are "
    "synced: a second run with the same settings changes nothing. Disabled services that "
    "are deployed are kept unless --force-remove. A CNI switch is refused (exit 2) unless "
    "--allow-cni-switch. Exit 0 ok, 2 bad input, 1 tool/API failure."
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``apply`` (what runs each is named, not imported)."""
    apply = subparsers.add_parser(
        "apply",
        help="install/upgrade the cluster and its standard services (helmfile sync)",
        description=DESCRIPTION,
    )
    cluster_options(apply)
    chart_mirror_option(apply)
    apply.add_argument(
        "--force-remove",
        action="store_true",
        help="uninstall deployed services that the settings disable (default: keep them)",
    )
    apply.add_argument(
        "--allow-cni-switch",
        action="store_true",
        help="allow replacing the deployed CNI (disruptive: all nodes need a restart)",
    )
    apply.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing: print what would be installed, upgraded, kept or removed",
    )
    apply.add_argument(
        "--services-only",
        action="store_true",
        help="skip the cluster release; only sync the services of an existing cluster",
    )
    apply.add_argument(
        "--no-wait",
        action="store_true",
        help="do not wait for each service release to become ready (helm --wait)",
    )
    apply.add_argument(
        "--timeout",
        type=parse_duration,
        default=1800.0,
        metavar="DURATION",
        help="how long to wait for the workload kubeconfig Secret (default 30m)",
    )
    provider_options(apply, credentials=True)
    poll_option(apply)
    apply.set_defaults(func="scs_templates._cli.run.apply:run_apply")
