"""Install, inspect, diff and delete a cluster on the management cluster.

The CLI commands ``install``, ``status``, ``diff`` and ``delete`` are thin layers over the
functions here (they parse, call these and print); see ``docs/install.md`` for the user's
view. One module per step (``install_step``, ``status_step``, ``diff_step``,
``delete_step``, and ``class_step`` for the release of a topology cluster's ClusterClass),
the version guard (``version_guard``), the one poll loop (``wait``) and where a cluster
lives (``target``).

* :func:`install` lets the settings' provider prepare the cloud (OpenStack: preflight,
  application credential, server groups), then runs ``helm upgrade --install`` (namespace
  created, rolled back on failure) after the Kubernetes version guard: a release may move
  to the same or the next minor version only, never skip one and never go back. With
  ``wait`` it follows the Cluster's v1beta2 conditions until ``Available`` is True.
* :func:`status` reports the release and the Cluster's phase and conditions.
* :func:`diff` compares the rendered manifests with the installed release's manifest, object
  by object (keyed by kind/namespace/name), without the helm-diff plugin. Secret values are
  never compared or shown.
* :func:`delete` removes the Cluster object FIRST and waits until Cluster API has torn the
  infrastructure down (the object is gone); only then does it uninstall the release,
  remove what helm keeps (templates with ``helm.sh/resource-policy: keep``) and the
  credentials Secret, and let the provider release its cloud resources. The templates and
  the credentials are needed by the controllers while they delete machines: removing them
  earlier could strand machines in the cloud.
"""

from __future__ import annotations

from scs_templates._core.progress import Progress
from scs_templates._lifecycle.class_step import (
    CLASS_LABEL,
    class_users,
    install_class,
    remove_class_if_unused,
)
from scs_templates._lifecycle.delete_step import (
    KEPT_KINDS,
    DeleteIncomplete,
    DeleteResult,
    delete,
)
from scs_templates._lifecycle.diff_step import DiffResult, ObjectChange, diff
from scs_templates._lifecycle.install_step import (
    InstallResult,
    check_node_credentials,
    ensure_release_secrets,
    install,
)
from scs_templates._lifecycle.prune_step import prune_superseded_templates
from scs_templates._lifecycle.status_step import StatusResult, status
from scs_templates._lifecycle.target import CLUSTER_LABEL, KEEP_ANNOTATION, Target, target_of
from scs_templates._lifecycle.version_guard import (
    TOPOLOGY_TEMPLATE,
    check_api_port_change,
    check_class_change,
    check_template_change,
    check_version_change,
    installed_kubernetes_version,
)
from scs_templates._tools.kube.wait import (
    DEFAULT_POLL_INTERVAL,
    DEFAULT_WAIT_TIMEOUT,
    wait_for_cluster,
)
from scs_templates.providers.credentials import store_credentials

__all__ = [
    "CLASS_LABEL",
    "CLUSTER_LABEL",
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_WAIT_TIMEOUT",
    "KEEP_ANNOTATION",
    "KEPT_KINDS",
    "TOPOLOGY_TEMPLATE",
    "DeleteIncomplete",
    "DeleteResult",
    "DiffResult",
    "InstallResult",
    "ObjectChange",
    "Progress",
    "StatusResult",
    "Target",
    "check_api_port_change",
    "check_class_change",
    "check_node_credentials",
    "check_template_change",
    "check_version_change",
    "class_users",
    "delete",
    "diff",
    "ensure_release_secrets",
    "install",
    "install_class",
    "installed_kubernetes_version",
    "prune_superseded_templates",
    "remove_class_if_unused",
    "status",
    "store_credentials",
    "target_of",
    "wait_for_cluster",
]
