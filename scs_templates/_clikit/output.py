"""One meaning of ``-o`` in every command: ``-o/--output FORMAT``; folders are ``--output-dir``.

kubectl, helm and clusterctl users read ``-o`` as a format (``-o yaml``, ``-o json``,
``-o name``). Until this release ``render``, ``values``, ``services render``,
``render-fleet`` and ``migrate`` read it as a folder (or file), so ``render -o json`` made a
folder named ``json``. Now a format name is a format; any other value still works as the
folder (file) for one release, with a deprecation warning on stderr that names the new
option (docs/upgrades.md). The options themselves are declared in :mod:`.arguments`; this
module reads them and writes what the commands print.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scs_templates._clikit.arguments import OBJECT_FORMATS
from scs_templates._core.errors import InputError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence


def output_format(
    args: argparse.Namespace,
    formats: Sequence[str],
    *,
    default: str,
    legacy: str = "",
) -> str:
    """The format ``-o`` names; with ``legacy`` (``DIR`` or ``FILE``) any other value is the
    old folder/file, moved to ``args.output_dir``/``args.output_file`` with a warning.
    InputError (exit 2) for an unknown format."""
    value: str | None = args.output
    if value is None:
        return default
    if value in formats:
        return value
    if not legacy:
        raise InputError(f"-o {value}: unknown output format; expected {' or '.join(formats)}")
    option, attribute = (
        ("--output-dir", "output_dir") if legacy == "DIR" else ("--output-file", "output_file")
    )
    if getattr(args, attribute, None) is not None:
        raise InputError(f"-o {value}: not an output format, and {option} is given too")
    print(
        f"scs-templates: warning: -o {legacy} is deprecated (-o is the output format: "
        f"{'|'.join(formats)}); use {option} {value}",
        file=sys.stderr,
    )
    setattr(args, attribute, Path(value))
    return default


def objects_text(manifests: str, objects: Sequence[Mapping[str, Any]], output: str) -> str:
    """Objects in ``output`` format: ``yaml`` the manifests as rendered, ``json`` a
    ``v1/List`` as kubectl prints one, ``name`` one ``kind.group/name`` per line."""
    if output == "yaml":
        return manifests
    if output == "name":
        return "".join(object_name(obj) + "\n" for obj in objects)
    document = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
    return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"


def object_name(obj: Mapping[str, Any]) -> str:
    """``kind.group/name`` as ``kubectl -o name`` prints it (no group for the core API)."""
    kind = str(obj.get("kind") or "").lower()
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return f"{kind}.{group}/{name}" if group else f"{kind}/{name}"


def data_text(data: Any, output: str) -> str:
    """Plain data (a command's report) as ``json`` (indented) or ``yaml`` (block style, in
    the data's own key order)."""
    if output == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return values_yaml(data)


def values_yaml(values: Any) -> str:
    """Values as YAML 1.2 with strings quoted where a YAML 1.1 reader would misread them."""
    from ruamel.yaml import YAML  # deferred: ruamel

    traps = re.compile(
        r"^(?:[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False"
        r"|FALSE|null|Null|NULL|~|[-+]?0[0-9_]+|[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?"
        r"|[0-9]+(?::[0-5]?[0-9])+)$"
    )

    def represent_str(representer: Any, value: str) -> Any:
        style = "'" if traps.match(value) else None
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.representer.add_representer(str, represent_str)
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    stream = io.StringIO()
    yaml.dump(values, stream)
    return stream.getvalue()


def write_stdout(*texts: str) -> None:
    """Write ``texts`` to stdout, one after the other, so that ``| head`` ends us quietly.

    Each text is written as it is, never joined first: a fleet's manifests are one text per
    cluster, and joining (then encoding) 2000 of them held two more copies of ~45 MB.
    On a closed pipe, stdout is pointed at /dev/null before the error propagates (``main``
    turns it into exit 0); otherwise the interpreter's final flush would fail again and
    print a traceback-like message.
    """
    try:
        for text in texts:
            sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
        raise


def objects_format(args: argparse.Namespace) -> str:
    """``-o FORMAT`` of a command that prints objects (``-o DIR``: deprecated, the folder);
    a format other than yaml with ``--output-dir`` is refused (the files are YAML)."""
    output = output_format(args, OBJECT_FORMATS, default="yaml", legacy="DIR")
    if output != "yaml" and args.output_dir is not None:
        raise InputError(f"-o {output} prints to standard output; --output-dir writes YAML files")
    return output


def print_or_write(
    text: Callable[[], str], output_dir: Path | None, write: Callable[[], list[Path]]
) -> int:
    """``text()`` on stdout, or (with ``--output-dir DIR``) ``write()`` the files and say
    how many."""
    if output_dir is None:
        write_stdout(text())
        return 0
    paths = write()
    print(f"wrote {len(paths)} manifests to {output_dir}", file=sys.stderr)
    return 0
