"""``kubeconfig`` and ``describe``: day-2 views of an installed cluster, as ``clusterctl get
kubeconfig`` and ``clusterctl describe cluster`` give them.

Both read the management cluster only (``--kubeconfig``/``--context``). The workload
kubeconfig is a credential: it goes to stdout or to a 0600 file written atomically, and its
keys and tokens are registered so that no log line or error message can show them.
"""

from __future__ import annotations

import os
import sys

from scs_templates._clikit.common import cluster_options, load_args, path_argument

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``kubeconfig`` and ``describe``; importing this module stays cheap."""
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
    kubeconfig.set_defaults(func=run_kubeconfig)

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
    # deferred: scs_templates._clikit.output
    from scs_templates._clikit.output import report_format_option

    report_format_option(describe, "; yaml and json: the tree as data")
    describe.set_defaults(func=run_describe)


def run_kubeconfig(args: argparse.Namespace) -> int:
    from scs_templates._core.errors import ToolError  # deferred: scs_templates._core.errors
    from scs_templates._core.naming import kubeconfig_secret  # deferred: scs_templates._core.naming
    from scs_templates._lifecycle.target import target_of  # deferred: scs_templates._lifecycle
    from scs_templates._tools.kube import KubeClient  # deferred: scs_templates._tools.kube

    target = target_of(load_args(args).settings)
    with KubeClient(args.kubeconfig, args.context) as client:
        value = client.cluster_kubeconfig(target.namespace, target.cluster)
    if value is None:
        raise ToolError(
            f"Secret {target.namespace}/{kubeconfig_secret(target.cluster)} not found: Cluster "
            "API writes it once the control plane is initialized (`scs-templates describe`)"
        )
    register_kubeconfig(value)
    if args.output_file is None:
        sys.stdout.write(value if value.endswith("\n") else value + "\n")
        return 0
    from scs_templates._core import atomic  # deferred: scs_templates._core.atomic

    atomic.write_file(args.output_file, value, private=True)
    print(f"wrote {args.output_file}", file=sys.stderr)
    return 0


#: The fields of a kubeconfig's ``users[].user`` that are credentials.
_CREDENTIAL_FIELDS = ("client-key-data", "client-certificate-data", "token", "password")


def register_kubeconfig(text: str) -> None:
    """Register the credentials of a kubeconfig (keys, tokens) as secrets: from here on no
    message or log line shows them, whatever goes wrong."""
    from ruamel.yaml import YAML  # deferred: ruamel
    from ruamel.yaml.error import YAMLError  # deferred: ruamel

    from scs_templates._core import secrets  # deferred: scs_templates._core.secrets

    try:
        data = YAML(typ="safe").load(text)
    except YAMLError:
        return
    users = data.get("users") if isinstance(data, dict) else None
    for entry in users if isinstance(users, list) else []:
        user = entry.get("user") if isinstance(entry, dict) else None
        if isinstance(user, dict):
            secrets.register(*(str(user[k]) for k in _CREDENTIAL_FIELDS if user.get(k)))


def run_describe(args: argparse.Namespace) -> int:
    from scs_templates._core.errors import ToolError  # deferred: scs_templates._core.errors
    from scs_templates._lifecycle.target import target_of  # deferred: scs_templates._lifecycle
    from scs_templates._tools.kube import KubeClient  # deferred: scs_templates._tools.kube

    # deferred: scs_templates._tools.kube.describe
    from scs_templates._tools.kube.describe import build_tree, collect, tree_text

    target = target_of(load_args(args).settings)
    with KubeClient(args.kubeconfig, args.context) as client:
        objects = collect(client, target.namespace, target.cluster)
    if objects is None:
        raise ToolError(
            f"Cluster {target.namespace}/{target.cluster} not found on the management cluster"
        )
    tree = build_tree(objects)
    if args.output != "text":
        from scs_templates._clikit.output import data_text  # deferred: scs_templates._clikit.output

        sys.stdout.write(data_text(tree.to_dict(), args.output))
        return 0
    sys.stdout.write(tree_text(tree, colour=_colour()))
    return 0


def _colour() -> bool:
    """Colour on a terminal unless ``NO_COLOR`` is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False
