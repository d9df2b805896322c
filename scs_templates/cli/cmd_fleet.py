"""``render-fleet``: render many clusters at once, few helm processes (see :mod:`..fleet`).

Exit codes follow :mod:`scs_templates.cli.main`: 0 success, 2 invalid settings or arguments
(every problem of every file printed, one per line), 1 when helm fails. Heavy imports happen
inside the command so ``--help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``render-fleet``; importing this module stays cheap."""
    fleet = subparsers.add_parser(
        "render-fleet",
        help="render many clusters at once (one helm process per batch of clusters)",
        description=(
            "Render the manifests of every cluster described by the SETTINGS files, offline, "
            "with a few parallel helm processes (each renders a batch of clusters through a "
            "generated umbrella chart). Each cluster's output is byte for byte what "
            "`scs-templates render` prints for it. With -o DIR: one folder per cluster, "
            "DIR/NAMESPACE/NAME/NN-kind-name.yaml, each replaced atomically as `render -o` does. "
            "With --stdout: every cluster's multi-document YAML, in the order of the files. "
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
        "-o",
        "--output-dir",
        type=Path,
        metavar="DIR",
        help="write DIR/NAMESPACE/NAME/NN-kind-name.yaml for each cluster",
    )
    target.add_argument(
        "--stdout", action="store_true", help="print all manifests on stdout instead"
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
    from scs_templates.cli.cmd_render import write_stdout
    from scs_templates.cli.common import load_many

    fleet_settings = [loaded.settings for loaded in load_many(args.settings)]

    seen: dict[tuple[str, str], str] = {}
    invalid = False
    for path, settings in zip(args.settings, fleet_settings, strict=True):
        key = (settings.metadata.namespace, settings.metadata.name)
        if key in seen:
            print(
                f"{path}: cluster {key[0]}/{key[1]} is also defined in {seen[key]}",
                file=sys.stderr,
            )
            invalid = True
        seen.setdefault(key, path)
    if invalid:
        return 2

    if args.stdout:  # helm's bytes only: no need to parse the documents
        from scs_templates.fleet import render_fleet_manifests

        write_stdout("".join(render_fleet_manifests(fleet_settings, jobs=args.jobs)))
        return 0

    from scs_templates.fleet import render_fleet
    from scs_templates.render import write_manifests

    results = render_fleet(fleet_settings, jobs=args.jobs)
    directory: Path = args.output_dir
    total = 0
    for result in results:
        total += len(write_manifests(result, directory / result.namespace / result.release))
    print(f"wrote {total} manifests of {len(results)} clusters to {directory}", file=sys.stderr)
    return 0
