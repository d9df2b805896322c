"""What the commands of :mod:`scs_templates._cli.cmd_tools` do."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from scs_templates._core.errors import ToolError
from scs_templates._tools.toolchain.install import describe_source, install_tools
from scs_templates._tools.toolchain.resolve import ENV_HELMFILE, Tool, find_helm, find_helmfile

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path


def run_install(args: argparse.Namespace) -> int:
    def progress(line: str) -> None:
        print(line, flush=True)

    install_tools(
        args.cache_dir,
        names=("helm", "helmfile") if args.all else ("helm",),
        force=args.force,
        progress=None if args.quiet else progress,
    )
    return 0


def run_status(args: argparse.Namespace) -> int:
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
