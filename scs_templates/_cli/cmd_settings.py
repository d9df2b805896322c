"""``validate`` and ``schema``: check settings files, print the JSON Schema."""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    from typing import Any


def register(subparsers: Any) -> None:
    validate = subparsers.add_parser(
        "validate",
        help="check settings files; print every problem as FILE:LINE:COL: field: message",
        description="Validate one or more settings files. Exit 0 when all are valid, 2 when "
        "any has a problem. Warnings (deprecated settings) go to stderr and do not fail. "
        "For a valid file it also says how network.apiAccess is enforced (load balancer "
        "allowed CIDRs on amphora, control-plane security-group rules on ovn).",
    )
    # deferred: scs_templates._clikit.common
    from scs_templates._clikit.common import LAYERS_HELP, SET_HELP

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
    validate.set_defaults(func=run_validate)

    schema = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of the settings file",
        description="Print the JSON Schema (draft 2020-12) of a ClusterSettings document, "
        "the same as schemas/cluster-settings.schema.json.",
    )
    schema.set_defaults(func=run_schema)


def run_validate(args: argparse.Namespace) -> int:
    from scs_templates._clikit.common import print_warnings  # deferred: scs_templates._clikit
    from scs_templates._settings.layers import load_layers  # deferred: scs_templates._settings
    from scs_templates._settings.problems import SettingsError  # deferred: scs_templates._settings

    documents = [[file] for file in args.files]
    if args.settings_files:
        documents.append(args.settings_files)
    if not documents:
        from scs_templates._core.errors import InputError  # deferred: scs_templates._core.errors

        raise InputError("validate: give SETTINGS or -f FILE")
    status = 0
    for files in documents:
        try:
            loaded = load_layers(files, args.sets or (), plain=True)
        except SettingsError as error:
            for problem in error.problems:
                print(str(problem), file=sys.stderr)
            status = 2
            continue
        print_warnings(loaded)
        if not args.quiet:
            # deferred: scs_templates.providers.api_access
            from scs_templates.providers.api_access import api_access_plan

            print(f"{loaded.file}: valid")
            print(f"{loaded.file}: {api_access_plan(loaded.settings).describe()}")
    return status


def run_schema(args: argparse.Namespace) -> int:
    from scs_templates._settings.schema import schema_text  # deferred: pydantic

    sys.stdout.write(schema_text())
    return 0
