# One module over 500 lines: every cross-field rule of the settings, as small rule groups
# that errors() and warnings() chain in the order they are reported; one file to read when
# a rule is asked about.
"""Cross-field rules of the settings model.

They run after the structural validation succeeded and return every problem at once, each
with the path of the field to fix. Warnings (deprecated or questionable settings) are
returned separately: they never fail a render. Each provider adds its own rules
(:meth:`scs_templates.providers.interface.Provider.errors` and ``warnings``), run after these.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scs_templates._core import naming
from scs_templates._core.errors import InputError
from scs_templates._core.labels import synced_by_capi
from scs_templates._settings import certificates, plugins, strict
from scs_templates._settings.keys import alias_for
from scs_templates._settings.problems import Path
from scs_templates._versions.kubernetes import parse_version, resolve_version, support_warning

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, Protocol

    from scs_templates._settings.model import ClusterSettings, WorkerGroup

Finding = tuple[Path, str]

if TYPE_CHECKING:
    #: A rule group: the findings of one part of the settings.
    Rule = Callable[[ClusterSettings], Iterator[Finding]]

    class SettingsProvider(Protocol):
        """What settings validation asks of a provider (the rest: ``providers.Provider``)."""

        name: str
        catalogue_order: int
        kind_node_images: bool
        node_name_note: str

        def errors(self, settings: ClusterSettings) -> Iterator[Finding]: ...

        def warnings(self, settings: ClusterSettings) -> Iterator[Finding]: ...

        def machine_owner_budget(self, cluster: str, machine_owner: str) -> int: ...

        def provider_images(self, settings: ClusterSettings) -> list[tuple[Path, str | None]]: ...

        def proxy_protocol(self, settings: ClusterSettings) -> bool: ...

        def foreign_document(self, data: Mapping[str, Any]) -> tuple[str, str, str] | None: ...


# Labels in the kubernetes.io / k8s.io namespaces that a kubelet may set on its own node
# (kubelet refuses to start with any other via --node-labels) ...
_KUBELET_LABEL_KEYS = frozenset(
    {
        "beta.kubernetes.io/arch",
        "beta.kubernetes.io/instance-type",
        "beta.kubernetes.io/os",
        "failure-domain.beta.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "kubernetes.io/arch",
        "kubernetes.io/hostname",
        "kubernetes.io/os",
        "node.kubernetes.io/instance-type",
        "topology.kubernetes.io/region",
        "topology.kubernetes.io/zone",
    }
)
_KUBELET_LABEL_DOMAINS = ("kubelet.kubernetes.io", "node.kubernetes.io")
# ... and those Cluster API copies from the Machine to the Node instead: labels.py.


def _label_problem(key: str) -> str | None:
    """Why a node label cannot be applied, or None."""
    prefix, _, _ = key.rpartition("/")
    if not prefix or key in _KUBELET_LABEL_KEYS:
        return None
    reserved = any(
        prefix == domain or prefix.endswith("." + domain) for domain in ("kubernetes.io", "k8s.io")
    )
    allowed = synced_by_capi(key) or any(
        prefix == domain or prefix.endswith("." + domain) for domain in _KUBELET_LABEL_DOMAINS
    )
    if reserved and not allowed:
        return (
            f"label {key!r} is in a reserved Kubernetes namespace: kubelets may only set "
            "kubelet.kubernetes.io/*, node.kubernetes.io/* and the well-known topology "
            "labels, and Cluster API syncs node-role.kubernetes.io/*; use your own domain"
        )
    return None


#: etcd's data directory on kubeadm's control-plane nodes (the snapshots stay out of it).
ETCD_DATA_DIR = "/var/lib/etcd"
#: helm reads values through JSON into float64: larger integers silently change.
FLOAT64_EXACT = 2**53
# DNS labels that a YAML 1.1 reader (helm's and kubectl's sigs.k8s.io/yaml) takes for a
# boolean, null or number when they stand alone as a manifest value (``name: on``).
YAML11_NOT_STRING = re.compile(
    r"\A(y|yes|n|no|true|false|on|off|null|[0-9]+|0x[0-9a-f]+|0b[01]+)\Z"
)


def yaml11_problem(name: str) -> str | None:
    """Why a name that stands alone as a manifest value is refused (a cluster, namespace or
    worker group name that YAML 1.1 tools would not read as a string)."""
    if YAML11_NOT_STRING.match(name):
        return (
            f"{name!r} would be read as a boolean, null or number by YAML 1.1 tools (helm, "
            "kubectl); choose another name"
        )
    return None


# A Kubernetes version inside an image name: v1.33, 1.33.5, kube-v1.34.1 (two-digit minor, so
# distribution versions such as ubuntu-22.04 or debian-12.1 do not count).
_IMAGE_KUBERNETES_VERSION = re.compile(r"(?<![\d.])v?1\.(\d{2})(?:\.(\d{1,3}))?(?![\d])")


def _literal_images(settings: ClusterSettings) -> Iterator[tuple[Path, str, str]]:
    """(path, image, problem) for every image given without ``{version}``; ``problem`` is
    non-empty when the name carries another Kubernetes version than the cluster's."""
    spec = settings.spec
    try:
        version = resolve_version(spec.kubernetes.version, _kind_images(settings)).version
    except ValueError:
        return
    s: Path = ("spec",)
    images: list[tuple[Path, str | None]] = [
        ((*s, "controlPlane", "image"), spec.control_plane.image),
        *(((*s, "workers", i, "image"), g.image) for i, g in enumerate(spec.workers)),
    ]
    images[:0] = _provider(settings).provider_images(settings)
    for path, image in images:
        if image is None or "{version}" in image:
            continue
        problem = ""
        for match in _IMAGE_KUBERNETES_VERSION.finditer(image):
            minor, patch = int(match[1]), match[2]
            named = f"1.{minor}" + (f".{patch}" if patch is not None else "")
            differs = minor != version.minor or (patch is not None and int(patch) != version.patch)
            if differs and not problem:
                problem = (
                    f"image {image!r} names Kubernetes {named}, the cluster runs {version}: "
                    "its kubelet would not match the control plane; write the version as "
                    "{version} (replaced by the resolved version) or name the right image"
                )
        yield path, image, problem


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError:
        return None


