"""What ``render`` does (its arguments: :mod:`scs_templates._cli.cmd_render`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._clikit.common import load_args
from scs_templates._clikit.output import objects_format, objects_text, print_or_write
from scs_templates._render.render import check_output_dir, render, write_manifests

if TYPE_CHECKING:
    import argparse


def run_render(args: argparse.Namespace) -> int:
    output = objects_format(args)
    loaded = load_args(args, plain=True)
    if args.output_dir is not None:
        check_output_dir(args.output_dir)  # before helm runs; write_manifests checks again
    result = render(loaded.settings)
    return print_or_write(
        lambda: objects_text(result.manifests, result.objects if output != "yaml" else (), output),
        args.output_dir,
        lambda: write_manifests(result, args.output_dir),
    )
