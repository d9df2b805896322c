"""Read an input file (settings, clusterctl.yaml, kubeconfig) with a hard byte limit, as text.

Why not ``Path.read_bytes()`` after a size check: ``st_size`` is 0 for devices, FIFOs and
files under ``/proc``, so ``/dev/zero`` would be read until memory runs out and a FIFO
without a writer would block forever. Here a path is opened non-blocking, anything but a
regular file is refused (``-`` means standard input, read with the same limit), and at most
``limit + 1`` bytes are ever read, whatever the file claims to be.
"""

from __future__ import annotations

import os
import stat
import sys

#: The name under which standard input appears in messages.
STDIN_NAME = "<stdin>"


class InputRefused(Exception):
    """The input cannot be read as a text file; ``str()`` is the reason, without the path."""


def display_name(path: str) -> str:
    """How ``path`` is named in messages (``-`` is standard input)."""
    return STDIN_NAME if path == "-" else path


def read_limited(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of ``path`` (``-``: stdin); :class:`InputRefused` otherwise."""
    if path == "-":
        return _read_fd(sys.stdin.buffer.fileno(), limit, None)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputRefused("no such file") from None
    except IsADirectoryError:
        raise InputRefused("is a directory") from None
    except PermissionError:
        raise InputRefused("permission denied") from None
    except OSError as error:
        raise InputRefused(f"cannot read: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputRefused("is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise InputRefused(
                f"is not a regular file (a {_kind(info.st_mode)}); "
                "use - to read from standard input"
            )
        os.set_blocking(fd, True)
        return _read_fd(fd, limit, info.st_size)
    finally:
        os.close(fd)


def read_text(path: str, limit: int, *, what: str, binary: str = "") -> str:
    """The UTF-8 text (a BOM dropped) of ``path`` (``-``: stdin), at most ``limit`` bytes.

    Every input file is read this way (settings, clusterctl.yaml, kubeconfig): each failure
    is an :class:`InputRefused` whose reason names the kind of file expected, ``what``
    (``binary``, when given, in the message for binary data).
    """
    try:
        raw = read_limited(path, limit)
    except InputRefused as refused:
        if str(refused) == "is a directory":
            raise InputRefused(f"is a directory, not {what}") from None
        raise
    return decode_text(raw, binary or what)


def decode_text(raw: bytes, what: str) -> str:
    """``raw`` as UTF-8 text (a BOM dropped); :class:`InputRefused` for binary data (a NUL
    byte: not ``what``) and for bytes that are not UTF-8 (naming the first one's offset)."""
    if b"\x00" in raw:
        raise InputRefused(f"binary data, not {what}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputRefused(f"not UTF-8 text (invalid byte at offset {error.start})") from None


def _read_fd(fd: int, limit: int, size: int | None) -> bytes:
    if size is not None and size > limit:
        raise InputRefused(f"file is too large ({size} bytes; limit {limit})")
    chunks: list[bytes] = []
    total = 0
    try:
        while total <= limit:
            chunk = os.read(fd, min(65536, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as error:
        raise InputRefused(f"cannot read: {error.strerror or error}") from None
    if total > limit:
        raise InputRefused(f"file is too large (more than {limit} bytes)")
    return b"".join(chunks)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"
