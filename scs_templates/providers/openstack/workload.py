"""What the OpenStack services need in the workload cluster before ``apply`` installs them.

The cloud controller manager and Cinder CSI read ``kube-system/cloud-config``; its content
comes from the cluster's credentials Secret on the management cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._core.labels import CLUSTER_LABEL, MANAGED_BY_LABEL, MANAGER
from scs_templates.providers.openstack.cloud_config import (
    CLOUD_CONFIG_CA_KEY,
    CLOUD_CONFIG_SECRET,
    with_ca_file,
    with_internal_network,
)
from scs_templates.providers.openstack.values import (
    CACERT_KEY,
    CLOUD_CONF_KEY,
    credentials_secret_name,
    internal_network_name,
)

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.kube import KubeClient

__all__ = ["sync_cloud_config"]


def sync_cloud_config(
    settings: ClusterSettings, management: KubeClient, workload: KubeClient
) -> str:
    """Copy ``cloud.conf`` (and the CA bundle) from the cluster's credentials Secret on the
    management cluster into the workload cluster's ``kube-system/cloud-config``, which the
    OpenStack cloud controller manager and Cinder CSI read. Returns a note ("" when done).

    The content is a credential: it moves API to API and is never printed or written to disk.
    """

    services = settings.spec.services
    if not (services.cloud_controller_manager.enabled or services.cinder_csi.enabled):
        return ""
    secret_name = credentials_secret_name(settings)
    data = management.secret_data(settings.metadata.namespace, secret_name) or {}
    if not data.get(CLOUD_CONF_KEY):
        return (
            f"the credentials Secret {settings.metadata.namespace}/{secret_name} has no "
            f"{CLOUD_CONF_KEY}: create kube-system/{CLOUD_CONFIG_SECRET} in the workload "
            "cluster yourself, or the cloud controller manager and Cinder CSI cannot start"
        )
    content = {CLOUD_CONF_KEY: data[CLOUD_CONF_KEY]}
    if data.get(CACERT_KEY):
        content[CLOUD_CONFIG_CA_KEY] = data[CACERT_KEY]
        content[CLOUD_CONF_KEY] = with_ca_file(data[CLOUD_CONF_KEY])
    network = internal_network_name(settings)
    if network is not None:
        # node addresses (and serving certificates) only from the cluster network
        content[CLOUD_CONF_KEY] = with_internal_network(content[CLOUD_CONF_KEY], network)
    workload.put_secret(
        "kube-system",
        CLOUD_CONFIG_SECRET,
        content,
        labels={MANAGED_BY_LABEL: MANAGER, CLUSTER_LABEL: settings.name},
    )
    return ""
