"""All logging, and Python's warnings, through one stderr handler that redacts.

Without a handler, Python's last-resort handler prints library warnings such as
keystoneauth's ``Failed to discover ... when contacting http://user:PASSWORD@...``
verbatim. The CLI installs this one for every command (``--debug``: our own debug lines
too, such as the tool command lines); each record's formatted message, and the text of an
exception it carries, is redacted (:func:`scs_templates._core.secrets.redact`) before the
handler writes it.
"""

from __future__ import annotations

import logging
import sys
import traceback

from scs_templates._core.secrets import redact

__all__ = ["QuietRetries", "RedactingFilter", "install_log_filter", "remove_log_filter"]


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
            record.msg += "\n" + redact("".join(traceback.format_exception(*record.exc_info)))
            record.exc_info = None
            record.exc_text = None
        return True


class QuietRetries(logging.Filter):
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


def install_log_filter(*, debug: bool = False, prefix: str = "scs-templates") -> logging.Handler:
    """Route all logging (and ``warnings``) through one stderr handler that redacts; return
    it for :func:`remove_log_filter`. ``debug``: debug lines of ``scs_templates`` too, and
    urllib3's retry warnings (else left out: the request's last attempt ends in one error
    line); libraries stay at warnings."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactingFilter())
    if not debug:
        handler.addFilter(QuietRetries())
    handler.setFormatter(logging.Formatter(f"{prefix}: %(levelname)s: %(name)s: %(message)s"))
    handler.setLevel(logging.DEBUG if debug else logging.WARNING)
    logging.getLogger().addHandler(handler)
    if debug:
        logging.getLogger("scs_templates").setLevel(logging.DEBUG)
    logging.captureWarnings(True)
    return handler


def remove_log_filter(handler: logging.Handler) -> None:
    """Undo :func:`install_log_filter` (the library's ``main`` leaves no handler behind)."""
    logging.getLogger().removeHandler(handler)
    logging.captureWarnings(False)
