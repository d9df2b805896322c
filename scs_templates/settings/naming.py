"""Names of the objects we create: ``$PREFIX-$CLUSTER-$RESOURCE``, DNS-1123, <= 63 chars.

The settings rules keep names short enough that shortening never happens for valid settings
(see :data:`MACHINE_OWNER_BUDGET`); :func:`fit` is the safety net for everything else and
shortens with a hash suffix, never leaving a trailing '-'.
"""

from __future__ import annotations

MAX_NAME = 63
# Cluster API appends "-xxxxx" to a MachineDeployment for its MachineSets and another
# "-xxxxx" for Machines, and the Machine name becomes the server and node host name.
# A MachineDeployment or KubeadmControlPlane name must therefore leave room for 12 chars.
MACHINE_OWNER_BUDGET = MAX_NAME - 12
# Machine and bootstrap templates get "-" + 8 hex chars of their spec hash (in the chart).
TEMPLATE_HASH_SUFFIX = 9
CONTROL_PLANE = "control-plane"


def fit(name: str, limit: int = MAX_NAME) -> str:
    """Return ``name`` if it fits, else a prefix of it plus '-' and a 7-hex hash."""
    if len(name) <= limit:
        return name
    import hashlib  # only a name that does not fit (validate and render never load it)

    digest = hashlib.sha256(name.encode()).hexdigest()[:7]
    head = name[: limit - len(digest) - 1].rstrip("-")
    return f"{head}-{digest}"


def full_name(prefix: str, cluster: str, resource: str = "") -> str:
    """``$PREFIX-$CLUSTER-$RESOURCE`` (or ``$PREFIX-$CLUSTER``) as it is, before fitting:
    what the settings rules measure against the budgets."""
    return "-".join([prefix, cluster] + ([resource] if resource else []))


def resource_name(prefix: str, cluster: str, resource: str = "") -> str:
    """``$PREFIX-$CLUSTER-$RESOURCE`` (or ``$PREFIX-$CLUSTER``), fitted to 63 chars."""
    return fit(full_name(prefix, cluster, resource))


#: Keystone's limit for names (application credentials: ``name`` is a String(255)).
KEYSTONE_NAME_MAX = 255


def in_namespace(name: str, namespace: str, limit: int = KEYSTONE_NAME_MAX) -> str:
    """``$NAME.$NAMESPACE`` (as Kubernetes' DNS names a Service of a namespace), fitted to
    ``limit``: for objects outside Kubernetes that the clusters of every namespace share one
    scope for (an OpenStack user's application credentials), where ``$PREFIX-$CLUSTER-...``
    alone is the same for two clusters of one name in two namespaces. The '.' cannot occur
    in a namespace or a cluster name (DNS labels), so no two pairs give one name."""
    return fit(f"{name}.{namespace}", limit)


def per_cluster(cluster: str, name: str, limit: int = MAX_NAME) -> str:
    """``$CLUSTER-$NAME``, fitted to ``limit``: the objects of a cluster in a namespace that
    holds several (service releases, their GitOps HelmReleases, the autoscaler)."""
    return fit(f"{cluster}-{name}", limit)


def kubeconfig_secret(cluster: str) -> str:
    """Cluster API's Secret with the workload cluster's admin kubeconfig (key ``value``):
    ``$CLUSTER-kubeconfig``, named by Cluster API, read by the library and by Flux."""
    return f"{cluster}-kubeconfig"
