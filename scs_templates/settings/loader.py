"""Read a settings file into plain data plus a map of source positions.

We compose the YAML node graph ourselves (ruamel.yaml, YAML 1.2) instead of loading it, so
that every value keeps its line and column and the YAML 1.1 traps can be refused instead of
silently changing meaning: unquoted ``yes``/``no``/``on``/``off``/``y``/``n`` (booleans to
YAML 1.1 tools such as helm, strings to YAML 1.2), octal-looking numbers (``0755``),
duplicate keys, merge keys. Every failure is one :class:`Problem` with file:line:col.
"""

from __future__ import annotations

import math
import re
from pathlib import Path as FsPath
from typing import Any

from scs_templates.settings.problems import Path, Problem, SettingsError

MAX_FILE_BYTES = 1024 * 1024  # a settings file is a few KB; 1 MiB is certainly a mistake

_YAML11_BOOLS = {"yes", "no", "on", "off", "y", "n"}
_OCTAL_LOOKING = re.compile(r"^[-+]?0[0-9_]+$")

Positions = dict[Path, tuple[int, int]]


class _Collector:
    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.positions: Positions = {}

    def add(self, node: Any, path: Path, message: str) -> None:
        mark = node.start_mark
        self.problems.append(Problem(mark.line + 1, mark.column + 1, path, message, file=self.file))


def read_text(path: FsPath) -> str:
    """Read a settings file as UTF-8 text, refusing what cannot be a settings file."""
    file = str(path)
    try:
        if path.is_dir():
            raise SettingsError([Problem(message="is a directory, not a settings file", file=file)])
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SettingsError(
                [
                    Problem(
                        message=f"file is too large ({size} bytes; limit {MAX_FILE_BYTES})",
                        file=file,
                    )
                ]
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SettingsError([Problem(message="no such file", file=file)]) from None
    except PermissionError:
        raise SettingsError([Problem(message="permission denied", file=file)]) from None
    except OSError as error:
        raise SettingsError(
            [Problem(message=f"cannot read: {error.strerror}", file=file)]
        ) from None
    return decode(raw, file)


def decode(raw: bytes, file: str) -> str:
    if b"\x00" in raw:
        raise SettingsError([Problem(message="binary data, not a YAML text file", file=file)])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SettingsError(
            [Problem(message=f"not UTF-8 text (invalid byte at offset {error.start})", file=file)]
        ) from None


def parse_yaml(text: str, file: str) -> tuple[Any, Positions, list[Problem]]:
    """Parse YAML text into plain data, the positions of every value, and value problems.

    Syntax errors raise at once; problems of single values (YAML 1.1 traps, duplicate keys)
    are returned so they are reported together with the validation problems.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    if not text.strip() or all(
        not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()
    ):
        raise SettingsError(
            [Problem(message="file is empty; expected a ClusterSettings document", file=file)]
        )
    yaml = YAML(typ="rt")
    try:
        node = yaml.compose(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = (error.problem or error.context or "invalid YAML").strip()
        if "\\t" in problem or "'\\t'" in problem or "tab" in problem:
            problem = "tab character; YAML indentation must use spaces"
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        raise SettingsError(
            [Problem(line, column, (), f"invalid YAML: {problem}", file=file)]
        ) from None
    except YAMLError as error:
        raise SettingsError(
            [Problem(message=f"invalid YAML: {str(error).splitlines()[0]}", file=file)]
        ) from None
    if node is None:
        raise SettingsError(
            [Problem(message="file is empty; expected a ClusterSettings document", file=file)]
        )
    collector = _Collector(file)
    if node.id != "mapping":
        what = "a list" if node.id == "sequence" else "a single value"
        collector.add(
            node, (), f"expected a mapping (apiVersion, kind, metadata, spec), found {what}"
        )
        raise SettingsError(collector.problems)
    data = _convert(node, (), collector)
    return data, collector.positions, collector.problems


def _convert(node: Any, path: Path, out: _Collector) -> Any:
    out.positions.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
    if node.id == "mapping":
        result: dict[str, Any] = {}
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.id != "scalar":
                out.add(key_node, path, "keys must be plain strings")
                continue
            key = str(key_node.value)
            if key == "<<":
                out.add(key_node, path, "merge keys (<<) are not supported; write the values out")
                continue
            if str(key_node.tag) != "tag:yaml.org,2002:str" or (
                key_node.style is None and key.lower() in _YAML11_BOOLS
            ):
                out.add(key_node, (*path, key), f"key {key!r} is not a plain string; quote it")
                continue
            if key in seen:
                out.add(
                    key_node,
                    (*path, key),
                    f"duplicate key (first defined on line {seen[key]})",
                )
                continue
            seen[key] = key_node.start_mark.line + 1
            out.positions[(*path, key)] = (
                key_node.start_mark.line + 1,
                key_node.start_mark.column + 1,
            )
            result[key] = _convert(value_node, (*path, key), out)
        return result
    if node.id == "sequence":
        return [_convert(item, (*path, index), out) for index, item in enumerate(node.value)]
    return _scalar(node, path, out)


def _scalar(node: Any, path: Path, out: _Collector) -> Any:
    tag = str(node.tag)
    text: str = node.value
    plain = node.style is None
    if plain and text.lower() in _YAML11_BOOLS:
        out.add(
            node,
            path,
            f"ambiguous value {text!r} (a boolean in YAML 1.1, a string in YAML 1.2): "
            "write true/false, or quote it if you mean the string",
        )
        return text
    if plain and _OCTAL_LOOKING.match(text) and text.strip("+-0_"):
        out.add(
            node,
            path,
            f"ambiguous number {text!r} (octal in YAML 1.1, decimal in YAML 1.2): "
            "write it without the leading zero, or quote it",
        )
        return text
    if tag == "tag:yaml.org,2002:str":
        return text
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:bool":
        return text.lower() == "true"
    if tag == "tag:yaml.org,2002:int":
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            out.add(node, path, f"cannot read {text!r} as a number")
            return text
    if tag == "tag:yaml.org,2002:float":
        lowered = text.lower().lstrip("+")
        if lowered in {".inf", "-.inf", ".nan"}:
            out.add(node, path, f"{text!r}: infinity and NaN are not allowed")
            return text
        value = float(text.replace("_", ""))
        return value if math.isfinite(value) else text
    if tag == "tag:yaml.org,2002:timestamp":
        return text
    out.add(node, path, f"unsupported YAML tag {tag}")
    return text
