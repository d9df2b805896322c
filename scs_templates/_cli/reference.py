"""The command reference at the end of docs/cli.md, generated from the parser.

``python -m scs_templates._cli.reference --write`` rewrites the part of docs/cli.md between
:data:`BEGIN` and :data:`END`; tests/render/test_cli_reference.py fails while the file and the
parser disagree. Per command (in --help's order, sub-commands after their group): the usage
line, the description, a table of the arguments and options with their help, and the
examples of its --help. A fixed width (:data:`WIDTH`) keeps the text the same on every
terminal.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scs_templates._cli.main import build_parser
from scs_templates._core import atomic

BEGIN = "<!-- BEGIN GENERATED: python -m scs_templates._cli.reference --write -->"
END = "<!-- END GENERATED -->"
WIDTH = 100
DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=WIDTH)


def _commands(
    parser: argparse.ArgumentParser,
) -> list[tuple[argparse.ArgumentParser, str]]:
    """Every command's parser with its help line, depth first in --help's order."""
    found: list[tuple[argparse.ArgumentParser, str]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((sub, helps.get(name, "")))
                found += _commands(sub)
    return found


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _rows(parser: argparse.ArgumentParser) -> list[str]:
    formatter = _formatter(parser.prog)
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            metavar = (
                "" if action.nargs == 0 else formatter._format_args(action, action.dest.upper())
            )
            name = ", ".join(
                f"`{' '.join(filter(None, (o, metavar)))}`" for o in action.option_strings
            )
        else:
            name = f"`{formatter._format_args(action, action.dest.upper())}`"
        help_text = formatter._expand_help(action) if action.help else ""
        if action.choices is not None and action.metavar is not None:
            help_text += f" (one of: {', '.join(map(str, action.choices))})"
        rows.append(f"| {_cell(name)} | {_cell(help_text)} |")
    return rows


def text() -> str:
    """The generated reference (between the markers)."""
    parts = []
    for parser, help_line in _commands(build_parser()):
        usage = _formatter(parser.prog)
        usage.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, "")
        lines = [f"### `{parser.prog}`", ""]
        if help_line:
            lines += [f"{help_line[0].upper()}{help_line[1:]}.", ""]
        lines += ["```", usage.format_help().strip(), "```", ""]
        if parser.description:
            lines += [" ".join(parser.description.split()), ""]
        rows = _rows(parser)
        if rows:
            lines += ["| argument | meaning |", "| --- | --- |", *rows, ""]
        if parser.epilog:
            lines += ["```console", *(line.strip() for line in parser.epilog.splitlines()[1:])]
            lines += ["```", ""]
        parts.append("\n".join(lines))
    return "\n".join(parts)


def document(current: str) -> str:
    """``current`` (docs/cli.md) with the generated part replaced (appended if missing)."""
    body = f"{BEGIN}\n\n{text()}\n{END}\n"
    if BEGIN in current and END in current:
        head = current[: current.index(BEGIN)]
        tail = current[current.index(END) + len(END) :].lstrip("\n")
        return head + body + tail
    return current.rstrip("\n") + "\n\n## Command reference\n\n" + body


def main(argv: list[str]) -> int:
    """``--write``: rewrite docs/cli.md; ``--check``: exit 1 when it is out of date."""
    current = DOC.read_text(encoding="utf-8")
    wanted = document(current)
    if "--write" in argv:
        if wanted != current:
            atomic.write_file(DOC, wanted)
        return 0
    if wanted != current:
        print(f"{DOC} is out of date: python -m scs_templates._cli.reference --write")
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
