"""The nightly etcd job's values: defragmentation, the local snapshots and where else they go.

The S3 credentials never pass through helm: the values name only the Secret
(``etcd.backupS3.credentialsSecret``), the chart puts its keys as ``files[].contentFrom`` into
the KubeadmControlPlane, and the kubeadm bootstrap controller writes them to each
control-plane node as 0600 files that etcd-defrag.sh reads (docs/maintenance.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scs_templates._contract.model import BackupUpload, Defrag
    from scs_templates._settings.model import ClusterSettings, EtcdBackupS3


def defrag_values(settings: ClusterSettings) -> Defrag:
    """etcd-defrag.sh's settings; ``upload`` only with ``etcd.backupS3``."""
    etcd = settings.spec.etcd
    defrag: Defrag = {
        "enabled": etcd.defrag.enabled,
        "schedule": etcd.defrag.schedule,
        "backupRetention": etcd.backup_retention,
        "backupDirectory": etcd.backup_directory,
    }
    if etcd.backup_s3 is not None:
        defrag["upload"] = _upload(settings, etcd.backup_s3)
    return defrag


def _upload(settings: ClusterSettings, s3: EtcdBackupS3) -> BackupUpload:
    """The bucket. The default prefix is the cluster's namespace and name: clusters that
    share a bucket never overwrite each other's snapshots."""
    return {
        "endpoint": s3.endpoint,
        "bucket": s3.bucket,
        "region": s3.region,
        "prefix": s3.prefix or f"{settings.metadata.namespace}/{settings.metadata.name}",
        "retention": s3.retention,
        "credentialsSecret": s3.credentials_secret,
    }
