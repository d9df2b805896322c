"""The records of per-cluster application credentials, shared by :mod:`.appcred` (Keystone)
and :mod:`.credentials_secret` (the Secret that holds them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from scs_templates.providers.openstack.connection import CloudAccess, Secret


@dataclass(frozen=True)
class AppCredential:
    """An application credential together with its secret."""

    id: str
    name: str
    secret: Secret = field(repr=False)
    project_id: str
    restricted: bool = True


@dataclass(frozen=True)
class EnsuredCredential:
    """The result of :func:`ensure_app_credential`."""

    credential: AppCredential
    created: bool
    """False: an existing credential was reused."""
    reason: str
    """Why it was created or reused, for a log line (never contains the secret)."""


@dataclass(frozen=True)
class ClusterCredentials:
    """The cluster's credential(s) plus what the credentials Secret needs besides them."""

    cloud_name: str
    access: CloudAccess
    cluster: EnsuredCredential
    workload: EnsuredCredential | None = None
    kept: tuple[KeptCredential, ...] = ()
    """Credentials with this cluster's legacy names that are not its own (reported)."""

    @property
    def for_workload(self) -> AppCredential:
        """The credential the in-cluster OCCM/CSI use (the cluster one unless split)."""
        return (self.workload or self.cluster).credential


@dataclass(frozen=True, order=True)
class KeptCredential:
    """A credential named as earlier versions named this cluster's (no namespace) that is
    not this cluster's: neither the credentials Secret holds it nor does its description
    name the cluster. Never reused, rotated or deleted; reported, so it is not forgotten."""

    name: str
    id: str
    owner: str
    """``NAMESPACE/CLUSTER`` its description names, or empty: not made by scs-templates
    (KaaS v1 gave its credential this name; or one made by hand)."""

    def line(self) -> str:
        head = f"kept application credential {self.name} (ID {self.id})"
        if self.owner:
            return f"{head}: the credential of cluster {self.owner} (its description)"
        return (
            f"{head}: named as this cluster's by KaaS v1 or by hand, not made by scs-templates; "
            f"delete it once nothing uses it (openstack application credential delete {self.id})"
        )
