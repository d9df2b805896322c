"""``did you mean 'x'?``: the nearest allowed word to a misspelt one, for error messages.

Only error paths import it (pydantic's refusal of a document, the KaaS v1 migration's
unknown keys), so a valid document never loads difflib.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

__all__ = ["did_you_mean"]


def did_you_mean(word: str, candidates: Sequence[str]) -> str:
    """A ``did you mean 'x'?`` suffix for near misses, or an empty string."""
    lowered = {c.lower(): c for c in candidates}
    if word.lower() in lowered:
        return f"; did you mean {lowered[word.lower()]!r}?"
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    if not close:
        close = [lowered[c] for c in difflib.get_close_matches(word.lower(), list(lowered), n=1)]
    return f"; did you mean {close[0]!r}?" if close else ""
