"""The values every cluster chart takes (the common part of the contract), as typed models.

The values builders (:mod:`scs_templates._render.values`) return :data:`ClusterValues`; the
provider's keys of ``controlPlane``, ``workers[]`` and ``network`` and its own top-level
sections are its part (:attr:`scs_templates.providers.interface.Provider.values_model`). Each
chart's ``values.schema.json`` is generated from both (:mod:`scs_templates._render.values.schema`);
see :mod:`scs_templates._contract.contract` for how a type says what.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from scs_templates._contract.contract import OPEN, Also, Definition, S
from scs_templates._settings import model as settings_model
from scs_templates._settings.model import (
    ControlPlaneMaxSurge,
    ControlPlaneReplicas,
    TaintEffect,
    TemplateName,
)

#: The AuthenticationConfiguration's API versions (v1 from Kubernetes 1.34).
AuthenticationApiVersion = Literal["apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1"]


class ScaleFromZero(TypedDict):
    labels: str
    taints: str


class AutoscalingSpec(TypedDict):
    """Cluster-autoscaler bounds of a worker group."""

    min: Annotated[int, S(minimum=0)]
    max: Annotated[int, S(minimum=1)]
    scaleFromZero: NotRequired[ScaleFromZero]


class Taint(TypedDict):
    key: Annotated[str, S(minLength=1)]
    value: str
    effect: TaintEffect


class BackupUpload(TypedDict):
    """Schema: The S3 bucket the snapshots go to; the credentials only as the Secret's name."""

    endpoint: Annotated[str, S(pattern=settings_model.S3_ENDPOINT)]
    bucket: Annotated[str, S(pattern=settings_model.S3_BUCKET)]
    region: Annotated[str, S(pattern=settings_model.S3_REGION)]
    prefix: Annotated[str, S(pattern=settings_model.S3_PREFIX)]
    retention: Annotated[int, S(minimum=0)]
    credentialsSecret: DnsLabel


class Defrag(TypedDict):
    enabled: bool
    schedule: Annotated[str, S(pattern="^[\\w*,./:~ -]+$")]
    backupRetention: Annotated[int, S(minimum=0)]
    backupDirectory: Annotated[str, S(pattern="^(/[A-Za-z0-9._-]+)+$")]
    upload: NotRequired[BackupUpload]


class EtcdSpec(TypedDict):
    """etcd's tuning and the defrag job."""

    heartbeatInterval: Annotated[int, S(minimum=1)]
    electionTimeout: Annotated[int, S(minimum=1)]
    autoCompactionRetention: Annotated[str, S(minLength=1)]
    snapshotCount: Annotated[int, S(minimum=1)]
    quotaBackendBytes: Annotated[int, S(minimum=1)]
    unsafeFS: bool
    defrag: Defrag
    dataDiskGiB: Annotated[
        int,
        S(
            minimum=0,
            description=(
                "Size of the control plane's etcd volume: the node finds the empty disk of "
                "this size (any bus), formats and mounts it; 0 without one"
            ),
        ),
    ]


class Policy(TypedDict):
    apiVersion: Literal["audit.k8s.io/v1"]
    kind: Literal["Policy"]
    rules: Annotated[list[Any], S(minItems=1)]


class Audit(TypedDict):
    enabled: bool
    maxAgeDays: NotRequired[Annotated[int, S(minimum=1)]]
    maxBackups: NotRequired[Annotated[int, S(minimum=1)]]
    maxSizeMB: NotRequired[Annotated[int, S(minimum=1)]]
    policy: NotRequired[Annotated[Policy, OPEN]]


class Authentication(TypedDict):
    """Schema: An AuthenticationConfiguration document, or {} for none."""

    apiVersion: NotRequired[AuthenticationApiVersion]
    kind: NotRequired[Literal["AuthenticationConfiguration"]]
    jwt: NotRequired[Annotated[list[Any], S(minItems=1)]]


class Encryption(TypedDict):
    """Schema: Only the name of the Secret with the EncryptionConfiguration: keys never
    enter helm.
    """

    enabled: bool
    secretName: NotRequired[DnsLabel]
    secretKey: NotRequired[Annotated[str, S(pattern="^[-._a-zA-Z0-9]+$")]]


