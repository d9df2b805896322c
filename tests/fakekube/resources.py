"""The kinds the FAKE Kubernetes API serves (a test double: nothing here is a real cluster).

Each :class:`ResourceType` is what discovery reports for one kind and what the fake's storage
is keyed by. The list covers the core kinds helm touches and the Cluster API / CAPO / CAPD
kinds the scs-templates charts render; CRDs created through the fake register more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    """One kind as served by the fake: group/version, plural name, scope and verbs."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    has_status: bool = False
    verbs: tuple[str, ...] = ALL_VERBS
    short_names: tuple[str, ...] = field(default=())

    @property
    def group_version(self) -> str:
        """``v1`` for the core group (never ``/v1``), else ``GROUP/VERSION``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    def discovery_entries(self) -> list[dict[str, object]]:
        """The APIResource entries of an APIResourceList (plus the status subresource)."""
        main: dict[str, object] = {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            main["shortNames"] = list(self.short_names)
        entries = [main]
        if self.has_status:
            entries.append(
                {
                    "name": f"{self.plural}/status",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": self.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        return entries


CAPI = "cluster.x-k8s.io"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io"
CONTROLPLANE = "controlplane.cluster.x-k8s.io"
INFRA = "infrastructure.cluster.x-k8s.io"


def default_resources() -> list[ResourceType]:
    """Core kinds helm needs plus the CAPI/CAPO/CAPD kinds the charts render."""
    core = [
        ResourceType("", "v1", "Namespace", "namespaces", namespaced=False, has_status=True),
        ResourceType("", "v1", "Secret", "secrets"),
        ResourceType("", "v1", "ConfigMap", "configmaps", short_names=("cm",)),
        ResourceType("", "v1", "Event", "events", short_names=("ev",)),
        ResourceType("", "v1", "ServiceAccount", "serviceaccounts", short_names=("sa",)),
        ResourceType("", "v1", "Service", "services", has_status=True, short_names=("svc",)),
        ResourceType("", "v1", "Pod", "pods", has_status=True, short_names=("po",)),
    ]
    others = [
        ResourceType("apps", "v1", "Deployment", "deployments", has_status=True),
        ResourceType("batch", "v1", "Job", "jobs", has_status=True),
        ResourceType(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            namespaced=False,
            has_status=True,
            short_names=("crd",),
        ),
        ResourceType(CAPI, "v1beta2", "Cluster", "clusters", has_status=True),
        ResourceType(CAPI, "v1beta2", "MachineDeployment", "machinedeployments", has_status=True),
        ResourceType(CAPI, "v1beta2", "MachineHealthCheck", "machinehealthchecks", has_status=True),
        ResourceType(CAPI, "v1beta2", "Machine", "machines", has_status=True),
        ResourceType(CAPI, "v1beta2", "MachineSet", "machinesets", has_status=True),
        ResourceType(BOOTSTRAP, "v1beta2", "KubeadmConfigTemplate", "kubeadmconfigtemplates"),
        ResourceType(BOOTSTRAP, "v1beta2", "KubeadmConfig", "kubeadmconfigs", has_status=True),
        ResourceType(
            CONTROLPLANE, "v1beta2", "KubeadmControlPlane", "kubeadmcontrolplanes", has_status=True
        ),
        ResourceType(INFRA, "v1beta1", "OpenStackCluster", "openstackclusters", has_status=True),
        ResourceType(INFRA, "v1beta1", "OpenStackMachineTemplate", "openstackmachinetemplates"),
        ResourceType(INFRA, "v1beta2", "DockerCluster", "dockerclusters", has_status=True),
        ResourceType(INFRA, "v1beta2", "DockerMachineTemplate", "dockermachinetemplates"),
        # the clusterclass template's class and templates
        ResourceType(CAPI, "v1beta2", "ClusterClass", "clusterclasses", has_status=True),
        ResourceType(
            CONTROLPLANE, "v1beta2", "KubeadmControlPlaneTemplate", "kubeadmcontrolplanetemplates"
        ),
        ResourceType(INFRA, "v1beta1", "OpenStackClusterTemplate", "openstackclustertemplates"),
        ResourceType(INFRA, "v1beta2", "DockerClusterTemplate", "dockerclustertemplates"),
    ]
    return core + others
