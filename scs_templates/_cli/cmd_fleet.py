"""``render-fleet``: render many clusters at once, few helm processes (see :mod:`..fleet`).

Exit codes follow :mod:`scs_templates._cli.main`: 0 success, 2 invalid settings or arguments
(every problem of every file printed, one per line, and every cluster defined twice), 1 when
helm fails. All or nothing: with any bad file nothing is written or printed, unless
``--keep-going`` (then the good clusters are, and the exit code is still 2). ``-o DIR`` is
replaced as a whole (:func:`scs_templates._render.render.write_fleet`). What the command
does: :mod:`scs_templates._cli.run.fleet`.
"""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import path_argument


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``render-fleet`` (what runs each is named, not imported)."""
    fleet = subparsers.add_parser(
        "render-fleet",
        help="render many clusters at once (one helm process per batch of clusters)",
        description=(
            "Render the manifests of every cluster described by the SETTINGS files, offline, "
            "with a few parallel helm processes (each renders a batch of clusters through a "
            "generated umbrella chart). Each cluster's output is byte for byte what "
            "`scs-templates render` prints for it. With --output-dir DIR: one folder per "
            "cluster, DIR/NAMESPACE/NAME/NN-kind-name.yaml; DIR is replaced as a whole, "
            "atomically (clusters of an earlier run that are not given now disappear; a signal "
            "or a full disk leaves the previous DIR), and must hold only such folders, no "
            "symbolic link. With --stdout (or -o yaml): every cluster's multi-document YAML, in "
            "the order of the files. All or nothing: every problem of every file is reported "
            "and nothing is written unless --keep-going. Exit 0 ok, 2 invalid settings (also "
            "with --keep-going), 1 helm failed."
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
    fleet.add_argument(
        "--keep-going",
        action="store_true",
        help="with bad files (or a cluster defined twice): still write or print the good "
        "clusters, and exit 2",
    )
    fleet.set_defaults(func="scs_templates._cli.run.fleet:run_render_fleet")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value
