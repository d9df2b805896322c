"""What the commands' parsers share: the options every command spells the same way.

Building every parser is what ``--help`` costs, so this module imports argparse and nothing
heavier; what the commands do with the options lives in :mod:`.common` and :mod:`.output`.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Sequence

from scs_templates._core.durations import parse_duration as _parse_duration
from scs_templates._core.entry_points import entry_points, load

#: The formats of a command that prints Kubernetes objects (kubectl's names).
OBJECT_FORMATS = ("yaml", "json", "name")
#: The formats of a command that prints a report (status, versions, describe).
REPORT_FORMATS = ("text", "yaml", "json")


def report_format_option(parser: argparse.ArgumentParser, note: str = "") -> None:
    """``-o/--output text|yaml|json`` of a command that prints a report (``note``: what
    yaml and json hold, appended to the help)."""
    parser.add_argument(
        "-o",
        "--output",
        choices=REPORT_FORMATS,
        default="text",
        metavar="FORMAT",
        help=f"output format: text|yaml|json (default: text{note})",
    )


def format_option(
    parser: argparse.ArgumentParser,
    formats: Sequence[str],
    *,
    default: str,
    legacy: str = "",
) -> None:
    """``-o/--output FORMAT``; ``legacy``: what a non-format value meant before (``DIR`` or
    ``FILE``), still accepted with a warning."""
    text = f"output format: {'|'.join(formats)} (default: {default})"
    if legacy:
        target = "--output-dir DIR" if legacy == "DIR" else "--output-file FILE"
        text += f"; -o {legacy} is deprecated, use {target}"
    parser.add_argument("-o", "--output", dest="output", metavar="FORMAT", help=text)


#: What ``-f`` and ``--set`` say in every command's --help.
LAYERS_HELP = (
    "more settings files merged over SETTINGS in the order given (mappings merge, lists and "
    "other values replace, null removes a key); repeatable"
)
SET_HELP = (
    "set one value over the files, typed like helm's --set (true/false, null, whole "
    "numbers, {a,b} lists; a\\.b is a key with a dot, a[0] a list item); repeatable, "
    "applied in order after every file"
)


CHART_MIRROR_OPTION = "--chart-mirror"
CHART_MIRROR_PATH = ("spec", "services", "chartMirror")


def chart_mirror_option(parser: argparse.ArgumentParser, text: str = "") -> None:
    """``--chart-mirror URL``: where the services' charts come from (``file:///DIR`` or
    ``oci://REGISTRY/PATH``); ``text``: the command's own meaning (default: it replaces
    spec.services.chartMirror)."""
    parser.add_argument(
        CHART_MIRROR_OPTION,
        metavar="URL",
        help=text
        or "read the services' charts from this mirror instead of upstream: file:///DIR (a "
        "folder of packaged charts NAME-VERSION.tgz, no network) or oci://REGISTRY/PATH; "
        "replaces spec.services.chartMirror",
    )


def settings_arguments(parser: argparse.ArgumentParser) -> None:
    """SETTINGS (optional when ``-f`` names a file), ``-f/--settings FILE`` and ``--set``."""
    parser.add_argument(
        "settings",
        metavar="SETTINGS",
        nargs="?",
        help="cluster settings file (- reads standard input)",
    )
    parser.add_argument(
        "-f",
        "--settings",
        dest="settings_files",
        action="append",
        metavar="FILE",
        help=LAYERS_HELP,
    )
    parser.add_argument("--set", dest="sets", action="append", metavar="PATH=VALUE", help=SET_HELP)


def usage(parser: argparse.ArgumentParser) -> int:
    """A command group called without its action: its help on stderr, exit 2."""
    parser.print_help(sys.stderr)
    return 2


def cluster_options(parser: argparse.ArgumentParser) -> None:
    """SETTINGS (with ``-f`` and ``--set``) plus the management cluster's --kubeconfig and
    --context."""
    settings_arguments(parser)
    parser.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig of the management cluster (default: $KUBECONFIG or ~/.kube/config)",
    )
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context to use")


def poll_option(parser: argparse.ArgumentParser) -> None:
    """Seconds between two polls of the API; hidden: only tests need another value."""
    parser.add_argument("--poll-interval", type=float, default=5.0, help=argparse.SUPPRESS)


def path_argument(text: str) -> os.PathLike[str]:
    """``type=`` of path arguments: a :class:`pathlib.Path`. pathlib (5 ms: it loads
    urllib.parse and ipaddress) is imported when a path is given, not when ``--help`` only
    lists the commands: the one import of the parsers that waits for its use."""
    from pathlib import Path  # deferred: pathlib

    return Path(text)


def parse_duration(text: str) -> float:
    """``30m``, ``1h30m``, ``90s`` or ``90`` (seconds) -> seconds (argparse type)."""
    try:
        return _parse_duration(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


#: The entry-point group of the providers' options of the lifecycle commands: the name is the
#: provider, the value a module with ``add_arguments(parser, *, credentials)``; what they ask
#: for, the provider's operations' ``cloud_options(args)`` read (docs/architecture.md,
#: "Adding a provider").
CLOUD_OPTIONS_GROUP = "scs_templates.cloud_options"


@functools.cache
def _cloud_option_modules() -> tuple[str, ...]:
    """The module of every installed provider's lifecycle options (by provider), read once:
    install, apply and delete all add them (``--help`` builds the three)."""
    return tuple(module for _, module in sorted(p[1:] for p in entry_points(CLOUD_OPTIONS_GROUP)))


def provider_options(parser: argparse.ArgumentParser, *, credentials: bool) -> None:
    """Each installed provider's options of install, apply (``credentials``: also where the
    cluster's credentials come from) and delete: how they may touch its cloud."""
    for module in _cloud_option_modules():
        add_arguments = getattr(load(module), "add_arguments", None)
        if not callable(add_arguments):
            raise TypeError(
                f"{module} (entry-point group {CLOUD_OPTIONS_GROUP}) has no add_arguments"
            )
        add_arguments(parser, credentials=credentials)
