"""YAML text from outside, loaded safely, with one error type for every way it is unreadable.

Why: ruamel.yaml's safe constructors raise ``ValueError`` or ``KeyError``, not a
``YAMLError``, for an explicit tag whose value they cannot read (``!!int x``, ``!!float x``,
``!!bool maybe``), and those messages quote the value. The texts loaded here come from
outside (helm's output, a user's clouds.yaml or Secret manifest, a kubeconfig, a stored
EncryptionConfiguration) and may hold a password in exactly that place: a caller catching
``YAMLError`` ended in the CLI's "internal error" line, which quoted it. :func:`load` raises
:class:`UnreadableValue`, a ``YAMLError`` that quotes nothing, instead.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from scs_templates._core.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["UnreadableValue", "YAMLError", "load", "load_file"]

_loaders = threading.local()


class UnreadableValue(YAMLError):
    """A value whose explicit tag names a type it cannot be read as (the value is not shown)."""

    def __init__(self) -> None:
        super().__init__("a value cannot be read as the type its explicit tag (e.g. !!int) names")


def _loader(pure: bool) -> YAML:
    """This thread's safe loader: a ``YAML()`` costs a quarter of loading one object of helm's
    output (0.91 -> 0.69 ms), and one instance must not load in two threads at once."""
    name = "pure" if pure else "fast"
    loader: YAML | None = getattr(_loaders, name, None)
    if loader is None:
        loader = YAML(typ="safe", pure=pure)
        setattr(_loaders, name, loader)
    return loader


def load(text: str, *, pure: bool = False) -> Any:
    """The one document of ``text`` (safe types only); ``pure``: ruamel's Python parser,
    whose problem marks some callers report. Raises ``YAMLError`` (never ValueError or
    KeyError) when ``text`` cannot be read."""
    try:
        return _loader(pure).load(text)
    except (ValueError, KeyError):
        raise UnreadableValue() from None


def load_file(path: Path, *, advice: str) -> Any:
    """The one document of the YAML file ``path``; :class:`InputError` when it cannot be
    read: one line naming the file (and the line ruamel marked), ending with ``advice``."""
    try:
        return load(path.read_text(encoding="utf-8"))
    except YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = str(getattr(error, "problem", None) or error).strip().splitlines()[0]
        raise InputError(f"{path}{where}: not valid YAML ({problem}); {advice}") from None
