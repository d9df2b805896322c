"""Child processes of the test plane: one-shot commands and long-running daemons.

The project's subprocess rules hold here too: argument lists, never a shell; every child in
its own process group so that a timeout or a signal ends the whole group, never a stray
grandchild; output to a log file (the daemons are chatty and must not fill a pipe).

A one-shot command (a ``go build`` of kube-apiserver runs for many minutes) lives in its own
session, so a signal to the caller does not reach it: while the caller waits, SIGINT, SIGTERM
and SIGHUP end the command's group first and are then handled as the caller would have
handled them (KeyboardInterrupt for pytest's Ctrl-C, termination for a SIGTERM).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import IO, Any

from scs_templates._tools.toolchain import go_build

Popen = subprocess.Popen[bytes]

#: The Go collector of a long-running component: a collection when the heap has grown to five
#: times what survived the last one (Go's default: twice), at most 1 GiB before it collects
#: anyway. The components run for the whole session and mostly serve a few requests at a
#: time; collecting less often costs them less CPU (6-8 % of a plane module's CPU seconds,
#: docs/testing.md) for some memory. A GOGC or GOMEMLIMIT of the caller's own is kept.
DAEMON_COLLECTOR = {"GOGC": "400", "GOMEMLIMIT": "1GiB"}


def daemon_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` with :data:`DAEMON_COLLECTOR` unless it sets the Go collector itself."""
    return env | go_build.unless_callers(DAEMON_COLLECTOR, env)


class PlaneError(RuntimeError):
    """The test plane could not be built or started (the message says which part and why)."""


def _end_group(proc: Popen, grace: float) -> None:
    """SIGTERM the child's process group, SIGKILL it after ``grace`` seconds."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        proc.wait(timeout=grace)


class _Signalled(BaseException):
    """A signal arrived while a one-shot command ran (re-delivered once its group ended)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: The signals that end a one-shot command's group while the caller waits for it.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_raise() -> Iterator[dict[int, Any]]:
    """While the block runs, SIGINT/SIGTERM/SIGHUP raise :class:`_Signalled` (main thread
    only: Python runs signal handlers there); yields the handlers they replaced. A signal the
    caller ignores stays ignored (a shell's background job ignores SIGINT), and so does one
    whose handler Python cannot restore (installed by C code)."""
    if threading.current_thread() is not threading.main_thread():
        yield {}
        return

    def raise_signalled(signum: int, frame: FrameType | None) -> None:
        del frame
        raise _Signalled(signum)

    previous: dict[int, Any] = {}
    try:
        for signum in FORWARDED:
            handler = signal.getsignal(signum)
            if handler is not None and handler is not signal.SIG_IGN:
                previous[signum] = handler
                signal.signal(signum, raise_signalled)
        yield previous
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _popen(argv: list[str], cwd: Path, env: dict[str, str], out: Any, err: Any) -> Popen:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
        start_new_session=True,
    )


def _run(
    argv: list[str], cwd: Path, env: dict[str, str], out: Any, err: Any, timeout: float, what: str
) -> tuple[Popen, bytes, bytes]:
    """Start ``argv`` and wait for it (reading its pipes, if any); its group ends on timeout
    or signal."""
    with _signals_raise() as previous:
        proc = _popen(argv, cwd, env, out, err)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _end_group(proc, 10)
            raise PlaneError(f"{what} timed out after {timeout:.0f}s") from None
        except _Signalled as signalled:
            for signum in previous:  # a second signal must not cut the group's ending short
                signal.signal(signum, signal.SIG_IGN)
            _end_group(proc, 10)
            signal.signal(signalled.signum, previous[signalled.signum])
            signal.raise_signal(signalled.signum)  # now as the caller handles it
            raise PlaneError(f"{what} stopped by signal {signalled.signum}") from None
        except BaseException:
            _end_group(proc, 10)
            raise
    return proc, stdout or b"", stderr or b""


