"""Where scs-templates keeps its cache: ``$SCS_TEMPLATES_CACHE_DIR``, else
``$XDG_CACHE_HOME/scs-templates``, else ``~/.cache/scs-templates``.

A module of its own, with ``os.path`` only, so that finding the cache imports neither pathlib
nor the toolchain; ``toolchain.cache_root`` is the same answer as a ``Path``.
"""

from __future__ import annotations

import os

ENV_CACHE_DIR = "SCS_TEMPLATES_CACHE_DIR"


def cache_dir() -> str:
    """The project's cache directory (it may not exist yet)."""
    configured = os.environ.get(ENV_CACHE_DIR)
    if configured:
        return os.path.expanduser(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return os.path.join(os.path.expanduser(xdg), "scs-templates")
    return os.path.join(os.path.expanduser("~"), ".cache", "scs-templates")
