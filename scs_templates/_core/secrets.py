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
import re
import shlex
import sys
import threading
import urllib.parse
import warnings
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging
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


class RedactingFilter:
    """Redacts log records (their formatted message) before any handler sees them (a
    logging filter is any object with ``filter``; not a ``logging.Filter`` subclass, so that
    defining it does not import logging)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep it, but as text
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        if record.exc_info:  # exception texts may quote a URL with its password
            import traceback  # deferred: traceback

            record.msg += "\n" + redact("".join(traceback.format_exception(*record.exc_info)))
            record.exc_info = None
            record.exc_text = None
        return True


class QuietRetries:
    """Drops urllib3's ``Retrying (Retry(...)) after connection broken by ...`` warnings
    (one per attempt, with urllib3's object reprs) unless ``--debug``: the request's last
    attempt ends in one error line that says why (``cannot reach the Kubernetes API at URL:
    ...``), found by tests/plane/test_plane_faults.py with a killed kube-apiserver (3 such lines
    before the error line).

    Also keystoneauth's ``Failed to discover available identity versions when contacting
    URL`` warning: a cloud that cannot be reached ends in one error line naming the
    endpoint (``cannot reach URL: Connection refused``), and one that answers later needs no
    warning.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if record.name == "urllib3.connectionpool":
            return not message.startswith("Retrying")
        if record.name.startswith("keystoneauth."):
            return not message.startswith("Failed to discover available identity versions")
        return True


class LogFilter:
    """What :func:`install_log_filter` set up: the handler, or, while nothing has imported
    ``logging``, the hooks that install it as soon as something does."""

    def __init__(self, debug: bool, prefix: str) -> None:
        self.debug = debug
        self.prefix = prefix
        self.handler: Any = None
        self._finder: _InstallOnImport | None = None
        self._showwarning: Any = None

    def install(self) -> None:
        """Route all logging (and ``warnings``) through one stderr handler that redacts."""
        self.uninstall_hooks()
        import logging  # deferred: logging

        handler = logging.StreamHandler(sys.stderr)
        handler.addFilter(RedactingFilter())
        if not self.debug:
            handler.addFilter(QuietRetries())
        handler.setFormatter(
            logging.Formatter(f"{self.prefix}: %(levelname)s: %(name)s: %(message)s")
        )
        handler.setLevel(logging.DEBUG if self.debug else logging.WARNING)
        logging.getLogger().addHandler(handler)
        if self.debug:  # our own debug lines (tool command lines); libraries stay at warnings
            logging.getLogger("scs_templates").setLevel(logging.DEBUG)
        logging.captureWarnings(True)
        self.handler = handler

    def defer(self) -> None:
        """Install when ``logging`` is first imported or a warning is first shown: until
        then nothing can log (an unconfigured logging prints nothing below warnings, and
        nothing is configured before it is imported), so nothing needs redacting."""

        self._finder = _InstallOnImport(self)
        sys.meta_path.insert(0, self._finder)
        self._showwarning = warnings.showwarning

        def first_warning(*args: Any, **kwargs: Any) -> None:
            self.install()
            warnings.showwarning(*args, **kwargs)

        warnings.showwarning = first_warning

    def uninstall_hooks(self) -> None:
        if self._finder is not None:
            if self._finder in sys.meta_path:
                sys.meta_path.remove(self._finder)
            warnings.showwarning = self._showwarning
            self._finder = None

    def remove(self) -> None:
        self.uninstall_hooks()
        if self.handler is not None:
            import logging  # deferred: logging

            logging.getLogger().removeHandler(self.handler)
            logging.captureWarnings(False)
            self.handler = None


class _InstallOnImport:
    """A meta path finder that finds nothing itself: when ``logging`` is imported it lets
    the other finders find it and wraps the loader so that the redacting handler is
    installed right after the module ran, before the importer gets it."""

    def __init__(self, owner: LogFilter) -> None:
        self.owner = owner

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "logging":
            return None
        sys.meta_path.remove(self)
        owner = self.owner
        owner._finder = None

        spec = PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader

        class Installing:
            def create_module(self, spec: Any) -> Any:
                return loader.create_module(spec)

            def exec_module(self, module: Any) -> None:
                loader.exec_module(module)
                sys.modules[name] = module  # install() imports it
                owner.install()

        spec.loader = Installing()  # type: ignore[assignment]
        return spec


def install_log_filter(*, debug: bool = False, prefix: str = "scs-templates") -> LogFilter:
    """Route all logging (and ``warnings``) through one stderr handler that redacts.

    Without a handler, Python's last-resort handler prints library warnings such as
    keystoneauth's ``Failed to discover ... when contacting http://user:PASSWORD@...``
    verbatim. Without ``debug`` and while nothing has imported ``logging`` (``render``,
    ``validate``: importing it costs a few ms of every command), the handler is installed
    when something does. Returns what to pass to :func:`remove_log_filter`.
    """
    installed = LogFilter(debug, prefix)
    if debug or "logging" in sys.modules:
        installed.install()
    else:
        installed.defer()
    return installed


def remove_log_filter(installed: LogFilter) -> None:
    installed.remove()