class ApiServerSpec(TypedDict):
    """kube-apiserver flags and its audit, authentication and encryption files."""

    maxRequestsInflight: Annotated[int, S(minimum=1)]
    maxMutatingRequestsInflight: Annotated[int, S(minimum=1)]
    minRequestTimeout: Annotated[int, S(minimum=1)]
    certSANs: list[Annotated[str, S(minLength=1)]]
    audit: Annotated[
        Audit,
        S(
            {
                "if": {"properties": {"enabled": {"const": True}}},
                "then": {"required": ["maxAgeDays", "maxBackups", "maxSizeMB", "policy"]},
            }
        ),
    ]
    authentication: Annotated[
        Authentication,
        OPEN,
        S({"if": {"minProperties": 1}, "then": {"required": ["apiVersion", "kind", "jwt"]}}),
    ]
    encryption: Annotated[
        Encryption,
        S(
            {
                "if": {"properties": {"enabled": {"const": True}}},
                "then": {"required": ["secretName", "secretKey"]},
            }
        ),
    ]


class PodSecurity(TypedDict):
    enforce: PodSecurityLevel
    warn: PodSecurityLevel
    audit: PodSecurityLevel
    exemptNamespaces: list[DnsLabel]


class EventRateLimit(TypedDict):
    qps: Annotated[int, S(minimum=1)]
    burst: Annotated[int, S(minimum=1)]


class AdmissionSpec(TypedDict):
    """The admission plug-ins' configuration (Pod Security, EventRateLimit)."""

    podSecurity: PodSecurity
    eventRateLimit: EventRateLimit


class KubeletSpec(TypedDict):
    """The kubelet's flags on every node."""

    extraArgs: StringMap
    nodeName: Annotated[
        str,
        S(
            description=(
                "kubeadm nodeRegistration.name (a cloud-init template such as CAPO's "
                "'{{ local_hostname }}'); empty: kubeadm's default"
            )
        ),
    ]


class MirrorHost(TypedDict):
    url: Annotated[str, S(pattern="^https?://\\S+$")]
    skipVerify: bool
    overridePath: bool


class RegistryMirror(TypedDict):
    """containerd's mirrors of one registry."""

    registry: Annotated[str, S(minLength=1, pattern="^[^/\\s]+$")]
    server: Annotated[str, S(pattern="^(https?://.*)?$")]  # "" for _default: no server
    hosts: Annotated[list[MirrorHost], S(minItems=1)]
    caCertificate: str
    credentialsSecret: Annotated[str, S(pattern="^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$")]


class DeletionSpec(TypedDict):
    """How long Cluster API waits when it deletes a machine."""

    nodeDrainTimeoutSeconds: NotRequired[Annotated[int, S(minimum=0, maximum=2147483647)]]
    nodeVolumeDetachTimeoutSeconds: NotRequired[Annotated[int, S(minimum=0, maximum=2147483647)]]
    nodeDeletionTimeoutSeconds: NotRequired[Annotated[int, S(minimum=0, maximum=2147483647)]]


class HealthCheckSpec(TypedDict):
    """A MachineHealthCheck."""

    nodeStartupTimeoutSeconds: Annotated[int, S(minimum=0, maximum=2147483647)]
    unhealthyTimeoutSeconds: Annotated[int, S(minimum=0, maximum=2147483647)]
    maxUnhealthyPercent: NotRequired[Annotated[int, S(minimum=0, maximum=100)]]


class ClusterClass(TypedDict):
    """Schema: Only in the release of a ClusterClass (no cluster): the class and its templates,
    shared by the topology clusters of the namespace
    """

    name: DnsLabel
    namespace: DnsLabel


class Cluster(TypedDict):
    """Who the cluster is: names the chart writes into every object."""

    name: DnsLabel
    namespace: DnsLabel
    template: TemplateName
    infraName: DnsLabel
    className: DnsLabel
    classObjects: NotRequired[
        Annotated[
            bool,
            S(
                description=(
                    "clusterclass: render the ClusterClass and its templates with the cluster "
                    "(render); false in the cluster's release, the class has a release of its own"
                )
            ),
        ]
    ]


class Kubernetes(TypedDict):
    """The Kubernetes version, resolved once per render."""

    version: Annotated[str, S(pattern="^v\\d+\\.\\d+\\.\\d+$")]


class Network(TypedDict):
    """The cluster network; a provider adds its node network keys."""

    podCIDRs: Annotated[Any, S({"$ref": "#/definitions/cidrList", "minItems": 1})]
    serviceCIDRs: Annotated[Any, S({"$ref": "#/definitions/cidrList", "minItems": 1})]
    serviceDomain: Annotated[str, S(minLength=1)]
    apiServerPort: Annotated[
        int,
        S(
            minimum=1,
            maximum=65535,
            description=(
                "port of the API server on the nodes and of the API load balancer's listener"
            ),
        ),
    ]


