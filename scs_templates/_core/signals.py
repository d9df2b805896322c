"""SIGINT, SIGTERM and SIGHUP end a command the same way: tools stopped, temp files removed.

A CI job that is cancelled sends SIGTERM, a closed terminal SIGHUP; by default Python dies
on both at once, so ``atexit`` and ``finally`` never run: helm (started in its own session,
so the signal does not reach it) kept running, re-parented to init (a ``helm upgrade
--atomic`` carried on changing the cluster), and the private helm home stayed in /tmp.

:func:`handled` turns each of the three signals into an exception in the main thread
(:class:`KeyboardInterrupt` for SIGINT, :class:`Terminated` for the others) after ending every
running tool group (:func:`scs_templates._core.process.stop_all`, registered with
:func:`on_signal`), which also reaches the helm processes of worker threads. The exception
unwinds through every ``finally`` and context manager, so temporary directories are
removed, and the CLI exits ``128 + signal`` (130, 143, 129) with one line.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import FrameType
    from typing import Any

#: What a handled signal runs before it raises, and what runs when the block it interrupted
#: has ended: (stop, resume) pairs, registered with :func:`on_signal`.
#: :mod:`scs_templates._core.process` registers ending every running tool group (and
#: refusing new ones meanwhile) when it is imported; a command that never imported it has
#: started no tool, so there is nothing to end. (This module does not import it: ``validate``
#: handles signals too and starts no process.)
_ON_SIGNAL: list[tuple[Callable[[], None], Callable[[], None]]] = []


def on_signal(stop: Callable[[], None], resume: Callable[[], None]) -> None:
    """Run ``stop`` when a handled signal arrives (inside the signal handler: it must only
    send signals and start threads) and ``resume`` once the interrupted block has ended."""
    _ON_SIGNAL.append((stop, resume))


#: The signals that end a command, and their names in the message.
HANDLED: dict[int, str] = {
    signal.SIGINT: "SIGINT",
    signal.SIGTERM: "SIGTERM",
    signal.SIGHUP: "SIGHUP",
}


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived; like KeyboardInterrupt, not caught by ``except Exception``."""

    def __init__(self, signum: int) -> None:
        super().__init__(HANDLED.get(signum, str(signum)))
        self.signum = signum


def exit_code(signum: int) -> int:
    """The shell's convention: 128 + the signal number."""
    return 128 + signum


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """Handle SIGINT/SIGTERM/SIGHUP inside the block (main thread only; else a no-op).

    The first signal raises; further ones while the command unwinds are ignored, so the
    clean-up itself is not interrupted.
    """

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[int] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        if fired:
            return
        fired.append(signum)
        for stop, _ in tuple(_ON_SIGNAL):
            stop()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)

    previous: dict[int, Any] = {}
    for signum in HANDLED:
        previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        if fired:
            for _, resume in tuple(_ON_SIGNAL):
                resume()
