"""Durations as people write them (``90``, ``90s``, ``10m``, ``1h30m``), in seconds.

Apart from :mod:`.timeouts` because the CLI's parser reads ``--timeout`` and ``--wait`` with
it: building the parser (``--help``) imports this module and nothing more.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"^\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s?)?\s*$")


def parse_duration(text: str) -> float:
    """``30m``, ``1h30m``, ``90s`` or ``90`` (seconds) -> seconds; ValueError otherwise."""
    match = _DURATION.match(text)
    if not text.strip() or not match or not any(match.groups()):
        raise ValueError(f"{text!r} is not a duration (e.g. 30m, 1h, 90s)")
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise ValueError("the duration must be positive")
    return float(total)
