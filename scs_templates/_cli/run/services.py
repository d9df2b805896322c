"""What the commands of :mod:`scs_templates._cli.cmd_services` do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._clikit.common import load_args
from scs_templates._clikit.output import objects_format, objects_text, print_or_write
from scs_templates._render.render import check_output_dir
from scs_templates._services.preview import render_services, write_services

if TYPE_CHECKING:
    import argparse


def run_services_render(args: argparse.Namespace) -> int:
    output = objects_format(args)
    loaded = load_args(args)
    if args.output_dir is not None:
        check_output_dir(args.output_dir)  # before helmfile runs; the write checks again

    result = render_services(loaded.settings)
    chosen = result.selected(args.target)
    return print_or_write(
        lambda: objects_text(
            result.marked(args.target),
            [result.objects[i] for i in chosen] if output != "yaml" else (),
            output,
        ),
        args.output_dir,
        lambda: write_services(result, args.output_dir, args.target),
    )
