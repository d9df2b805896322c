"""What ``validate`` and ``schema`` do (their arguments: :mod:`scs_templates._cli.cmd_settings`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scs_templates._clikit.common import print_warnings
from scs_templates._core.errors import InputError
from scs_templates._settings.layers import load_layers
from scs_templates._settings.problems import SettingsError
from scs_templates.providers.api_access import api_access_plan

if TYPE_CHECKING:
    import argparse


def run_validate(args: argparse.Namespace) -> int:
    documents = [[file] for file in args.files]
    if args.settings_files:
        documents.append(args.settings_files)
    if not documents:
        raise InputError("validate: give SETTINGS or -f FILE")
    status = 0
    for files in documents:
        try:
            loaded = load_layers(files, args.sets or (), plain=True)
        except SettingsError as error:
            for problem in error.problems:
                print(str(problem), file=sys.stderr)
            status = 2
            continue
        print_warnings(loaded)
        if not args.quiet:
            print(f"{loaded.file}: valid")
            print(f"{loaded.file}: {api_access_plan(loaded.settings).describe()}")
    return status


def run_schema(args: argparse.Namespace) -> int:
    from scs_templates._settings.schema import schema_text  # deferred: pydantic

    sys.stdout.write(schema_text())
    return 0
