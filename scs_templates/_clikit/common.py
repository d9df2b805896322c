"""Settings files loaded the same way by every command that reads them.

Problems are not printed here: a :class:`~scs_templates._settings.problems.SettingsError` propagates
to :func:`scs_templates._cli.main.main`, which prints one line per problem and exits 2.
Warnings never fail a command; they go to stderr, one line each.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scs_templates._clikit.arguments import CHART_MIRROR_OPTION, CHART_MIRROR_PATH
from scs_templates._settings.layers import load_layers
from scs_templates._settings.problems import Problem, SettingsError
from scs_templates._settings.validate import LoadedSettings, load_settings

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable, Iterator


def print_warnings(loaded: LoadedSettings) -> None:
    for warning in loaded.warnings:
        print(str(warning), file=sys.stderr)


def load(path: str, *, plain: bool = False) -> LoadedSettings:
    """Load one settings file and print its warnings.

    ``plain``: a valid file's settings are :mod:`~scs_templates._settings.plain` objects, for
    commands that only read them (render, values, validate, render-fleet): no pydantic.
    """
    loaded = load_settings(path, plain=plain)
    print_warnings(loaded)
    return loaded


def load_args(args: argparse.Namespace, *, plain: bool = False) -> LoadedSettings:
    """The settings a command line names (:func:`settings_arguments`): SETTINGS, then each
    ``-f FILE``, then each ``--set PATH=VALUE``, merged in that order; warnings printed."""
    files = [*([args.settings] if args.settings else []), *(args.settings_files or ())]
    overrides = []
    mirror = getattr(args, "chart_mirror", None)
    if mirror:
        overrides.append((CHART_MIRROR_OPTION, CHART_MIRROR_PATH, mirror))
    loaded = load_layers(files, args.sets or (), plain=plain, overrides=overrides)
    print_warnings(loaded)
    return loaded


def load_each(
    paths: Iterable[str], problems: list[Problem], *, plain: bool = False
) -> Iterator[LoadedSettings]:
    """Load files one by one, as the caller consumes them (so work on the first files can
    start while the rest loads); the problems of invalid files go to ``problems``."""
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
    problems: list[Problem] = []
    found = list(load_each(paths, problems))
    if problems:
        raise SettingsError(problems)
    return found
