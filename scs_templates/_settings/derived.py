"""What the settings classes compute from their fields, in one place for both kinds of them.

The pydantic model classes (:mod:`.model`) and the plain classes of the happy path
(:mod:`.plain`) both inherit these mixins, so a derived value is written once. A test
fails when a model class gains a property or method that its plain twin lacks.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the render and validate paths do not import typing

if TYPE_CHECKING:
    from typing import Protocol

    class _Named(Protocol):
        """The metadata of a settings document, as far as the mixins read it."""

        @property
        def name(self) -> str: ...


class WorkerGroupDerived:
    __slots__ = ()
    if TYPE_CHECKING:
        autoscaling: object | None
        replicas: int | None

    @property
    def effective_replicas(self) -> int | None:
        """Replicas to set on the MachineDeployment (None: the autoscaler owns it)."""
        if self.autoscaling is not None:
            return None
        return 3 if self.replicas is None else self.replicas


class ClusterSettingsDerived:
    __slots__ = ()
    if TYPE_CHECKING:
        metadata: _Named

    @property
    def name(self) -> str:
        return self.metadata.name


#: The mixin of each class that has one, by class name (as in the schema's ``$defs``).
MIXINS: dict[str, type] = {
    "WorkerGroup": WorkerGroupDerived,
    "ClusterSettings": ClusterSettingsDerived,
}
