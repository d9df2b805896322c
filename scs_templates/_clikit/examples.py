"""The example block at the end of a command's ``--help`` (argparse's epilog), in one format
for the shipped commands (scs_templates/_cli/examples.py) and a provider's own."""

from __future__ import annotations

from collections.abc import Sequence


def examples_block(lines: Sequence[str]) -> str:
    """``examples:`` and the command lines; a line starting with ``#`` explains the line
    before it (indented under it)."""
    return "examples:\n" + "\n".join(
        f"    {line}" if line.startswith("#") else f"  {line}" for line in lines
    )
