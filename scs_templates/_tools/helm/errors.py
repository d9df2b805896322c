"""helm failures as exceptions with stable, secret-free, one-screen messages.

The message is helm's own ``Error: ...`` text, because that is what users search for and what
helm's documentation explains. Two adjustments make it fit for logs, tests and CI diffs:

* helm prints the schema-violation lines of ``values don't meet the specifications`` in a
  random order (it walks a Go map); they are sorted so the same mistake gives the same text;
* strings known to be secret (release values under secret-looking keys, or passed by the
  caller) are replaced by ``<redacted>`` in the message and in ``stderr``.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from scs_templates._core.errors import ToolError
from scs_templates._core.secrets import redact as redact_all

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

REDACTED = "<redacted>"
#: At most this many lines of stderr when helm printed no ``Error:`` line at all.
_TAIL_LINES = 10
#: At most this many lines / characters of an error message (helm may print megabytes).
_MAX_LINES = 40
_MAX_CHARS = 4000


class HelmError(ToolError):
    """helm exited non-zero (exit code 1 of the CLI).

    ``command`` is the argument list that ran (it never contains values: those go through
    stdin or a removed temp file), ``returncode`` helm's exit code, ``stderr`` its redacted
    standard error. ``str(error)`` is the stable message.
    """

    def __init__(self, message: str, *, command: Sequence[str], returncode: int, stderr: str):
        super().__init__(message)
        self.command: list[str] = list(command)
        self.returncode = returncode
        self.stderr = stderr

    @property
    def command_line(self) -> str:
        """The command as a shell-quoted line, for ``--debug`` output."""
        return shlex.join(self.command)


class HelmTimeout(HelmError):
    """helm ran past its deadline; its whole process group was killed."""


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every form of each secret string by ``<redacted>``: raw, JSON-escaped (helm
    echoes its JSON input), shell-quoted, URL-encoded; see :mod:`scs_templates._core.secrets`."""

    return redact_all(text, secrets)


_ERROR_LINE = re.compile(r"^Error:\s")


def error_text(stderr: str) -> str:
    """helm's error message out of its stderr, with schema violations sorted.

    helm prints warnings (``coalesce.go:...: warning``, kubeconfig permissions) before its
    ``Error:`` line; they are dropped. Everything from the first ``Error:`` line on is kept
    (helm 4 spreads template errors over several lines). Runs of ``- ...`` lines, which is
    how helm lists schema violations, are sorted.
    """
    lines = stderr.rstrip().splitlines()
    start = next((i for i, line in enumerate(lines) if _ERROR_LINE.match(line)), None)
    if start is None:
        kept = [line for line in lines if line.strip()][-_TAIL_LINES:]
    else:
        kept = [line for line in lines[start:] if line.strip()]
    return shorten("\n".join(_sort_bullets(kept)))


def shorten(text: str, *, max_lines: int = _MAX_LINES, max_chars: int = _MAX_CHARS) -> str:
    """``text`` cut to ``max_lines`` lines and ``max_chars`` characters, saying how much."""
    lines = text.splitlines()
    cut_lines = max(0, len(lines) - max_lines)
    text = "\n".join(lines[:max_lines])
    cut_chars = max(0, len(text) - max_chars)
    text = text[:max_chars]
    if cut_lines or cut_chars:
        more = f"{cut_lines} more lines" if cut_lines else f"{cut_chars} more characters"
        text += f"\n... ({more} not shown)"
    return text


def _sort_bullets(lines: list[str]) -> list[str]:
    result: list[str] = []
    run: list[str] = []
    for line in lines:
        if line.lstrip().startswith("- "):
            run.append(line)
            continue
        result.extend(sorted(run))
        run = []
        result.append(line)
    result.extend(sorted(run))
    return result
