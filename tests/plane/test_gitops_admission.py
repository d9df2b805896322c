"""Every object ``scs-templates gitops`` writes, ADMITTED by the real API server.

The Flux CRDs come from the real flux2 chart in ``../shared/charts/`` (the version the
services catalogue installs), rendered with the pinned helm and applied to the session's
real management plane (tests/conftest.py ``plane``); the Cluster API CRDs and webhooks
(ClusterResourceSet, Cluster) are the plane's own. Each written object then goes to the API
server as a server-side dry-run create: real schema validation (Flux's CEL rules included),
pruning and webhooks, nothing stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scs_templates._gitops import GitopsOptions, parse_chart_source, write_gitops
from scs_templates._services.catalogue import service_info
from scs_templates._settings.validate import load_settings
from scs_templates._tools.helm import Helm
from tests.support import EXAMPLES, real_charts, render_crds_from_real_charts
from tests.support.cni_crds import chart_crds, install_crds

if TYPE_CHECKING:
    from testenv import Plane


OPTIONS = {
    "oci": GitopsOptions(parse_chart_source("oci://registry.example.com/scs")),
    "git": GitopsOptions(
        parse_chart_source("https://git.example.com/scs/scs-templates.git", "v0.1.0")
    ),
}


@pytest.fixture(autouse=True)
def _crds_from_real_charts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Gateway API CRD chart is rendered from ../shared/charts (no registry here)."""
    monkeypatch.setattr(
        "scs_templates._gitops.crds.render_server_side", render_crds_from_real_charts
    )


def flux_crds(helm: Helm) -> list[dict[str, Any]]:
    """The CRDs of the real flux2 chart of the services catalogue, as helm renders them."""
    chart = real_charts() / f"flux2-{service_info('flux2').version}.tgz"
    return chart_crds(helm, chart, "flux2", "flux-system")


def install_flux_crds(plane: Plane, helm: Helm) -> set[str]:
    """Apply the Flux CRDs (server-side) and wait until every one is Established."""
    crds = flux_crds(helm)
    install_crds(plane.api, crds)
    return {crd["metadata"]["name"] for crd in crds}


@pytest.fixture(scope="module")
def flux(plane: Plane, helm: Helm) -> set[str]:
    return install_flux_crds(plane, helm)


def written(root: Path) -> list[dict[str, Any]]:
    """Every object file of the repository (kustomize indexes are for kustomize, not the API)."""
    objects = []
    for path in sorted(root.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not data["apiVersion"].startswith("kustomize.config.k8s.io/"):
            objects.append(data)
    return objects


def admit(plane: Plane, objects: list[dict[str, Any]], namespaces: dict[str, str]) -> list[str]:
    """Dry-run create every object, each namespace mapped to a fresh one; the refusals."""
    from testenv import APIError

    refused = []
    for obj in objects:
        metadata = dict(obj["metadata"])
        if obj["kind"] == "Namespace":  # a name not taken yet: the mapped one exists
            metadata["name"] = f"{namespaces[metadata['name']]}-new"
        elif metadata.get("namespace") in namespaces:
            metadata["namespace"] = namespaces[metadata["namespace"]]
        try:
            plane.api.create(obj | {"metadata": metadata}, dry_run=True)
        except APIError as error:
            refused.append(f"{obj['kind']} {metadata['name']}: {error}")
    return refused


@pytest.mark.parametrize("source", sorted(OPTIONS))
def test_every_written_object_is_admitted(
    plane: Plane, flux: set[str], tmp_path: Path, source: str
) -> None:
    fleet = [load_settings(p).settings for p in EXAMPLES]
    write_gitops(tmp_path / "repo", fleet, OPTIONS[source])
    objects = written(tmp_path / "repo")
    kinds = {o["kind"] for o in objects}
    assert kinds >= {"HelmRelease", "Kustomization", "ClusterResourceSet", "Namespace"}
    assert ("HelmRepository" if source == "oci" else "GitRepository") in kinds
    assert {f"{o['kind'].lower()}s.{o['apiVersion'].split('/')[0]}" for o in objects} & flux
    namespaces = {s.metadata.namespace: plane.namespace(f"gitops-{source}") for s in fleet}
    plane.api.ensure_namespace("flux-system")
    assert admit(plane, objects, namespaces) == []


def test_a_broken_helmrelease_is_refused(plane: Plane, flux: set[str], tmp_path: Path) -> None:
    """The check can fail: the real HelmRelease schema refuses an interval that is no duration."""
    settings = load_settings(EXAMPLES[0]).settings
    write_gitops(tmp_path / "repo", [settings], OPTIONS["oci"])
    release = next(o for o in written(tmp_path / "repo") if o["kind"] == "HelmRelease")
    broken = release | {"spec": release["spec"] | {"interval": "soon"}}
    refused = admit(plane, [broken], {settings.metadata.namespace: plane.namespace("gitops")})
    assert len(refused) == 1
    assert "interval" in refused[0]
