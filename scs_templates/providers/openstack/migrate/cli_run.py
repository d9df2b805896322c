"""What the commands of :mod:`scs_templates.providers.openstack.migrate.cli` do."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scs_templates._clikit.output import output_format
from scs_templates._core import atomic
from scs_templates._core.errors import InputError
from scs_templates._core.textinput import display_name
from scs_templates.providers.openstack.migrate.kaas_v1 import migrate_kaas_v1
from scs_templates.providers.openstack.migrate.reading import read_input

if TYPE_CHECKING:
    import argparse
    from pathlib import Path


def run_migrate(args: argparse.Namespace) -> int:
    output_format(args, ("yaml",), default="yaml", legacy="FILE")
    text = read_input(args.file)
    profile = read_input(args.proxy_profile) if args.proxy_profile else None
    result = migrate_kaas_v1(
        text,
        name=args.name,
        prefix=args.prefix,
        file=display_name(args.file),
        proxy_profile=profile,
        proxy_file=display_name(args.proxy_profile) if args.proxy_profile else "proxy.sh",
    )
    output: Path | None = args.output_file
    if output is not None:
        try:  # complete before the name appears: a full disk never leaves an empty FILE
            atomic.create_file(output, result.text)
        except FileExistsError:
            raise InputError(f"{output}: exists already; not overwritten") from None
        except OSError as error:
            raise InputError(f"{output}: cannot write: {error.strerror}") from None
    else:
        sys.stdout.write(result.text)
        sys.stdout.flush()
    for line in result.report_lines:
        print(line, file=sys.stderr)
    return 0
