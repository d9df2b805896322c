"""What the commands of :mod:`scs_templates._cli.cmd_fleet` do."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from scs_templates._clikit.common import load_each
from scs_templates._clikit.output import output_format, write_stdout
from scs_templates._core.errors import ScsTemplatesError
from scs_templates._render.fleet import render_fleet, render_fleet_manifests
from scs_templates._render.render import check_output_dir, write_fleet
from scs_templates._settings.problems import Problem, SettingsError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator
    from pathlib import Path

    from scs_templates._settings.model import ClusterSettings


def run_render_fleet(args: argparse.Namespace) -> int:
    """Files are loaded while helm already renders the first full batches; nothing is
    printed or written before every file has loaded, and (unless ``--keep-going``) nothing
    at all when a file is bad or a cluster is defined twice."""
    if args.output is not None:
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

    count = len(args.settings)
    try:
        results: list[Any] | None = (
            # --stdout: helm's bytes only, no need to parse the documents
            render_fleet_manifests(fleet_settings(), jobs=args.jobs, expected=count)
            if args.stdout
            else render_fleet(fleet_settings(), jobs=args.jobs, expected=count, named=True)
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
    if args.stdout:
        write_stdout(*results)
        return

    directory: Path = args.output_dir
    total = len(write_fleet(results, directory))
    print(f"wrote {total} manifests of {len(results)} clusters to {directory}", file=sys.stderr)
