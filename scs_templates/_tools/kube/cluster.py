"""The state of a Cluster API ``Cluster`` object, read from its (v1beta2) status.

v1beta2 Clusters report ``status.phase`` and ``status.conditions`` (``Available``,
``InfrastructureReady``, ``ControlPlaneInitialized``, ``ControlPlaneAvailable``,
``WorkersAvailable``, ...). A Cluster served as v1beta1 keeps those conditions under
``status.v1beta2.conditions``; both shapes are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The conditions shown on the progress line, in the order a cluster usually reaches them.
PROGRESS_CONDITIONS = (
    "InfrastructureReady",
    "ControlPlaneInitialized",
    "ControlPlaneAvailable",
    "WorkersAvailable",
    "Available",
)


@dataclass(frozen=True)
class Condition:
    """One status condition: ``type`` is ``status`` (True/False/Unknown) because ``reason``."""

    type: str
    status: str
    reason: str = ""
    message: str = ""

    def short(self) -> str:
        text = f"{self.type}={self.status}"
        return f"{text} ({self.reason})" if self.reason and self.status != "True" else text


@dataclass(frozen=True)
class ClusterState:
    """What ``status``/``install --wait``/``delete`` report about a Cluster object."""

    name: str
    namespace: str
    phase: str
    conditions: tuple[Condition, ...]
    deleting: bool = False
    generation: int | None = None
    observed_generation: int | None = None

    def condition(self, type_: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == type_), None)

    @property
    def available(self) -> bool:
        """The v1beta2 ``Available`` condition is True for the current generation."""
        condition = self.condition("Available")
        current = (
            self.observed_generation is None
            or self.generation is None
            or self.observed_generation >= self.generation
        )
        return condition is not None and condition.status == "True" and current

    def summary(self) -> str:
        """One line: the phase and the progress conditions (e.g. for a TTY progress line)."""
        shown = [c.short() for t in PROGRESS_CONDITIONS if (c := self.condition(t)) is not None]
        phase = self.phase or "no phase yet"
        if self.deleting:
            phase += ", deleting"
        return f"phase {phase}" + (f"; {', '.join(shown)}" if shown else "; no conditions yet")

    def details(self) -> list[str]:
        """Every condition on its own line, with reason and message."""
        lines = []
        for c in self.conditions:
            line = f"{c.type}={c.status}"
            if c.reason:
                line += f" reason={c.reason}"
            if c.message:
                line += f": {' '.join(c.message.split())}"
            lines.append(line)
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "phase": self.phase,
            "deleting": self.deleting,
            "available": self.available,
            "conditions": [
                {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
                for c in self.conditions
            ],
        }


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def conditions_of(obj: Mapping[str, Any]) -> tuple[Condition, ...]:
    """The status conditions of any Cluster API object: a v1beta1 object's v1beta2
    conditions (``status.v1beta2.conditions``) where it has them, else ``status.conditions``."""
    status = _mapping(obj.get("status"))
    raw = status.get("conditions")
    nested = _mapping(status.get("v1beta2")).get("conditions")
    if isinstance(nested, list) and nested:
        raw = nested  # a v1beta1 object: its v1beta2 conditions are the informative ones
    return tuple(
        Condition(
            type=str(c.get("type", "")),
            status=str(c.get("status", "Unknown")),
            reason=str(c.get("reason") or ""),
            message=str(c.get("message") or ""),
        )
        for c in (raw if isinstance(raw, list) else [])
        if isinstance(c, Mapping)
    )


def cluster_state(obj: Mapping[str, Any]) -> ClusterState:
    """Read a Cluster object (as returned by the API) into a :class:`ClusterState`."""
    meta = _mapping(obj.get("metadata"))
    status = _mapping(obj.get("status"))
    conditions = conditions_of(obj)
    generation = meta.get("generation")
    observed = status.get("observedGeneration")
    return ClusterState(
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        phase=str(status.get("phase") or ""),
        conditions=conditions,
        deleting=bool(meta.get("deletionTimestamp")),
        generation=generation if isinstance(generation, int) else None,
        observed_generation=observed if isinstance(observed, int) else None,
    )
