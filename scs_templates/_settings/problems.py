"""Structured settings problems and the one exception that carries them.

A problem names the field by its dotted path (``workers[1].replicas``) and, when the settings
came from a file, the file, line and column. The library raises one :class:`SettingsError`
with ALL problems so users fix a file in one go; the CLI prints one line per problem.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field

from scs_templates._core.errors import InputError
from scs_templates._core.records import ordered_record

Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    """``("spec", "workers", 1, "replicas")`` -> ``spec.workers[1].replicas``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text or "(document)"


@ordered_record
class Problem:
    """One thing wrong (or, with ``severity='warning'``, deprecated) in a settings document."""

    line: int = 0  # 1-based; 0 = unknown
    column: int = 0  # 1-based; 0 = unknown
    path: Path = field(default=())
    message: str = ""
    file: str = ""
    severity: str = "error"

    def __str__(self) -> str:
        location = self.file or "<settings>"
        if self.line:
            location += f":{self.line}:{self.column}"
        kind = "warning: " if self.severity == "warning" else ""
        return f"{location}: {kind}{format_path(self.path)}: {self.message}"


class SettingsError(InputError):
    """The settings are invalid. ``problems`` holds every problem found, sorted by position."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(sorted(set(problems), key=_sort_key))
        super().__init__("\n".join(str(p) for p in self.problems))

    @property
    def count(self) -> int:
        return len(self.problems)


def _sort_key(problem: Problem) -> tuple[str, int, int, str, str]:
    return (problem.file, problem.line, problem.column, format_path(problem.path), problem.message)
