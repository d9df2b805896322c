"""What ``templates`` does (its arguments: :mod:`scs_templates._cli.cmd_render`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._clikit.output import write_stdout
from scs_templates._render.catalogue import catalogue

if TYPE_CHECKING:
    import argparse


def run_templates(args: argparse.Namespace) -> int:
    del args
    rows = catalogue()
    header = ("TEMPLATE", "PROVIDER", "CHART", "DESCRIPTION")
    table = [header, *((r.template, r.provider, r.chart, r.description) for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    lines = [
        "  ".join([*(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])), row[3]])
        for row in table
    ]
    write_stdout("\n".join(lines) + "\n")
    return 0
