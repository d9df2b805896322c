"""What the commands of :mod:`scs_templates._cli.cmd_inspect` do."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from scs_templates._clikit.common import load_args
from scs_templates._clikit.output import data_text
from scs_templates._core import atomic, secrets, yaml_text
from scs_templates._core.errors import ToolError
from scs_templates._core.naming import kubeconfig_secret
from scs_templates._lifecycle.target import target_of
from scs_templates._tools.kube import KubeClient
from scs_templates._tools.kube.describe import build_tree, collect, tree_text

if TYPE_CHECKING:
    import argparse


def run_kubeconfig(args: argparse.Namespace) -> int:
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

    atomic.write_file(args.output_file, value, private=True)
    print(f"wrote {args.output_file}", file=sys.stderr)
    return 0


#: The fields of a kubeconfig's ``users[].user`` that are credentials.
_CREDENTIAL_FIELDS = ("client-key-data", "client-certificate-data", "token", "password")


def register_kubeconfig(text: str) -> None:
    """Register the credentials of a kubeconfig (keys, tokens) as secrets: from here on no
    message or log line shows them, whatever goes wrong."""
    try:
        data = yaml_text.load(text)
    except yaml_text.YAMLError:
        return
    users = data.get("users") if isinstance(data, dict) else None
    for entry in users if isinstance(users, list) else []:
        user = entry.get("user") if isinstance(entry, dict) else None
        if isinstance(user, dict):
            secrets.register(*(str(user[k]) for k in _CREDENTIAL_FIELDS if user.get(k)))


def run_describe(args: argparse.Namespace) -> int:
    target = target_of(load_args(args).settings)
    with KubeClient(args.kubeconfig, args.context) as client:
        objects = collect(client, target.namespace, target.cluster)
    if objects is None:
        raise ToolError(
            f"Cluster {target.namespace}/{target.cluster} not found on the management cluster"
        )
    tree = build_tree(objects)
    if args.output != "text":
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
