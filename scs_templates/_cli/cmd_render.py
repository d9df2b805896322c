"""``render``, ``values`` and ``templates``: turn a settings file into manifests, offline.

Exit codes follow :mod:`scs_templates._cli.main`: 0 success, 2 invalid settings or
arguments (every problem printed on stderr, one per line, like ``validate``), 1 when helm
fails. Warnings of the settings go to stderr and never fail a command. Heavy imports (helm
runner, values, ruamel) happen inside the commands so ``--help`` stays fast.
"""

from __future__ import annotations

import os
import sys

from scs_templates._clikit.common import load_args, path_argument, settings_arguments
from scs_templates._clikit.output import (
    OBJECT_FORMATS,
    format_option,
    objects_text,
    output_format,
    values_yaml,
)

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``render``, ``values`` and ``templates``; importing this module stays cheap."""
    render = subparsers.add_parser(
        "render",
        help="render the cluster's Cluster API manifests (offline, deterministic)",
        description=(
            "Render the manifests of the cluster described by SETTINGS with helm, offline. "
            "On stdout: the multi-document YAML exactly as `helm template` prints it (-o json: "
            "a v1 List; -o name: kind.group/name per object). With --output-dir DIR: one "
            "file per object (NN-kind-name.yaml, in helm's order), "
            "written atomically; DIR is replaced as a whole and must hold only .yaml files. "
            "No credentials: the provider's credentials Secret is referenced, never rendered "
            "(the provider's own commands write it). Exit 0 ok, 2 invalid settings, "
            "1 helm failed."
        ),
    )
    render_arguments(render)
    render.set_defaults(func=run_render)

    values = subparsers.add_parser(
        "values",
        help="print the helm values of the cluster, or write them with the helm command line",
        description=(
            "Print the helm values built from SETTINGS as YAML (they never hold a credential). "
            "-o json: as JSON. With --output-dir DIR: "
            "write DIR/values.json (mode 0600) and print the plain `helm template` command that "
            "reproduces `scs-templates render` byte for byte with helm alone."
        ),
    )
    settings_arguments(values)
    format_option(values, ("yaml", "json"), default="yaml", legacy="DIR")
    values.add_argument(
        "--output-dir",
        type=path_argument,
        metavar="DIR",
        help="write DIR/values.json and print the helm command line",
    )
    values.set_defaults(func=run_values)

    templates = subparsers.add_parser(
        "templates",
        help="list the cluster templates and providers",
        description="List every cluster template on every provider, with its chart and when "
        "to use it.",
    )
    templates.set_defaults(func=run_templates)


# --------------------------------------------------------------------------- helpers


def render_arguments(parser: argparse.ArgumentParser) -> None:
    """SETTINGS (with ``-f``/``--set``), ``-o FORMAT`` and ``--output-dir DIR``, as every
    rendering command takes them."""
    settings_arguments(parser)
    format_option(parser, OBJECT_FORMATS, default="yaml", legacy="DIR")
    parser.add_argument(
        "--output-dir",
        type=path_argument,
        metavar="DIR",
        help="write one file per object into DIR (NN-kind-name.yaml)",
    )


def write_stdout(text: str) -> None:
    """Write to stdout so that ``| head`` ends us quietly.

    On a closed pipe, stdout is pointed at /dev/null before the error propagates (``main``
    turns it into exit 0); otherwise the interpreter's final flush would fail again and
    print a traceback-like message.
    """
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
        raise


# --------------------------------------------------------------------------- commands


def run_render(args: argparse.Namespace) -> int:
    output = objects_format(args)
    loaded = load_args(args, plain=True)
    # deferred: ruamel
    from scs_templates._render.render import check_output_dir, render, write_manifests

    if args.output_dir is not None:
        check_output_dir(args.output_dir)  # before helm runs; write_manifests checks again
    result = render(loaded.settings)
    return print_or_write(
        lambda: objects_text(result.manifests, result.objects if output != "yaml" else (), output),
        args.output_dir,
        lambda: write_manifests(result, args.output_dir),
    )


def objects_format(args: argparse.Namespace) -> str:
    """``-o FORMAT`` of a command that prints objects (``-o DIR``: deprecated, the folder);
    a format other than yaml with ``--output-dir`` is refused (the files are YAML)."""
    output = output_format(args, OBJECT_FORMATS, default="yaml", legacy="DIR")
    if output != "yaml" and args.output_dir is not None:
        from scs_templates._core.errors import InputError  # deferred: scs_templates._core.errors

        raise InputError(f"-o {output} prints to standard output; --output-dir writes YAML files")
    return output


def print_or_write(
    text: Callable[[], str], output_dir: Path | None, write: Callable[[], list[Path]]
) -> int:
    """``text()`` on stdout, or (with ``--output-dir DIR``) ``write()`` the files and say
    how many."""
    if output_dir is None:
        write_stdout(text())
        return 0
    paths = write()
    print(f"wrote {len(paths)} manifests to {output_dir}", file=sys.stderr)
    return 0


def run_values(args: argparse.Namespace) -> int:
    output = output_format(args, ("yaml", "json"), default="yaml", legacy="DIR")
    loaded = load_args(args, plain=True)
    from scs_templates._render.charts import chart_for  # deferred: scs_templates._render.charts
    from scs_templates._render.render import kube_version_of  # deferred: ruamel
    from scs_templates._render.values import build_values  # deferred: scs_templates._render.values

    settings = loaded.settings
    values = build_values(settings)
    if args.output_dir is None:
        if output == "json":
            import json  # deferred: json

            write_stdout(json.dumps(values, indent=2, ensure_ascii=False) + "\n")
        else:
            write_stdout(values_yaml(values))
        return 0

    import json  # deferred: json

    from scs_templates._core import atomic  # deferred: scs_templates._core.atomic
    from scs_templates._core.errors import InputError  # deferred: scs_templates._core.errors
    from scs_templates._tools.helm import Helm  # deferred: scs_templates._tools.helm

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
            atomic.write_file(
                file, json.dumps(values, indent=2, ensure_ascii=False) + "\n", private=True
            )
    except OSError as error:
        raise InputError(f"{directory}: {error.strerror or error}") from None
    chart = chart_for(settings.resolved_provider())
    args_list = Helm.template_args(
        settings.metadata.name,
        chart.path,
        namespace=settings.metadata.namespace,
        kube_version=kube_version_of(settings),
    )
    import shlex  # deferred: shlex

    write_stdout(shlex.join(["helm", *args_list, "-f", str(file)]) + "\n")
    print(f"wrote {file}", file=sys.stderr)
    return 0


def run_templates(args: argparse.Namespace) -> int:
    del args
    from scs_templates._render.catalogue import catalogue  # deferred: scs_templates._render

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