def _cidr_problem(text: str) -> str | None:
    try:
        ipaddress.ip_network(text, strict=True)
    except ValueError as error:
        if "host bits set" in str(error):
            fixed = ipaddress.ip_network(text, strict=False)
            return f"{text!r} has host bits set; did you mean {str(fixed)!r}?"
        return f"{text!r} is not a CIDR such as 10.8.0.0/20"
    if "/" not in text:
        return f"{text!r} lacks a prefix length; write it as a CIDR such as {text}/32"
    return None


def _certificate_problems(settings: ClusterSettings) -> Iterator[Finding]:
    """Every PEM field that is not really certificates (settings/certificates.py: the
    real kube-apiserver, containerd and update-ca-certificates would refuse it on the node)."""
    spec = settings.spec
    fields: list[tuple[Path, str | None]] = [
        (("spec", "security", "trustedCAs", index), pem)
        for index, pem in enumerate(spec.security.trusted_cas)
    ]
    fields += [
        (("spec", "security", "oidc", index, "certificateAuthority"), issuer.certificate_authority)
        for index, issuer in enumerate(spec.security.oidc)
    ]
    fields += [
        (("spec", "registryMirrors", index, "caCertificate"), mirror.ca_certificate)
        for index, mirror in enumerate(spec.registry_mirrors)
    ]
    for path, pem in fields:
        problem = certificates.problem(pem) if pem is not None else None
        if problem:
            yield path, problem


