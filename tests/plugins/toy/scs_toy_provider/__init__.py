"""TEST ONLY: the toy provider, a plug-in of its own distribution (its pyproject declares
the entry point ``scs_templates.providers: toy``).

Its machines are CAPD's in-memory ones (DevCluster / DevMachineTemplate: the upstream CRDs
validate what it renders); its settings section ``spec.toy`` says how long a simulated
machine takes to start, and that value reaches the manifests. It implements the provider
interface and nothing else: no file under ``scs_templates/`` names it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from scs_templates.providers.interface import Finding, Provider

if TYPE_CHECKING:
    from pydantic import BaseModel

    from scs_templates._settings.model import ClusterSettings
    from scs_templates._versions.kubernetes import ResolvedVersion

CHART = Path(__file__).resolve().parent / "chart" / "toy-cluster"


class ToyProvider(Provider):
    name: ClassVar[str] = "toy"
    description: ClassVar[str] = "TEST ONLY: a toy plug-in on CAPD's in-memory machines."
    machine_template_kinds: ClassVar[tuple[tuple[str, str], ...]] = (
        ("infrastructure.cluster.x-k8s.io/v1beta2", "DevMachineTemplate"),
    )

    def chart_source(self, charts: Path) -> Path:
        del charts  # not shipped with scs-templates: the chart comes with this package
        return CHART

    def settings_section(self) -> tuple[type[BaseModel], str] | None:
        from scs_toy_provider.settings import Toy

        return Toy, "Toy specifics (provider toy, TEST ONLY)."

    def errors(self, settings: ClusterSettings) -> Iterator[Finding]:
        if settings.spec.control_plane.replicas != 1:
            yield (
                ("spec", "controlPlane", "replicas"),
                "provider 'toy' runs one control-plane machine",
            )

    def node_image(
        self, settings: ClusterSettings, resolved: ResolvedVersion, override: str | None
    ) -> str:
        del settings
        return override or f"toy-{resolved.version}"  # never pulled: the machines are simulated

    def values(self, settings: ClusterSettings) -> dict[str, Any]:
        section = settings.spec.toy  # type: ignore[attr-defined]
        return {"toy": {"vmStartup": section.vm_startup}}


TOY = ToyProvider()
