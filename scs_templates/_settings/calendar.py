"""systemd OnCalendar expressions, checked as ``systemd-analyze calendar`` parses them.

``spec.etcd.defrag.schedule`` becomes the ``OnCalendar=`` of a systemd timer on every
control-plane node; a value systemd refuses leaves the timer dead without a word at render
time. This is a pure-Python check of a SUBSET of systemd's grammar (``man 7 systemd.time``,
src/shared/calendarspec.c), so the product needs no systemd: everything it accepts, the real
``systemd-analyze calendar`` accepts too (``tests/render/test_oncalendar.py`` runs the real tool on
a corpus and on hypothesis-generated expressions). It is stricter where systemd's rules are
subtle: time zones other than UTC, two-digit years, fractional seconds and ``@epoch`` are
refused.

The grammar accepted::

    shorthand [" UTC"]                  minutely, hourly, daily, weekly, monthly, yearly,
                                        annually, quarterly, semiannually (any case)
    [weekdays] [date] [time] [" UTC"]   at least one of the three, in this order
    weekdays  = day ("," day)*          day = Mon | Monday | Mon..Fri (any case, in order)
    date      = [year "-"] month ("-" | "~") day     (``~``: days from the end, 1..28)
    time      = hour ":" minute [":" second]
    component = "*" | item ("," item)*  item = N | N..M | N/R | N..M/R  (N <= M, R >= 1,
    N + R <= the maximum for N/R; in the seconds N < M for N..M)

with years 1970..2199 (four digits), months 1..12, days 1..31, hours 0..23, minutes and
seconds 0..59.
"""

from __future__ import annotations

import re

_SHORTHANDS = frozenset(
    {
        "minutely",
        "hourly",
        "daily",
        "weekly",
        "monthly",
        "yearly",
        "annually",
        "quarterly",
        "semiannually",
    }
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ITEM = re.compile(r"\A([0-9]+)(?:\.\.([0-9]+))?(?:/([0-9]+))?\Z")
_YEAR = re.compile(r"\A[0-9]{4}\Z")


def _weekday(name: str) -> int | None:
    lower = name.lower()
    for index, day in enumerate(_WEEKDAYS):
        if lower in (day, day[:3]):
            return index
    return None


def _weekdays_ok(text: str) -> bool:
    for part in text.split(","):
        ends = part.split("..")
        if len(ends) > 2:
            return False
        days = [day for day in map(_weekday, ends) if day is not None]
        if len(days) != len(ends) or days != sorted(days):
            return False
    return True


def _component_ok(
    text: str, low: int, high: int, *, year: bool = False, seconds: bool = False
) -> bool:
    """``*`` or a comma list of N, N..M, N/R, N..M/R inside [low, high]. In the seconds
    (``seconds``), which may carry a fraction, systemd refuses an empty range N..N without
    a repetition (``*:*:3..3``; systemd 252)."""
    if text == "*":
        return True
    for part in text.split(","):
        match = _ITEM.match(part)
        if match is None:
            return False
        start, end, repeat = match.groups()
        if year and (not _YEAR.match(start) or (end is not None and not _YEAR.match(end))):
            return False
        first = int(start)
        last = first if end is None else int(end)
        if not low <= first <= last <= high:
            return False
        if seconds and end is not None and first == last and repeat is None:
            return False
        if repeat is not None and int(repeat) < 1:
            return False
        if repeat is not None and end is None and first + int(repeat) > high:
            return False  # systemd: a repetition from N must reach a value <= the maximum
    return True


def _date_ok(text: str) -> bool:
    head, tilde, last_day = text.rpartition("~")
    fields = [*head.split("-"), last_day] if tilde else text.split("-")
    if len(fields) == 3:
        if not _component_ok(fields[0], 1970, 2199, year=True):
            return False
        fields = fields[1:]
    if len(fields) != 2 or "~" in fields[0]:
        return False
    if tilde:  # counted from the month's end: systemd takes 1..28, without a repetition
        return (
            _component_ok(fields[0], 1, 12)
            and "/" not in fields[1]
            and _component_ok(fields[1], 1, 28)
        )
    return _component_ok(fields[0], 1, 12) and _component_ok(fields[1], 1, 31)


def _time_ok(text: str) -> bool:
    fields = text.split(":")
    if len(fields) not in (2, 3):
        return False
    hour, minute, *second = fields
    return (
        _component_ok(hour, 0, 23)
        and _component_ok(minute, 0, 59)
        and all(_component_ok(field, 0, 59, seconds=True) for field in second)
    )


def problem(expression: str) -> str | None:
    """Why systemd would refuse ``expression`` as ``OnCalendar=`` (None: it is accepted)."""
    if not expression.isascii() or expression != expression.strip(" ") or "\t" in expression:
        return "only ASCII, without leading or trailing blanks"
    if any(char in expression for char in "\n\r\x0b\x0c"):
        return "a single line"
    tokens = expression.split()
    if tokens and tokens[-1].lower() == "utc" and len(tokens) > 1:
        tokens = tokens[:-1]
    if len(tokens) == 1 and tokens[0].lower() in _SHORTHANDS:
        return None
    if not 1 <= len(tokens) <= 3:
        return "at most a weekday, a date and a time"
    if tokens[0][:1].isalpha():
        if not _weekdays_ok(tokens[0]):
            return f"{tokens[0]!r} is not a weekday list such as Mon..Fri or Sat,Sun"
        tokens = tokens[1:]
    if tokens and ":" in tokens[-1]:
        if not _time_ok(tokens[-1]):
            return f"{tokens[-1]!r} is not a time such as 02:30:00"
        tokens = tokens[:-1]
    if len(tokens) > 1:
        return "at most a weekday, a date and a time, in this order"
    if tokens and not _date_ok(tokens[0]):
        return f"{tokens[0]!r} is not a date such as *-*-* or 2026-01-01"
    return None
