"""Entry point of ``scs-templates``: argument parsing, error reporting, exit codes.

Contract (other tools and CI rely on it): exit 0 on success, 2 for bad input, 1 when a tool
underneath failed. Errors are one line on stderr; a traceback only with ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from scs_templates import __version__
from scs_templates.errors import ScsTemplatesError

# Subcommand modules, in the order they appear in --help. Each exposes register(subparsers).
COMMAND_MODULES: tuple[str, ...] = (
    "scs_templates.cli.cmd_settings",
    "scs_templates.cli.cmd_render",
    "scs_templates.cli.cmd_versions",
    "scs_templates.cli.cmd_fleet",
    "scs_templates.cli.cmd_lifecycle",
    "scs_templates.cli.cmd_encryption",
    "scs_templates.cli.cmd_apply",
    "scs_templates.cli.cmd_services",
    "scs_templates.cli.cmd_gitops",
    "scs_templates.cli.cmd_openstack",
    "scs_templates.cli.cmd_migrate",
    "scs_templates.cli.cmd_tools",
)

PROG = "scs-templates"


def build_parser() -> argparse.ArgumentParser:
    """Build the full parser; importing the command modules must stay cheap."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Turn one standardized cluster settings file into Cluster API clusters: "
            "validate it, render the manifests with helm, install them, and manage the "
            "toolchain."
        ),
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks and tool command lines on errors"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code (also used by the console script)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        result = args.func(args)
    except ScsTemplatesError as error:
        if args.debug:
            raise
        problems = getattr(error, "problems", None)
        if problems:  # a SettingsError: one line per problem, FILE:LINE:COL: field: message
            for problem in problems:
                print(str(problem), file=sys.stderr)
        else:
            print(f"{PROG}: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout closed by a pager or `head`: not an error of ours.
        return 0
    except Exception as error:  # an unexpected bug: one line unless --debug
        if args.debug:
            raise
        print(
            f"{PROG}: internal error: {type(error).__name__}: {error} (rerun with --debug)",
            file=sys.stderr,
        )
        return 1
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
