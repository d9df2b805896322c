"""``validate`` and ``schema``: check settings files, print the JSON Schema."""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import LAYERS_HELP, SET_HELP


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    validate = subparsers.add_parser(
        "validate",
        help="check settings files; print every problem as FILE:LINE:COL: field: message",
        description="Validate one or more settings files. Exit 0 when all are valid, 2 when "
        "any has a problem. Warnings (deprecated settings) go to stderr and do not fail. "
        "For a valid file it also says how network.apiAccess is enforced (load balancer "
        "allowed CIDRs on amphora, control-plane security-group rules on ovn).",
    )
    validate.add_argument(
        "files", nargs="*", metavar="SETTINGS", help="settings file(s), each validated alone"
    )
    validate.add_argument(
        "-f",
        "--settings",
        dest="settings_files",
        action="append",
        metavar="FILE",
        help="validate these files merged into one document (" + LAYERS_HELP + ")",
    )
    validate.add_argument(
        "--set",
        dest="sets",
        action="append",
        metavar="PATH=VALUE",
        help=SET_HELP + "; applied to every document validated",
    )
    validate.add_argument("-q", "--quiet", action="store_true", help="print only problems")
    validate.set_defaults(func="scs_templates._cli.run.settings:run_validate")

    schema = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of the settings file",
        description="Print the JSON Schema (draft 2020-12) of a ClusterSettings document, "
        "the same as schemas/cluster-settings.schema.json.",
    )
    schema.set_defaults(func="scs_templates._cli.run.settings:run_schema")
