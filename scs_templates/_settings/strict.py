"""Rules of the settings model that the cluster's own components apply at run time.

A value that kubelet, kube-apiserver, kube-controller-manager, kubeadm, etcd or systemd
refuses on the node is refused here, at ``validate`` (issue #41), each rule read from the
component's source and named where it is checked. The rules the JSON Schema can express
(patterns, lengths) are constraints of :mod:`.model`; these are the rest: lengths across
DNS labels, sizes of networks, documents free-form in the model (the audit Policy) and
lists whose items must differ.

Pure functions of the settings: imported on the validate path (no pydantic, no typing).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scs_templates._settings import calendar
from scs_templates._settings.problems import Path

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings

Finding = tuple[Path, str]

#: apimachinery IsDNS1123Subdomain: a label key's prefix is at most 253 characters.
DNS_SUBDOMAIN_MAX = 253
#: kubeadm's default --node-cidr-mask-size of kube-controller-manager, which hands every
#: node a pod CIDR of this prefix out of the pod network (Cilium's ipam mode "kubernetes").
NODE_CIDR_MASK = {4: 24, 6: 64}
#: kubeadm PodSubnetNodeMaskMaxDiff: the node mask may be at most 16 bits longer than the
#: pod network's (the allocator's bitmap); kubeadm refuses a larger pod network.
POD_SUBNET_NODE_MASK_MAX_DIFF = 16
#: kubeadm MaximumBitsForServiceSubnet: at most 20 host bits (IPv4 /12, IPv6 /108).
SERVICE_SUBNET_MAX_HOST_BITS = 20
#: The smallest MTU Linux gives an interface of the family (IPv4: RFC 791's 68; IPv6:
#: RFC 8200's 1280), plus the VXLAN overhead both CNIs subtract for the pod interfaces
#: (over IPv4 50 bytes, over IPv6 70). Neutron refuses networks below 68 (IPv4) and IPv6
#: subnets on networks below 1280 as well.
MTU_MINIMUM = {4: 68 + 50, 6: 1280 + 70}
#: audit.k8s.io Policy levels (k8s.io/apiserver pkg/apis/audit/validation validateLevel).
AUDIT_LEVELS = ("None", "Metadata", "Request", "RequestResponse")
#: Go's time.Duration is int64 nanoseconds: etcd's retention must fit.
_GO_DURATION_MAX_NS = 2**63 - 1
_GO_UNITS_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}
_GO_DURATION_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?(ns|us|ms|s|m|h)")
_DNS_SUBDOMAIN = re.compile(r"\A[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")


def label_key_problem(key: str) -> str | None:
    """apimachinery IsQualifiedName's prefix length (the pattern checks the rest)."""
    prefix, slash, _ = key.rpartition("/")
    if slash and len(prefix) > DNS_SUBDOMAIN_MAX:
        return (
            f"the prefix of label key {key[:40]!r}... is {len(prefix)} characters: a DNS "
            f"subdomain has at most {DNS_SUBDOMAIN_MAX} (kubelet refuses the label)"
        )
    return None


def retention_nanoseconds(text: str) -> int | None:
    """etcd's periodic compaction retention in nanoseconds (None: not etcd's format).

    Whole hours as strconv.Atoi reads them, else time.ParseDuration; ``time.Duration(h) *
    time.Hour`` overflows silently in Go for huge hours, which the caller refuses too."""
    if text.isdigit():
        return int(text) * _GO_UNITS_NS["h"]
    total, position = 0, 0
    for match in _GO_DURATION_PART.finditer(text):
        if match.start() != position or not (match[1] or match[2]):
            return None
        whole, fraction, unit = match[1] or "0", match[2] or "", match[3]
        scale = _GO_UNITS_NS[unit]
        total += int(whole) * scale + (
            int(fraction) * scale // 10 ** len(fraction) if fraction else 0
        )
        position = match.end()
    return total if position == len(text) and position else None


def _audit_problems(policy: dict[str, object], path: Path) -> Iterator[Finding]:
    """kube-apiserver's ValidatePolicy (k8s.io/apiserver pkg/apis/audit/validation)."""
    rules = policy.get("rules")
    if not isinstance(rules, list):
        return
    for index, rule in enumerate(rules):
        where = (*path, "rules", index)
        if not isinstance(rule, dict):
            yield where, "a Policy rule is a mapping with level, resources, users ..."
            continue
        level = rule.get("level")
        if level not in AUDIT_LEVELS:
            yield (
                (*where, "level"),
                f"{level!r} is not an audit level: one of {', '.join(AUDIT_LEVELS)} "
                "(kube-apiserver refuses the Policy)",
            )
        urls = rule.get("nonResourceURLs") or []
        for u_index, url in enumerate(urls if isinstance(urls, list) else [urls]):
            if url == "*":
                continue
            if not isinstance(url, str) or not url.startswith("/") or "*" in url[:-1]:
                yield (
                    (*where, "nonResourceURLs", u_index),
                    f"{url!r}: a non-resource URL starts with '/' and may end in '*' only",
                )
        if urls and (rule.get("resources") or rule.get("namespaces")):
            yield (
                (*where, "nonResourceURLs"),
                "a rule cannot apply to both resources (or namespaces) and non-resource URLs",
            )
        resources = rule.get("resources") or []
        for r_index, group_resources in enumerate(resources if isinstance(resources, list) else []):
            group = group_resources.get("group") if isinstance(group_resources, dict) else None
            if group and (
                not isinstance(group, str)
                or len(group) > DNS_SUBDOMAIN_MAX
                or not _DNS_SUBDOMAIN.match(group)
            ):
                yield (
                    (*where, "resources", r_index, "group"),
                    f"{group!r} is not an API group (a DNS subdomain such as apps or "
                    "rbac.authorization.k8s.io; empty for the core group)",
                )


