"""``scs-templates migrate``: turn a KaaS v1 ``clusterctl.yaml`` into a settings document."""

from __future__ import annotations

import sys

from scs_templates._clikit.common import path_argument
from scs_templates._clikit.examples import examples_block
from scs_templates._clikit.output import format_option, output_format

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any


#: The example block of each command's help (the key: its words after scs-templates).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "migrate": ("scs-templates migrate clusterctl.yaml --name prod --output-file cluster.yaml",),
}


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``migrate``; importing this module stays cheap."""
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
    parser.set_defaults(func=_migrate)


def _migrate(args: argparse.Namespace) -> int:
    from scs_templates._core.errors import InputError  # deferred: scs_templates._core.errors

    # deferred: scs_templates._core.textinput
    from scs_templates._core.textinput import display_name
    from scs_templates.providers.openstack.migrate.kaas_v1 import (
        migrate_kaas_v1,  # deferred: ruamel
    )

    # deferred: scs_templates.providers.openstack.migrate.reading
    from scs_templates.providers.openstack.migrate.reading import read_input

    output_format(args, ("yaml",), default="yaml", legacy="FILE")
    text = read_input(args.file)
    profile = read_input(args.proxy_profile) if args.proxy_profile else None
    result = migrate_kaas_v1(
        text,
        name=args.name,
        prefix=args.prefix,
        file=display_name(args.file),
        proxy_profile=profile,
        proxy_file=display_name(args.proxy_profile) if args.proxy_profile else "proxy.sh",
    )
    output: Path | None = args.output_file
    if output is not None:
        from scs_templates._core import atomic  # deferred: scs_templates._core.atomic

        try:  # complete before the name appears: a full disk never leaves an empty FILE
            atomic.create_file(output, result.text)
        except FileExistsError:
            raise InputError(f"{output}: exists already; not overwritten") from None
        except OSError as error:
            raise InputError(f"{output}: cannot write: {error.strerror}") from None
    else:
        sys.stdout.write(result.text)
        sys.stdout.flush()
    for line in result.report_lines:
        print(line, file=sys.stderr)
    return 0
