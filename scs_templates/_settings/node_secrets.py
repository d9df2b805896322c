"""The Secrets on the management cluster whose keys the bootstrap controller copies into the
nodes' bootstrap data (``files[].contentFrom.secret``): the registry mirrors' credentials and
the S3 credentials of the etcd snapshot upload.

One list for every path that needs it: ``install`` refuses a missing or incomplete one
before helm runs (without it the bootstrap controller writes no bootstrap data and the
machines never start), and ``gitops`` names them for the operator to create. Names and key
names only, never content.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scs_templates._settings.model import S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings

#: The keys of a registry mirror's credentials Secret (type kubernetes.io/basic-auth).
REGISTRY_KEYS = ("username", "password")
#: The keys of the snapshot upload's credentials Secret.
BACKUP_S3_KEYS = (S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY)


@dataclass(frozen=True)
class NodeSecret:
    """One Secret the nodes' bootstrap data reads: the field that names it, its name, the
    keys it must have, what it holds and where that is documented."""

    field: str
    name: str
    keys: tuple[str, ...]
    what: str
    docs: str


def node_secrets(settings: ClusterSettings) -> list[NodeSecret]:
    """The Secrets the cluster's bootstrap data reads, in the order of the settings."""
    spec = settings.spec
    found = [
        NodeSecret(
            f"spec.registryMirrors[{index}].credentialsSecret",
            mirror.credentials_secret,
            REGISTRY_KEYS,
            f"credentials of the {mirror.registry} mirror",
            "docs/cluster-features.md",
        )
        for index, mirror in enumerate(spec.registry_mirrors)
        if mirror.credentials_secret
    ]
    if spec.etcd.backup_s3 is not None:
        found.append(
            NodeSecret(
                "spec.etcd.backupS3.credentialsSecret",
                spec.etcd.backup_s3.credentials_secret,
                BACKUP_S3_KEYS,
                "S3 credentials of the etcd snapshot upload",
                "docs/maintenance.md",
            )
        )
    return found
