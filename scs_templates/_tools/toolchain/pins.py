"""The exact helm/helmfile releases this project builds, and where they live in the tools cache.

Both are built from source through the Go module proxy: ``go/helm`` and ``go/helmfile`` next
to this file are wrapper modules that only ``require`` the upstream module (helmfile with the
``replace`` lines of its own go.mod) and pin every dependency in a committed ``go.sum``, so the
Go checksum database has verified every module once and ``go build -mod=readonly`` refuses
anything that does not match. No upstream source is copied into the repository.

The cache directory of a build is keyed by the wrapper's content, the target platform and the
recipe (:func:`cache_key`): a version bump builds into a fresh directory, an unchanged wrapper
never rebuilds. Everything here is data plus cheap path arithmetic (the resolver reads it on
every CLI start); the build itself is :mod:`scs_templates._tools.toolchain.install`.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from scs_templates._core.digest import sha256
from scs_templates._core.records import record

#: The helm every command runs (`go list -m -versions helm.sh/helm/v4`, 2026-12-06).
HELM_VERSION = "4.3.2"
#: helmfile 1.x drives helm 4 (`go list -m -versions github.com/helmfile/helmfile`, 2026-12-06).
HELMFILE_VERSION = "1.8.0"

#: Oldest helm accepted from PATH or SCS_TEMPLATES_HELM: helm 4.1.4 is the first helm 4 with
#: the 2026 security fixes (GHSA-hr2v-4r36-88hr and the plugin verification fixes). helm 3 is
#: not accepted: it gets security fixes only, until 2027-02-10 (docs/toolchain.md).
HELM_MINIMUM = (4, 1, 4)
#: Oldest helmfile accepted: the release verified with helm 4.3 here.
HELMFILE_MINIMUM = (1, 8, 0)

#: Bump when the build recipe changes in a way the wrapper modules do not show.
RECIPE = "1"
#: Name of the per-tool marker file; its presence means the directory is complete.
MARKER_NAME = ".installed.json"
#: Where the wrapper modules are (shipped inside the package).
GO_DIR = Path(__file__).resolve().parent / "go"
#: The files of a wrapper module that decide what gets built.
WRAPPER_FILES = ("go.mod", "go.sum", "tools.go")


@record
class GoTool:
    """One binary built from a wrapper module: ``go build -ldflags LDFLAGS PACKAGE``.

    ``version_variable`` is the string variable that upstream's release build sets with
    ``-X`` (without it helm reports ``v4.3`` and helmfile a development version).
    """

    name: str
    version: str
    package: str
    version_variable: str

    @property
    def wrapper(self) -> Path:
        """The wrapper module's directory (``go/helm``, ``go/helmfile``)."""
        return GO_DIR / self.name

    @property
    def ldflags(self) -> str:
        """Stripped binary (as upstream's releases) carrying its release version."""
        return f"-s -w -X {self.version_variable}=v{self.version}"


HELM = GoTool(
    name="helm",
    version=HELM_VERSION,
    package="helm.sh/helm/v4/cmd/helm",
    version_variable="helm.sh/helm/v4/internal/version.version",
)
HELMFILE = GoTool(
    name="helmfile",
    version=HELMFILE_VERSION,
    package="github.com/helmfile/helmfile",
    version_variable="go.szostok.io/version.version",
)
TOOLS: tuple[GoTool, ...] = (HELM, HELMFILE)


def go_tool(name: str) -> GoTool:
    """The pinned build of ``helm`` or ``helmfile``."""
    for tool in TOOLS:
        if tool.name == name:
            return tool
    raise ValueError(f"unknown tool {name!r}")


_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def host_platform() -> tuple[str, str]:
    """``(GOOS, GOARCH)`` of this machine, without running ``go`` (the resolver calls it)."""
    machine = os.uname().machine.lower()
    return sys.platform, _GOARCH.get(machine, machine)


@functools.lru_cache(maxsize=16)
def cache_key(name: str, goos: str, goarch: str) -> str:
    """Hash of the wrapper module, the target platform and the recipe (16 hex digits)."""
    tool = go_tool(name)
    digest = sha256(f"recipe {RECIPE} {goos}/{goarch} {tool.ldflags}\n".encode())
    for file in WRAPPER_FILES:
        digest.update(f"{file}\n".encode())
        digest.update((tool.wrapper / file).read_bytes())
    return digest.hexdigest()[:16]


def dirname(name: str, goos: str | None = None, goarch: str | None = None) -> str:
    """The tool's directory in the tools cache, e.g. ``helm-4.3.2-linux-amd64-0123abcd...``."""
    host_os, host_arch = host_platform()
    goos, goarch = goos or host_os, goarch or host_arch
    return f"{name}-{go_tool(name).version}-{goos}-{goarch}-{cache_key(name, goos, goarch)}"
