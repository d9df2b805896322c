"""Keep credentials out of every message: one redaction for all encodings a secret can take.

A secret does not only appear verbatim. helm echoes its JSON input in errors (``"`` and ``\\``
escaped, non-ASCII maybe as ``\\uXXXX``), command lines are shell-quoted, a password inside an
``auth_url`` appears as URL userinfo (and percent-encoded). :func:`redact` replaces each of
these forms of every known secret, and the userinfo password of every URL whatever it is.

Known secrets are those passed to :func:`redact` plus those :func:`register`-ed when they were
read (the clouds.yaml passwords, application credential secrets): the CLI's last line of
defence (its error line and the log handler of :mod:`scs_templates._core.logs`, for
keystoneauth's and openstacksdk's own warnings) redacts them without knowing where they
came from.
"""

from __future__ import annotations

import json
import re
import shlex
import threading
import urllib.parse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

REDACTED = "<redacted>"
#: Shorter strings are not treated as secrets (they would redact ordinary words).
MIN_SECRET_CHARS = 4

_URL_USERINFO = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/@:]*:)[^\s/@]+@")

_lock = threading.Lock()
_registered: set[str] = set()


def register(*values: str | None) -> None:
    """Remember secrets read from the user's files so that every message redacts them."""
    with _lock:
        _registered.update(v for v in values if v and len(v) >= MIN_SECRET_CHARS)


def registered() -> frozenset[str]:
    with _lock:
        return frozenset(_registered)


def forget_all() -> None:
    """Drop every registered secret (tests; a long-lived process between clusters)."""
    with _lock:
        _registered.clear()


def encodings(secret: str) -> set[str]:
    """``secret`` as it may appear in a message: raw, JSON-escaped (both ASCII modes),
    shell-quoted, URL-encoded, and each of its lines (multi-line values are echoed line by
    line)."""
    forms = {secret}
    forms.add(json.dumps(secret)[1:-1])
    forms.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    forms.add(shlex.quote(secret))
    forms.add(urllib.parse.quote(secret, safe=""))
    forms.add(urllib.parse.quote_plus(secret, safe=""))
    if "\n" in secret:
        for line in secret.splitlines():
            if len(line.strip()) >= 8:
                forms |= encodings(line)
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every form of every secret (given or registered) and every URL
    userinfo password replaced by ``<redacted>``, longest first.

    An empty text (helm's stderr after nearly every successful run) is returned at once:
    there is nothing to replace, so the encodings of the secrets are not worked out."""
    if not text:
        return text
    forms: set[str] = set()
    for secret in {*(s for s in secrets if s), *registered()}:
        if len(secret) >= MIN_SECRET_CHARS:
            forms |= encodings(secret)
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, REDACTED)
    return _URL_USERINFO.sub(lambda m: f"{m['head']}{REDACTED}@", text)
