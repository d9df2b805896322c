"""The shapes of KaaS v1 values: a single value, a list, a map, a boolean, a number, a service.

Each reader takes an :class:`~.reading.Entry` and returns the value, ``None`` for an empty
value (the default is kept), or raises :class:`Problem` with a message for the user
(shown as ``FILE:LINE: KEY: message``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scs_templates.providers.openstack.migrate import flow
from scs_templates.providers.openstack.migrate.reading import Entry


class Problem(Exception):
    """A value of the wrong shape; the message is shown as FILE:LINE: KEY: message."""


def scalar(entry: Entry) -> str | None:
    if entry.kind != "scalar":
        raise Problem(f"expected a single value, found a {entry.kind}")
    if entry.text is None or not entry.text.strip():
        return None
    return entry.text.strip()


def list_value(entry: Entry) -> list[str] | None:
    """None for an empty value; [] for an empty list."""
    if entry.kind == "map":
        raise Problem("expected a list such as [ a, b, ], found a map")
    if entry.kind == "list":
        return [item.strip() for item in entry.items if item.strip()]
    if entry.text is None or not entry.text.strip():
        return None
    try:
        return flow.parse_list(entry.text)
    except ValueError as error:
        raise Problem(f"expected a list such as [ a, b, ]: {error}") from None


def map_value(entry: Entry) -> dict[str, str] | None:
    if entry.kind == "list":
        raise Problem("expected a map such as { key: 'value', }, found a list")
    if entry.kind == "map":
        return dict(entry.mapping)
    if entry.text is None or not entry.text.strip():
        return None
    try:
        return flow.parse_map(entry.text)
    except ValueError as error:
        raise Problem(f"expected a map such as {{ key: 'value', }}: {error}") from None


def bool_value(entry: Entry) -> bool | None:
    text = scalar(entry)
    if text is None:
        return None
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise Problem(f"expected true or false, found {text!r}")


def int_value(entry: Entry) -> int | None:
    text = scalar(entry)
    if text is None:
        return None
    if not re.fullmatch(r"[+-]?\d+", text):
        raise Problem(f"expected a whole number, found {text!r}")
    return int(text)


def count(entry: Entry, expected: str) -> int | None:
    """:func:`int_value`, refusing a negative number (``expected`` says what was expected:
    "0 or more machines")."""
    value = int_value(entry)
    if value is not None and value < 0:
        raise Problem(f"expected {expected}, found {value}")
    return value


SERVICE_VERSION = re.compile(r"^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
_VERSIONISH = re.compile(r"^v?\d+(\.\d+)*([-+][0-9A-Za-z.-]+)?$")

_MANIFEST_NOTE = (
    "KaaS v1 versions were manifest/release versions, which may not match the chart "
    "versions scs-templates installs: check {version} against the chart, or remove it to "
    "use the tested default"
)


@dataclass(frozen=True)
class ServiceValue:
    enabled: bool
    version: str | None
    notes: tuple[str, ...] = ()


def service_value(entry: Entry) -> ServiceValue | None:
    text = scalar(entry)
    if text is None:
        return None
    lowered = text.lower()
    if lowered in ("true", "false"):
        return ServiceValue(lowered == "true", None)
    if lowered in ("master", "main"):
        return ServiceValue(
            True,
            None,
            (
                f"{text!r} (the upstream development branch) has no chart equivalent: the "
                "tested default version is used",
            ),
        )
    if SERVICE_VERSION.match(text):
        return ServiceValue(True, text, (_MANIFEST_NOTE.format(version=text),))
    if _VERSIONISH.match(text):
        return ServiceValue(
            True,
            None,
            (f"{text!r} is not a full X.Y.Z version; the tested default version is used",),
        )
    raise Problem(f"expected true, false, master or a version such as v1.2.3, found {text!r}")
