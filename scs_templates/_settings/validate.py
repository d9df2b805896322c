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
from scs_templates._core.secrets import redact
from scs_templates._core.textinput import STDIN_NAME, display_name
from scs_templates._settings import plain, plugins, rules
from scs_templates._settings.keys import API_VERSION, KIND
from scs_templates._settings.loader import Positions, parse_yaml_marked, read_text
from scs_templates._settings.problems import Path, Problem, SettingsError, did_you_mean

if TYPE_CHECKING:  # pydantic and the model classes: only where a file is not plainly valid
    from typing import Any

    from pydantic import ValidationError

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
                    for path, message in _translate(error)
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


def _pattern_help() -> dict[str, str]:
    from scs_templates._settings.model import (  # deferred: pydantic
        COMPACTION_RETENTION,
        DNS_LABEL,
        DNS_SUBDOMAIN,
        LABEL_KEY,
        LABEL_VALUE,
        NO_PROXY_ENTRY,
        ON_CALENDAR,
        REGISTRY_HOST,
    )

    return {
        DNS_SUBDOMAIN: (
            "must be a DNS-1123 subdomain: DNS labels (lower-case letters, digits and '-', "
            "at most 63 characters each) joined by '.'"
        ),
        LABEL_KEY: (
            "is not a label key: an optional DNS subdomain and '/', then at most 63 letters, "
            "digits, '-', '_' or '.', starting and ending with a letter or digit"
        ),
        LABEL_VALUE: (
            "is not a label value: empty or at most 63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        ),
        NO_PROXY_ENTRY: (
            "is not one NO_PROXY entry: one host, domain or CIDR per list item, without ',', "
            "blanks or quotes"
        ),
        COMPACTION_RETENTION: (
            "is not an etcd compaction retention: whole hours (8) or a Go duration such as "
            "8h, 90m or 1h30m"
        ),
        ON_CALENDAR: (
            "is not a systemd OnCalendar expression such as '*-*-* 02:30:00' (one line of "
            "ASCII letters, digits, blanks and * , . / : ~ -)"
        ),
        DNS_LABEL: (
            "must be a DNS-1123 label: lower-case letters, digits and '-', starting and "
            "ending with a letter or digit"
        ),
        REGISTRY_HOST: (
            "is not a registry host such as docker.io, registry.k8s.io or harbor.example:5000 "
            "(no scheme, path or '..')"
        ),
    }


def _unechoed_pattern_help() -> dict[str, str]:
    """Patterns whose wrong values are never echoed: they may carry credentials."""
    from scs_templates._settings.model import PROXY_URL  # deferred: pydantic

    return {
        PROXY_URL: (
            "must be an http:// or https:// URL without user information, e.g. "
            "http://proxy.example:3128 (credentials would be copied onto every node; the "
            "value is not shown)"
        ),
    }


def _translate(error: ValidationError) -> list[tuple[Path, str]]:
    """pydantic's errors as (path, message); every message redacted (URL userinfo,
    registered secrets) because messages quote the values."""

    return [(path, redact(message)) for path, message in _translate_raw(error)]


def _translate_raw(error: ValidationError) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    pattern_help = _pattern_help()
    unechoed = _unechoed_pattern_help()
    for item in error.errors(include_url=False):
        loc = tuple(part for part in item["loc"] if part != "[key]")
        path: Path = tuple(p for p in loc if isinstance(p, str | int))
        kind = item["type"]
        value = item.get("input")
        ctx = item.get("ctx") or {}
        if kind == "extra_forbidden":
            known = _known_keys(path[:-1])
            key = str(path[-1])
            found.append((path, f"unknown key {key!r}{did_you_mean(key, known)}"))
            continue
        if kind == "missing":
            found.append((path, "required but missing"))
            continue
        if kind == "literal_error":
            expected = ctx.get("expected", "")
            hint = ""
            if isinstance(value, str):
                choices = [c.strip().strip("'") for c in expected.replace(" or ", ", ").split(",")]
                hint = did_you_mean(value, choices)
            found.append((path, f"{value!r} is not allowed; expected {expected}{hint}"))
            continue
        if kind == "string_pattern_mismatch" and str(ctx.get("pattern")) in unechoed:
            found.append((path, unechoed[str(ctx.get("pattern"))]))
            continue
        if kind == "string_pattern_mismatch":
            message = pattern_help.get(str(ctx.get("pattern")), "has the wrong format")
            found.append((path, f"{value!r} {message}"))
            continue
        found.append((path, _message(kind, item["msg"], value)))
    return found


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


def _message(kind: str, msg: str, value: Any) -> str:
    expected = {
        "int_type": "a whole number",
        "bool_type": "true or false",
        "string_type": "a string",
        "model_type": "a mapping",
        "model_attributes_type": "a mapping",
        "dict_type": "a mapping",
        "list_type": "a list",
    }.get(kind)
    if expected:
        return f"expected {expected}, found {_describe(value)}"
    text = msg[0].lower() + msg[1:] if msg else kind
    return text.replace("input should be", "must be").replace("Value error, ", "")


def _known_keys(path: Path) -> list[str]:
    """The YAML keys allowed at ``path`` (for did-you-mean)."""
    from pydantic import BaseModel  # deferred: pydantic

    from scs_templates._settings.model import ClusterSettings, nested_model  # deferred: pydantic

    model: Any = ClusterSettings
    for part in path:
        if isinstance(part, int):
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return []
        fields = {info.alias or name: info for name, info in model.model_fields.items()}
        info = fields.get(part)
        if info is None:
            return []
        model = nested_model(info.annotation)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return sorted(info.alias or name for name, info in model.model_fields.items())
    return []
