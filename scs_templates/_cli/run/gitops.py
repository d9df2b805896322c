"""What the commands of :mod:`scs_templates._cli.cmd_gitops` do."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

from scs_templates._clikit.common import load_many
from scs_templates._core.errors import InputError
from scs_templates._gitops import GitopsOptions, parse_chart_source, write_gitops
from scs_templates._services.releases import from_mirror, local_mirror_dir, service_releases

if TYPE_CHECKING:
    import argparse

    from scs_templates._settings.model import ClusterSettings


def run_gitops(args: argparse.Namespace) -> int:
    if not re.fullmatch(r"(?:[0-9]+(?:ms|s|m|h))+", args.interval):
        raise InputError(f"--interval: {args.interval!r} is not a duration such as 10m or 1h30m")
    options = GitopsOptions(
        chart_source=parse_chart_source(
            args.chart_source, args.chart_ref, plain_http=args.plain_http
        ),
        interval=args.interval,
        services=not args.no_services,
        rebase_class=args.rebase_class,
        render_mirror=args.chart_mirror,
    )
    fleet = [loaded.settings for loaded in load_many(args.settings)]
    if options.services:
        _note_rendered_charts(fleet, args.chart_mirror)
    result = write_gitops(
        args.directory,
        fleet,
        options,
        source=args.source,
        path=args.path,
        prune=args.prune,
    )
    for key in result.written:
        print(f"wrote {key}")
        for secret in result.required_secrets[key]:
            print(f"  needs Secret {key.split('/')[0]}/{secret}")
    for key in result.kept:
        print(f"kept {key} (not given; --prune removes its folder)")
    for key in result.pruned:
        print(f"pruned {key} (its objects stay on the management cluster)")
    return 0


def _note_rendered_charts(fleet: list[ClusterSettings], mirror: str | None) -> None:
    """Flag the one step of ``gitops`` that reads a chart (and so, without a local
    ``--chart-mirror``, the network): the releases it renders itself."""
    seen: set[str] = set()
    for settings in fleet:
        for release in service_releases(settings):
            if not release.info.server_side:
                continue
            source = from_mirror(release, mirror)
            if source.source is None or source.source.repository is None:
                continue  # a local mirror: offline
            repository = source.source.repository
            where = f"{'oci://' if repository.oci else ''}{repository.url}"
            line = (
                f"scs-templates: note: gitops renders {release.name} itself (chart "
                f"{release.chart_name} {release.version} from {where}): the one step that "
                "reads a chart; --chart-mirror file:///DIR keeps gitops offline"
            )
            if line not in seen and (mirror is None or local_mirror_dir(mirror) is None):
                seen.add(line)
                print(line, file=sys.stderr)
