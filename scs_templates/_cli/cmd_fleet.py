"""``render-fleet``: render many clusters at once, few helm processes (see :mod:`..fleet`).

Exit codes follow :mod:`scs_templates._cli.main`: 0 success, 2 invalid settings or arguments
(every problem of every file printed, one per line, and every cluster defined twice), 1 when
helm fails. All or nothing: with any bad file nothing is written or printed, unless
``--keep-going`` (then the good clusters are, and the exit code is still 2). ``-o DIR`` is
replaced as a whole (:func:`scs_templates._render.render.write_fleet`). Heavy imports happen inside
the command so ``--help`` stays fast.
"""

from __future__ import annotations

import sys

from scs_templates._clikit.common import load_each, path_argument

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any

    from scs_templates._settings.model import ClusterSettings


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
    fleet.set_defaults(func=run_render_fleet)


def _positive(text: str) -> int:
    import argparse  # deferred: argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def run_render_fleet(args: argparse.Namespace) -> int:
    """Files are loaded while helm already renders the first full batches; nothing is
    printed or written before every file has loaded, and (unless ``--keep-going``) nothing
    at all when a file is bad or a cluster is defined twice."""
    from scs_templates._core.errors import ScsTemplatesError  # deferred: scs_templates._core.errors
    from scs_templates._render.fleet import render_fleet, render_fleet_manifests  # deferred: ruamel
    from scs_templates._render.render import check_output_dir  # deferred: ruamel

    # deferred: scs_templates._settings.problems
    from scs_templates._settings.problems import Problem, SettingsError

    if args.output is not None:
        # deferred: scs_templates._clikit.output
        from scs_templates._clikit.output import output_format

        output_format(args, ("yaml",), default="yaml", legacy="DIR")
        args.stdout = args.output_dir is None
    if args.output_dir is not None:
        check_output_dir(args.output_dir, fleet=True)  # before any work, as at the write
    problems: list[Problem] = []
    seen: dict[tuple[str, str], str] = {}
    keys: list[tuple[str, str]] = []
    duplicates: list[str] = []
    twice: set[tuple[str, str]] = set()  # neither definition is written: which one is meant?

    def fleet_settings() -> Iterator[ClusterSettings]:
        for loaded in load_each(args.settings, problems, plain=True):
            key = (loaded.settings.metadata.namespace, loaded.settings.metadata.name)
            if key in seen:
                duplicates.append(
                    f"{loaded.file}: cluster {key[0]}/{key[1]} is also defined in {seen[key]}"
                )
                twice.add(key)
                continue
            seen[key] = loaded.file
            keys.append(key)
            yield loaded.settings

    # --stdout: helm's bytes only, no need to parse the documents
    render = render_fleet_manifests if args.stdout else render_fleet
    try:
        results: list[Any] | None = render(
            fleet_settings(), jobs=args.jobs, expected=len(args.settings)
        )
    except ScsTemplatesError:
        if not (problems or duplicates):
            raise
        results = None  # bad input is reported first, as when it stopped the render
    bad = bool(problems or duplicates)
    if results is not None and (args.keep_going or not bad):
        good = [r for key, r in zip(keys, results, strict=True) if key not in twice]
        if good or not bad:  # no good cluster at all: the previous output stays
            _output(args, good)
    if bad:
        for line in [*(str(p) for p in SettingsError(problems).problems), *duplicates]:
            print(line, file=sys.stderr)
        return 2
    return 0


def _output(args: argparse.Namespace, results: list[Any]) -> None:
    """The clusters' manifests on stdout, or the fleet folder replaced as a whole."""
    # deferred: scs_templates._cli.cmd_render
    from scs_templates._cli.cmd_render import write_stdout

    if args.stdout:
        write_stdout("".join(results))
        return
    from scs_templates._render.render import write_fleet  # deferred: ruamel

    directory: Path = args.output_dir
    total = len(write_fleet(results, directory))
    print(f"wrote {total} manifests of {len(results)} clusters to {directory}", file=sys.stderr)
