"""``completion bash|zsh|fish``: the shell completion script, generated from the parser.

shtab writes a STATIC script from the argparse parser (every command, option and choice),
so completing costs the shell nothing and ``scs-templates`` is never started to complete a
word; ``--help`` and every other command never import shtab. Arguments that name files or
folders complete paths (docs/install.md says how to install the script).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from typing import Any

SHELLS = ("bash", "zsh", "fish")
#: Metavars of arguments that name a file (completed as paths) or a folder.
FILE_METAVARS = frozenset({"SETTINGS", "FILE", "CLUSTERCTL_YAML"})
DIR_METAVARS = frozenset({"DIR"})


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``completion``; importing this module stays cheap."""
    completion = subparsers.add_parser(
        "completion",
        help="print the shell completion script (bash, zsh or fish)",
        description="Print the completion script of scs-templates for SHELL on stdout: every "
        "command, option and choice; settings files and folders complete as paths. The "
        "script is static (made from this release's parser): install it once, renew it "
        "after an upgrade. See docs/install.md.",
    )
    completion.add_argument("shell", metavar="SHELL", choices=SHELLS, help="bash, zsh or fish")
    completion.set_defaults(func=run_completion)


def run_completion(args: argparse.Namespace) -> int:
    # deferred: scs_templates._cli.cmd_render
    from scs_templates._cli.cmd_render import write_stdout

    write_stdout(script(args.shell))
    return 0


def script(shell: str) -> str:
    """The completion script of the whole command line for ``shell``."""
    import shtab  # deferred: shtab

    from scs_templates._cli.main import build_parser  # deferred: scs_templates._cli.main

    parser = build_parser()
    _mark_paths(parser, shtab.FILE, shtab.DIRECTORY)
    text: str = shtab.complete(parser, shell=shell)
    return text if text.endswith("\n") else text + "\n"


def _mark_paths(parser: argparse.ArgumentParser, file: Any, directory: Any) -> None:
    """Tell shtab which arguments complete as files or folders (by their metavar)."""
    import argparse  # deferred: argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _mark_paths(sub, file, directory)
        elif action.metavar in FILE_METAVARS:
            action.complete = file  # type: ignore[attr-defined]
        elif action.metavar in DIR_METAVARS:
            action.complete = directory  # type: ignore[attr-defined]
