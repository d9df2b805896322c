"""What the settings classes compute from their fields, in one place for both kinds of them.

The pydantic model classes (:mod:`.model`) and the plain classes of the happy path
(:mod:`.plain`) both inherit these mixins, so a derived value is written once. A test
fails when a model class gains a property or method that its plain twin lacks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._settings import plugins

if TYPE_CHECKING:
    from typing import Any, Protocol

    class _Named(Protocol):
        """The metadata of a settings document, as far as the mixins read it."""

        @property
        def name(self) -> str: ...

    class _Spec(Protocol):
        """The spec of a settings document, as far as the mixins read it."""

        @property
        def provider(self) -> str: ...


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
        spec: _Spec

    @property
    def name(self) -> str:
        return self.metadata.name

    def resolved_provider(self) -> Any:
        """The provider of this document (``spec.provider``), found in the registry once and
        kept on the document: validation's rules, the values, the services and the
        lifecycle all ask this one object (``providers.provider_of`` types it as
        ``Provider``). Kept where neither equality nor a dump looks (the pydantic class's
        ``__dict__`` outside its fields, the plain classes' cache slot); a copy whose
        ``spec.provider`` differs finds its own."""
        found = getattr(self, "_provider_cache", None)
        if found is None or found.name != self.spec.provider:
            found = plugins.provider_named(self.spec.provider)
            object.__setattr__(self, "_provider_cache", found)
        return found


#: The mixin of each class that has one, by class name (as in the schema's ``$defs``).
MIXINS: dict[str, type] = {
    "WorkerGroup": WorkerGroupDerived,
    "ClusterSettings": ClusterSettingsDerived,
}
