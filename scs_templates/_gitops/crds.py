"""CRD releases under GitOps: plain manifests applied by a Flux Kustomization, not a HelmRelease.

Why: the Gateway API CRD chart makes a helm release record larger than the 1 MiB a Secret
may hold (services/serverside.py), so a HelmRelease of it can never succeed; ``apply``
server-side applies the chart's rendered objects instead. Under GitOps the same objects -
rendered from the same chart with the same values, exactly what ``services render`` prints
- are written to the repository as plain files, one per object, in a folder named by the
release, its chart version and a hash of the content (``DIR/crds/NAME-VERSION-HASH/``,
shared by every cluster that renders the same objects). Per cluster a Flux
``Kustomization`` applies that folder into the workload cluster through its kubeconfig
Secret (kustomize-controller applies server-side: no release record, no size limit), with
``prune: false`` (removing CRDs deletes every object of their kinds).

A HelmRelease cannot depend on a Kustomization (``dependsOn`` names HelmReleases only), so
the releases that need such CRDs first (Cilium needs the Gateway API CRDs at its operator's
start) are not in the cluster folder: they are staged in ``DIR/staged/NS/NAME/`` and applied
by a second Kustomization that ``dependsOn`` the CRD one. Every other release keeps its
HelmRelease ``dependsOn``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scs_templates._core.labels import SERVICE_LABEL
from scs_templates._core.naming import fit, per_cluster

if TYPE_CHECKING:
    from scs_templates._services.releases import ServiceRelease
    from scs_templates._settings.model import ClusterSettings

__all__ = [
    "CRDS",
    "STAGED",
    "RepoLocation",
    "ServerSideRenderer",
    "crd_folder",
    "crd_kustomization",
    "render_server_side",
    "staged_kustomization",
]

FLUX_KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
#: Folder (under DIR) of the CRD manifests, one subfolder per rendered release.
CRDS = "crds"
#: Folder (under DIR) of the objects applied after a cluster's CRDs: ``staged/NS/NAME``.
STAGED = "staged"

#: Renders the objects of a server-side release as ``services render`` does.
ServerSideRenderer = Callable[["ClusterSettings", "ServiceRelease"], list[dict[str, Any]]]


@dataclass(frozen=True)
class RepoLocation:
    """Where Flux finds DIR: the GitRepository (in ``flux-system``) and DIR's path in it."""

    source: str = "flux-system"
    path: str = "."

    def folder(self, *parts: str) -> str:
        return "/".join([self.path.rstrip("/"), *parts])

    def source_ref(self) -> dict[str, str]:
        return {"kind": "GitRepository", "name": self.source, "namespace": "flux-system"}


def render_server_side(settings: ClusterSettings, release: ServiceRelease) -> list[dict[str, Any]]:
    """The default renderer: the pinned helmfile, as ``apply`` and ``services render``."""
    from scs_templates._services.runner import ServicesHelmfile  # deferred: ruamel
    from scs_templates._services.serverside import rendered_objects  # deferred: pydantic

    return rendered_objects(settings, release, ServicesHelmfile())


def _file_stem(obj: dict[str, Any]) -> str:
    return f"{obj['kind'].lower()}-{obj['metadata']['name']}"


def crd_folder(
    release: ServiceRelease, objects: list[dict[str, Any]]
) -> tuple[str, dict[str, Any]]:
    """(folder name, stem -> object) for the rendered ``objects`` of ``release``.

    The name carries a hash of the content, so two clusters rendering the same objects share
    one folder and a changed rendering gets a new one (the Kustomizations of clusters not
    rewritten keep pointing at theirs)."""
    by_stem = {_file_stem(obj): obj for obj in objects}
    digest = hashlib.sha256(
        json.dumps(by_stem, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()[:10]
    version = release.version.replace("+", "-")
    return fit(f"{release.name}-{version}-{digest}"), dict(sorted(by_stem.items()))


def crd_kustomization(
    settings: ClusterSettings,
    release: ServiceRelease,
    folder: str,
    repo: RepoLocation,
    interval: str,
    labels: dict[str, str],
    kubeconfig: dict[str, Any],
) -> dict[str, Any]:
    """The Kustomization that applies ``DIR/crds/folder`` into the workload cluster."""
    return {
        "apiVersion": FLUX_KUSTOMIZE_API,
        "kind": "Kustomization",
        "metadata": {
            "name": per_cluster(settings.metadata.name, release.name),
            "namespace": settings.metadata.namespace,
            "labels": {**labels, SERVICE_LABEL: release.name},
        },
        "spec": {
            "interval": interval,
            "path": repo.folder(CRDS, folder),
            "prune": False,
            "sourceRef": repo.source_ref(),
            "kubeConfig": kubeconfig,
            "wait": True,
            "timeout": "10m",
        },
    }


def staged_kustomization(
    settings: ClusterSettings,
    after: list[str],
    repo: RepoLocation,
    interval: str,
    labels: dict[str, str],
) -> dict[str, Any]:
    """The Kustomization (management cluster) that applies ``DIR/staged/NS/NAME`` once the
    CRD Kustomizations named in ``after`` are ready."""
    namespace = settings.metadata.namespace
    return {
        "apiVersion": FLUX_KUSTOMIZE_API,
        "kind": "Kustomization",
        "metadata": {
            "name": per_cluster(settings.metadata.name, "after-crds"),
            "namespace": namespace,
            "labels": labels,
        },
        "spec": {
            "interval": interval,
            "path": repo.folder(STAGED, namespace, settings.metadata.name),
            "prune": False,
            "sourceRef": repo.source_ref(),
            "dependsOn": [{"name": name} for name in sorted(after)],
        },
    }
