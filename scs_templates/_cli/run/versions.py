"""What the commands of :mod:`scs_templates._cli.cmd_versions` do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._cli.versions_report import text
from scs_templates._clikit.output import data_text, write_stdout
from scs_templates._versions import table_json

if TYPE_CHECKING:
    import argparse


def run_versions(args: argparse.Namespace) -> int:
    if args.output != "text":
        write_stdout(data_text(table_json(), args.output))
    else:
        write_stdout(text())
    return 0