def _group_resource(text: str) -> tuple[str, str]:
    """apimachinery schema.ParseGroupResource: (group, resource) split at the first '.'."""
    resource, dot, group = text.partition(".")
    return (group, resource) if dot else ("", text)


def _encryption_problems(resources: list[str], path: Path) -> Iterator[Finding]:
    """kube-apiserver's ValidateEncryptionConfiguration for our one resource list
    (k8s.io/apiserver pkg/apis/config/validation: validateResourceOverlap and
    validateResourceNames)."""
    parsed = [_group_resource(resource) for resource in resources]
    for index, (resource, (group, name)) in enumerate(zip(resources, parsed, strict=True)):
        where = (*path, index)
        if (group, name) in parsed[:index]:
            earlier = resources[parsed.index((group, name))]
            yield where, f"{resource!r} repeats {earlier!r}: a resource may be listed once"
        elif resource == "*":
            yield where, "'*' alone: write '*.' (the core group) or '*.*' (every resource)"
        elif resource in ("apiserveripinfo", "serviceipallocations", "servicenodeportallocations"):
            yield where, f"{resource!r} has no REST API and cannot be encrypted"
        elif group == "events.k8s.io":
            yield where, "'*.events.k8s.io' objects are stored as 'events': write 'events'"
        elif group == "extensions":
            yield where, "the 'extensions' group has been removed and cannot be encrypted"
        elif group == "*" and name != "*":
            yield where, f"{resource!r}: the same resource across groups cannot be encrypted"
    overlapping = any(
        first != second
        and (first == ("*", "*") or (first[0] == second[0] and "*" in (first[1], second[1])))
        for first in parsed
        for second in parsed
    )
    if overlapping:
        yield (
            path,
            "overlapping resources such as 'secrets' and '*.' (or '*.*') in one list: "
            "kube-apiserver refuses them, the wildcard would mask the other",
        )


def _network_problems(settings: ClusterSettings) -> Iterator[Finding]:
    """Sizes of the pod and service networks kubeadm accepts, and the MTU's minimum."""
    network = settings.spec.network
    path: Path = ("spec", "network")
    pod = _network(network.pod_cidr)
    if pod is not None:
        mask = NODE_CIDR_MASK[pod.version]
        if pod.prefixlen > mask:
            yield (
                (*path, "podCIDR"),
                f"{pod} is smaller than one node's pod network (/{mask}, kube-controller-"
                "manager's node CIDR mask): no node would get pod addresses",
            )
        elif mask - pod.prefixlen > POD_SUBNET_NODE_MASK_MAX_DIFF:
            widest = mask - POD_SUBNET_NODE_MASK_MAX_DIFF
            yield (
                (*path, "podCIDR"),
                f"{pod} is larger than kubeadm allows with node pod networks of /{mask}: "
                f"use a /{widest} or smaller",
            )
    service = _network(network.service_cidr)
    if service is not None:
        host_bits = service.max_prefixlen - service.prefixlen
        if host_bits > SERVICE_SUBNET_MAX_HOST_BITS:
            widest = service.max_prefixlen - SERVICE_SUBNET_MAX_HOST_BITS
            yield (
                (*path, "serviceCIDR"),
                f"{service} is larger than kubeadm allows: use a /{widest} or smaller",
            )
    node = _network(network.node_cidr)
    family = node.version if node is not None else 4
    minimum = MTU_MINIMUM[family]
    if 0 < network.mtu < minimum:
        yield (
            (*path, "mtu"),
            f"{network.mtu} is below {minimum}, the smallest MTU of an IPv{family} node "
            "network whose pods still get a working interface (0: the provider decides)",
        )


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError:
        return None  # reported by the CIDR rule


def errors(settings: ClusterSettings) -> Iterator[Finding]:
    """Yield (path, message) for every value a component of the cluster would refuse."""
    spec = settings.spec
    for index, group in enumerate(spec.workers):
        for key in group.labels:
            problem = label_key_problem(key)
            if problem:
                yield ("spec", "workers", index, "labels", key), problem
        for t_index, taint in enumerate(group.taints):
            problem = label_key_problem(taint.key)
            if problem:
                yield ("spec", "workers", index, "taints", t_index, "key"), problem
    yield from _network_problems(settings)
    schedule = spec.etcd.defrag.schedule
    why = calendar.problem(schedule)
    if why:
        yield (
            ("spec", "etcd", "defrag", "schedule"),
            f"{schedule!r} is not a systemd OnCalendar expression such as '*-*-* 02:30:00' "
            f"or 'Sun 03:00' ({why})",
        )
    retention = spec.etcd.auto_compaction_retention
    nanoseconds = retention_nanoseconds(retention)
    if nanoseconds is not None and nanoseconds > _GO_DURATION_MAX_NS:
        yield (
            ("spec", "etcd", "autoCompactionRetention"),
            f"{retention!r} is beyond what etcd can hold (Go durations end at about 292 years)",
        )
    security = spec.security
    if security.audit.policy is not None:
        yield from _audit_problems(security.audit.policy, ("spec", "security", "audit", "policy"))
    yield from _encryption_problems(
        list(security.encryption_at_rest.resources),
        ("spec", "security", "encryptionAtRest", "resources"),
    )
