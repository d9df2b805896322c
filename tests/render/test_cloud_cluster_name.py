"""The cluster's name for the OpenStack cloud integrations (issue #40, defect 5).

OCCM names its load balancers ``kube_service_<cluster-name>_<namespace>_<service>`` and Cinder
CSI tags its volumes with ``--cluster``; delete's leftover search looks for both. Two clusters
of one name in two namespaces of one OpenStack project must not share that name, and an
installed cluster must keep the name its load balancers and volumes already carry.
"""

from __future__ import annotations

from typing import Any

import pytest

from scs_templates._core.errors import InputError
from scs_templates._render.values import build_values
from scs_templates._settings.model import ClusterSettings
from scs_templates.providers.openstack.leftovers import occm_load_balancer_prefix
from scs_templates.providers.openstack.services import cinder_csi_values, occm_values
from scs_templates.providers.openstack.values import (
    cloud_cluster_name,
    with_recorded_cloud_cluster_name,
)
from tests.support import settings_of

SPEC: dict[str, Any] = {
    "controlPlane": {"replicas": 1, "machineType": "SCS-2V-4"},
    "workers": [{"name": "workers", "machineType": "SCS-2V-4"}],
}


def demo(namespace: str, **openstack: Any) -> ClusterSettings:
    return settings_of({**SPEC, "openstack": openstack}, "demo", namespace)


def integration_names(settings: ClusterSettings) -> tuple[str, str, str]:
    """OCCM's ``cluster.name``, Cinder CSI's ``clusterID``, delete's load balancer prefix."""
    return (
        occm_values(settings)["cluster"]["name"],
        cinder_csi_values(settings)["clusterID"],
        occm_load_balancer_prefix(settings),
    )


def test_same_named_clusters_in_two_namespaces_do_not_share_load_balancers() -> None:
    """``demo`` in ``team-a`` and in ``team-b`` of one project: OCCM, Cinder CSI and delete
    use ``<name>.<namespace>``, so neither's delete finds the other's load balancers."""
    a, b = demo("team-a"), demo("team-b")
    assert integration_names(a) == ("demo.team-a", "demo.team-a", "kube_service_demo.team-a_")
    assert integration_names(b) == ("demo.team-b", "demo.team-b", "kube_service_demo.team-b_")
    lb_of_b = "kube_service_demo.team-b_shop_web"
    assert not lb_of_b.startswith(occm_load_balancer_prefix(a))
    # the release records the name it was made with
    assert build_values(a)["openstack"]["cloudClusterName"] == "demo.team-a"


def test_an_installed_cluster_keeps_its_cloud_cluster_name() -> None:
    """Upgrade and delete read the name back from the installed release's values: a release
    from before the record existed keeps the bare cluster name (its load balancers are
    ``kube_service_demo_...``), a recorded one stays, whatever the default is now."""
    settings = demo("team-a")
    legacy = with_recorded_cloud_cluster_name(settings, {"openstack": {"cloud": "openstack"}})
    assert integration_names(legacy) == ("demo", "demo", "kube_service_demo_")
    assert build_values(legacy)["openstack"]["cloudClusterName"] == "demo"  # recorded now
    recorded = {"openstack": {"cloudClusterName": "demo"}}
    assert cloud_cluster_name(with_recorded_cloud_cluster_name(settings, recorded)) == "demo"
    new = build_values(settings)
    assert cloud_cluster_name(with_recorded_cloud_cluster_name(settings, new)) == "demo.team-a"
    explicit = demo("team-a", cloudClusterName="demo")
    assert with_recorded_cloud_cluster_name(explicit, recorded) is explicit


def test_a_changed_cloud_cluster_name_is_refused() -> None:
    """Renaming would orphan the load balancers and volumes: one line naming the field."""
    renamed = demo("team-a", cloudClusterName="shop")
    with pytest.raises(InputError, match=r"^spec\.openstack\.cloudClusterName: 'shop' differs"):
        with_recorded_cloud_cluster_name(renamed, {"openstack": {"cloudClusterName": "demo"}})
    with pytest.raises(InputError, match="'demo', the name the installed cluster"):
        with_recorded_cloud_cluster_name(renamed, {"openstack": {}})
