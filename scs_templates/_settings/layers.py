"""Layered settings: several files (``-f base.yaml -f prod.yaml``) and ``--set PATH=VALUE``.

The merge order is the command line's: the positional SETTINGS first, then each ``-f`` in
the order given, then each ``--set`` in the order given; a later layer wins. Mappings merge
key by key, everything else (lists, strings, numbers) replaces what an earlier layer had,
and ``null`` in a later layer removes the key (its default applies), as with helm's values.

Every value keeps where it came from: a problem is reported at the line of the FILE that set
the value, or at ``--set PATH`` for a value from the command line (docs/settings.md).

``--set`` reads values like ``helm --set``: ``true``/``false`` are booleans, ``null`` removes
the key, a whole number without a leading zero is a number, ``{a,b}`` is a list, anything
else is a string; ``a.b`` is a path, ``a\\.b`` a key with a dot, ``a[0]`` a list item,
``a=1,b=2`` two assignments (``\\,`` is a comma in a value).

One file and no ``--set`` is exactly :func:`~.validate.load_settings` (no cost added).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from scs_templates._core.errors import InputError
from scs_templates._core.textinput import display_name
from scs_templates._settings.loader import Positions, parse_yaml_marked, read_text
from scs_templates._settings.problems import Path, Problem, SettingsError, format_path
from scs_templates._settings.validate import LoadedSettings, load_settings, validate_data

if TYPE_CHECKING:
    from typing import Any

    Assignment = tuple[str, Path, Any]  # (the label problems name, path, value)

#: The pseudo-file of problems with a ``--set`` expression itself.
SET_OPTION = "--set"
_INTEGER = re.compile(r"^-?(?:0|[1-9][0-9]*)$")
_INDEX = re.compile(r"^(.*?)\[([0-9]+)\]$")


def load_layers(
    files: Sequence[str],
    sets: Sequence[str] = (),
    *,
    plain: bool = False,
    overrides: Sequence[Assignment] = (),
) -> LoadedSettings:
    """The settings merged from ``files`` (in order), ``sets`` and then ``overrides``
    (``(label, path, value)``, e.g. ``--chart-mirror``); :class:`SettingsError` with every
    problem, each at the file (or option) that set the value."""
    if not files:
        raise InputError("no settings file: give SETTINGS or -f FILE")
    if len(files) == 1 and not sets and not overrides:
        return load_settings(files[0], plain=plain)

    texts: list[tuple[str, str]] = []
    problems: list[Problem] = []
    for path in files:
        try:
            texts.append((display_name(str(path)), read_text(path)))
        except SettingsError as error:
            problems.extend(error.problems)
    assignments: list[Assignment] = []
    for expression in sets:
        try:
            assignments.extend(parse_set(expression))
        except ValueError as error:
            problems.append(Problem(message=str(error), file=f"{SET_OPTION} {expression}"))
    if problems:
        raise SettingsError(problems)
    assignments.extend(overrides)
    try:
        loaded = _merged(texts, assignments, libyaml=True, plain=plain)
    except SettingsError:
        return _merged(texts, assignments, libyaml=False, plain=plain)  # positions: ruamel's
    if loaded.warnings:  # placed by the pure composer, as parse_settings_text does
        return _merged(texts, assignments, libyaml=False, plain=plain)
    return loaded


def _merged(
    texts: Sequence[tuple[str, str]],
    assignments: Sequence[Assignment],
    *,
    libyaml: bool,
    plain: bool,
) -> LoadedSettings:
    data: dict[str, Any] = {}
    positions: Positions = {}
    origins: dict[Path, str] = {}
    problems: list[Problem] = []
    for index, (file, text) in enumerate(texts):
        try:
            layer, layer_positions, found, _ = parse_yaml_marked(text, file, libyaml=libyaml)
        except SettingsError as error:
            problems.extend(error.problems)
            continue
        problems.extend(found)
        if index == 0:
            data, positions = layer, dict(layer_positions)
            origins = dict.fromkeys(layer_positions, file)
        else:
            _merge(data, layer, (), _Origin(positions, origins, layer_positions, file))
    for label, path, value in assignments:
        _assign(data, path, value, _Origin(positions, origins, {}, label))
    names = [file for file, _ in texts]
    return validate_data(
        data,
        file=names[0],
        positions=positions,
        earlier=problems,
        plain=plain,
        origins=origins,
        name=" + ".join([*names, *([SET_OPTION] if assignments else [])]),
    )


class _Origin:
    """Where the values of one layer come from, and the merged document's record of it."""

    def __init__(
        self, positions: Positions, origins: dict[Path, str], layer: Positions, file: str
    ) -> None:
        self.positions = positions
        self.origins = origins
        self.layer = layer
        self.file = file

    def drop(self, path: Path) -> None:
        """Forget ``path`` and everything under it (an earlier layer's, now replaced)."""
        size = len(path)
        for known in [p for p in self.positions if p[:size] == path]:
            del self.positions[known]
            self.origins.pop(known, None)

    def take(self, path: Path, value: Any) -> None:
        """``path`` and everything under it now come from this layer."""
        self.positions[path] = self.layer.get(path, (0, 0))
        self.origins[path] = self.file
        if isinstance(value, dict):
            for key, item in value.items():
                self.take((*path, key), item)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self.take((*path, index), item)


