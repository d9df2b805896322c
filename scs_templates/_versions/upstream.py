"""Reading the versions table's upstream sources: the toolkit the maintainer script
(:mod:`scs_templates._maintain.update_versions`) and each provider's version source
(``Operations.read_versions``) share.

What is here is neutral: the Go module proxy (``go list``/``go mod download`` in a throwaway
module), choosing a served release (the newest listed one, or probing the next tags of a
module whose list the proxy refuses), a clusterctl ``metadata.yaml`` contract and the CRD
sets of ``../shared/crds``. What a provider contributes to the table travels in
:class:`ProviderVersions`, what it may read from in :class:`Upstream`. Nothing here runs
when a cluster is rendered: only the maintainer script and its tests import it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates._core.process import ProcessTimeout, run
from scs_templates._core.records import record
from scs_templates._core.version_numbers import Minor
from scs_templates._core.version_numbers import exact as stable
from scs_templates._versions import KindImage

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "GO_TIMEOUT",
    "Go",
    "ProviderVersions",
    "UpdateError",
    "Upstream",
    "contract_of",
    "crd_texts",
    "load_yaml",
    "matching_crd_set",
    "newest_served",
    "probe_candidates",
    "probe_newer",
    "release_minor",
]

GO_TIMEOUT = 600.0


class UpdateError(Exception):
    """A source could not be read or does not say what the table needs."""


def release_minor(tag: str) -> Minor | None:
    """(major, minor) of a stable release tag; None for anything else (pre-releases)."""
    parsed = stable(tag)
    return parsed[:2] if parsed else None


# --------------------------------------------------------------------------- the Go proxy


class Go:
    """``go list``/``go mod download`` in a throwaway module (the proxy is a package registry)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        (workdir / "go.mod").write_text("module scs-templates/versions-probe\n\ngo 1.21\n")
        self.env = {**os.environ, "GOFLAGS": "-mod=mod", "GO111MODULE": "on"}

    def _go(self, *args: str) -> tuple[int, str, str]:
        try:
            done = run(["go", *args], env=self.env, timeout=GO_TIMEOUT, cwd=self.workdir)
        except ProcessTimeout as error:
            raise UpdateError(f"go {' '.join(args)}: {error}") from None
        except OSError as error:
            raise UpdateError(f"cannot run go: {error}") from None
        return done.returncode, done.stdout, done.stderr

    def versions(self, module: str) -> list[str] | None:
        """Every version the proxy lists, or None when it refuses the list."""
        code, out, err = self._go("list", "-m", "-versions", module)
        if code != 0:
            if "403" in err or "404" in err or "410" in err:
                return None
            raise UpdateError(f"go list -m -versions {module}: {err.strip()}")
        return out.split()[1:]

    def download(self, module: str, version: str) -> Path | None:
        """The module directory of ``module@version``, or None when the proxy does not serve it."""
        code, out, err = self._go("mod", "download", "-json", f"{module}@{version}")
        try:
            info = json.loads(out) if out.strip() else {}
        except json.JSONDecodeError:
            info = {}
        if code == 0 and info.get("Dir"):
            return Path(info["Dir"])
        message = str(info.get("Error") or err)
        if any(code_ in message for code_ in ("403", "404", "410", "unknown revision")):
            return None
        raise UpdateError(f"go mod download {module}@{version}: {message.strip()}")


def newest_served(go: Go, module: str, listed: Sequence[str]) -> tuple[str, Path]:
    """The newest stable version of ``listed`` whose module zip the proxy serves."""
    for version in sorted(
        (v for v in listed if stable(v)), key=lambda v: stable(v) or (0, 0, 0), reverse=True
    ):
        directory = go.download(module, version)
        if directory is not None:
            return version, directory
    raise UpdateError(f"the proxy serves no stable version of {module}")