class ControlPlaneRollout(TypedDict):
    maxSurge: ControlPlaneMaxSurge
    deletion: Deletion


class ControlPlane(TypedDict):
    """The KubeadmControlPlane; a provider adds its machine keys."""

    name: DnsLabel
    templateBase: TemplateBase
    replicas: ControlPlaneReplicas
    image: Annotated[str, S(minLength=1)]
    remediationMaxRetry: Annotated[int, S(minimum=0)]
    certificateExpiryDays: Annotated[int, S(minimum=7)]
    rollout: ControlPlaneRollout
    healthCheck: HealthCheck


class WorkerRollout(TypedDict):
    maxSurge: Annotated[int, S(minimum=0)]
    maxUnavailable: Annotated[int, S(minimum=0)]
    deletion: Deletion


class Worker(TypedDict):
    """One worker group (a MachineDeployment); a provider adds its machine keys."""

    name: DnsLabel
    deploymentName: DnsLabel
    templateBase: TemplateBase
    replicas: NotRequired[Annotated[int, S(minimum=0)]]
    autoscaling: NotRequired[Autoscaling]
    image: Annotated[str, S(minLength=1)]
    nodeLabels: StringMap
    machineLabels: StringMap
    taints: Taints
    rollout: WorkerRollout
    healthCheck: Annotated[HealthCheck, Also({"required": ["maxUnhealthyPercent"]})]


class Proxy(TypedDict):
    """The HTTP(S) proxy of the nodes, or {} for none."""

    httpProxy: NotRequired[str]
    httpsProxy: NotRequired[str]
    noProxy: NotRequired[list[Annotated[str, S(minLength=1, pattern='^[^,\\s"]+$')]]]


DnsLabel = Annotated[
    str, S(maxLength=63, pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"), Definition("dnsLabel")
]
TemplateBase = Annotated[
    str, S(maxLength=54, pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"), Definition("templateBase")
]
Cidr = Annotated[str, S(pattern="^[0-9a-fA-F:.]+/\\d{1,3}$"), Definition("cidr")]
CidrList = Annotated[list[Cidr], Definition("cidrList")]
StringMap = Annotated[dict[str, str], Definition("stringMap")]
Autoscaling = Annotated[AutoscalingSpec, Definition("autoscaling")]
Taints = Annotated[list[Taint], Definition("taints")]
Etcd = Annotated[EtcdSpec, Definition("etcd")]
ApiServer = Annotated[ApiServerSpec, Definition("apiServer")]
Admission = Annotated[AdmissionSpec, Definition("admission")]
PodSecurityLevel = Annotated[settings_model.PodSecurityLevel, Definition("podSecurityLevel")]
Kubelet = Annotated[KubeletSpec, Definition("kubelet")]
RegistryMirrors = Annotated[list[RegistryMirror], Definition("registryMirrors")]
Deletion = Annotated[DeletionSpec, Definition("deletion")]
HealthCheck = Annotated[HealthCheckSpec, Definition("healthCheck")]


#: The shared definitions, in the order the schemas list them (also those only a
#: provider's part uses, such as ``cidr``: every chart's schema has them all).
DEFINITIONS = (
    DnsLabel,
    TemplateBase,
    Cidr,
    CidrList,
    StringMap,
    Autoscaling,
    Taints,
    Etcd,
    ApiServer,
    Admission,
    PodSecurityLevel,
    Kubelet,
    RegistryMirrors,
    Deletion,
    HealthCheck,
)

ClusterValues = TypedDict(
    "ClusterValues",
    {
        "global": NotRequired[dict[str, Any]],
        "scs-cluster-common": NotRequired[dict[str, Any]],
        "clusterClass": NotRequired[ClusterClass],
        "cluster": Cluster,
        "labels": StringMap,
        "kubernetes": Kubernetes,
        "network": Network,
        "controlPlane": ControlPlane,
        "workers": Annotated[
            list[
                Annotated[
                    Worker,
                    S(oneOf=[{"required": ["replicas"]}, {"required": ["autoscaling"]}]),
                ]
            ],
            S(minItems=1),
        ],
        "etcd": Etcd,
        "apiServer": ApiServer,
        "admission": Admission,
        "kubelet": Kubelet,
        "registryMirrors": RegistryMirrors,
        "proxy": Annotated[
            Proxy,
            S(
                {
                    "if": {"minProperties": 1},
                    "then": {"required": ["httpProxy", "httpsProxy", "noProxy"]},
                }
            ),
        ],
        "trustedCAs": list[Annotated[str, S(pattern="-----BEGIN CERTIFICATE-----")]],
    },
)
