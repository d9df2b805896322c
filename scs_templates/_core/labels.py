"""The labels scs-templates writes and selects by, and the node-label domains Cluster API syncs.

Written once here, read by the values builder (the charts get them as values), the
library's own objects (the credentials Secret, the encryption key, the workload
cloud-config), the GitOps objects, the lifecycle steps that select by them, and the
settings rules. Pure constants: nothing to import.
"""

from __future__ import annotations

#: Every object of a cluster (chart objects and the Secrets the library writes): ``delete``
#: selects by it.
CLUSTER_LABEL = "scs.community/cluster"
#: The ClusterClass and its templates (charts/scs-cluster-common/_topology.tpl).
CLASS_LABEL = "scs.community/cluster-class"
#: A GitOps HelmRelease of a standard service.
SERVICE_LABEL = "scs.community/service"
#: ``clusterctl move`` moves a Secret with this label along with its cluster.
CLUSTERCTL_MOVE_LABEL = "clusterctl.cluster.x-k8s.io/move"
#: On the OpenStackCluster/OpenStackMachines (asks CAPO for a reconcile) and on the pod
#: templates of OCCM and Cinder CSI (restarts them): the ID of the credential now in use
#: (``openstack appcred rotate``).
CREDENTIAL_ID_ANNOTATION = "scs.community/credential-id"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
COMPONENT_LABEL = "app.kubernetes.io/component"
#: The ``app.kubernetes.io/managed-by`` value of what the library writes itself (not helm).
MANAGER = "scs-templates"
#: helm keeps an object annotated so when a release stops rendering it (or is uninstalled).
KEEP_ANNOTATION = "helm.sh/resource-policy"

#: Node-label domains the kubelet may not set itself (NodeRestriction: ``--node-labels``
#: refuses them) but Cluster API copies from the Machine to the Node: the settings rules
#: allow them, the values builder puts them on the Machine. Each with whether its
#: subdomains are synced too, as Cluster API decides (v1.12 util/labels GetManagedLabels:
#: ``node-role.kubernetes.io`` itself only, the other two with their subdomains).
CAPI_SYNCED_LABEL_DOMAINS: tuple[tuple[str, bool], ...] = (
    ("node-role.kubernetes.io", False),
    ("node-restriction.kubernetes.io", True),
    ("node.cluster.x-k8s.io", True),
)


def synced_by_capi(key: str) -> bool:
    """True for a node label that must be set on the Machine (Cluster API syncs it)."""
    domain = key.split("/", 1)[0] if "/" in key else ""
    return any(
        domain == synced or (subdomains and domain.endswith("." + synced))
        for synced, subdomains in CAPI_SYNCED_LABEL_DOMAINS
    )


def credentials_secret_labels(cluster: str) -> dict[str, str]:
    """Labels of the credentials Secret the library writes through the Kubernetes API: the
    cluster (delete finds it), ``clusterctl move`` (moves it with the cluster), and who
    manages it (scs-templates, not helm: credentials never go through helm values)."""
    return {CLUSTER_LABEL: cluster, CLUSTERCTL_MOVE_LABEL: "true", MANAGED_BY_LABEL: MANAGER}
