"""Private temporary directories without importing :mod:`tempfile` (issue #19: start-up).

Every ``render`` needs one (helm's private home); :mod:`tempfile` brings ``random`` and
``weakref`` along, a few ms of CPU at every start for one ``mkdtemp``. :func:`private_dir`
makes the same directory ``tempfile.mkdtemp(prefix=...)`` would: under the first of
``TMPDIR``, ``TEMP``, ``TMP`` that is set and not empty, else ``/tmp`` (the first
candidates of ``tempfile.gettempdir``, made absolute with ``os.path.abspath`` as tempfile
does), created in one ``mkdir`` with mode 0700 (atomic: it fails if anything, a symlink
included, has the name; the umask can only narrow it), its name unpredictable
(``os.urandom``, 48 bits; tempfile's names have ~41). Anything unusual is left to
``tempfile.mkdtemp`` itself, so the answer, or the error, is tempfile's there: that
directory missing, not a directory or not writable, or tempfile already imported (its
``tempfile.tempdir``, set by a caller or cached by ``gettempdir``, then decides).

Removing the directory is the caller's job (the helm runner: an exit handler, which the CLI
runs on every exit, signals included: scs_templates/_core/signals.py, tests/render/test_signals.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: tempfile.gettempdir's first candidates, in its order (then /tmp on POSIX).
_ENVIRONMENT = ("TMPDIR", "TEMP", "TMP")
_ATTEMPTS = 100  # as tempfile.TMP_MAX


def _temp_root() -> Path:
    for variable in _ENVIRONMENT:
        value = os.environ.get(variable)
        if value:
            # tempfile's lexical normalisation ("link/../b" is "b"), not Path.resolve's
            return Path(os.path.abspath(value))  # noqa: PTH100
    return Path("/tmp")  # noqa: S108 - tempfile's first fixed candidate; mode 0700 below


def private_dir(prefix: str) -> Path:
    """A new directory only the caller's user can enter (0700); the caller removes it."""
    if "tempfile" not in sys.modules:
        root = _temp_root()
        for _ in range(_ATTEMPTS):
            path = root / f"{prefix}{os.urandom(6).hex()}"
            try:
                path.mkdir(0o700)  # os.mkdir: atomic, never follows a symlink at the name
            except FileExistsError:
                continue
            except OSError:
                break
            return path
    import tempfile  # deferred: tempfile

    return Path(tempfile.mkdtemp(prefix=prefix))
