"""What the commands of :mod:`scs_templates._cli.cmd_completion` do."""

from __future__ import annotations

import argparse
from typing import Any

import shtab

from scs_templates._cli.cmd_completion import DIR_METAVARS, FILE_METAVARS
from scs_templates._cli.main import build_parser
from scs_templates._clikit.output import write_stdout


def run_completion(args: argparse.Namespace) -> int:
    write_stdout(script(args.shell))
    return 0


def script(shell: str) -> str:
    """The completion script of the whole command line for ``shell``."""
    parser = build_parser()
    _mark_paths(parser, shtab.FILE, shtab.DIRECTORY)
    text: str = shtab.complete(parser, shell=shell)
    return text if text.endswith("\n") else text + "\n"


def _mark_paths(parser: argparse.ArgumentParser, file: Any, directory: Any) -> None:
    """Tell shtab which arguments complete as files or folders (by their metavar)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _mark_paths(sub, file, directory)
        elif action.metavar in FILE_METAVARS:
            action.complete = file  # type: ignore[attr-defined]
        elif action.metavar in DIR_METAVARS:
            action.complete = directory  # type: ignore[attr-defined]
