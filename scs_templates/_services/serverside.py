"""The releases ``apply`` installs by server-side apply instead of as helm releases.

Two do: the Gateway API CRDs and, from Calico v3.32, Calico's CRDs (their chart's README
installs them with ``helm template ... | kubectl apply --server-side``, because some exceed
client-side apply's size limit).

Why: helm keeps every release as one Secret (the chart, its values and the rendered
manifest, gzipped), and a Secret may hold at most 1 MiB. The Gateway API CRD chart
(gateway-crds-helm v1.9.0, both channels of the upstream CRDs as templates) makes a record
larger than that: a real kube-apiserver refuses ``sh.helm.release.v1.gateway-api-crds.v1``
with ``data: Too long``, so ``helm install`` can never succeed. Upstream Gateway API and
Cilium install these CRDs with ``kubectl apply --server-side`` anyway; that is what happens
here, with the same chart as the source of truth: ``helmfile template`` of that one release
(the values, version and chart mirror of the settings, exactly what ``services render``
prints) and one server-side apply per object, field manager
:attr:`~scs_templates._services.catalogue.ServiceInfo.field_manager`.

Nothing records such a release, so ``apply`` finds it by that field manager in the objects'
``managedFields``. Its objects are CRDs: never deleted by ``apply`` (not on disable, not
with ``--force-remove``: that would delete every Gateway and Route).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from scs_templates._services.catalogue import CATALOGUE
from scs_templates._services.releases import STATE_KEY, ServiceRelease, state_of
from scs_templates._tools.kube import ObjectRef

if TYPE_CHECKING:
    from scs_templates._services.runner import ServicesHelmfile
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.kube import KubeClient

__all__ = ["apply_objects", "compare", "present", "rendered_objects"]

CRD_API = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")


def rendered_objects(
    settings: ClusterSettings, release: ServiceRelease, runner: ServicesHelmfile
) -> list[dict[str, Any]]:
    """The objects of ``release`` as ``services render`` renders them (same state values)."""
    from scs_templates._render.render import (  # deferred: ruamel
        kube_version_of,
        parse_object,
        split_texts,
    )

    text = runner.render({STATE_KEY: state_of([release])}, kube_version=kube_version_of(settings))
    objects = [parse_object(doc) for doc in split_texts(text)]
    return [obj for obj in objects if obj.get("kind")]


def _managers(obj: Mapping[str, Any]) -> set[str]:
    fields = (obj.get("metadata") or {}).get("managedFields") or []
    return {str(entry.get("manager", "")) for entry in fields if isinstance(entry, Mapping)}


def present(client: KubeClient) -> set[str]:
    """Catalogue names of the server-side releases whose objects exist in the cluster."""
    wanted = {info.field_manager: info.release for info in CATALOGUE if info.server_side}
    if not wanted:
        return set()
    found: set[str] = set()
    for crd in client.list(*CRD_API, ""):
        found |= {wanted[m] for m in _managers(crd) if m in wanted}
    return found


def _subset(part: Any, whole: Any) -> bool:
    part = part if isinstance(part, Mapping) else {}
    whole = whole if isinstance(whole, Mapping) else {}
    return all(whole.get(key) == value for key, value in part.items())


def _same_versions(rendered: Mapping[str, Any], live: Mapping[str, Any]) -> bool:
    """A CRD's rendered ``spec.versions`` (names, schemas, flags) are the live ones; other
    objects: True. Calico's CRDs carry no version label or annotation, so a new Calico
    release shows only here; the API server defaults nothing inside ``spec.versions``."""
    if (rendered.get("apiVersion"), rendered.get("kind")) != CRD_API:
        return True
    want = (rendered.get("spec") or {}).get("versions")
    return want is None or want == (live.get("spec") or {}).get("versions")


def compare(
    client: KubeClient, release: ServiceRelease, objects: Iterable[Mapping[str, Any]]
) -> tuple[Literal["install", "upgrade", "unchanged"], str]:
    """(action, reason) for the rendered ``objects``: ``install`` when none exists,
    ``unchanged`` when every one exists, was applied by us, carries the rendered labels
    and annotations (the Gateway API CRDs name their bundle version and channel there) and,
    for a CRD, the rendered ``spec.versions``, else ``upgrade``."""

    manager = release.info.field_manager
    rendered = list(objects)
    live = [client.get(ObjectRef.of(obj)) for obj in rendered]
    if all(found is None for found in live):
        return "install", ""
    stale = 0
    for obj, found in zip(rendered, live, strict=True):
        meta, have = obj.get("metadata") or {}, (found or {}).get("metadata") or {}
        if (
            found is None
            or manager not in _managers(found)
            or not _subset(meta.get("labels"), have.get("labels"))
            or not _subset(meta.get("annotations"), have.get("annotations"))
            or not _same_versions(obj, found)
        ):
            stale += 1
    if stale:
        return "upgrade", f"{stale} of {len(rendered)} objects new or changed (server-side apply)"
    return "unchanged", ""


def apply_objects(
    client: KubeClient, release: ServiceRelease, objects: Iterable[Mapping[str, Any]]
) -> int:
    """Server-side apply every object (CRDs first); returns how many."""
    ordered = sorted(objects, key=lambda obj: obj.get("kind") != CRD_API[1])
    for obj in ordered:
        client.server_side_apply(obj, release.info.field_manager)
    return len(ordered)
