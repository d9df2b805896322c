"""OpenStack's own settings rules: its section (``spec.openstack``) and the charts of the
cloud integrations (OCCM, Cinder CSI) that follow the Kubernetes minor."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scs_templates._settings.keys import alias_for
from scs_templates._versions import table
from scs_templates._versions.kubernetes import parse_version
from scs_templates.providers.openstack.section import section

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates.providers.interface import Finding


def security_group_rule_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """``openstack.nodeSecurityGroupRules``: unique names, ports only where a protocol has them."""
    rule_names: list[str] = []
    for index, rule in enumerate(section(settings).node_security_group_rules):
        path = ("spec", "openstack", "nodeSecurityGroupRules", index)
        if rule.name in rule_names:
            yield (*path, "name"), f"duplicate rule name {rule.name!r}"
        rule_names.append(rule.name)
        has_ports = rule.port_range_min is not None or rule.port_range_max is not None
        if has_ports and rule.protocol not in ("tcp", "udp", "sctp"):
            yield (*path, "protocol"), "port ranges need protocol tcp, udp or sctp"
        if rule.port_range_max is not None and rule.port_range_min is None:
            yield (*path, "portRangeMin"), "portRangeMax needs portRangeMin"
        low, high = rule.port_range_min, rule.port_range_max
        if low is not None and high is not None and high < low:
            yield (*path, "portRangeMax"), f"{high} is below portRangeMin {low}"


def security_group_prefix_errors(settings: ClusterSettings) -> Iterator[Finding]:
    """Neutron refuses a rule whose remote prefix is not of its ether type."""
    for index, rule in enumerate(section(settings).node_security_group_rules):
        if rule.remote_ip_prefix is None:
            continue
        path = ("spec", "openstack", "nodeSecurityGroupRules", index, "remoteIPPrefix")
        try:
            prefix = ipaddress.ip_network(rule.remote_ip_prefix, strict=False)
        except ValueError:
            yield path, f"{rule.remote_ip_prefix!r} is not a CIDR such as 203.0.113.0/24"
            continue
        if f"IPv{prefix.version}" != rule.ether_type:
            yield (
                path,
                f"{rule.remote_ip_prefix} is IPv{prefix.version} while etherType is "
                f"{rule.ether_type}: Neutron refuses the rule",
            )


def deprecated_field_warnings(settings: ClusterSettings) -> Iterator[Finding]:
    """Fields of the section that no longer do anything."""
    if "instance_create_timeout_minutes" in section(settings).model_fields_set:
        yield (
            ("spec", "openstack", "instanceCreateTimeoutMinutes"),
            ("deprecated and ignored: CAPO has no per-cluster server creation timeout; remove it"),
        )


#: spec.services keys -> the release whose default follows the Kubernetes minor.
_MINOR_BOUND_SERVICES = {
    "cloud_controller_manager": "openstack-cloud-controller-manager",
    "cinder_csi": "openstack-cinder-csi",
}


def cloud_chart_warnings(settings: ClusterSettings) -> Iterator[Finding]:
    """The cloud controller manager and Cinder CSI default to the chart of the cluster's
    minor; where the versions table had no real chart inside the version skew policy for
    that minor, say so (pinning ``version`` silences it)."""
    spec = settings.spec
    try:
        minor = parse_version(spec.kubernetes.version).minor_key
    except ValueError:
        return
    versions = table()
    for field, release in _MINOR_BOUND_SERVICES.items():
        service = getattr(spec.services, field)
        entry = versions.services.get(release)
        if not service.enabled or service.version or entry is None:
            continue
        note = entry.notes.get(f"{minor[0]}.{minor[1]}", "")
        if "outside" in note:
            yield (
                ("spec", "services", alias_for(field)),
                f"the default {release} chart for Kubernetes {minor[0]}.{minor[1]} is "
                f"{entry.by_minor[f'{minor[0]}.{minor[1]}']}: {note}; pin `version` to the "
                "chart of your minor if you have one",
            )
