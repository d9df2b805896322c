"""What ``values`` does (its arguments: :mod:`scs_templates._cli.cmd_render`)."""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

from scs_templates._clikit.common import load_args
from scs_templates._clikit.output import data_text, output_format, write_stdout
from scs_templates._core import atomic
from scs_templates._core.errors import InputError
from scs_templates._render.charts import chart_for
from scs_templates._render.render import kube_version_of
from scs_templates._render.values import build_values
from scs_templates._tools.helm import Helm

if TYPE_CHECKING:
    import argparse
    from pathlib import Path


def run_values(args: argparse.Namespace) -> int:
    output = output_format(args, ("yaml", "json"), default="yaml", legacy="DIR")
    loaded = load_args(args, plain=True)

    settings = loaded.settings
    values = build_values(settings)
    if args.output_dir is None:
        write_stdout(data_text(values, output))
        return 0

    directory: Path = args.output_dir
    file = directory / "values.json"
    for path in (directory, file):  # the one file it writes: never through a link
        if path.is_symlink():
            atomic.refuse_links(path)
    found = next((p for p in (*reversed(directory.parents), directory) if p.is_file()), None)
    if found is not None:  # a file where a folder should be
        raise InputError(
            f"{found}: exists and is not a directory "
            "(values --output-dir DIR writes DIR/values.json)"
        )
    try:
        with atomic.folder_made(directory):  # a failed write leaves no empty folder
            atomic.write_file(file, data_text(values, "json"), private=True)
    except OSError as error:
        raise InputError(f"{directory}: {error.strerror or error}") from None
    chart = chart_for(settings.resolved_provider())
    args_list = Helm.template_args(
        settings.metadata.name,
        chart.path,
        namespace=settings.metadata.namespace,
        kube_version=kube_version_of(settings),
    )

    write_stdout(shlex.join(["helm", *args_list, "-f", str(file)]) + "\n")
    print(f"wrote {file}", file=sys.stderr)
    return 0
