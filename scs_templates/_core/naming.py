"""Names of the objects we create: ``$PREFIX-$CLUSTER-$RESOURCE``, DNS-1123, <= 63 chars.

The settings rules keep names short enough that shortening never happens for valid settings
(see :data:`MACHINE_OWNER_BUDGET`); :func:`fit` is the safety net for everything else and
shortens with a hash suffix, never leaving a trailing '-'.
"""

from __future__ import annotations

from itertools import groupby

from scs_templates._core.digest import sha256

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
    digest = sha256(name.encode()).hexdigest()[:7]
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


# --------------------------------------------------------------------------- machine names
# How Cluster API v1.14 names the Machines it creates (and so the servers and nodes), written
# as name *shapes*: a shape is a name with :data:`RANDOM` for each character Cluster API
# chooses at random. Sources: internal/topology/names (the topology controller's
# ``{{ .cluster.name }}-{{ .random }}`` and ``{{ .cluster.name }}-{{ .machineDeployment
# .topologyName }}-{{ .random }}``), the MachineSet controller (``{{ .machineSet.name }}-{{
# .random }}``), the KubeadmControlPlane controller (``{{ .kubeadmControlPlane.name }}-{{
# .random }}``) and the MachineDeployment controller (a MachineSet is ``<md>-`` plus 5 random).

#: Stands for one character Cluster API picks at random (never in a DNS name itself).
RANDOM = "*"
#: Cluster API's random suffixes are 5 characters (k8s.io/apimachinery util/rand).
RANDOM_LENGTH = 5
_GENERATED_MAX = MAX_NAME - RANDOM_LENGTH


def templated_name(shape: str) -> str:
    """A name from one of Cluster API's name templates: longer than 63, it is cut to 58 and
    gets 5 random characters (``names.templateGenerator``)."""
    if len(shape) > MAX_NAME:
        return shape[:_GENERATED_MAX] + RANDOM * RANDOM_LENGTH
    return shape


def suffixed_name(base: str) -> str:
    """A name from ``base`` as a generateName: cut to 58, plus 5 random characters (a
    MachineSet of a MachineDeployment: ``base`` is ``<md>-``)."""
    return base[:_GENERATED_MAX] + RANDOM * RANDOM_LENGTH


def machine_name_shapes(template: str, prefix: str, cluster: str, groups: list[str]) -> list[str]:
    """The shapes of the names of every Machine of a cluster: its control plane's and each
    worker group's, in that order. ``clusterclass`` clusters are named by the topology
    controller (``<cluster>-<random>``, ``<cluster>-<group>-<random>``), the others by our
    charts (``$PREFIX-$CLUSTER-control-plane``, ``$PREFIX-$CLUSTER-$GROUP``)."""
    suffix = "-" + RANDOM * RANDOM_LENGTH
    if template == "clusterclass":
        control_plane = templated_name(cluster + suffix)
        deployments = [templated_name(f"{cluster}-{group}{suffix}") for group in groups]
    else:
        control_plane = resource_name(prefix, cluster, CONTROL_PLANE)
        deployments = [resource_name(prefix, cluster, group) for group in groups]
    machines = [templated_name(control_plane + suffix)]
    machines += [templated_name(suffixed_name(md + "-") + suffix) for md in deployments]
    return machines


def shape_pattern(shape: str) -> str:
    """A regular expression (Go RE2 and Python alike) for the names of ``shape``: its fixed
    parts literally, each run of random characters as ``[a-z0-9]{n}``. Names are DNS-1123
    (``[-a-z0-9.]``): '.' is the one character to escape."""

    parts = []
    for random, run in groupby(shape, key=lambda char: char == RANDOM):
        text = "".join(run)
        parts.append(f"[a-z0-9]{{{len(text)}}}" if random else text.replace(".", r"\."))
    return "".join(parts)
