"""Values builders: pure functions settings -> helm values of the cluster charts.

Contract used by the render engine:
    build_values(settings: ClusterSettings) -> dict[str, Any]
        # JSON-serialisable, deterministic key order; never holds a credential

Credentials are not values: the OpenStack chart only REFERENCES the credentials Secret
(:func:`credentials_secret_name`), which the library writes through the Kubernetes API
(:func:`scs_templates.lifecycle.install`), so no helm release revision holds them.

Division of labour: Python DECIDES (names, the resolved Kubernetes version, image names,
CIDR lists, flags, which node label goes where), the charts only ARRANGE those decisions
into Cluster API objects. A chart never re-derives a name or a version, so the rules live in
one tested place and the charts stay dumb. The one thing the charts compute themselves is
the spec hash in immutable template names: it must follow the rendered spec, including
changes that come from the chart rather than from the settings.

Top-level keys (each chart's ``values.schema.json`` is the exact contract):
``cluster``, ``labels``, ``kubernetes``, ``network``, ``controlPlane``, ``workers``,
``etcd``, ``apiServer``, ``admission``, ``kubelet``, ``registryMirrors`` and the provider's
own sections (``openstack`` for provider ``openstack``). What differs between providers is
decided by the provider (:mod:`scs_templates.providers`), never by comparing names here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from scs_templates import encryption
from scs_templates.settings import naming
from scs_templates.settings.rules import CAPI_SYNCED_LABEL_DOMAINS
from scs_templates.settings.versions import resolve_version
from scs_templates.values.api_access import api_access_plan

if TYPE_CHECKING:  # built from model instances or the plain objects of the CLI's happy path
    from scs_templates.providers import Provider
    from scs_templates.settings.model import (
        ClusterSettings,
        HealthCheck,
        MachineDeletion,
        RegistryMirror,
        WorkerGroup,
    )

__all__ = [
    "CLUSTERCTL_MOVE_LABEL",
    "CLUSTER_LABEL",
    "build_values",
    "cluster_class_name",
]

#: Label that ``clusterctl move`` follows to move a Secret along with its cluster.
CLUSTERCTL_MOVE_LABEL = "clusterctl.cluster.x-k8s.io/move"
#: Cluster label of every object of a cluster (charts and the credentials Secret).
CLUSTER_LABEL = "scs.community/cluster"

#: Template base names leave room for "-" + 8 hex characters of the spec hash.
TEMPLATE_BASE_LIMIT = naming.MAX_NAME - naming.TEMPLATE_HASH_SUFFIX

# etcd timing for cloud disks and networks (KaaS v1 ETCD_PRIO_BOOST, now always on).
ETCD_HEARTBEAT_MS = 250
ETCD_ELECTION_TIMEOUT_MS = 2500

# Upstream endpoints of registries whose API host differs from their name.
_REGISTRY_SERVERS = {"docker.io": "https://registry-1.docker.io"}

# Node labels the kubelet may not set itself (NodeRestriction, kubelet --node-labels refuses
# them) but Cluster API copies from the Machine to the Node: they go on the Machine
# (the domains: settings.rules.CAPI_SYNCED_LABEL_DOMAINS, which the rules allow).
_CAPI_SYNCED_LABEL_SUFFIXES = (".node-restriction.kubernetes.io", ".node.cluster.x-k8s.io")


def build_values(settings: ClusterSettings) -> dict[str, Any]:
    """Turn validated settings into the values of the provider's cluster chart.

    Pure and deterministic: the same settings give an equal dict with the same key order
    (maps sorted by key, lists in the user's order), which keeps ``helm template`` output
    byte-stable. Never a credential: the chart references the credentials Secret by name.

    Raises ValueError when the Kubernetes version does not resolve (settings validation
    reports that earlier, with the field's position).
    """
    from scs_templates.catalogue import provider_of

    spec = settings.spec
    provider = provider_of(settings)
    resolved = resolve_version(spec.kubernetes.version, provider.name)
    version = str(resolved.version)
    prefix, cluster = spec.prefix, settings.name

    def name(resource: str = "") -> str:
        return naming.resource_name(prefix, cluster, resource)

    def template_base(resource: str) -> str:
        return naming.fit(name(resource), TEMPLATE_BASE_LIMIT)

    def image(override: str | None) -> str:
        return provider.node_image(settings, resolved, override)

    cp = spec.control_plane
    control_plane: dict[str, Any] = {
        "name": name(naming.CONTROL_PLANE),
        "templateBase": template_base(naming.CONTROL_PLANE),
        "healthCheckName": name(naming.CONTROL_PLANE),
        "replicas": cp.replicas,
        "image": image(cp.image),
        "remediationMaxRetry": cp.remediation_max_retry,
        "certificateExpiryDays": spec.security.certificate_rollout_days,
        "rollout": {"maxSurge": cp.rollout.max_surge, "deletion": _deletion(cp.rollout.deletion)},
        "healthCheck": _health_check(cp.health_check),
        **provider.control_plane_values(settings),
    }

    workers = [
        _worker(group, name, template_base, image, settings, provider) for group in spec.workers
    ]

    values: dict[str, Any] = {
        "cluster": {
            "name": cluster,
            "namespace": settings.metadata.namespace,
            "prefix": prefix,
            "template": spec.template,
            "provider": provider.name,
            "infraName": name(),
            "className": cluster_class_name(provider.name),
        },
        "labels": {CLUSTER_LABEL: cluster, "app.kubernetes.io/managed-by": "Helm"},
        "kubernetes": {"version": version},
        "network": _network(settings),
        "controlPlane": control_plane,
        "workers": workers,
        "etcd": _etcd(settings, provider),
        "apiServer": _api_server(settings, provider),
        "admission": _admission(settings),
        "kubelet": {
            "extraArgs": provider.kubelet_extra_args(settings),
            "nodeName": provider.kubelet_node_name(settings),
        },
        "registryMirrors": [_mirror(m) for m in spec.registry_mirrors],
        "proxy": _proxy(settings),
        "trustedCAs": list(spec.security.trusted_cas),
        **provider.values(settings),
    }
    result: dict[str, Any] = _sorted(values)
    return result


def _worker(
    group: WorkerGroup,
    name: Callable[[str], str],
    template_base: Callable[[str], str],
    image: Callable[[str | None], str],
    settings: ClusterSettings,
    provider: Provider,
) -> dict[str, Any]:
    """One worker group: names, size, machine and node settings."""
    node_labels: dict[str, str] = {}
    machine_labels: dict[str, str] = {}
    for key, value in group.labels.items():
        (machine_labels if _synced_by_capi(key) else node_labels)[key] = value
    worker: dict[str, Any] = {
        "name": group.name,
        "deploymentName": name(group.name),
        "templateBase": template_base(group.name),
        "healthCheckName": name(group.name),
        "image": image(group.image),
        "nodeLabels": node_labels,
        "machineLabels": machine_labels,
        "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in group.taints],
        "rollout": {
            "maxSurge": group.rollout.max_surge,
            "maxUnavailable": group.rollout.max_unavailable,
            "deletion": _deletion(group.rollout.deletion),
        },
        "healthCheck": {
            **_health_check(group.health_check),
            "maxUnhealthyPercent": group.health_check.max_unhealthy_percent,
        },
    }
    if group.autoscaling is not None:
        worker["autoscaling"] = {"min": group.autoscaling.min, "max": group.autoscaling.max}
        if group.autoscaling.min == 0:
            worker["autoscaling"]["scaleFromZero"] = _scale_from_zero(group)
    else:
        worker["replicas"] = group.effective_replicas
    worker.update(provider.worker_values(settings, group))
    return worker


def _deletion(deletion: MachineDeletion) -> dict[str, int]:
    """The Machine ``deletion`` timeouts that are set (unset ones keep Cluster API's
    defaults, so existing clusters render unchanged)."""
    timeouts = {
        "nodeDrainTimeoutSeconds": deletion.node_drain_timeout_seconds,
        "nodeVolumeDetachTimeoutSeconds": deletion.node_volume_detach_timeout_seconds,
        "nodeDeletionTimeoutSeconds": deletion.node_deletion_timeout_seconds,
    }
    return {key: value for key, value in timeouts.items() if value is not None}


def _health_check(check: HealthCheck) -> dict[str, int]:
    return {
        "nodeStartupTimeoutSeconds": check.node_startup_timeout_seconds,
        "unhealthyTimeoutSeconds": check.unhealthy_timeout_seconds,
    }


def _scale_from_zero(group: WorkerGroup) -> dict[str, str]:
    """What the cluster-autoscaler cannot learn from a group with no node yet: its node
    labels and taints (``capacity.cluster-autoscaler.kubernetes.io/labels|taints``
    annotations on the MachineDeployment). CPU, memory and disk come from the provider:
    CAPO and CAPD publish them in the machine template's ``status.capacity``."""
    labels = ",".join(f"{key}={group.labels[key]}" for key in sorted(group.labels))
    taints = ",".join(f"{t.key}={t.value}:{t.effect}" for t in group.taints)
    return {"labels": labels, "taints": taints}


def _synced_by_capi(key: str) -> bool:
    """True for node labels that must be set on the Machine (Cluster API syncs them)."""
    domain = key.split("/", 1)[0] if "/" in key else ""
    return domain in CAPI_SYNCED_LABEL_DOMAINS or domain.endswith(_CAPI_SYNCED_LABEL_SUFFIXES)


def _network(settings: ClusterSettings) -> dict[str, Any]:
    net = settings.spec.network
    plan = api_access_plan(settings)
    return {
        "podCIDRs": [net.pod_cidr],
        "serviceCIDRs": [net.service_cidr],
        "serviceDomain": net.service_domain,
        "nodeCIDR": net.node_cidr,
        "dnsServers": list(net.dns_servers),
        "mtu": net.mtu,
        "apiAllowedCIDRs": plan.load_balancer_cidrs,
        "apiServerPort": plan.port,
    }


def _etcd(settings: ClusterSettings, provider: Provider) -> dict[str, Any]:
    etcd = settings.spec.etcd
    return {
        "heartbeatInterval": ETCD_HEARTBEAT_MS,
        "electionTimeout": ETCD_ELECTION_TIMEOUT_MS,
        "autoCompactionRetention": etcd.auto_compaction_retention,
        "snapshotCount": etcd.snapshot_count,
        "quotaBackendBytes": etcd.quota_gib * 1024**3,
        # e.g. kind nodes (provider docker) are containers: their root cannot be remounted
        "unsafeFS": etcd.unsafe_fs and provider.remountable_root,
        # the device the provider attaches the etcd volume as ("" without one)
        "dataDevice": provider.etcd_volume_device if etcd.volume is not None else "",
        "defrag": {
            "enabled": etcd.defrag.enabled,
            "schedule": etcd.defrag.schedule,
            "backupRetention": etcd.backup_retention,
        },
    }


def _api_server(settings: ClusterSettings, provider: Provider) -> dict[str, Any]:
    security = settings.spec.security
    limits = security.api_rate_limits
    audit = security.audit
    return {
        "maxRequestsInflight": limits.max_requests_inflight,
        "maxMutatingRequestsInflight": limits.max_mutating_requests_inflight,
        "minRequestTimeout": limits.min_request_timeout,
        "certSANs": provider.api_cert_sans(settings),
        "audit": {
            "enabled": audit.enabled,
            "maxAgeDays": audit.max_age_days,
            "maxBackups": audit.max_backups,
            "maxSizeMB": audit.max_size_mb,
            "policy": dict(audit.policy) if audit.policy is not None else audit_policy(),
        }
        if audit.enabled
        else {"enabled": False},
        "authentication": _authentication(settings),
        # only the Secret's name: the key itself never enters helm (scs_templates.encryption)
        "encryption": {
            "enabled": True,
            "secretName": encryption.secret_name(settings),
            "secretKey": encryption.SECRET_KEY,
        }
        if security.encryption_at_rest.enabled
        else {"enabled": False},
    }


def audit_policy() -> dict[str, Any]:
    """The default audit Policy: who did what, never the bodies.

    Metadata level (user, verb, resource, response code) for every request, so request
    and response bodies (Secrets, tokens, ConfigMaps with credentials) never reach the log;
    nothing for the high-volume noise that says nothing about users: health and metrics
    endpoints, events, leader-election leases, kube-proxy's watches and the kubelets' node
    reads. The RequestReceived stage is left out (each request once, when answered).
    """

    def resources(group: str, *names: str) -> dict[str, Any]:
        return {"group": group, "resources": list(names)}

    return {
        "apiVersion": "audit.k8s.io/v1",
        "kind": "Policy",
        "omitStages": ["RequestReceived"],
        "rules": [
            {
                "level": "None",
                "nonResourceURLs": ["/healthz*", "/livez*", "/readyz*", "/metrics", "/version"],
            },
            {
                "level": "None",
                "resources": [resources("", "events"), resources("events.k8s.io", "events")],
            },
            {
                "level": "None",
                "verbs": ["get", "list", "watch"],
                "resources": [resources("coordination.k8s.io", "leases")],
            },
            {
                "level": "None",
                "users": ["system:kube-proxy"],
                "verbs": ["watch"],
                "resources": [resources("", "endpoints", "services", "services/status")],
            },
            {
                "level": "None",
                "userGroups": ["system:nodes"],
                "verbs": ["get"],
                "resources": [resources("", "nodes", "nodes/status")],
            },
            {"level": "Metadata"},
        ],
    }


def _authentication(settings: ClusterSettings) -> dict[str, Any]:
    """The structured AuthenticationConfiguration of the OIDC issuers, or {} for none.

    apiserver.config.k8s.io/v1 from Kubernetes 1.34 (GA), v1beta1 before (served since
    1.30, on by default): read from k8s.io/apiserver v0.32-v0.37.
    """
    issuers = settings.spec.security.oidc
    if not issuers:
        return {}
    spec = settings.spec
    version = resolve_version(spec.kubernetes.version, spec.provider).version
    api_version = "v1" if version.minor_key >= (1, 34) else "v1beta1"
    jwt = []
    for issuer in issuers:
        mappings: dict[str, Any] = {
            "username": {"claim": issuer.username_claim, "prefix": issuer.username_prefix}
        }
        if issuer.groups_claim is not None:
            mappings["groups"] = {"claim": issuer.groups_claim, "prefix": issuer.groups_prefix}
        entry: dict[str, Any] = {
            "issuer": {
                "url": issuer.issuer_url,
                "audiences": list(dict.fromkeys([issuer.client_id, *issuer.extra_audiences])),
                **(
                    {"certificateAuthority": issuer.certificate_authority}
                    if issuer.certificate_authority
                    else {}
                ),
            },
            "claimMappings": mappings,
        }
        if len(entry["issuer"]["audiences"]) > 1:
            entry["issuer"]["audienceMatchPolicy"] = "MatchAny"
        jwt.append(entry)
    return {
        "apiVersion": f"apiserver.config.k8s.io/{api_version}",
        "kind": "AuthenticationConfiguration",
        "jwt": jwt,
    }


def _admission(settings: ClusterSettings) -> dict[str, Any]:
    security = settings.spec.security
    pss = security.pod_security
    return {
        "podSecurity": {
            "enforce": pss.enforce,
            "warn": pss.warn,
            "audit": pss.audit,
            "exemptNamespaces": list(pss.exempt_namespaces),
        },
        "eventRateLimit": {
            "qps": security.api_rate_limits.event_qps,
            "burst": security.api_rate_limits.event_burst,
        },
    }


def _mirror(mirror: RegistryMirror) -> dict[str, Any]:
    return {
        "registry": mirror.registry,
        "server": _REGISTRY_SERVERS.get(mirror.registry, f"https://{mirror.registry}"),
        "hosts": [
            {"url": url, "skipVerify": mirror.skip_verify, "overridePath": mirror.override_path}
            for url in mirror.endpoints
        ],
        "caCertificate": mirror.ca_certificate or "",
        "credentialsSecret": mirror.credentials_secret or "",
    }


def _proxy(settings: ClusterSettings) -> dict[str, Any]:
    """The nodes' proxy environment, or {} without a proxy.

    NO_PROXY gets the user's entries plus everything of the cluster itself, so that
    in-cluster and node-to-API traffic never leaves through the proxy: loopback, the pod,
    service and node networks, the service domain and ``.svc``. The API endpoint's address
    is not known at render time (the load balancer's address is assigned by the provider);
    the node adds it at boot from its kubeadm configuration (chart, ``scs.nodeSetupScript``).
    """
    proxy = settings.spec.network.proxy
    if proxy.http_proxy is None and proxy.https_proxy is None:
        return {}
    net = settings.spec.network
    own = [
        "localhost",
        "127.0.0.1",
        "::1",
        net.pod_cidr,
        net.service_cidr,
        net.node_cidr,
        net.service_domain,
        f".{net.service_domain}",
        ".svc",
    ]
    return {
        "httpProxy": proxy.http_proxy or "",
        "httpsProxy": proxy.https_proxy or "",
        "noProxy": list(dict.fromkeys([*proxy.no_proxy, *own])),
    }


def cluster_class_name(provider: str) -> str:
    """The ClusterClass of the ``clusterclass`` template: ``scs-<provider>-v<chart version>``
    (dots as dashes), e.g. ``scs-openstack-v0-1-0``.

    One class per provider and release: the class and its templates are part of the chart,
    so a release that changes them bumps the chart version and ships a class of a new name;
    clusters move onto it only when their settings are installed with that release.
    """
    from scs_templates.charts import provider_chart_version

    version = provider_chart_version(provider)
    return naming.fit(f"scs-{provider}-v{version.replace('.', '-').replace('+', '-')}", 63)


def _sorted(value: Any) -> Any:
    """Sort every mapping by key (recursively); lists keep their order."""
    if isinstance(value, Mapping):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value
