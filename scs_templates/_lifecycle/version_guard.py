"""The guard before an upgrade: what the installed release may become.

Kubernetes moves one minor version at a time and never back; a cluster stays on its kind of
template (classic or ``clusterclass``) and, unless asked, on its ClusterClass; the API
server's port of an installed cluster cannot move. Each check raises InputError (exit 2)
with the way out, before anything is touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scs_templates._core import version_numbers
from scs_templates._core.errors import InputError
from scs_templates._lifecycle.target import release_objects
from scs_templates._render.values.class_release import TOPOLOGY_TEMPLATE as TOPOLOGY_TEMPLATE
from scs_templates._versions.kubernetes import KubernetesVersion
from scs_templates.providers.api_access import DEFAULT_API_PORT

if TYPE_CHECKING:
    from scs_templates._lifecycle.target import Target
    from scs_templates._tools.helm import Helm

__all__ = [
    "TOPOLOGY_TEMPLATE",
    "check_api_port_change",
    "check_class_change",
    "check_template_change",
    "check_version_change",
    "installed_kubernetes_version",
    "values_kubernetes_version",
]


def _parse_installed(text: Any) -> KubernetesVersion | None:
    found = version_numbers.leading(str(text or ""))
    return None if found is None else KubernetesVersion(*found)


def values_kubernetes_version(values: Mapping[str, Any]) -> KubernetesVersion:
    """The Kubernetes version in cluster chart values (``kubernetes.version``, resolved by
    the values builder)."""
    section = values.get("kubernetes")
    found = _parse_installed(section.get("version") if isinstance(section, Mapping) else None)
    if found is None:
        raise ValueError(f"values without a Kubernetes version: {section!r}")
    return found


def installed_kubernetes_version(
    helm: Helm,
    target: Target,
    manifest_objects: list[dict[str, Any]] | None = None,
    values: Mapping[str, Any] | None = None,
) -> KubernetesVersion | None:
    """The Kubernetes version of the installed release, or None when not installed.

    Read from the release's values (``kubernetes.version``, what scs-templates resolved at
    install time); for a release whose values lack it, from the KubeadmControlPlane's
    ``spec.version`` in the installed manifest.
    """
    if values is None:
        values = helm.get_values(target.release, namespace=target.namespace)
    try:
        return values_kubernetes_version(values)
    except ValueError:
        pass  # a release from before the values carried it
    objects = (
        manifest_objects
        if manifest_objects is not None
        else release_objects(helm.get_manifest(target.release, namespace=target.namespace))
    )
    for obj in objects:
        if obj.get("kind") == "KubeadmControlPlane":
            spec = obj.get("spec")
            if isinstance(spec, Mapping):
                return _parse_installed(spec.get("version"))
    return None


def check_template_change(installed_values: Mapping[str, Any], wanted: str, release: str) -> None:
    """Refuse to switch an installed cluster between a classic template and ``clusterclass``.

    The two own the same machines through different objects (classic: the release's
    KubeadmControlPlane and MachineDeployments; topology: the ones the topology controller
    creates from the ClusterClass). An upgrade of one into the other would delete the running
    control plane and build a new one. Switching between ``simple`` and ``multi-md`` is fine.
    """
    section = installed_values.get("cluster")
    installed = section.get("template") if isinstance(section, Mapping) else None
    if not isinstance(installed, str) or not installed:
        return
    if (installed == TOPOLOGY_TEMPLATE) != (wanted == TOPOLOGY_TEMPLATE):
        raise InputError(
            f"refusing to switch {release} from template {installed!r} to {wanted!r}: a "
            "cluster cannot move between the clusterclass template and the classic ones "
            f"(spec.template); keep {installed!r} or create a new cluster"
        )


def check_class_change(
    installed_values: Mapping[str, Any],
    values: Mapping[str, Any],
    release: str,
    *,
    rebase: bool,
    command: str = "install",
) -> str | None:
    """Refuse to move a topology cluster onto another ClusterClass unless asked (``rebase``).

    Each scs-templates release whose chart changed ships a ClusterClass of a new name; an
    ``install`` with that release would otherwise move every topology cluster it touches onto
    the new class at once. A rebase is an operator's decision (the topology controller rolls
    whatever the new class renders differently), so it needs ``--rebase-class``. Returns
    the new class's name when this install rebases, else None. ``command`` names the command
    in the message (``gitops`` checks the cluster releases it wrote before the same way).
    """

    def class_of(section: Any) -> str | None:
        if not isinstance(section, Mapping) or section.get("template") != TOPOLOGY_TEMPLATE:
            return None
        name = section.get("className")
        return name if isinstance(name, str) and name else None

    installed, wanted = class_of(installed_values.get("cluster")), class_of(values.get("cluster"))
    if installed is None or wanted is None or installed == wanted:
        return None
    if rebase:
        return wanted
    raise InputError(
        f"refusing to move {release} from ClusterClass {installed!r} to {wanted!r} (this "
        "scs-templates release ships the new class): pass --rebase-class to rebase it (the "
        f"topology controller rolls what the new class changes), or run {command} with the "
        f"scs-templates release of {installed!r}"
    )


def check_version_change(installed: KubernetesVersion | None, wanted: KubernetesVersion) -> None:
    """Refuse to skip a minor version or to go back; InputError (exit 2) with the way out.

    Kubernetes (and kubeadm) upgrade one minor version at a time, and a control plane
    cannot be downgraded; Cluster API would start a rollout that can never succeed.
    """
    if installed is None:
        return
    if wanted < installed:
        raise InputError(
            f"refusing to downgrade Kubernetes from {installed} to {wanted}: the installed "
            "cluster cannot go back; set spec.kubernetes.version to "
            f"{installed.major}.{installed.minor}.x or newer"
        )
    if wanted.minor_key > (installed.major, installed.minor + 1):
        step = f"{installed.major}.{installed.minor + 1}.x"
        raise InputError(
            f"refusing to upgrade Kubernetes from {installed} to {wanted}: minor versions "
            f"cannot be skipped; upgrade to {step} first, then to "
            f"{wanted.major}.{wanted.minor}.x"
        )


def check_api_port_change(installed_values: Mapping[str, Any], values: Mapping[str, Any]) -> None:
    """Refuse to move the API server port of an installed cluster (InputError, exit 2).

    The port follows ``network.apiAccess`` on ``loadBalancerProvider: ovn`` (see
    :mod:`scs_templates.providers.api_access`). CAPO's webhook refuses a change of
    ``OpenStackCluster.spec.apiServerPort`` and the control-plane endpoint is immutable, so
    helm would fail half-way; say so before anything is touched. Releases from before the
    field existed listen on 6443.
    """

    def port(source: Mapping[str, Any]) -> int:
        network = source.get("network")
        found = network.get("apiServerPort") if isinstance(network, Mapping) else None
        return int(found) if isinstance(found, int) else DEFAULT_API_PORT

    before, after = port(installed_values), port(values)
    if before != after:
        raise InputError(
            f"spec.network.apiAccess: this change moves the API server port from {before} to "
            f"{after} (on loadBalancerProvider ovn a restricted API listens on another port "
            "than 6443), but the API endpoint of an existing cluster cannot change (CAPO "
            "refuses a new OpenStackCluster.spec.apiServerPort); for this cluster keep "
            "apiAccess.mode open, or restricted (internal/cidrs), as installed, and the "
            "loadBalancerProvider, or create a new cluster"
        )
