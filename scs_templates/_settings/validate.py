"""Turn plain data (or a file) into a validated :class:`ClusterSettings`, or ALL problems.

Structural problems come from pydantic and are rewritten into short messages with the YAML
path and the file position; unknown keys get a did-you-mean suggestion. Cross-field rules
(:mod:`.rules`) run once the structure is valid.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path as FsPath
from typing import TYPE_CHECKING

from scs_templates._core.records import record
from scs_templates._core.textinput import STDIN_NAME, display_name
from scs_templates._settings import plain, plugins, rules
from scs_templates._settings.keys import API_VERSION, KIND
from scs_templates._settings.loader import Positions, parse_yaml_marked, read_text
from scs_templates._settings.problems import Path, Problem, SettingsError

if TYPE_CHECKING:  # pydantic and the model classes: only where a file is not plainly valid
    from typing import Any

    from scs_templates._settings.model import ClusterSettings


@record
class LoadedSettings:
    """Validated settings plus the warnings found while loading them."""

    settings: ClusterSettings
    warnings: tuple[Problem, ...] = ()
    file: str = ""
    positions: Positions = field(default_factory=dict, repr=False, compare=False)
    #: The file (or ``--set PATH``) of each positioned path when the settings were merged
    #: from several (:mod:`.layers`); empty: every path is ``file``'s.
    origins: Mapping[Path, str] = field(default_factory=dict, repr=False, compare=False)


def load_settings(path: str | FsPath, *, plain: bool = False) -> LoadedSettings:
    """Read, parse and validate a settings file (``-``: stdin). Raises :class:`SettingsError`.

    ``plain``: the settings of a valid file are :mod:`.plain` objects, not model instances
    (the commands that only read them; errors are the same either way).
    """

    text = read_text(path)
    return parse_settings_text(text, file=display_name(str(path)), plain=plain)


def parse_settings_text(
    text: str, *, file: str = "<settings>", plain: bool = False
) -> LoadedSettings:
    """Parse and validate settings given as YAML text (``plain`` as in :func:`load_settings`).

    Composed by libyaml where it can be (:func:`~.loader.parse_yaml`); a file with any
    problem, or a warning placed at an empty value (where libyaml's position differs), is
    read again by the pure-Python composer, whose positions every reported line carries.
    """
    try:
        loaded, uncertain = _parse(text, file, libyaml=True, plain=plain)
    except SettingsError:
        return _parse(text, file, libyaml=False, plain=plain)[0]  # raises again, by ruamel
    if any(_anchor(loaded.positions, warning.path) in uncertain for warning in loaded.warnings):
        return _parse(text, file, libyaml=False, plain=plain)[0]
    return loaded


def _parse(text: str, file: str, *, libyaml: bool, plain: bool) -> tuple[LoadedSettings, set[Path]]:
    """The settings, and the paths whose libyaml position may not be the pure composer's
    (a warning placed at one of them is placed again by the pure composer)."""
    data, positions, problems, uncertain = parse_yaml_marked(text, file, libyaml=libyaml)
    loaded = validate_data(data, file=file, positions=positions, earlier=problems, plain=plain)
    return loaded, uncertain


def validate_data(
    data: Any,
    *,
    file: str = "",
    positions: Positions | None = None,
    earlier: list[Problem] | None = None,
    plain: bool = False,
    origins: Mapping[Path, str] | None = None,
    name: str = "",
) -> LoadedSettings:
    """Validate already-parsed data (e.g. from another tool). Raises :class:`SettingsError`.

    ``earlier`` are problems the YAML reader found in single values; they are reported
    together with the validation problems, which are dropped where they repeat a path.
    ``plain`` as in :func:`load_settings`. ``origins``: the file (or ``--set PATH``) each
    positioned path came from, when the data was merged from several
    (:mod:`~scs_templates._settings.layers`; else every problem names ``file``); ``name``:
    what the result calls its source (default ``file``).
    """
    positions = positions or {}
    earlier = earlier or []
    problem = _Placer(file, positions, origins)
    _refuse_unreadable(data, file, earlier, problem)
    settings = _validated(data, earlier, problem, plain=plain)
    if earlier:
        raise SettingsError(earlier)
    errors = [problem(path, message) for path, message in rules.errors(settings)]
    if errors:
        raise SettingsError(errors)
    found = [problem(path, message, "warning") for path, message in rules.warnings(settings)]
    return LoadedSettings(
        settings, tuple(sorted(found)), name or file, positions, dict(origins or {})
    )


class _Placer:
    """Makes a :class:`Problem` at the file position of its path (and in the file that path
    came from, when the data was merged from several)."""

    def __init__(self, file: str, positions: Positions, origins: Mapping[Path, str] | None):
        self.file = file
        self.positions = positions
        self.origins = origins

    def __call__(self, path: Path, message: str, severity: str = "error") -> Problem:
        positions, origins, file = self.positions, self.origins, self.file
        anchor = _anchor(positions, path)
        line, column = (0, 0) if anchor is None else positions[anchor]
        where = origins.get(anchor, file) if origins and anchor is not None else file
        return Problem(line, column, path, message, file=where, severity=severity)


def _refuse_unreadable(data: Any, file: str, earlier: list[Problem], problem: _Placer) -> None:
    """Raise for data that is no settings document to validate: not a mapping, another
    tool's document, a wrong header, unprintable text."""
    if not isinstance(data, Mapping):
        raise SettingsError(
            [problem((), "expected a mapping with apiVersion, kind, metadata, spec")]
        )
    header = _check_header(data)
    foreign = _foreign_document(data) if header else None
    if foreign is not None:  # not a settings file at all: say what it is and what to do
        key, what, command = foreign

        name = "-" if file == STDIN_NAME else file or "FILE"
        raise SettingsError(
            [
                problem(
                    (key,),
                    f"this is {what} ({key} and no apiVersion/kind), not "
                    f"a ClusterSettings file; convert it with `scs-templates {command} {name}`",
                )
            ]
        )
    if header:
        raise SettingsError([*earlier, *(problem(path, message) for path, message in header)])
    unprintable = _unprintable(data, ())
    if unprintable:
        raise SettingsError([*earlier, *(problem(path, message) for path, message in unprintable)])


def _validated(
    data: Any, earlier: list[Problem], problem: _Placer, *, plain: bool
) -> ClusterSettings:
    """The structurally valid settings (plain objects where ``plain`` and they can be), or
    :class:`SettingsError` with the reader's problems and pydantic's on other paths."""
    settings = _plain(data) if plain else None
    if settings is not None:
        return settings
    from pydantic import ValidationError  # deferred: pydantic

    from scs_templates._settings.model import settings_model  # deferred: pydantic
    from scs_templates._settings.pydantic_errors import translate  # deferred: pydantic

    reported = {p.path for p in earlier}
    try:
        model = settings_model()
        return model.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as error:
        raise SettingsError(
            [
                *earlier,
                *(
                    problem(path, message)
                    for path, message in translate(error)
                    if path not in reported
                ),
            ]
        ) from None


def _plain(data: Any) -> ClusterSettings | None:

    settings: ClusterSettings | None = plain.validate(data)
    return settings


#: What YAML calls printable (YAML 1.2, 5.1): helm's YAML reader refuses everything else in
#: its values ("control characters are not allowed"), so such a string could never render.
_UNPRINTABLE_ASCII = re.compile("[^\t\n\r\x20-\x7e]")


@functools.cache
def _unprintable_unicode() -> re.Pattern[str]:
    """The full class, compiled only for text that is not ASCII (its huge ranges cost
    several milliseconds to compile; ASCII text needs only the small class above)."""
    return re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _first_unprintable(text: str) -> re.Match[str] | None:
    if text.isascii():
        return _UNPRINTABLE_ASCII.search(text)
    return _unprintable_unicode().search(text)


def _unprintable(value: Any, path: Path) -> list[tuple[Path, str]]:
    """Every key and string value holding a character helm cannot read (an escape such as
    ``"\\x7f"`` is valid YAML for our reader, not for helm's)."""
    found: list[tuple[Path, str]] = []
    if isinstance(value, str):
        match = _first_unprintable(value)
        if match:
            found.append(
                (path, f"character {ord(match.group()):#06x} is not allowed (not printable)")
            )
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and _first_unprintable(key):
                found.append(((*path, key), "the key holds a character that is not printable"))
            found.extend(_unprintable(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_unprintable(item, (*path, index)))
    return found


def _check_header(data: Mapping[str, Any]) -> list[tuple[Path, str]]:
    """apiVersion and kind first: with a wrong version, field errors would only confuse."""
    found: list[tuple[Path, str]] = []
    version = data.get("apiVersion")
    if version is None:
        found.append((("apiVersion",), f"missing; this format is {API_VERSION}"))
    elif version != API_VERSION:
        found.append(
            (("apiVersion",), f"unknown version {version!r}; this release reads {API_VERSION}")
        )
    kind = data.get("kind")
    if kind is None:
        found.append((("kind",), f"missing; expected {KIND}"))
    elif kind != KIND:
        found.append((("kind",), f"unknown kind {kind!r}; expected {KIND}"))
    return found


def _foreign_document(data: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(key, what it is, the command converting it) when ``data`` (a mapping without
    apiVersion and kind) is a document a provider knows to convert (OpenStack: a KaaS v1
    clusterctl.yaml), else None."""
    if "apiVersion" in data or "kind" in data:
        return None
    for provider in plugins.installed_providers():
        found: tuple[str, str, str] | None = provider.foreign_document(data)
        if found is not None:
            return found
    return None


def _anchor(positions: Positions, path: Path) -> Path | None:
    """The longest prefix of ``path`` that has a position (where a problem is placed)."""
    for end in range(len(path), -1, -1):
        if path[:end] in positions:
            return path[:end]
    return None
