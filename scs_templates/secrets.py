"""Keep credentials out of every message: one redaction for all encodings a secret can take.

A secret does not only appear verbatim. helm echoes its JSON input in errors (``"`` and ``\\``
escaped, non-ASCII maybe as ``\\uXXXX``), command lines are shell-quoted, a password inside an
``auth_url`` appears as URL userinfo (and percent-encoded). :func:`redact` replaces each of
these forms of every known secret, and the userinfo password of every URL whatever it is.

Known secrets are those passed to :func:`redact` plus those :func:`register`-ed when they were
read (the clouds.yaml passwords, application credential secrets): the CLI's last line of
defence (its error line and the log filter that :func:`install_log_filter` sets up for
keystoneauth's and openstacksdk's own warnings) redacts them without knowing where they
came from.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable
from typing import Any

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
    import shlex  # here: reading settings (validate, render) registers no secret
    import urllib.parse

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
    userinfo password replaced by ``<redacted>``, longest first."""
    forms: set[str] = set()
    for secret in {*(s for s in secrets if s), *registered()}:
        if len(secret) >= MIN_SECRET_CHARS:
            forms |= encodings(secret)
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, REDACTED)
    return _URL_USERINFO.sub(lambda m: f"{m['head']}{REDACTED}@", text)


class RedactingFilter(logging.Filter):
    """Redacts log records (their formatted message) before any handler sees them."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep it, but as text
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        if record.exc_info:  # exception texts may quote a URL with its password
            import traceback

            record.msg += "\n" + redact("".join(traceback.format_exception(*record.exc_info)))
            record.exc_info = None
            record.exc_text = None
        return True


def install_log_filter(*, debug: bool = False, prefix: str = "scs-templates") -> Any:
    """Route all logging (and ``warnings``) through one stderr handler that redacts.

    Without a handler, Python's last-resort handler prints library warnings such as
    keystoneauth's ``Failed to discover ... when contacting http://user:PASSWORD@...``
    verbatim. Returns the handler (to remove it again).
    """
    import sys

    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter(f"{prefix}: %(levelname)s: %(name)s: %(message)s"))
    handler.setLevel(logging.DEBUG if debug else logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    if debug:  # our own debug lines (tool command lines); libraries stay at warnings
        logging.getLogger("scs_templates").setLevel(logging.DEBUG)
    logging.captureWarnings(True)
    return handler


def remove_log_filter(handler: Any) -> None:
    logging.getLogger().removeHandler(handler)
    logging.captureWarnings(False)
