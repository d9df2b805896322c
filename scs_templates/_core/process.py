"""Run one tool process (helm, helmfile) safely: argument lists, a wall clock, a clean kill.

Why this is not just ``subprocess.run(timeout=...)``: on timeout ``run`` kills only the direct
child. helm and helmfile start children of their own (helmfile runs helm; helm runs plugins and
post-renderers) and those keep the output pipes open, so ``run`` can hang long after its
timeout and leave orphans behind. Every tool here starts in a NEW SESSION (its own process
group) and a timeout kills the whole group.

stdout and stderr are read separately (``communicate``) because helm prints warnings on stderr
while succeeding; the caller decides on the exit code alone.

Every running group is registered here, so that a signal (:mod:`scs_templates._core.signals`) can
end them ALL, including those started by worker threads (a fleet render), which no exception
of the main thread reaches; once :func:`stop_all` ran, no new process starts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from typing import TYPE_CHECKING

from scs_templates._core import signals
from scs_templates._core.records import record

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path
    from typing import BinaryIO


#: After SIGTERM to the group, wait this long before SIGKILL.
KILL_GRACE_SECONDS = 2.0


@record
class Completed:
    """A finished process: exit code, both outputs as text, and how long it took."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float


_live_lock = threading.Lock()
_live: set[subprocess.Popen[bytes]] = set()
_stopping = False


class Stopped(Exception):
    """A process was to be started after :func:`stop_all` (the command is being ended)."""


def stop_all(grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM every running group now, SIGKILL what is left after ``grace`` seconds.

    Safe to call from a signal handler: it only sends signals and starts a timer thread.
    """
    global _stopping
    with _live_lock:
        _stopping = True
        groups = list(_live)
    for running in groups:
        _signal_group(running, signal.SIGTERM)

    def finish() -> None:
        with _live_lock:
            left = list(_live)
        for running in left:
            _signal_group(running, signal.SIGKILL)

    if groups:
        timer = threading.Timer(grace, finish)
        timer.daemon = True
        timer.start()


def resume() -> None:
    """Allow new processes again (the command that was stopped has ended)."""
    global _stopping
    with _live_lock:
        _stopping = False


signals.on_signal(stop_all, resume)


def _signal_group(running: subprocess.Popen[bytes], sig: int) -> None:
    if running.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(running.pid, sig)  # the leader's pid is the group id (new session)


class ProcessTimeout(Exception):
    """The process group ran past its deadline and was killed (outputs so far attached)."""

    def __init__(self, seconds: float, stdout: str, stderr: str) -> None:
        super().__init__(f"timed out after {seconds:g} s")
        self.seconds = seconds
        self.stdout = stdout
        self.stderr = stderr


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the whole process group, then SIGKILL whatever is left after a grace period."""
    try:
        pgid = os.getpgid(process.pid)
    except ProcessLookupError:
        return
    for sig, grace in ((signal.SIGTERM, KILL_GRACE_SECONDS), (signal.SIGKILL, 0.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        if grace:
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                continue
            # The leader is gone; children may still linger in the group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            return


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout: float,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    stderr_file: BinaryIO | None = None,
    tick: Callable[[float], None] | None = None,
) -> Completed:
    """Run ``argv`` (never through a shell) and return its outputs whatever the exit code.

    ``stdin`` is written to the process (helm reads values from ``-f -``); without it stdin
    is ``/dev/null``, so a tool that wants to prompt fails instead of hanging. Raises
    :class:`ProcessTimeout` after ``timeout`` seconds of wall clock and ``OSError`` when the
    binary cannot be started.

    For long runs (a ``go build`` of minutes): ``stderr_file`` receives stderr as it is
    written (``Completed.stderr`` is then empty), and ``tick(seconds_so_far)`` is called
    about once a second while the process runs, so the caller can show progress.
    """
    started = time.monotonic()
    with _live_lock:
        if _stopping:
            raise Stopped(f"not started, the command is being stopped: {argv[0]}")
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr_file if stderr_file is not None else subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
        _live.add(process)
    try:
        out, err = _communicate(process, stdin, timeout, started, tick)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        out, err = _drain(process)
        raise ProcessTimeout(timeout, _text(out), _text(err)) from None
    except BaseException:  # KeyboardInterrupt, a signal, SystemExit: leave no orphans behind
        _kill_group(process)
        _drain(process)
        raise
    finally:
        with _live_lock:
            _live.discard(process)
    # The leader is gone; children it left in its group (plugins, helm under helmfile) too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    return Completed(process.returncode, _text(out), _text(err), time.monotonic() - started)


def _communicate(
    process: subprocess.Popen[bytes],
    stdin: bytes | None,
    timeout: float,
    started: float,
    tick: Callable[[float], None] | None,
) -> tuple[bytes, bytes]:
    """``communicate`` within ``timeout``; with ``tick``, in one-second steps (a retried
    ``communicate`` loses no output, and stdin is sent by the first call only)."""
    if tick is None:
        return process.communicate(input=stdin, timeout=timeout)
    first = True
    while True:
        left = timeout - (time.monotonic() - started)
        try:
            return process.communicate(input=stdin if first else None, timeout=min(1.0, left))
        except subprocess.TimeoutExpired:
            if left <= 1.0:
                raise
        first = False
        tick(time.monotonic() - started)


def _drain(process: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Collect what the killed group wrote; never block forever on a pipe held elsewhere."""
    try:
        return process.communicate(timeout=KILL_GRACE_SECONDS)
    except (subprocess.TimeoutExpired, ValueError):
        process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=KILL_GRACE_SECONDS)
        return b"", b""


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
