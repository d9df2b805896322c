"""Moving a topology cluster onto a new ClusterClass (``install --rebase-class``): the class
first, reconciled by Cluster API, then the release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scs_templates.errors import ToolError
from scs_templates.labels import CLASS_LABEL as CLASS_LABEL
from scs_templates.lifecycle.wait import DEFAULT_POLL_INTERVAL, elapsed, poll

if TYPE_CHECKING:
    from scs_templates.kube import KubeClient

__all__ = [
    "CLASS_LABEL",
    "CLASS_RECONCILE_TIMEOUT",
    "prepare_class",
]


#: Seconds to wait for Cluster API to reconcile a new ClusterClass before a rebase.
CLASS_RECONCILE_TIMEOUT = 120.0


def _class_reconciled(obj: Mapping[str, Any] | None) -> bool:
    """Cluster API's own test (its Cluster webhook refuses a classRef to a class failing it):
    status.observedGeneration is the generation and VariablesReady is True."""
    if not obj:
        return False
    status = obj.get("status") or {}
    if status.get("observedGeneration") != (obj.get("metadata") or {}).get("generation"):
        return False
    return any(
        c.get("type") == "VariablesReady" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def prepare_class(
    client: KubeClient,
    objects: list[dict[str, Any]],
    class_name: str,
    release: str,
    namespace: str,
    *,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    timeout: float = CLASS_RECONCILE_TIMEOUT,
) -> None:
    """Create the new ClusterClass and its templates before the release moves a Cluster.

    Cluster API's Cluster webhook refuses a ``classRef`` to a class it has not reconciled
    yet, and helm would change the Cluster in the same step that creates the class (found
    with the real topology controller). So the class objects of the rendered release are
    applied first, with helm's ownership metadata so that the upgrade adopts them, and the
    install waits until Cluster API has reconciled the class.
    """
    from scs_templates.kube import ObjectRef

    chosen = [
        o for o in objects if (o["metadata"].get("labels") or {}).get(CLASS_LABEL) == class_name
    ]
    for obj in chosen:
        metadata = dict(obj["metadata"])
        metadata["annotations"] = {
            **(metadata.get("annotations") or {}),
            "meta.helm.sh/release-name": release,
            "meta.helm.sh/release-namespace": namespace,
        }
        client.server_side_apply(
            {**obj, "metadata": {**metadata, "namespace": namespace}}, "scs-templates"
        )
    ref = ObjectRef("cluster.x-k8s.io/v1beta2", "ClusterClass", namespace, class_name)
    found, _, reconciled = poll(
        lambda: client.get(ref), _class_reconciled, timeout=timeout, poll_interval=poll_interval
    )
    if not reconciled:
        state = ((found or {}).get("status") or {}).get("conditions") or "no status"
        raise ToolError(
            f"ClusterClass {namespace}/{class_name} is not reconciled by Cluster API after "
            f"{elapsed(timeout)} ({state}); the cluster was not moved onto it"
        )
