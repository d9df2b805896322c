"""sha256 without hashlib: CPython's own implementation, the same digest.

hashlib loads OpenSSL, 3-8 ms of CPU at every start, and the render path hashes (the chart
cache key, the tools cache key) on every CLI call (issue #19). 3.11 names the module
``_sha256``, 3.12+ ``_sha2``; other interpreters fall back to hashlib.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha2 import sha256
    except ImportError:
        try:
            from _sha256 import sha256
        except ImportError:
            from hashlib import sha256

__all__ = ["sha256"]
