"""``completion bash|zsh|fish``: the shell completion script, generated from the parser.

shtab writes a STATIC script from the argparse parser (every command, option and choice),
so completing costs the shell nothing and ``scs-templates`` is never started to complete a
word; ``--help`` and every other command never import shtab. Arguments that name files or
folders complete paths (docs/install.md says how to install the script).
"""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh", "fish")
#: Metavars of arguments that name a file (completed as paths) or a folder.
FILE_METAVARS = frozenset({"SETTINGS", "FILE", "CLUSTERCTL_YAML"})
DIR_METAVARS = frozenset({"DIR"})


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``completion`` (what runs each is named, not imported)."""
    completion = subparsers.add_parser(
        "completion",
        help="print the shell completion script (bash, zsh or fish)",
        description="Print the completion script of scs-templates for SHELL on stdout: every "
        "command, option and choice; settings files and folders complete as paths. The "
        "script is static (made from this release's parser): install it once, renew it "
        "after an upgrade. See docs/install.md.",
    )
    completion.add_argument("shell", metavar="SHELL", choices=SHELLS, help="bash, zsh or fish")
    completion.set_defaults(func="scs_templates._cli.run.completion:run_completion")
