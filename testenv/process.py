"""Child processes of the test plane: one-shot commands and long-running daemons.

The project's subprocess rules hold here too: argument lists, never a shell; every child in
its own process group so that a timeout or a signal ends the whole group, never a stray
grandchild; output to a log file (the daemons are chatty and must not fill a pipe).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

Popen = subprocess.Popen[bytes]


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


def _communicate(proc: Popen, timeout: float, what: str) -> tuple[bytes, bytes]:
    """Wait for ``proc`` (reading its pipes, if any); its group ends on timeout or signal."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end_group(proc, 10)
        raise PlaneError(f"{what} timed out after {timeout:.0f}s") from None
    except BaseException:
        _end_group(proc, 10)
        raise
    return out or b"", err or b""


def run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float, log: Path) -> None:
    """Run ``argv`` to completion; output appended to ``log``; raise with its tail on failure."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        out.write(f"$ {' '.join(argv)}  (in {cwd})\n".encode())
        out.flush()
        proc = _popen(argv, cwd, env, out, out)
        _communicate(proc, timeout, f"{argv[0]} (log: {log})")
    if proc.returncode != 0:
        raise PlaneError(f"{' '.join(argv[:3])} failed (exit {proc.returncode}):\n{tail(log)}")


def capture(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> str:
    """Run ``argv``; return its stdout (stderr read separately, quoted on failure)."""
    proc = _popen(argv, cwd, env, subprocess.PIPE, subprocess.PIPE)
    out, err = _communicate(proc, timeout, argv[0])
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
        log.parent.mkdir(parents=True, exist_ok=True)
        self._out: IO[bytes] = log.open("ab")
        self._proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=self._out,
            start_new_session=True,
            preexec_fn=preexec,
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
