"""``render-fleet``: render many clusters at once, few helm processes (see :mod:`..fleet`).

Exit codes follow :mod:`scs_templates.cli.main`: 0 success, 2 invalid settings or arguments
(every problem of every file printed, one per line), 1 when helm fails. Heavy imports happen
inside the command so ``--help`` stays fast.
"""

from __future__ import annotations

import sys

from scs_templates.cli.common import path_argument

TYPE_CHECKING = False  # not typing's: --help imports no typing (see cli/main.py)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

    from scs_templates.settings.model import ClusterSettings


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``render-fleet``; importing this module stays cheap."""
    fleet = subparsers.add_parser(
        "render-fleet",
        help="render many clusters at once (one helm process per batch of clusters)",
        description=(
            "Render the manifests of every cluster described by the SETTINGS files, offline, "
            "with a few parallel helm processes (each renders a batch of clusters through a "
            "generated umbrella chart). Each cluster's output is byte for byte what "
            "`scs-templates render` prints for it. With --output-dir DIR: one folder per "
            "cluster, DIR/NAMESPACE/NAME/NN-kind-name.yaml, each replaced atomically as "
            "`render --output-dir` does. With --stdout (or -o yaml): every cluster's "
            "multi-document YAML, in the order of the files. "
            "Exit 0 ok, 2 invalid settings, 1 helm failed."
        ),
    )
    fleet.add_argument(
        "settings",
        metavar="SETTINGS",
        nargs="+",
        help="cluster settings files (- reads standard input)",
    )
    target = fleet.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--output-dir",
        type=path_argument,
        metavar="DIR",
        help="write DIR/NAMESPACE/NAME/NN-kind-name.yaml for each cluster",
    )
    target.add_argument(
        "--stdout", action="store_true", help="print all manifests on stdout instead"
    )
    target.add_argument(
        "-o",
        "--output",
        dest="output",
        metavar="FORMAT",
        help="yaml: the same as --stdout; -o DIR is deprecated, use --output-dir DIR",
    )
    fleet.add_argument(
        "-j",
        "--jobs",
        type=_positive,
        metavar="N",
        help="parallel helm processes (default: the number of CPUs)",
    )
    fleet.set_defaults(func=run_render_fleet)


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def run_render_fleet(args: argparse.Namespace) -> int:
    """Files are loaded while helm already renders the first full batches; nothing is
    printed or written before every file has loaded and no cluster is defined twice."""
    from scs_templates.cli.cmd_render import write_stdout
    from scs_templates.cli.common import load_each
    from scs_templates.errors import ScsTemplatesError
    from scs_templates.fleet import render_fleet, render_fleet_manifests
    from scs_templates.settings.problems import Problem, SettingsError

    if args.output is not None:
        from scs_templates.cli.output import output_format

        output_format(args, ("yaml",), default="yaml", legacy="DIR")
        args.stdout = args.output_dir is None
    problems: list[Problem] = []
    seen: dict[tuple[str, str], str] = {}
    duplicates: list[str] = []

    def fleet_settings() -> Iterator[ClusterSettings]:
        for loaded in load_each(args.settings, problems, plain=True):
            key = (loaded.settings.metadata.namespace, loaded.settings.metadata.name)
            if key in seen:
                duplicates.append(
                    f"{loaded.file}: cluster {key[0]}/{key[1]} is also defined in {seen[key]}"
                )
                continue
            seen[key] = loaded.file
            yield loaded.settings

    # --stdout: helm's bytes only, no need to parse the documents
    render = render_fleet_manifests if args.stdout else render_fleet
    try:
        results: list[Any] = render(fleet_settings(), jobs=args.jobs, expected=len(args.settings))
    except ScsTemplatesError:
        if not (problems or duplicates):
            raise
        results = []  # bad input is reported first, as when it stopped the render
    if problems:
        raise SettingsError(problems)
    if duplicates:
        for line in duplicates:
            print(line, file=sys.stderr)
        return 2
    if args.stdout:
        write_stdout("".join(results))
        return 0

    from scs_templates.render import write_manifests

    directory: Path = args.output_dir
    total = 0
    for result in results:
        total += len(write_manifests(result, directory / result.namespace / result.release))
    print(f"wrote {total} manifests of {len(results)} clusters to {directory}", file=sys.stderr)
    return 0
