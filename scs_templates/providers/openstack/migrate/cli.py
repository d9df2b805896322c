"""``scs-templates migrate``: turn a KaaS v1 ``clusterctl.yaml`` into a settings document."""

from __future__ import annotations

import argparse

#: The example block of each command's help (the key: its words after scs-templates).
from scs_templates._clikit.arguments import format_option, path_argument
from scs_templates._clikit.examples import examples_block

#: The example block of each command's help (the key: its words after scs-templates).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "migrate": ("scs-templates migrate clusterctl.yaml --name prod --output-file cluster.yaml",),
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``migrate`` (what runs each is named, not imported)."""
    parser = subparsers.add_parser(
        "migrate",
        epilog=examples_block(EXAMPLES["migrate"]),
        help="convert a SCS KaaS v1 clusterctl.yaml into a commented settings file",
        description=(
            "Read a KaaS v1 (k8s-cluster-api-provider R3..R6) clusterctl.yaml and print the "
            "equivalent ClusterSettings document, with comments naming the source keys, on "
            "stdout. Every input key is reported on stderr: mapped, obsolete, secret (never "
            "copied) or unknown. See docs/migration-from-kaas-v1.md."
        ),
    )
    parser.add_argument(
        "file",
        metavar="CLUSTERCTL_YAML",
        help="the KaaS v1 clusterctl.yaml (- reads standard input)",
    )
    parser.add_argument(
        "--name",
        default="testcluster",
        help="cluster name, metadata.name (default: testcluster, the KaaS v1 default)",
    )
    parser.add_argument(
        "--prefix", default="capi", help="resource name prefix, spec.prefix (default: capi)"
    )
    parser.add_argument(
        "--proxy-profile",
        metavar="FILE",
        help="the management host's /etc/profile.d/proxy.sh: its HTTP_PROXY, HTTPS_PROXY "
        "and NO_PROXY become spec.network.proxy (KaaS v1 R6 took the proxy from there)",
    )
    parser.add_argument(
        "--output-file",
        type=path_argument,
        metavar="FILE",
        help="write the settings to FILE instead of stdout (refuses to overwrite)",
    )
    format_option(parser, ("yaml",), default="yaml", legacy="FILE")
    parser.set_defaults(func="scs_templates.providers.openstack.migrate.cli_run:run_migrate")
