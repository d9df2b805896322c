"""The KaaS v1 key table: every key KaaS v1 wrote, what became of it, and who migrates it.

This is the one list of KaaS v1 keys. Each :class:`KeyInfo` row names the key, its status
(mapped, obsolete, secret), the settings field(s) it maps onto (``targets``, checked against
the settings model by a test: a field renamed in the model fails until the row follows),
the note the documentation shows, the KaaS v1 releases that wrote it, and for mapped keys
the handler that migrates the value. ``docs/migration-from-kaas-v1.md`` has the same table
(tested). The rows are in the order the keys are migrated: a handler may read what an
earlier row decided (``USE_CILIUM`` before ``CALICO_VERSION``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates.providers.openstack.migrate import machines, network, openstack, services, simple
from scs_templates.providers.openstack.migrate.migration import WORKER_GROUP, KeyInfo
from scs_templates.providers.openstack.migrate.shapes import bool_value, int_value, scalar
from scs_templates.providers.openstack.migrate.targets import path

if TYPE_CHECKING:
    from scs_templates._settings.problems import Path


#: The flavor KaaS v1 used where none was set.
DEFAULT_FLAVOR = "SCS-2V-4-20s"

_GENERATION = "template names are hashed now, no counters: a change rolls the machines by itself"
_CREDENTIALS = (
    "credentials come from the clouds.yaml entry spec.openstack.cloud; "
    "`scs-templates openstack appcred create` makes the per-cluster application credential"
)
_BOOLEAN = simple.copied(bool_value, "the default is kept")


def _at(*fields: str) -> tuple[Path, ...]:
    return tuple(path(text) for text in fields)


# Every key KaaS v1 (R3 = v4.0.0 .. R6 = v7.0.0, plus main) wrote into clusterctl.yaml, in the
# order they are migrated.
KEY_TABLE: tuple[KeyInfo, ...] = (
    KeyInfo(
        "KUBERNETES_VERSION",
        "mapped",
        "`v1.28.x` -> `1.28.x`. A minor below the supported range becomes the oldest supported "
        "`.x` with a note: upgrade one minor at a time. Newer than supported is an error.",
        targets=_at("spec.kubernetes.version"),
        migrate=machines.kubernetes_version,
    ),
    KeyInfo(
        "OPENSTACK_IMAGE_NAME",
        "mapped",
        "The embedded Kubernetes version (`v1.28.5`, `v1.28.x`) becomes `{version}`.",
        targets=_at("spec.openstack.image"),
        migrate=machines.image,
    ),
    KeyInfo(
        "DEPLOY_OCCM",
        "mapped",
        "`true` -> enabled; `vX.Y.Z` -> version (note: manifest vs chart versions); `master` "
        "-> enabled with a note. `false` is emitted enabled with a note: it must stay enabled.",
        targets=_at("spec.services.cloudControllerManager"),
        migrate=services.cloud_controller_manager,
    ),
    KeyInfo(
        "DEPLOY_CINDERCSI",
        "mapped",
        "`true`/`false`/`vX.Y.Z`/`master` -> enabled/version.",
        targets=_at("spec.services.cinderCSI"),
        migrate=services.service,
    ),
    KeyInfo(
        "USE_CILIUM",
        "mapped",
        "`true` -> type cilium; `vX.Y.Z` -> cilium with that version; `false` -> calico.",
        targets=_at("spec.services.cni"),
        migrate=services.cilium,
    ),
    KeyInfo(
        "CALICO_VERSION",
        "mapped",
        "Only with `USE_CILIUM: false`; ignored (and reported so) with Cilium.",
        "R4-R6",
        targets=_at("spec.services.cni.version"),
        migrate=services.calico,
    ),
    KeyInfo(
        "DEPLOY_NGINX_INGRESS",
        "mapped",
        "`true`/`false`/`vX.Y.Z` -> enabled/version; enabled gets a deprecation note "
        "(ingress-nginx is retired upstream; use gatewayAPI).",
        targets=_at("spec.services.ingressNginx"),
        migrate=services.ingress_nginx,
    ),
    KeyInfo(
        "NGINX_INGRESS_PROXY",
        "mapped",
        "PROXY protocol on the ingress load balancer.",
        targets=_at("spec.services.ingressNginx.proxyProtocol"),
        migrate=_BOOLEAN,
    ),
    KeyInfo(
        "DEPLOY_GATEWAY_API",
        "mapped",
        "Cilium's Gateway API; with Calico, Envoy Gateway (a note says so).",
        "R5-R6",
        targets=_at("spec.services.gatewayAPI"),
        migrate=services.gateway_api,
    ),
    KeyInfo(
        "USE_OVN_LB_PROVIDER",
        "mapped",
        "`false` -> amphora, `true` -> ovn, `auto` -> amphora with a note.",
        "R4-R6",
        targets=_at("spec.openstack.loadBalancerProvider"),
        migrate=openstack.load_balancer_provider,
    ),
    KeyInfo(
        "DEPLOY_CERT_MANAGER",
        "mapped",
        "`true`/`false`/`vX.Y.Z` -> enabled/version.",
        targets=_at("spec.services.certManager"),
        migrate=services.service,
    ),
    KeyInfo(
        "DEPLOY_FLUX",
        "mapped",
        "`true`/`false`/`vX.Y.Z` -> enabled/version.",
        targets=_at("spec.services.flux"),
        migrate=services.service,
    ),
    KeyInfo(
        "DEPLOY_METRICS",
        "mapped",
        "metrics-server now verifies the kubelet certificates (no --kubelet-insecure-tls).",
        targets=_at("spec.services.metricsServer"),
        migrate=services.service,
    ),
    KeyInfo(
        "OPENSTACK_CONTROL_PLANE_MACHINE_METADATA",
        "mapped",
        "`{ k: 'v', }` -> a mapping.",
        "after R6",
        targets=_at("spec.openstack.serverMetadata.controlPlane"),
        migrate=openstack.server_metadata,
    ),
    KeyInfo(
        "OPENSTACK_NODE_MACHINE_METADATA",
        "mapped",
        "`{ k: 'v', }` -> a mapping.",
        "after R6",
        targets=_at("spec.openstack.serverMetadata.workers"),
        migrate=openstack.server_metadata,
    ),
    KeyInfo(
        "OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR",
        "mapped",
        f"Empty -> the KaaS v1 default {DEFAULT_FLAVOR} with a note.",
        targets=_at("spec.controlPlane.machineType"),
        migrate=machines.flavor,
        when_missing=DEFAULT_FLAVOR,
    ),
    KeyInfo(
        "CONTROL_PLANE_MACHINE_COUNT",
        "mapped",
        "An even count is rounded up to the next odd one, 0 (no test cluster) becomes 1, more "
        "than 5 becomes 5; each with a note.",
        targets=_at("spec.controlPlane.replicas"),
        migrate=machines.control_plane_count,
    ),
    KeyInfo(
        "CONTROL_PLANE_MACHINE_GEN",
        "obsolete",
        _GENERATION,
    ),
    KeyInfo(
        "OPENSTACK_NODE_MACHINE_FLAVOR",
        "mapped",
        f"The one KaaS v1 MachineDeployment becomes worker group `{WORKER_GROUP}`. Empty -> "
        f"{DEFAULT_FLAVOR} with a note.",
        targets=_at("spec.workers[0].machineType"),
        migrate=machines.flavor,
        when_missing=DEFAULT_FLAVOR,
    ),
    KeyInfo(
        "WORKER_MACHINE_COUNT",
        "mapped",
        "0..1000.",
        targets=_at("spec.workers[0].replicas"),
        migrate=machines.worker_count,
    ),
    KeyInfo(
        "WORKER_MACHINE_GEN",
        "obsolete",
        _GENERATION,
    ),
    KeyInfo(
        "CONTROL_PLANE_ROOT_DISKSIZE",
        "mapped",
        "KaaS v1 used it only for diskless flavors (0 = sized automatically); 0 now means "
        "booting from the flavor's disk.",
        "R5-R6",
        targets=_at("spec.controlPlane.rootDiskGB"),
        migrate=machines.root_disk("OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR"),
    ),
    KeyInfo(
        "WORKER_ROOT_DISKSIZE",
        "mapped",
        "As CONTROL_PLANE_ROOT_DISKSIZE.",
        "R5-R6",
        targets=_at("spec.workers[0].rootDiskGB"),
        migrate=machines.root_disk("OPENSTACK_NODE_MACHINE_FLAVOR"),
    ),
    KeyInfo(
        "OPENSTACK_FAILURE_DOMAIN",
        "mapped",
        "One zone -> both; a list -> all for the control plane, the first for the workers.",
        targets=_at("spec.controlPlane.zones", "spec.workers[0].zone"),
        migrate=machines.failure_domain,
    ),
    KeyInfo(
        "ETCD_PRIO_BOOST",
        "obsolete",
        "always on now: heartbeat 250 ms, election timeout 2500 ms and etcd I/O priority are "
        "always set",
        "R3",
    ),
    KeyInfo(
        "ETCD_UNSAFE_FS",
        "mapped",
        "barrier=0,commit=20 remount.",
        targets=_at("spec.etcd.unsafeFS"),
        migrate=_BOOLEAN,
    ),
    KeyInfo(
        "PROXY_CMD",
        "obsolete",
        "internal to the KaaS v1 management-host scripts; the proxy itself came from the "
        "host's /etc/profile.d/proxy.sh: pass it with --proxy-profile (spec.network.proxy)",
        "R6",
    ),
    KeyInfo(
        "NODE_CIDR",
        "mapped",
        "Node subnet.",
        targets=_at("spec.network.nodeCIDR"),
        migrate=simple.copied(scalar),
    ),
    KeyInfo(
        "SERVICE_CIDR",
        "mapped",
        "Service network.",
        "R5-R6",
        targets=_at("spec.network.serviceCIDR"),
        migrate=simple.copied(scalar),
    ),
    KeyInfo(
        "POD_CIDR",
        "mapped",
        "Pod network.",
        "R5-R6",
        targets=_at("spec.network.podCIDR"),
        migrate=simple.copied(scalar),
    ),
    KeyInfo(
        "MTU_VALUE",
        "mapped",
        "0 = automatic.",
        targets=_at("spec.network.mtu"),
        migrate=simple.copied(int_value, "0, automatic"),
    ),
    KeyInfo(
        "RESTRICT_KUBEAPI",
        "mapped",
        "`[ ]` -> mode open; `[ none ]` -> mode internal; a CIDR list -> mode cidrs (a bare "
        "address gets /32).",
        "R4-R6",
        targets=_at("spec.network.apiAccess"),
        migrate=network.api_access,
    ),
    KeyInfo(
        "OPENSTACK_EXTERNAL_NETWORK_ID",
        "mapped",
        "Empty -> auto-detect (the default).",
        targets=_at("spec.openstack.externalNetworkID"),
        migrate=simple.copied(scalar, "auto-detect, the default"),
    ),
    KeyInfo(
        "OPENSTACK_DNS_NAMESERVERS",
        "mapped",
        "`[ 5.1.66.255, 185.150.99.255, ]` -> a list.",
        targets=_at("spec.network.dnsServers"),
        migrate=network.dns_servers,
    ),
    KeyInfo(
        "OPENSTACK_CLUSTER_GEN",
        "obsolete",
        _GENERATION,
        "R6",
    ),
    KeyInfo(
        "OPENSTACK_SSH_KEY_NAME",
        "mapped",
        "The keypair must exist in the project (KaaS v1 created `<prefix>-keypair`).",
        targets=_at("spec.openstack.sshKeyName"),
        migrate=openstack.ssh_key,
    ),
    KeyInfo(
        "OPENSTACK_CONTROL_PLANE_IP",
        "obsolete",
        "internal: the API load balancer address is managed by Cluster API",
        "R3-R5",
    ),
    KeyInfo(
        "OPENSTACK_ANTI_AFFINITY",
        "mapped",
        "`true` -> controlPlane hard (soft with OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER), "
        "workers soft; `false` -> none for both.",
        targets=_at("spec.openstack.antiAffinity"),
        migrate=openstack.anti_affinity,
    ),
    KeyInfo(
        "OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER",
        "mapped",
        "`true` -> soft (only with OPENSTACK_ANTI_AFFINITY true).",
        "after R6",
        targets=_at("spec.openstack.antiAffinity.controlPlane"),
        migrate=openstack.soft_anti_affinity,
    ),
    KeyInfo(
        "OPENSTACK_SRVGRP_CONTROLLER",
        "obsolete",
        "server groups are managed (see spec.openstack.antiAffinity)",
    ),
    KeyInfo(
        "OPENSTACK_SRVGRP_WORKER",
        "obsolete",
        "server groups are managed (see spec.openstack.antiAffinity)",
    ),
    KeyInfo(
        "OPENSTACK_IMAGE_RAW",
        "obsolete",
        "image upload is out of scope: upload the node images beforehand",
    ),
    KeyInfo(
        "OPENSTACK_IMAGE_REGISTRATION_EXTRA_FLAGS",
        "obsolete",
        "image upload is out of scope: upload the node images beforehand",
    ),
    KeyInfo(
        "OPENSTACK_CLOUD",
        "mapped",
        "The clouds.yaml entry. When OLD_OPENSTACK_CLOUD is present, OPENSTACK_CLOUD named the "
        "per-cluster credential entry KaaS v1 made and is reported obsolete.",
        targets=_at("spec.openstack.cloud"),
        migrate=openstack.cloud,
    ),
    KeyInfo(
        "OLD_OPENSTACK_CLOUD",
        "mapped",
        "Internal (written by KaaS v1 when it switched OPENSTACK_CLOUD to the per-cluster "
        "application credential): it holds the original clouds.yaml entry, which is used.",
        "R5-R6",
        targets=_at("spec.openstack.cloud"),
        migrate=openstack.old_cloud,
    ),
    KeyInfo(
        "OPENSTACK_CLOUD_YAML_B64",
        "secret",
        _CREDENTIALS,
    ),
    KeyInfo(
        "OPENSTACK_CLOUD_PROVIDER_CONF_B64",
        "secret",
        _CREDENTIALS,
    ),
    KeyInfo(
        "OPENSTACK_CLOUD_CACERT_B64",
        "secret",
        "the CA certificate comes from the cacert of the clouds.yaml entry",
    ),
    KeyInfo(
        "CLUSTER_API_OPENSTACK_INSTANCE_CREATE_TIMEOUT",
        "obsolete",
        "no per-cluster setting in CAPO",
        "R5-R6",
    ),
)

KEYS: dict[str, KeyInfo] = {info.key: info for info in KEY_TABLE}