def _merge(base: dict[str, Any], layer: dict[str, Any], path: Path, origin: _Origin) -> None:
    """Merge ``layer`` into ``base``: mappings key by key, anything else replaced, null
    removes the key."""
    for key, value in layer.items():
        here = (*path, key)
        old = base.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            origin.positions[here] = origin.layer.get(here, (0, 0))
            origin.origins[here] = origin.file
            _merge(old, value, here, origin)
            continue
        origin.drop(here)
        if value is None:
            base.pop(key, None)
            continue
        base[key] = value
        origin.take(here, value)


def _assign(data: dict[str, Any], path: Path, value: Any, origin: _Origin) -> None:
    """Set ``path`` to ``value`` (None: remove it), creating the mappings on the way."""
    where: Any = data
    for depth, part in enumerate(path[:-1]):
        following = path[depth + 1]
        child = _child(where, part, origin.file)
        if child is None or not isinstance(child, dict | list):
            child = [] if isinstance(following, int) else {}
            _put(where, part, child, origin.file)
            origin.drop(path[: depth + 1])
            origin.take(path[: depth + 1], child)
        where = child
    last = path[-1]
    origin.drop(path)
    if value is None:
        if isinstance(where, dict):
            where.pop(last, None)
        elif isinstance(last, int) and last < len(where):
            del where[last]
        return
    _put(where, last, value, origin.file)
    origin.take(path, value)


def _child(container: Any, part: str | int, label: str) -> Any:
    if isinstance(container, dict):
        if isinstance(part, int):
            raise SettingsError([Problem(message="not a list: cannot index it", file=label)])
        return container.get(part)
    if not isinstance(part, int):
        raise SettingsError([Problem(message=f"a list has no key {part!r}", file=label)])
    return container[part] if part < len(container) else None


def _put(container: Any, part: str | int, value: Any, label: str) -> None:
    if isinstance(container, dict):
        if isinstance(part, int):
            raise SettingsError([Problem(message="not a list: cannot index it", file=label)])
        container[part] = value
        return
    if not isinstance(part, int):
        raise SettingsError([Problem(message=f"a list has no key {part!r}", file=label)])
    if part > len(container):
        raise SettingsError(
            [Problem(message=f"index {part} is past the list's end ({len(container)})", file=label)]
        )
    if part == len(container):
        container.append(value)
    else:
        container[part] = value


# --------------------------------------------------------------------------- --set syntax


def parse_set(expression: str) -> list[Assignment]:
    """The assignments of one ``--set`` value (``a.b=1,c={x,y}``); ValueError if malformed."""
    found: list[Assignment] = []
    for part in _split(expression, ","):
        key, equals, value = _partition(part)
        if not equals:
            raise ValueError(f"expected PATH=VALUE, found {part!r}")
        path = parse_path(key)
        found.append((f"{SET_OPTION} {format_path(path)}", path, parse_value(value)))
    return found


def parse_path(text: str) -> Path:
    """``spec.workers[0].replicas`` -> ``("spec", "workers", 0, "replicas")``; ``\\.`` is a
    dot inside a key."""
    if not text:
        raise ValueError("empty PATH before '='")
    path: list[str | int] = []
    for segment in _split(text, "."):
        indexes: list[int] = []
        match = _INDEX.match(segment)
        while match:
            indexes.insert(0, int(match.group(2)))
            segment = match.group(1)
            match = _INDEX.match(segment)
        key = _unescape(segment)
        if not key:
            raise ValueError(f"empty key in {text!r}")
        path.append(key)
        path.extend(indexes)
    return tuple(path)


def parse_value(text: str) -> Any:
    """A ``--set`` value typed as helm types it; ``{a,b}`` is a list."""
    if text.startswith("{") and text.endswith("}"):
        inner = text[1:-1]
        return [_typed(_unescape(item)) for item in _split(inner, ",")] if inner else []
    return _typed(_unescape(text))


def _typed(text: str) -> Any:
    if text == "true":
        return True
    if text == "false":
        return False
    if text == "null":
        return None
    if _INTEGER.match(text):
        return int(text)
    return text


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at each unescaped ``separator`` outside ``{...}``; escapes are kept."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    escaped = False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
            continue
        if char == "\\":
            current.append(char)
            escaped = True
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        if char == separator and depth <= 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _partition(text: str) -> tuple[str, bool, str]:
    """``key=value`` at the first unescaped ``=``."""
    escaped = False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "=":
            return text[:index], True, text[index + 1 :]
    return text, False, ""


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)
