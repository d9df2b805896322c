"""``scs-templates describe``: a cluster's Cluster API objects as a tree with their Ready
conditions, as ``clusterctl describe cluster`` shows them.

Two halves: :func:`collect` reads the objects from the management cluster (the Cluster, the
objects its ``infrastructureRef`` and ``controlPlaneRef`` name, its MachineDeployments and
Machines by the ``cluster.x-k8s.io/cluster-name`` label, and each Machine's infrastructure
object); :func:`build_tree` is a pure function of those objects (unit-tested on recorded
objects), and :func:`tree_text` / :meth:`Node.to_dict` print it.

Which condition a row shows: ``Ready``, else ``Available`` (v1beta2 Clusters,
MachineDeployments and control planes report ``Available``; Machines and the providers'
objects ``Ready``); a v1beta1 object's v1beta2 conditions are preferred where it has them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scs_templates._tools.kube.client import CLUSTER_API_VERSION, ObjectRef
from scs_templates._tools.kube.cluster import Condition, conditions_of

if TYPE_CHECKING:
    from scs_templates._tools.kube.client import KubeClient

CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane"
DEPLOYMENT_LABEL = "cluster.x-k8s.io/deployment-name"
#: The condition a row shows, first found wins.
READY_CONDITIONS = ("Ready", "Available")


@dataclass(frozen=True)
class Node:
    """One row of the tree: an object (or a group such as ``Workers``) and its children."""

    kind: str
    name: str
    ready: Condition | None = None
    children: tuple[Node, ...] = field(default=())
    group: bool = False

    @property
    def label(self) -> str:
        return self.name if self.group else f"{self.kind}/{self.name}"

    def to_dict(self) -> dict[str, Any]:
        """The tree as data (``describe -o yaml|json``): a group has only name and children."""
        data: dict[str, Any] = (
            {"kind": self.kind, "name": self.name} if not self.group else {"group": self.name}
        )
        if not self.group:
            ready = self.ready
            data["ready"] = (
                None
                if ready is None
                else {
                    "type": ready.type,
                    "status": ready.status,
                    "reason": ready.reason,
                    "message": ready.message,
                }
            )
        if self.children:
            data["children"] = [child.to_dict() for child in self.children]
        return data


def ready_of(obj: Mapping[str, Any]) -> Condition | None:
    """The condition a row shows for ``obj`` (see the module doc)."""
    found = {c.type: c for c in conditions_of(obj)}
    return next((found[t] for t in READY_CONDITIONS if t in found), None)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name", ""))


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = _meta(obj).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _ref(obj: Mapping[str, Any], key: str) -> tuple[str, str] | None:
    """(kind, name) of ``spec.<key>`` (v1beta2 ``{apiGroup, kind, name}`` or v1beta1)."""
    spec = obj.get("spec")
    ref = spec.get(key) if isinstance(spec, Mapping) else None
    if not isinstance(ref, Mapping) or not ref.get("kind") or not ref.get("name"):
        return None
    return str(ref["kind"]), str(ref["name"])


def _node(obj: Mapping[str, Any], children: Sequence[Node] = ()) -> Node:
    return Node(str(obj.get("kind", "")), _name(obj), ready_of(obj), tuple(children))


def build_tree(objects: Sequence[Mapping[str, Any]]) -> Node:
    """The tree of the one Cluster in ``objects`` (ValueError if there is none): its
    infrastructure, its control plane with its Machines, then ``Workers`` with each
    MachineDeployment and its Machines; each Machine with its infrastructure object.
    Children are sorted by name (deterministic output)."""
    by_key = {(str(o.get("kind", "")), _name(o)): o for o in objects}
    clusters = [o for o in objects if o.get("kind") == "Cluster"]
    if len(clusters) != 1:
        raise ValueError(f"expected one Cluster, found {len(clusters)}")
    cluster = clusters[0]
    machines = sorted((o for o in objects if o.get("kind") == "Machine"), key=_name)

    def machine_node(machine: Mapping[str, Any]) -> Node:
        ref = _ref(machine, "infrastructureRef")
        infra = by_key.get(ref) if ref else None
        return _node(machine, [_node(infra)] if infra is not None else [])

    rows: list[Node] = []
    infra_ref = _ref(cluster, "infrastructureRef")
    if infra_ref and infra_ref in by_key:
        rows.append(_node(by_key[infra_ref]))
    plane_ref = _ref(cluster, "controlPlaneRef")
    plane_machines = [m for m in machines if CONTROL_PLANE_LABEL in _labels(m)]
    if plane_ref and plane_ref in by_key:
        rows.append(_node(by_key[plane_ref], [machine_node(m) for m in plane_machines]))
    deployments = sorted((o for o in objects if o.get("kind") == "MachineDeployment"), key=_name)
    workers = [
        _node(
            deployment,
            [
                machine_node(m)
                for m in machines
                if _labels(m).get(DEPLOYMENT_LABEL) == _name(deployment)
            ],
        )
        for deployment in deployments
    ]
    placed = {_name(m) for m in plane_machines} | {
        _name(m)
        for m in machines
        if _labels(m).get(DEPLOYMENT_LABEL) in {_name(d) for d in deployments}
    }
    others = [machine_node(m) for m in machines if _name(m) not in placed]
    if workers:
        rows.append(Node("", "Workers", None, tuple(workers), group=True))
    if others:
        rows.append(Node("", "Other machines", None, tuple(others), group=True))
    return _node(cluster, rows)


# --------------------------------------------------------------------------- text

_COLOURS = {"True": "\x1b[32m", "False": "\x1b[31m", "Unknown": "\x1b[33m"}
_RESET = "\x1b[0m"
MESSAGE_CHARS = 80


def tree_text(root: Node, *, colour: bool = False) -> str:
    """The tree as ``clusterctl describe cluster`` prints it: NAME, READY, REASON, MESSAGE
    (the message's first line, cut at :data:`MESSAGE_CHARS`); ``colour``: the READY column
    green/red/yellow (a terminal)."""
    rows: list[tuple[str, Node]] = []

    def walk(node: Node, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─" if last else "├─")
        rows.append((prefix + branch + node.label, node))
        inner = prefix if top else prefix + ("  " if last else "│ ")
        for index, child in enumerate(node.children):
            walk(child, inner, index == len(node.children) - 1, False)

    walk(root, "", True, True)
    cells = [(label, *_cells(node.ready)) for label, node in rows]
    width = max(len("NAME"), *(len(label) for label, *_ in cells))
    status_width = len("Unknown")
    reason_width = max(len("REASON"), *(len(reason) for *_, reason, _ in cells))
    lines = [f"{'NAME':<{width}}  {'READY':<{status_width}}  {'REASON':<{reason_width}}  MESSAGE"]
    for label, status, reason, message in cells:
        cell = f"{status:<{status_width}}"
        if colour and status in _COLOURS:
            cell = f"{_COLOURS[status]}{status}{_RESET}" + " " * (status_width - len(status))
        line = f"{label:<{width}}  {cell}  {reason:<{reason_width}}  {message}"
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"


def _cells(ready: Condition | None) -> tuple[str, str, str]:
    """READY, REASON and MESSAGE of a row: reason and message only when not ready."""
    if ready is None:
        return "", "", ""
    if ready.status == "True":
        return ready.status, "", ""
    message = " ".join(ready.message.split())
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 3] + "..."
    return ready.status, ready.reason, message


# --------------------------------------------------------------------------- reading


def collect(client: KubeClient, namespace: str, cluster: str) -> list[dict[str, Any]] | None:
    """The Cluster ``namespace/cluster`` and the objects its tree shows, from the API; None
    when the Cluster does not exist."""
    found = client.get(ObjectRef(CLUSTER_API_VERSION, "Cluster", namespace, cluster))
    if found is None:
        return None
    objects: list[dict[str, Any]] = [found]
    for key in ("infrastructureRef", "controlPlaneRef"):
        _follow(client, found, key, namespace, objects)
    selector = f"{CLUSTER_NAME_LABEL}={cluster}"
    objects += client.list(
        CLUSTER_API_VERSION, "MachineDeployment", namespace, label_selector=selector
    )
    machines = client.list(CLUSTER_API_VERSION, "Machine", namespace, label_selector=selector)
    objects += machines
    for machine in machines:
        _follow(client, machine, "infrastructureRef", namespace, objects)
    return objects


def _follow(
    client: KubeClient,
    obj: Mapping[str, Any],
    key: str,
    namespace: str,
    into: list[dict[str, Any]],
) -> None:
    """Append the object ``spec.<key>`` of ``obj`` names, when it exists."""
    spec = obj.get("spec")
    ref = spec.get(key) if isinstance(spec, Mapping) else None
    if not isinstance(ref, Mapping) or not ref.get("kind") or not ref.get("name"):
        return
    api_version = str(ref.get("apiVersion") or "")
    if not api_version:
        api_version = client.group_version(str(ref.get("apiGroup") or ""))
    target = client.get(ObjectRef(api_version, str(ref["kind"]), namespace, str(ref["name"])))
    if target is not None:
        target.setdefault("apiVersion", api_version)
        target.setdefault("kind", str(ref["kind"]))
        into.append(target)
