"""The helm/helmfile toolchain: find the binaries to run, and install the pinned ones.

Everything that runs helm or helmfile asks this package for the binary (:func:`find_helm`,
:func:`find_helm_for_helmfile`, :func:`find_helmfile`) instead of trusting ``PATH``, so the
version rules (helm 3.15+ or 4.x, helmfile 0.166+ with a helm 3) hold everywhere. See
``docs/toolchain.md``.
"""

from __future__ import annotations

from scs_templates.lazy import exports
from scs_templates.toolchain.pins import HELM3_VERSION, HELM4_VERSION, HELMFILE_VERSION
from scs_templates.toolchain.resolve import (
    ENV_CACHE_DIR,
    ENV_HELM,
    ENV_HELM4,
    ENV_HELMFILE,
    Tool,
    cache_root,
    clear_version_cache,
    find_helm,
    find_helm_for_helmfile,
    find_helmfile,
    hermetic_env,
    is_supported,
    tool_version,
    tools_dir,
)

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from scs_templates.toolchain.install import install_tools

__all__ = [
    "ENV_CACHE_DIR",
    "ENV_HELM",
    "ENV_HELM4",
    "ENV_HELMFILE",
    "HELM3_VERSION",
    "HELM4_VERSION",
    "HELMFILE_VERSION",
    "Tool",
    "cache_root",
    "clear_version_cache",
    "find_helm",
    "find_helm_for_helmfile",
    "find_helmfile",
    "hermetic_env",
    "install_tools",
    "is_supported",
    "tool_version",
    "tools_dir",
]


# The installer (archives, hashing, pip) is imported only when used: rendering needs only the
# resolver, and every import costs start-up time of each CLI call.
if not TYPE_CHECKING:  # type checkers read the names from the imports above
    __getattr__, __dir__ = exports(__name__, {"install": ("install_tools",)})
