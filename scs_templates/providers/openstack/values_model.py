"""The OpenStack chart's own values, as typed models: its part of the values contract.

Its keys of ``controlPlane`` (:class:`OpenStackControlPlaneKeys`), of every ``workers[]``
entry (:class:`OpenStackWorkerKeys`) and of ``network`` (:class:`OpenStackNetworkKeys`),
and its top-level section ``openstack`` (:class:`OpenStackSections`). The builders of
:mod:`.values` return them; ``openstack-cluster/values.schema.json`` is generated from them
and the common part (:mod:`scs_templates._contract.model`).
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

from scs_templates._contract.contract import Definition, S, ValuesModel
from scs_templates._contract.model import Cidr, CidrList, DnsLabel
from scs_templates.providers.openstack.settings import (
    EtherType,
    LoadBalancerProvider,
    RuleDirection,
)


class KeyValue(TypedDict):
    key: Annotated[str, S(minLength=1, maxLength=255)]
    value: Annotated[str, S(maxLength=255)]


class NameFilter(TypedDict):
    name: Annotated[str, S(minLength=1)]


class OpenStackRefSpec(TypedDict):
    id: NotRequired[str]
    filter: NotRequired[NameFilter]


class EtcdVolume(TypedDict):
    sizeGiB: NotRequired[Annotated[int, S(minimum=1)]]
    type: NotRequired[str]


class OpenStackControlPlaneKeys(TypedDict):
    """The control plane's machines: flavor, zones, root and etcd volumes, server group."""

    machineType: Annotated[str, S(minLength=1)]
    zones: list[Annotated[str, S(minLength=1)]]
    rootDiskGB: Annotated[int, S(minimum=0)]
    serverGroup: str
    rootDiskType: str
    extraNetworks: list[OpenStackRef]
    etcdVolume: EtcdVolume


class OpenStackWorkerKeys(TypedDict):
    """One worker group's machines: flavor, zone, root volume, server group."""

    machineType: Annotated[str, S(minLength=1)]
    zone: str
    rootDiskGB: Annotated[int, S(minimum=0)]
    serverGroup: str
    rootDiskType: str
    extraNetworks: list[OpenStackRef]


class OpenStackNetworkKeys(TypedDict):
    """The node network CAPO creates and who may reach the API."""

    nodeCIDR: Cidr
    dnsServers: list[Annotated[str, S(minLength=1)]]
    mtu: Annotated[int, S(minimum=0, maximum=9000)]
    apiAllowedCIDRs: CidrList


class SecurityGroupRule(TypedDict):
    name: Annotated[str, S(minLength=1)]
    description: str
    direction: RuleDirection
    etherType: EtherType
    protocol: str
    portRangeMin: Annotated[int, S(minimum=1, maximum=65535)]
    portRangeMax: Annotated[int, S(minimum=1, maximum=65535)]
    remoteIPPrefix: Cidr


class ServerMetadata(TypedDict):
    controlPlane: KeyValues
    workers: KeyValues


class CredentialsRef(TypedDict):
    """Schema: the credentials Secret (clouds.yaml for CAPO's identityRef), written by
    scs-templates through the Kubernetes API or by the user; never a credential here
    """

    secretName: DnsLabel


class ExistingNetwork(TypedDict):
    network: NotRequired[OpenStackRef]
    subnets: NotRequired[list[OpenStackRef]]


class OpenStackSection(TypedDict):
    """``openstack``: the cloud, its load balancer and network, and the credentials' Secret
    (by name: credentials are never values)."""

    cloud: Annotated[str, S(minLength=1)]
    externalNetworkID: str
    sshKeyName: str
    loadBalancerProvider: LoadBalancerProvider
    apiSecurityGroupRules: Annotated[
        list[SecurityGroupRule],
        S(
            description=(
                "CAPO controlPlaneNodesSecurityGroupRules that restrict the API port "
                "(loadBalancerProvider ovn with a restricted apiAccess); empty otherwise"
            )
        ),
    ]
    serverMetadata: ServerMetadata
    credentials: CredentialsRef
    existingNetwork: ExistingNetwork
    apiFloatingIP: bool
    nodeSecurityGroupRules: list[
        Annotated[dict[str, Any], S(required=["name", "direction", "etherType"])]
    ]
    cloudClusterName: Annotated[
        str,
        S(
            minLength=1,
            description=(
                "The cluster's name for OCCM and Cinder CSI (their load balancers and "
                "volumes carry it): recorded in the release, read back on upgrade and delete"
            ),
        ),
    ]


class OpenStackSections(TypedDict):
    """The OpenStack chart's own top-level sections."""

    openstack: OpenStackSection


KeyValues = Annotated[list[KeyValue], Definition("keyValues")]
OpenStackRef = Annotated[
    OpenStackRefSpec, S(minProperties=1, maxProperties=1), Definition("openstackRef")
]


#: The OpenStack part of the contract
#: (:attr:`scs_templates.providers.interface.Provider.values_model`).
VALUES_MODEL = ValuesModel(
    control_plane=OpenStackControlPlaneKeys,
    worker=OpenStackWorkerKeys,
    network=OpenStackNetworkKeys,
    sections=OpenStackSections,
)
