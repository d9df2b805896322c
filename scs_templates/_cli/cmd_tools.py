"""``scs-templates tools``: install the pinned helm/helmfile and show which binaries are used."""

from __future__ import annotations

import os
import sys

from scs_templates._clikit.common import path_argument, usage

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from scs_templates._tools.toolchain.resolve import Tool


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``tools install`` and ``tools status``; importing this module stays cheap."""
    tools = subparsers.add_parser(
        "tools",
        help="build or inspect the helm/helmfile toolchain",
        description=(
            "Manage the pinned helm 4.3.2 and helmfile 1.8.0. Resolution order: "
            "SCS_TEMPLATES_HELM / SCS_TEMPLATES_HELMFILE, then PATH (if supported: helm 4.1.4+, "
            "helmfile 1.8+), then the tools cache, where `tools install` builds them from the "
            "Go module proxy (docs/toolchain.md)."
        ),
    )
    tools.set_defaults(func=lambda _args: usage(tools))
    actions = tools.add_subparsers(dest="tools_command", metavar="ACTION")

    install = actions.add_parser(
        "install",
        help="build the pinned helm (and with --all helmfile) from verified Go modules",
        description=(
            "Use a supported helm on PATH or named by SCS_TEMPLATES_HELM; else build the pinned "
            "helm with `go build` from the Go module proxy (every module checked against the "
            "committed go.sum) into <cache>/tools. helmfile is built the first time a helmfile "
            "command needs it, or here with --all. Fast when already there."
        ),
    )
    _add_cache_dir(install)
    install.add_argument(
        "--all", action="store_true", help="helmfile too (the helmfile commands need it)"
    )
    install.add_argument(
        "--force", action="store_true", help="build even if a usable binary is already there"
    )
    install.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    install.set_defaults(func=_install)

    status = actions.add_parser(
        "status",
        help="show which helm/helmfile binaries are used, their versions and sources",
    )
    _add_cache_dir(status)
    status.set_defaults(func=_status)


def _add_cache_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        type=path_argument,
        metavar="DIR",
        help="cache root (tools go to DIR/tools); default $SCS_TEMPLATES_CACHE_DIR, "
        "$XDG_CACHE_HOME/scs-templates or ~/.cache/scs-templates",
    )


def _install(args: argparse.Namespace) -> int:
    from scs_templates._tools.toolchain.install import (
        install_tools,  # deferred: scs_templates._tools
    )

    def progress(line: str) -> None:
        print(line, flush=True)

    install_tools(
        args.cache_dir,
        names=("helm", "helmfile") if args.all else ("helm",),
        force=args.force,
        progress=None if args.quiet else progress,
    )
    return 0


def _status(args: argparse.Namespace) -> int:
    from scs_templates._core.errors import ToolError  # deferred: scs_templates._core.errors

    # deferred: scs_templates._tools.toolchain.install
    from scs_templates._tools.toolchain.install import describe_source

    # deferred: scs_templates._tools.toolchain
    from scs_templates._tools.toolchain.resolve import ENV_HELMFILE, find_helm, find_helmfile

    cache_dir: Path | None = args.cache_dir
    # helmfile is built lazily (the first helmfile command): its absence is no failure here,
    # unless SCS_TEMPLATES_HELMFILE names one that is wrong
    checks: list[tuple[str, Callable[[], Tool], bool]] = [
        ("helm", lambda: find_helm(cache_dir=cache_dir), True),
        (
            "helmfile",
            lambda: find_helmfile(cache_dir=cache_dir),
            bool(os.environ.get(ENV_HELMFILE)),
        ),
    ]
    first_failure: ToolError | None = None
    for label, lookup, required in checks:
        try:
            tool = lookup()
        except ToolError as error:
            state = "MISSING" if required else "not built yet (`tools install --all`):"
            print(f"{label:<9} {state} {error}")
            if required:
                first_failure = first_failure or error
            continue
        print(f"{label:<9} {tool.version:<8} {describe_source(tool)}: {tool.path}")
    sys.stdout.flush()
    if first_failure is not None:
        raise first_failure
    return 0
