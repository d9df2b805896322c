"""Evidence that CAPO reconciles with a rotated credential, before the old one is deleted.

CAPO v0.14.7 reads the cluster's credentials Secret at every reconcile, uncached (``DisableFor:
Secret`` in main.go), and keys its OpenStack client cache by the credential's content
(pkg/scope/provider.go): a reconcile that starts after the Secret was switched authenticates
with the new credential. What the Kubernetes API shows of a reconcile is how it ended: at the
end of a reconcile that succeeded (network, subnet, router, security groups, API load
balancer, availability zones) CAPO marks the OpenStackCluster's ``Ready`` condition True
(``reconcileNormal`` in controllers/openstackcluster_controller.go); a step that fails marks
it False with CAPO's error (``handleUpdateOSCError``).

So, after switching the Secret, the rotation sets that condition False itself (reason
:data:`FENCE_REASON`, the new credential's ID in the message): a fence. A reconcile that read
the OpenStackCluster before the fence leaves it alone (CAPI's patch helper writes only what
that reconcile changed, and it did not change ``Ready``); a reconcile that read it after the
fence started after the switch, read the new Secret, and sets ``Ready`` True only when every
OpenStack call with the new credential succeeded. :func:`wait_for_capo` waits for that; until
then the old credential is kept. The fence also makes CAPO reconcile at once (the status
update is an event CAPO watches). A paused cluster or a CAPO that is not running leaves the
fence in place until the timeout; the condition then tells the user what is going on.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import ToolError
from scs_templates._core.progress import Progress
from scs_templates._tools.kube import ObjectRef
from scs_templates._tools.kube.wait import elapsed, poll

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.kube import KubeClient

INFRA_API_VERSION = "infrastructure.cluster.x-k8s.io/v1beta1"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
READY = "Ready"
#: The reason of the fence (CAPI condition reasons are CamelCase).
FENCE_REASON = "CredentialRotation"
#: Attempts to write the fence while CAPO keeps changing the object.
FENCE_ATTEMPTS = 5


def cluster_objects(kube: KubeClient, settings: ClusterSettings) -> list[ObjectRef]:
    """The cluster's OpenStackClusters (Cluster API labels them with the cluster's name);
    none where the management cluster does not serve the kind."""

    if not kube.serves(INFRA_API_VERSION, "OpenStackCluster"):
        return []
    namespace = settings.metadata.namespace
    found = kube.list(
        INFRA_API_VERSION,
        "OpenStackCluster",
        namespace,
        label_selector=f"{CLUSTER_NAME_LABEL}={settings.name}",
    )
    return sorted(
        ObjectRef(INFRA_API_VERSION, "OpenStackCluster", namespace, str(o["metadata"]["name"]))
        for o in found
    )


def ready_condition(obj: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    status = (obj or {}).get("status") or {}
    for condition in status.get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == READY:
            return condition
    return None


def reconciled(obj: Mapping[str, Any] | None) -> bool:
    """CAPO finished a successful reconcile after the fence (or the object is gone)."""
    if obj is None:
        return True
    condition = ready_condition(obj)
    return condition is not None and condition.get("status") == "True"


def set_fence(kube: KubeClient, ref: ObjectRef, credential_id: str) -> bool:
    """Mark ``ref``'s Ready condition False (reason :data:`FENCE_REASON`); False when the
    object is gone. Written with the object's resourceVersion, re-read on a conflict."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    fence = {
        "type": READY,
        "status": "False",
        "severity": "Info",
        "reason": FENCE_REASON,
        "message": (
            f"scs-templates switched the credentials Secret to application credential "
            f"{credential_id}: waiting for CAPO to reconcile with it"
        ),
        "lastTransitionTime": now,
    }
    for _ in range(FENCE_ATTEMPTS):
        obj = kube.get(ref)
        if obj is None:
            return False
        others = [
            c
            for c in (obj.get("status") or {}).get("conditions") or []
            if isinstance(c, Mapping) and c.get("type") != READY
        ]
        written = kube.merge_patch_status(
            ref,
            {"status": {"conditions": [fence, *others]}},
            resource_version=str(obj["metadata"]["resourceVersion"]),
        )
        if written is not None:
            return True
    raise ToolError(
        f"could not mark {ref} for the credential rotation: it changed {FENCE_ATTEMPTS} times "
        "while being written; the old credential is kept, run the rotation again"
    )


def wait_for_capo(
    kube: KubeClient,
    refs: list[ObjectRef],
    *,
    timeout: float,
    poll_interval: float,
    progress: Progress,
) -> None:
    """Wait until CAPO has reconciled every fenced OpenStackCluster (:func:`reconciled`);
    ToolError naming CAPO's last word on each one that it did not reconcile in time."""

    def pending() -> list[tuple[ObjectRef, Mapping[str, Any] | None]]:
        left = []
        for ref in refs:
            obj = kube.get(ref)
            if not reconciled(obj):
                left.append((ref, ready_condition(obj)))
        return left

    def waiting(left: list[tuple[ObjectRef, Any]], waited: float) -> None:
        names = ", ".join(str(ref) for ref, _ in left)
        when = elapsed(waited)
        progress(f"waiting for CAPO to reconcile {names} with the new credential [{when}]")

    left, _, done = poll(
        pending,
        lambda left: not left,
        timeout=timeout,
        poll_interval=poll_interval,
        waiting=waiting,
    )
    if done:
        return
    words = []
    for ref, condition in left:
        said = condition or {}
        if said.get("reason") == FENCE_REASON:
            last = "no reconcile since the switch (is CAPO running? is the cluster paused?)"
        else:
            status, reason = said.get("status", "?"), said.get("reason", "")
            last = f"Ready {status}, {reason}: {said.get('message', '')}"
        words.append(f"{ref}: {last}")
    raise ToolError(
        f"CAPO did not reconcile with the new credential within {int(timeout)} s ("
        + "; ".join(words)
        + "): the old credential is kept; run the rotation again once CAPO reconciles"
    )


__all__ = [
    "FENCE_REASON",
    "cluster_objects",
    "ready_condition",
    "reconciled",
    "set_fence",
    "wait_for_capo",
]
