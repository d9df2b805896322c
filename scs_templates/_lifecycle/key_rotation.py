"""One step of the rotation of a cluster's encryption-at-rest keys, on the management cluster.

Each step (``add``, ``promote``, ``remove``: docs/cluster-features.md) rewrites the key Secret
(:mod:`scs_templates._render.encryption`) and sets the KubeadmControlPlane's
``spec.rollout.after`` so that every control-plane machine is replaced and boots with the
new file.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from scs_templates._core import naming
from scs_templates._core.errors import InputError
from scs_templates._core.records import record
from scs_templates._render import encryption
from scs_templates._tools.kube import ObjectRef

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.kube import KubeClient

__all__ = ["RotationResult", "rotate"]


@record
class RotationResult:
    """What one rotation step did: the keys now in the Secret and the rollout it asked for."""

    step: encryption.RotationStep
    keys: list[str]  # names only, write key first
    rollout_after: str


def rotate(
    kube: KubeClient,
    settings: ClusterSettings,
    step: encryption.RotationStep,
    *,
    now: datetime.datetime | None = None,
) -> RotationResult:
    """One rotation step: rewrite the Secret, then roll the control plane.

    The rollout is requested with ``spec.rollout.after`` on the KubeadmControlPlane (the
    field ``clusterctl alpha rollout restart`` sets); the chart does not render it, so helm
    upgrades leave it alone. Wait until the rollout finished (every control-plane machine
    replaced) before the next step.
    """
    namespace = settings.metadata.namespace
    name = encryption.secret_name(settings)
    current = kube.secret_data(namespace, name)
    if current is None or encryption.SECRET_KEY not in current:
        raise InputError(
            f"no encryption Secret {namespace}/{name}: install the cluster first "
            "(with spec.security.encryptionAtRest.enabled)"
        )
    moment = now or datetime.datetime.now(datetime.UTC)
    keys = encryption.next_keys(
        encryption.parse_keys(current[encryption.SECRET_KEY]), step, encryption.new_key(moment)
    )
    resources = list(settings.spec.security.encryption_at_rest.resources)
    kube.put_secret(
        namespace,
        name,
        {encryption.SECRET_KEY: encryption.config_text(keys, resources)},
        labels=encryption.secret_labels(settings),
    )
    kcp = ObjectRef(
        "controlplane.cluster.x-k8s.io/v1beta2",
        "KubeadmControlPlane",
        namespace,
        naming.resource_name(settings.spec.prefix, settings.name, naming.CONTROL_PLANE),
    )
    after = f"{moment:%Y-%m-%dT%H:%M:%SZ}"
    kube.merge_patch(kcp, {"spec": {"rollout": {"after": after}}})
    return RotationResult(step, [n for n, _ in keys], after)
