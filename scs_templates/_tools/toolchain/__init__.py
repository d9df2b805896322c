"""The helm/helmfile toolchain: find the binaries to run, and install the pinned ones.

Everything that runs helm or helmfile asks this package for the binary (:func:`find_helm`,
:func:`find_helmfile`, or :func:`ensure_tool`, which builds a missing one from verified Go
modules) instead of trusting ``PATH``, so the version rules (helm 4 from 4.1.4, helmfile 1
from 1.8.0) hold everywhere. See ``docs/toolchain.md``.
"""

from __future__ import annotations

from scs_templates._core.lazy import exports
from scs_templates._tools.toolchain.pins import HELM_VERSION, HELMFILE_VERSION
from scs_templates._tools.toolchain.resolve import (
    ENV_CACHE_DIR,
    ENV_HELM,
    ENV_HELMFILE,
    Tool,
    cache_root,
    clear_version_cache,
    find_helm,
    find_helmfile,
    hermetic_env,
    is_supported,
    tool_version,
    tools_dir,
)

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from scs_templates._tools.toolchain.install import ensure_tool, install_tools

__all__ = [
    "ENV_CACHE_DIR",
    "ENV_HELM",
    "ENV_HELMFILE",
    "HELMFILE_VERSION",
    "HELM_VERSION",
    "Tool",
    "cache_root",
    "clear_version_cache",
    "ensure_tool",
    "find_helm",
    "find_helmfile",
    "hermetic_env",
    "install_tools",
    "is_supported",
    "tool_version",
    "tools_dir",
]


# The installer (the Go build) is imported only when used: rendering needs only the
# resolver, and every import costs start-up time of each CLI call.
if not TYPE_CHECKING:  # type checkers read the names from the imports above
    __getattr__, __dir__ = exports(__name__, {"install": ("ensure_tool", "install_tools")})