def _mixed_families(
    nets: dict[str, ipaddress.IPv4Network | ipaddress.IPv6Network], path: Path
) -> Iterator[Finding]:
    """Pod, service and node networks of one IP family: mixed (dual-stack) is not supported."""
    if len({net.version for net in nets.values()}) < 2:
        return
    reference = "nodeCIDR" if "nodeCIDR" in nets else next(iter(nets))
    family = nets[reference].version
    for alias, net in nets.items():
        if net.version != family:
            yield (
                (*path, alias),
                (
                    f"{net} is IPv{net.version} while {reference} is IPv{family}: pod, service and "
                    "node networks must use the same IP family (dual-stack is not supported)"
                ),
            )


def _unsafe_integers(value: object, path: Path) -> Iterator[Finding]:
    """Integers in free-form chart values that helm's float64 numbers would change."""
    if isinstance(value, bool):
        return
    if isinstance(value, int) and abs(value) > FLOAT64_EXACT:
        yield (
            path,
            (
                f"{value} is beyond 2**53: helm reads values as float64 numbers and would change "
                "it; quote it as a string or use a smaller number"
            ),
        )
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _unsafe_integers(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _unsafe_integers(item, (*path, index))


def _provider(settings: ClusterSettings) -> SettingsProvider:
    """The settings' provider, as settings validation sees it (:mod:`.plugins`)."""
    provider: SettingsProvider = settings.resolved_provider()
    return provider


def _kind_images(settings: ClusterSettings) -> bool:
    """The provider's nodes boot kind node images (False for an unknown provider: the
    model reports that)."""
    try:
        return _provider(settings).kind_node_images
    except InputError:
        return False


def _other_provider_sections(settings: ClusterSettings) -> Iterator[Finding]:
    """A non-empty section of another provider (``openstack:`` on a Docker cluster): it would
    be ignored, so whoever wrote it expects something that will not happen."""
    spec = settings.spec
    for name in plugins.provider_names():
        if name == spec.provider or name not in spec.model_fields_set:
            continue
        section = getattr(spec, name, None)
        if section is not None and section.model_fields_set:
            yield (
                ("spec", name),
                f"settings for provider {name!r}, but spec.provider is {spec.provider!r}: they "
                f"would be ignored; remove the section (or set spec.provider: {name})",
            )


def _name_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """Names that stand alone as manifest values and YAML 1.1 would not read as strings."""
    names: list[tuple[Path, str]] = [
        (("metadata", field), getattr(settings.metadata, field)) for field in ("name", "namespace")
    ]
    names += [
        (("spec", "workers", index, "name"), group.name)
        for index, group in enumerate(settings.spec.workers)
    ]
    for path, value in names:
        problem = yaml11_problem(value)
        if problem:
            yield path, problem


def _version_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """A Kubernetes version that is no version."""
    try:
        parse_version(settings.spec.kubernetes.version)
    except ValueError as error:
        yield ("spec", "kubernetes", "version"), str(error)


def _network_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """Networks: each valid, no two of pod/service/node overlapping, one IP family."""
    network = settings.spec.network
    network_path: Path = ("spec", "network")
    nets: dict[str, ipaddress.IPv4Network | ipaddress.IPv6Network] = {}
    for field in ("pod_cidr", "service_cidr", "node_cidr"):
        value = getattr(network, field)
        alias = alias_for(field)
        problem = _cidr_problem(value)
        if problem:
            yield (*network_path, alias), problem
            continue
        net = _network(value)
        if net is not None:
            for other_alias, other in nets.items():
                if net.version == other.version and net.overlaps(other):
                    yield (*network_path, alias), (f"{value} overlaps {other_alias} {other}")
            nets[alias] = net
    yield from _mixed_families(nets, network_path)
    for index, server in enumerate(network.dns_servers):
        try:
            ipaddress.ip_address(server)
        except ValueError:
            yield (*network_path, "dnsServers", index), f"{server!r} is not an IP address"


def _api_access_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """The API access CIDRs valid and consistent with the access mode."""
    access = settings.spec.network.api_access
    access_path = ("spec", "network", "apiAccess")
    for key, cidrs in (("cidrs", access.cidrs), ("managementCIDRs", access.management_cidrs)):
        for index, cidr in enumerate(cidrs):
            problem = _cidr_problem(cidr)
            if problem:
                yield (*access_path, key, index), problem
    if access.mode == "cidrs" and not access.cidrs:
        yield (*access_path, "cidrs"), "mode 'cidrs' needs at least one CIDR"
    if access.mode != "cidrs" and access.cidrs:
        yield (
            (*access_path, "cidrs"),
            (f"cidrs are only used with mode 'cidrs' (mode is {access.mode!r})"),
        )


def _worker_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """The worker groups: as many as the template takes, unique names, each group sound."""
    spec = settings.spec
    workers_path: Path = ("spec", "workers")
    if spec.template == "simple" and len(spec.workers) != 1:
        yield (
            workers_path,
            (
                f"template 'simple' takes exactly one worker group, found {len(spec.workers)}; "
                "use template 'multi-md' for more"
            ),
        )
    if not spec.workers and spec.template != "simple":
        yield workers_path, "at least one worker group is needed"
    seen: dict[str, int] = {}
    for index, group in enumerate(spec.workers):
        path = (*workers_path, index)
        if group.name in seen:
            yield (
                (*path, "name"),
                f"duplicate group name {group.name!r} (also workers[{seen[group.name]}])",
            )
        seen.setdefault(group.name, index)
        yield from _worker_group_errors(settings, group, path)


def _worker_group_errors(
    settings: ClusterSettings, group: WorkerGroup, path: Path
) -> Iterator[Finding]:
    """One worker group: scaling, its machine names' length, labels, rollout, taints."""
    if group.autoscaling is not None:
        if group.replicas is not None:
            yield (*path, "replicas"), "set either replicas or autoscaling, not both"
        if group.autoscaling.min > group.autoscaling.max:
            yield (
                (*path, "autoscaling", "min"),
                (f"min ({group.autoscaling.min}) is greater than max ({group.autoscaling.max})"),
            )
    md_name = naming.full_name(settings.spec.prefix, settings.name, group.name)
    budget = _provider(settings).machine_owner_budget(settings.name, md_name)
    if len(md_name) > budget:
        yield (
            (*path, "name"),
            (
                f"{md_name!r} is {len(md_name)} characters; $PREFIX-$CLUSTER-$GROUP must fit "
                f"in {budget} (machine names add 12{_budget_note(settings, budget)} "
                "and must stay <= 63)"
            ),
        )
    for key in group.labels:
        problem = _label_problem(key)
        if problem:
            yield (*path, "labels", key), problem
    if group.rollout.max_surge == 0 and group.rollout.max_unavailable == 0:
        yield (
            (*path, "rollout", "maxSurge"),
            "maxSurge and maxUnavailable cannot both be 0: a rolling update could never "
            "replace a machine",
        )
    taint_keys = [(t.key, t.effect) for t in group.taints]
    for t_index, (t_key, t_effect) in enumerate(taint_keys):
        if (t_key, t_effect) in taint_keys[:t_index]:
            yield (*path, "taints", t_index), f"duplicate taint {t_key}:{t_effect}"


def _control_plane_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """The control plane's machine names' length and its rollout."""
    spec = settings.spec
    cp_name = naming.full_name(spec.prefix, settings.name, naming.CONTROL_PLANE)
    budget = _provider(settings).machine_owner_budget(settings.name, cp_name)
    if len(cp_name) > budget:
        yield (
            ("metadata", "name"),
            (
                f"{cp_name!r} is {len(cp_name)} characters; $PREFIX-$CLUSTER-control-plane must "
                f"fit in {budget}{_budget_note(settings, budget)}: shorten the prefix or "
                "the cluster name"
            ),
        )
    if spec.control_plane.rollout.max_surge == 0 and spec.control_plane.replicas < 3:
        yield (
            ("spec", "controlPlane", "rollout", "maxSurge"),
            "maxSurge 0 (delete before create) needs 3 or 5 control-plane replicas: with one, "
            "the control plane would be gone during the update",
        )


def _etcd_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """etcd's snapshots kept out of etcd's data directory; an upload only of snapshots that
    are taken (the local copy is what a failed upload leaves)."""
    etcd = settings.spec.etcd
    if etcd.backup_s3 is not None and (etcd.backup_retention == 0 or not etcd.defrag.enabled):
        yield (
            ("spec", "etcd", "backupS3"),
            "uploads the snapshots of the nightly job: it needs etcd.defrag.enabled and "
            "etcd.backupRetention of at least 1 (the local copy a failed upload keeps)",
        )
    backups = etcd.backup_directory.rstrip("/")
    if (
        ".." in backups.split("/")
        or backups == ETCD_DATA_DIR
        or backups.startswith(f"{ETCD_DATA_DIR}/")
    ):
        yield (
            ("spec", "etcd", "backupDirectory"),
            f"{etcd.backup_directory!r} must be a directory outside {ETCD_DATA_DIR} "
            "(etcd's data) and without '..'",
        )


def _security_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """OIDC issuers unique, certificates real, the audit policy a complete Policy."""
    security = settings.spec.security
    security_path = ("spec", "security")
    issuers = [issuer.issuer_url for issuer in security.oidc]
    for index, url in enumerate(issuers):
        if url in issuers[:index]:
            yield (*security_path, "oidc", index, "issuerURL"), f"duplicate issuer {url!r}"
    yield from _certificate_problems(settings)
    policy = security.audit.policy
    if policy is not None:
        policy_path = (*security_path, "audit", "policy")
        if policy.get("apiVersion") != "audit.k8s.io/v1" or policy.get("kind") != "Policy":
            yield policy_path, "must be a complete audit.k8s.io/v1 Policy (apiVersion, kind)"
        rules = policy.get("rules")
        if not isinstance(rules, list) or not rules:
            yield (*policy_path, "rules"), "a Policy needs a list of rules"


def _service_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """Free-form service values that helm would change."""
    services = settings.spec.services
    for name in type(services).model_fields:
        values = getattr(getattr(services, name), "values", None)
        if values:
            yield from _unsafe_integers(values, ("spec", "services", alias_for(name), "values"))


def _machine_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """A root volume type without a root volume, on any machine."""
    spec = settings.spec
    machines = [(("controlPlane",), spec.control_plane)] + [
        (("workers", index), group) for index, group in enumerate(spec.workers)
    ]
    for where, machine in machines:
        if machine.root_disk_type is not None and machine.root_disk_gb == 0:
            yield (
                ("spec", *where, "rootDiskType"),
                "a root volume type needs a root volume: set rootDiskGB too",
            )


def _proxy_and_mirror_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """noProxy without a proxy; a registry mirrored twice."""
    spec = settings.spec
    proxy = spec.network.proxy
    if proxy.no_proxy and proxy.http_proxy is None and proxy.https_proxy is None:
        yield (
            ("spec", "network", "proxy", "noProxy"),
            "noProxy without httpProxy or httpsProxy does nothing",
        )
    registries = [m.registry for m in spec.registry_mirrors]
    for index, registry in enumerate(registries):
        if registry in registries[:index]:
            yield ("spec", "registryMirrors", index, "registry"), f"duplicate registry {registry!r}"


def _provider_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """The provider's own rules (asked for when their turn comes, not before)."""
    yield from _provider(settings).errors(settings)


def _image_version_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """Literal images naming another Kubernetes version than the cluster's."""
    for path, _image, message in _literal_images(settings):
        if message:
            yield path, message


#: The rule groups of :func:`errors`, in the order their findings are reported.
_ERROR_RULES: tuple[Rule, ...] = (
    _name_errors,
    _version_errors,
    _network_errors,
    _api_access_errors,
    _worker_errors,
    _control_plane_errors,
    strict.errors,
    _etcd_errors,
    _security_errors,
    _service_errors,
    _machine_errors,
    _proxy_and_mirror_errors,
    _other_provider_sections,
    _provider_errors,
    _image_version_errors,
)


def _version_warnings(settings: ClusterSettings) -> Iterator[Finding]:
    """A Kubernetes version out of support, or resolved to something worth a note."""
    spec = settings.spec
    version_path = ("spec", "kubernetes", "version")
    outdated = support_warning(spec.kubernetes.version)
    if outdated:
        yield version_path, outdated
    try:
        note = resolve_version(spec.kubernetes.version, _kind_images(settings)).note
    except ValueError:
        note = None  # an error, reported by errors()
    if note:
        yield version_path, note
    for path, image, message in _literal_images(settings):
        if not message:
            yield (
                path,
                (
                    f"image {image!r} has no {{version}}: it stays the same when "
                    "spec.kubernetes.version changes, so an upgrade keeps the old kubelet on "
                    "these machines; write the version as {version}"
                ),
            )


def _etcd_warnings(settings: ClusterSettings) -> Iterator[Finding]:
    """etcd settings that are obsolete or risky."""
    spec = settings.spec
    if "prio_boost" in spec.etcd.model_fields_set:
        yield (
            ("spec", "etcd", "prioBoost"),
            (
                "obsolete and ignored: etcd heartbeat, election timeout and I/O priority are "
                "always tuned now; remove it"
            ),
        )
    if spec.etcd.unsafe_fs and spec.control_plane.replicas == 1:
        yield (
            ("spec", "etcd", "unsafeFS"),
            (
                "unsafe-FS with a single control-plane machine risks losing etcd on power loss "
                "with no other member to recover from"
            ),
        )


def _service_warnings(settings: ClusterSettings) -> Iterator[Finding]:
    """Services that are deprecated, or set up to do nothing."""
    spec = settings.spec
    services = spec.services
    if services.ingress_nginx.enabled:
        yield (
            ("spec", "services", "ingressNginx", "enabled"),
            (
                "ingress-nginx is deprecated: retired upstream (no releases or security fixes "
                "since March 2026); use spec.services.gatewayAPI (Cilium's Gateway API, or "
                "Envoy Gateway with Calico) - docs/services.md"
            ),
        )
    autoscaling = [g.name for g in spec.workers if g.autoscaling is not None]
    if autoscaling and services.cluster_autoscaler.enabled is False:
        yield (
            ("spec", "services", "clusterAutoscaler", "enabled"),
            (
                f"worker groups {', '.join(autoscaling)} have autoscaling but the "
                "cluster-autoscaler is off: nothing will scale them"
            ),
        )
    provider = _provider(settings)
    if services.gateway_api.proxy_protocol and not provider.proxy_protocol(settings):
        yield (
            ("spec", "services", "gatewayAPI", "proxyProtocol"),
            (
                f"ignored: the load balancers of provider {provider.name!r} do not speak the "
                "PROXY protocol here (docs/settings.md, what each provider makes of it)"
            ),
        )


def _provider_warnings(settings: ClusterSettings) -> Iterator[Finding]:
    """The provider's own warnings."""
    yield from _provider(settings).warnings(settings)


#: The groups of :func:`warnings`, in the order their findings are reported.
_WARNING_RULES: tuple[Rule, ...] = (
    _version_warnings,
    _etcd_warnings,
    _service_warnings,
    _provider_warnings,
)


def errors(settings: ClusterSettings) -> Iterator[Finding]:
    """Yield (path, message) for every cross-field rule the settings break."""
    return _chained(_ERROR_RULES, settings)


def warnings(settings: ClusterSettings) -> Iterator[Finding]:
    """Yield (path, message) for settings that work but deserve a second look."""
    return _chained(_WARNING_RULES, settings)


def _chained(rules: Iterable[Rule], settings: ClusterSettings) -> Iterator[Finding]:
    """The findings of ``rules``, one group after the other."""
    for rule in rules:
        yield from rule(settings)


def _budget_note(settings: ClusterSettings, budget: int) -> str:
    """Why the name budget is smaller than usual (CAPD prefixes host names with the cluster)."""
    note = _provider(settings).node_name_note
    if note and budget < naming.MACHINE_OWNER_BUDGET:
        return f"; {note}"
    return ""
