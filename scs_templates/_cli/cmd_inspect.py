"""``kubeconfig`` and ``describe``: day-2 views of an installed cluster, as ``clusterctl get
kubeconfig`` and ``clusterctl describe cluster`` give them.

Both read the management cluster only (``--kubeconfig``/``--context``). The workload
kubeconfig is a credential: it goes to stdout or to a 0600 file written atomically, and its
keys and tokens are registered so that no log line or error message can show them.
"""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import cluster_options, path_argument, report_format_option


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``kubeconfig`` and ``describe`` (what runs each is named, not imported)."""
    kubeconfig = subparsers.add_parser(
        "kubeconfig",
        help="print or write the workload cluster's admin kubeconfig",
        description=(
            "Read the workload cluster's admin kubeconfig from the Secret "
            "<cluster>-kubeconfig that Cluster API keeps on the management cluster, and "
            "print it, or write it (mode 0600, atomically) with --output-file. Exit 0, 2 bad "
            "input (settings, management kubeconfig), 1 the Secret does not exist (yet) or "
            "the API failed."
        ),
    )
    cluster_options(kubeconfig)
    kubeconfig.add_argument(
        "--output-file",
        type=path_argument,
        metavar="FILE",
        help="write the kubeconfig to FILE (0600, replaced atomically) instead of stdout",
    )
    kubeconfig.set_defaults(func="scs_templates._cli.run.inspect:run_kubeconfig")

    describe = subparsers.add_parser(
        "describe",
        help="show the cluster's Cluster API objects as a tree with their Ready conditions",
        description=(
            "Show the Cluster of SETTINGS, its infrastructure, control plane, machine "
            "deployments, machines and their infrastructure objects as a tree, each with its "
            "Ready (else Available) condition and, when not ready, the reason and message; "
            "coloured on a terminal (NO_COLOR switches it off). -o yaml|json print the tree "
            "as data. Exit 0, 2 bad input, 1 the Cluster does not exist or the API failed."
        ),
    )
    cluster_options(describe)

    report_format_option(describe, "; yaml and json: the tree as data")
    describe.set_defaults(func="scs_templates._cli.run.inspect:run_describe")