def probe_candidates(known: str) -> list[str]:
    """The tags tried after ``known``: the next three patches and the next two minors."""
    major, minor, patch = stable(known) or (0, 0, 0)
    candidates = [f"v{major}.{minor}.{p}" for p in range(patch + 1, patch + 4)]
    return candidates + [f"v{major}.{m}.0" for m in range(minor + 1, minor + 3)]


def probe_newer(go: Go, module: str, known: str) -> tuple[str, Path]:
    """From a known release, the newest of the next patches and next minors that is served
    (for modules whose version list the proxy refuses)."""
    parsed = stable(known)
    if parsed is None:
        raise UpdateError(f"not a release: {known}")
    best = known
    directory = go.download(module, known)
    if directory is None:
        raise UpdateError(f"{module}@{known} is not served")
    for candidate in probe_candidates(known):
        found = go.download(module, candidate)
        if found is not None and (stable(candidate) or parsed) > (stable(best) or parsed):
            best, directory = candidate, found
    return best, directory


# --------------------------------------------------------------------------- module files


def load_yaml(text: str) -> Any:
    """A YAML document (safe loader): Chart.yaml, metadata.yaml."""
    from ruamel.yaml import YAML  # deferred: ruamel

    return YAML(typ="safe", pure=True).load(text)


def contract_of(metadata: str, release: str) -> str:
    """The contract of ``release``'s minor in a clusterctl metadata.yaml."""
    parsed = stable(release)
    if parsed is None:
        raise UpdateError(f"not a release: {release}")
    data = load_yaml(metadata) or {}
    for series in data.get("releaseSeries", []):
        if (series.get("major"), series.get("minor")) == parsed[:2]:
            return str(series["contract"])
    raise UpdateError(f"metadata.yaml: no release series for {release}")


def crd_texts(directory: Path) -> dict[str, str]:
    """CRD file name -> content without comment lines (kustomize/controller-gen headers)."""
    return {
        path.name: "\n".join(
            line
            for line in path.read_text(encoding="utf-8").splitlines()
            if not line.startswith("#")
        )
        for path in sorted(directory.glob("*.yaml"))
    }


def matching_crd_set(shared_crds: Path, prefix: str, module_crds: Mapping[str, str]) -> str:
    """The folder of ``shared_crds`` (name starting with ``prefix``) with exactly the CRDs of
    the module, or "" when none matches."""
    for folder in sorted(shared_crds.glob(f"{prefix}*"), reverse=True):
        if folder.is_dir() and crd_texts(folder) == dict(module_crds):
            return folder.name
    return ""


# --------------------------------------------------------------------------- provider hooks


@record
class Upstream:
    """What a provider's version source (``Operations.read_versions``) reads from: the proxy,
    the Cluster API release the table targets, the current table and ``inputs.json`` (the
    releases known already, to probe from), the reference CRD sets and the read date."""

    go: Go
    cluster_api_release: str
    current: Mapping[str, Any]
    inputs: Mapping[str, Any]
    shared_crds: Path
    today: str

    def current_release(self, provider: str) -> str:
        """The release the current table names for ``provider`` ("" when none)."""
        entry = self.current.get("providers", {}).get(provider, {})
        return str(entry.get("release", ""))


@record
class ProviderVersions:
    """What one provider contributes to the versions table.

    ``entry``: its ``providers.<name>`` object (key order kept); ``sources``: its rows of the
    table's ``sources`` (key -> row, in order); ``kind_images``: published kind node images
    the Kubernetes minors list (``kindImages``), read from its ``kind_images_source`` row;
    ``cluster_api_crds``: CRD texts that belong to the Cluster API CRD set it is validated
    with; ``read``: the ``module@version`` of every module it read.
    """

    entry: Mapping[str, Any]
    sources: Mapping[str, Mapping[str, Any]]
    kind_images: tuple[KindImage, ...] = ()
    kind_images_source: str = ""
    cluster_api_crds: Mapping[str, str] = dataclasses.field(default_factory=dict)
    read: tuple[str, ...] = ()
