"""``validate`` and ``schema``: check settings files, print the JSON Schema."""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False  # not typing's: --help imports no typing (see cli/main.py)
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
    validate.add_argument("files", nargs="+", metavar="SETTINGS", help="settings file(s)")
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
    from scs_templates.cli.common import print_warnings
    from scs_templates.settings.problems import SettingsError
    from scs_templates.settings.validate import load_settings

    status = 0
    for file in args.files:
        try:
            loaded = load_settings(file, plain=True)
        except SettingsError as error:
            for problem in error.problems:
                print(str(problem), file=sys.stderr)
            status = 2
            continue
        print_warnings(loaded)
        if not args.quiet:
            from scs_templates.values.api_access import api_access_plan

            print(f"{loaded.file}: valid")
            print(f"{loaded.file}: {api_access_plan(loaded.settings).describe()}")
    return status


def run_schema(args: argparse.Namespace) -> int:
    from scs_templates.settings.schema import schema_text

    sys.stdout.write(schema_text())
    return 0
