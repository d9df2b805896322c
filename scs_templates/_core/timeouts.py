"""The wall clock of every tool call (helm, helmfile, version checks), configurable.

Each kind of call has its own default (helm 5 min, helmfile 15 min, the services' helmfile
1 h, a version check 30 s); a slow CI runner or a large management cluster needs others. One
value set with the CLI's ``--timeout`` (first) or ``SCS_TEMPLATES_TIMEOUT`` replaces ALL of
them, so a single knob bounds how long any one tool process may run before its whole
process group is ended. Durations: ``90``, ``90s``, ``10m``, ``1h30m``.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from scs_templates._core.durations import parse_duration
from scs_templates._core.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

ENV_VAR = "SCS_TEMPLATES_TIMEOUT"

#: Set in the thread of an :func:`abandonable` call.
_abandonable_thread = threading.local()
_override: float | None = None


def set_override(seconds: float | None) -> None:
    """What ``--timeout`` sets: replaces every default (and the environment variable)."""
    global _override
    _override = seconds


def explicit() -> float | None:
    """The value the user set (``--timeout``, else ``SCS_TEMPLATES_TIMEOUT``), else None.

    Where a call has a bound of its own besides the wall clock (helm's ``--timeout``, one
    Kubernetes API request), the user's value caps it: the knob is the longest any one call
    may take. Raises :class:`~scs_templates._core.errors.InputError` for an unreadable
    environment value.
    """
    if _override is not None:
        return _override
    text = os.environ.get(ENV_VAR, "").strip()
    if not text:
        return None
    try:
        return parse_duration(text)
    except ValueError as error:
        raise InputError(f"{ENV_VAR}={text!r}: {error}") from None


def tool_timeout(default: float) -> float:
    """The wall clock for one tool call whose own default is ``default`` seconds.

    Raises :class:`~scs_templates._core.errors.InputError` for an unreadable environment value.
    """
    chosen = explicit()
    return default if chosen is None else chosen


def abandonable(
    call: Callable[[], T], limit: float, abandoned: Callable[[], BaseException], name: str
) -> T:
    """``call()`` in a daemon thread (``name``); after ``limit`` seconds the caller raises
    ``abandoned()`` and leaves the thread behind (the command then ends, and the process
    with it).

    For network calls no socket timeout bounds: a client that blocks on its own lock
    (keystoneauth behind an authenticating proxy), a server that trickles a byte now and
    then (a read timeout is per read). :func:`inside_abandonable` tells a call made inside
    one that the outer wall clock bounds it already."""
    outcome: list[tuple[bool, Any]] = []

    def work() -> None:
        _abandonable_thread.active = True
        try:
            outcome.append((True, call()))
        except BaseException as error:  # handed to the caller's thread
            outcome.append((False, error))

    worker = threading.Thread(target=work, name=name, daemon=True)
    worker.start()
    worker.join(limit)
    if not outcome:
        raise abandoned()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def inside_abandonable() -> bool:
    """True in the thread of an :func:`abandonable` call."""
    return bool(getattr(_abandonable_thread, "active", False))
