"""Helpers every command shares: loading settings files the same way everywhere.

Problems are not printed here: a :class:`~scs_templates._settings.problems.SettingsError` propagates
to :func:`scs_templates._cli.main.main`, which prints one line per problem and exits 2.
Warnings never fail a command; they go to stderr, one line each.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable, Iterator
    from pathlib import Path

    from scs_templates._settings.problems import Problem
    from scs_templates._settings.validate import LoadedSettings


def print_warnings(loaded: LoadedSettings) -> None:
    for warning in loaded.warnings:
        print(str(warning), file=sys.stderr)


def load(path: str, *, plain: bool = False) -> LoadedSettings:
    """Load one settings file and print its warnings.

    ``plain``: a valid file's settings are :mod:`~scs_templates._settings.plain` objects, for
    commands that only read them (render, values, validate, render-fleet): no pydantic.
    """
    from scs_templates._settings.validate import load_settings  # deferred: scs_templates._settings

    loaded = load_settings(path, plain=plain)
    print_warnings(loaded)
    return loaded


def load_args(args: argparse.Namespace, *, plain: bool = False) -> LoadedSettings:
    """The settings a command line names (:func:`settings_arguments`): SETTINGS, then each
    ``-f FILE``, then each ``--set PATH=VALUE``, merged in that order; warnings printed."""
    from scs_templates._settings.layers import load_layers  # deferred: scs_templates._settings

    files = [*([args.settings] if args.settings else []), *(args.settings_files or ())]
    overrides = []
    mirror = getattr(args, "chart_mirror", None)
    if mirror:
        overrides.append((CHART_MIRROR_OPTION, CHART_MIRROR_PATH, mirror))
    loaded = load_layers(files, args.sets or (), plain=plain, overrides=overrides)
    print_warnings(loaded)
    return loaded


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


def load_each(
    paths: Iterable[str], problems: list[Problem], *, plain: bool = False
) -> Iterator[LoadedSettings]:
    """Load files one by one, as the caller consumes them (so work on the first files can
    start while the rest loads); the problems of invalid files go to ``problems``."""
    from scs_templates._settings.problems import SettingsError  # deferred: scs_templates._settings
    from scs_templates._settings.validate import load_settings  # deferred: scs_templates._settings

    for path in paths:
        try:
            loaded = load_settings(path, plain=plain)
        except SettingsError as error:
            problems.extend(error.problems)
            continue
        print_warnings(loaded)
        yield loaded


def load_many(paths: Iterable[str]) -> list[LoadedSettings]:
    """Load several files; one SettingsError with the problems of ALL invalid files."""
    from scs_templates._settings.problems import (
        SettingsError,  # deferred: scs_templates._settings.problems
    )

    problems: list[Problem] = []
    found = list(load_each(paths, problems))
    if problems:
        raise SettingsError(problems)
    return found


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
    import argparse  # deferred: argparse

    parser.add_argument("--poll-interval", type=float, default=5.0, help=argparse.SUPPRESS)


def path_argument(text: str) -> Path:
    """``type=`` of path arguments: pathlib is imported when a path is given, not when
    ``--help`` only lists the commands."""
    from pathlib import Path  # deferred: pathlib

    return Path(text)
