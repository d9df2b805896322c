"""``versions``: print the versions table (Kubernetes, Cluster API, kind images, charts)."""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import report_format_option


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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

    report_format_option(versions, "; yaml and json: the table as data, for tools")
    versions.set_defaults(func="scs_templates._cli.run.versions:run_versions")
