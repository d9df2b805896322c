"""The top-level ``--help`` text, kept from the last run that printed it, while nothing it
was made from has changed.

Why: ``scs-templates --help`` is about twice the bare interpreter's start (issue #19: the
target is <= 30 ms): argparse with ``re``, ``enum``, ``gettext`` and ``textwrap``, the
twelve command modules and formatting take ~15 ms of CPU on the 2-core machine of
docs/performance.md, where ``python -c pass`` alone takes 14-21 ms. Printing the text the
same code printed before costs a file read and a ``stat`` per source.

Never stale: the text is a function of the code that made it, the width, the locale and
the interpreter. The file records the version, this package's folder, ``sys.version``,
the interpreter's path and module search path, the width
(:func:`~scs_templates._cli.main.help_width`), the locale variables gettext reads, and the
modification time (ns) and size of the source file of EVERY module loaded in the process
that made it (scs_templates' and the standard library's: argparse, gettext, textwrap ...)
plus the interpreter's default gettext directory (a translation installed there changes
it); a text is printed only when every one of them is as recorded, as Python itself trusts
a ``.pyc`` whose source has the recorded time and size. Anything else (no file, another
format, a changed or missing source, a read error) makes the text anew and, when the text
came from no translation (``gettext.find``), writes it atomically for the next run; a
cache that cannot be written is skipped silently. tests/render/test_help_cache.py.
"""

from __future__ import annotations

import os
import sys

import scs_templates
from scs_templates._core.cachedir import cache_dir

MAGIC = "scs-templates --help cache 1"
#: What gettext reads to pick a translation (gettext._expand_lang's order).
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
_ABSENT = "absent"


def cache_file() -> str:
    return os.path.join(cache_dir(), "help.txt")


def _key(width: int) -> str:
    """Which code would run and how: this package's folder, the interpreter, its module
    search path, the width and the locale (another checkout or venv has its own text)."""
    return repr(
        (
            scs_templates.__version__,
            os.path.dirname(scs_templates.__file__ or ""),
            sys.version,
            sys.executable,
            sys.path,
            width,
            *(os.environ.get(name) for name in LOCALE_VARIABLES),
        )
    )


def _localedir() -> str:
    return os.path.join(sys.base_prefix, "share", "locale")  # gettext's default


def _stamp(path: str) -> str:
    try:
        status = os.stat(path)
    except OSError:
        return _ABSENT
    return f"{status.st_mtime_ns} {status.st_size}"


def read(width: int) -> str | None:
    """The cached text for this width, or None when there is none that is surely current."""
    try:
        with open(cache_file(), encoding="utf-8") as handle:
            content = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    head, blank, text = content.partition("\n\n")
    lines = head.split("\n")
    if not blank or len(lines) < 3 or lines[0] != MAGIC or lines[1] != _key(width):
        return None
    for line in lines[2:]:
        stamp, tab, path = line.rpartition("\t")
        if not tab or _stamp(path) != stamp:
            return None
    return text


def store(width: int, text: str) -> None:
    """Keep ``text`` (made in this process just now) for :func:`read`, if it can be kept."""
    import gettext

    if gettext.find("argparse") is not None:  # a translation: its .mo file is not tracked
        return
    sources = {_localedir()}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            sources.add(path)
    if any("\n" in path or "\t" in path for path in sources):
        return
    stamps = {path: _stamp(path) for path in sorted(sources)}
    if any(stamp == _ABSENT for path, stamp in stamps.items() if path != _localedir()):
        return  # a module from a zip or a deleted file: its changes could not be seen
    lines = [MAGIC, _key(width), *(f"{stamp}\t{path}" for path, stamp in stamps.items())]
    target = cache_file()
    staging = f"{target}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with open(descriptor, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n\n" + text)
        os.replace(staging, target)
    except OSError:
        try:  # noqa: SIM105  (not contextlib: --help imports nothing it does not need)
            os.unlink(staging)
        except OSError:
            pass