def niced(argv: list[str], niceness: int) -> list[str]:
    """``argv`` run at ``niceness`` more than the caller (``nice -n N``; unchanged for 0)."""
    nice = shutil.which("nice")
    if niceness <= 0 or nice is None:
        return argv
    return [nice, "-n", str(niceness), *argv]


def run(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    log: Path,
    niceness: int = 0,
) -> None:
    """Run ``argv`` to completion; output appended to ``log``; raise with its tail on failure."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        out.write(f"$ {' '.join(argv)}  (in {cwd})\n".encode())
        out.flush()
        proc, _, _ = _run(
            niced(argv, niceness), cwd, env, out, out, timeout, f"{argv[0]} (log: {log})"
        )
    if proc.returncode != 0:
        raise PlaneError(f"{' '.join(argv[:3])} failed (exit {proc.returncode}):\n{tail(log)}")


def capture(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float, niceness: int = 0
) -> str:
    """Run ``argv``; return its stdout (stderr read separately, quoted on failure)."""
    pipe = subprocess.PIPE
    proc, out, err = _run(niced(argv, niceness), cwd, env, pipe, pipe, timeout, argv[0])
    if proc.returncode != 0:
        message = err.decode(errors="replace").strip()[-2000:]
        raise PlaneError(f"{' '.join(argv[:4])} failed (exit {proc.returncode}): {message}")
    return out.decode()


def tail(log: Path, lines: int = 25) -> str:
    """The last lines of a log file, for error messages."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return f"(no log at {log})"
    return "\n".join(text.splitlines()[-lines:])


class Daemon:
    """A long-running component (etcd, kube-apiserver, a manager) with its own log file."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        *,
        env: dict[str, str],
        log: Path,
        preexec: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.argv = argv
        self.log = log
        self._env = daemon_env(env)
        self._preexec = preexec
        log.parent.mkdir(parents=True, exist_ok=True)
        self._out: IO[bytes] = log.open("ab")
        self._proc = self._spawn()

    def _spawn(self) -> Popen:
        return subprocess.Popen(
            self.argv,
            env=self._env,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=self._out,
            start_new_session=True,
            preexec_fn=self._preexec,
        )

    @property
    def pid(self) -> int:
        return self._proc.pid

    def running(self) -> bool:
        return self._proc.poll() is None

    def check(self) -> None:
        """Raise if the component has exited (with the tail of its log)."""
        code = self._proc.poll()
        if code is not None:
            raise PlaneError(f"{self.name} exited with {code}:\n{tail(self.log)}")

    def stop(self, grace: float = 10) -> None:
        _end_group(self._proc, grace)
        self._out.close()

    # Fault injection with the real component (tests/plane/test_plane_faults.py): a process that
    # stops answering (SIGSTOP: its sockets stay open, nothing replies), one that dies
    # mid-request (SIGKILL), and the same command line started again on the same ports.

    def pause(self) -> None:
        """SIGSTOP the component's process group: connections stay open, nothing answers."""
        os.killpg(self._proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after :meth:`pause`."""
        os.killpg(self._proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL the component's process group (a crash: no graceful shutdown)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._proc.wait(timeout=30)

    def restart(self) -> None:
        """Start the same command line again after :meth:`kill` (same flags, ports, state)."""
        if self._proc.poll() is None:
            raise PlaneError(f"{self.name} is still running (pid {self._proc.pid})")
        self._proc = self._spawn()


def wait_for(what: str, probe: Callable[[], bool], timeout: float, daemons: list[Daemon]) -> None:
    """Poll ``probe()`` until it returns true; fail early if one of ``daemons`` died."""
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        for daemon in daemons:
            daemon.check()
        try:
            if probe():
                return
        except Exception as error:  # the component is not up yet: keep the reason
            last = f": {error}"
        if time.monotonic() > deadline:
            raise PlaneError(f"timed out after {timeout:.0f}s waiting for {what}{last}")
        time.sleep(0.2)
