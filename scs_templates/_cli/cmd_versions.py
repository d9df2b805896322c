"""``versions``: print the versions table (Kubernetes, Cluster API, kind images, charts)."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    from typing import Any


def register(subparsers: Any) -> None:
    versions = subparsers.add_parser(
        "versions",
        help="print the versions table: Kubernetes minors, Cluster API/CAPO, kind images, "
        "service charts, with their sources",
        description="Print the versions table of this release of scs-templates: the "
        "Kubernetes minors with their newest patch, upstream support status and end of life, "
        "the Cluster API and CAPO releases, the kind node images (pinned by digest) and the "
        "default service chart versions per Kubernetes minor, each with where and when it "
        "was read. See docs/versions.md.",
    )
    from scs_templates._clikit.output import report_format_option  # deferred: scs_templates._clikit

    report_format_option(versions, "; yaml and json: the table as data, for tools")
    versions.set_defaults(func=run_versions)


def run_versions(args: argparse.Namespace) -> int:
    # deferred: scs_templates._cli.cmd_render
    from scs_templates._cli.cmd_render import write_stdout

    # deferred: scs_templates._cli.versions_report
    from scs_templates._cli.versions_report import text
    from scs_templates._versions import table_json  # deferred: scs_templates._versions

    if args.output != "text":
        from scs_templates._clikit.output import data_text  # deferred: scs_templates._clikit.output

        write_stdout(data_text(table_json(), args.output))
    else:
        write_stdout(text())
    return 0
