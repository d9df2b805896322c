"""The KaaS v1 network keys: API access, DNS servers, and the management host's proxy profile.

KaaS v1 wrote no proxy into clusterctl.yaml (``PROXY_CMD`` only ran the host's
``/etc/profile.d/proxy.sh``): :func:`parse_proxy_profile` reads that file when it is passed
with ``--proxy-profile`` and :func:`apply_proxy_profile` makes it ``spec.network.proxy``.
"""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING

from scs_templates._core.errors import InputError
from scs_templates._settings.problems import format_path
from scs_templates.providers.openstack.migrate.shapes import list_value
from scs_templates.providers.openstack.migrate.targets import path as settings_path

if TYPE_CHECKING:
    from scs_templates.providers.openstack.migrate.migration import KeyInfo, Migration
    from scs_templates.providers.openstack.migrate.reading import Entry

#: Where the proxy profile goes (no KaaS v1 key wrote it; PROXY_CMD pointed at the profile).
PROXY = settings_path("spec.network.proxy")


def api_access(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``RESTRICT_KUBEAPI``: ``[ ]`` -> open, ``[ none ]`` -> internal, CIDRs -> cidrs."""
    items = list_value(entry)
    base = info.path
    target = format_path(base)
    if items is None or not items:
        m.set((*base, "mode"), "open", entry.key)
        m.mapped(entry.key, f"{target}.mode (open)")
        return
    has_none = any(item.lower() == "none" for item in items)
    cidrs = [item for item in items if item.lower() != "none"]
    notes: list[str] = []
    if not cidrs:
        m.set((*base, "mode"), "internal", entry.key)
        m.mapped(entry.key, f"{target}.mode (internal)")
        return
    if has_none:
        notes.append("'none' next to CIDRs: mode cidrs always allows internal access, too")
    fixed: list[str] = []
    for cidr in cidrs:
        try:
            address = ipaddress.ip_address(cidr)
        except ValueError:
            fixed.append(cidr)
            continue
        bits = 32 if address.version == 4 else 128
        fixed.append(f"{cidr}/{bits}")
        notes.append(f"the bare address {cidr} is written as {cidr}/{bits}")
    m.set((*base, "mode"), "cidrs", entry.key)
    m.set((*base, "cidrs"), fixed, entry.key, notes)
    m.mapped(entry.key, f"{target}.mode (cidrs), {target}.cidrs", notes)


def dns_servers(m: Migration, entry: Entry, info: KeyInfo) -> None:
    """``[ 5.1.66.255, 185.150.99.255, ]`` -> a list; ``[ ]`` -> none (as in KaaS v1)."""
    items = list_value(entry)
    if items is None:
        m.empty(info, "the default resolvers are kept")
        return
    notes = (
        ["an empty list: the node subnet gets no DNS servers (as in KaaS v1)"] if not items else []
    )
    m.map_to(info, items, notes)


_PROFILE_LINE = re.compile(
    r"^\s*(?:export\s+)?(?P<name>(?i:https?_proxy|no_proxy))=(?P<value>.*?)\s*(?:#.*)?$"
)


def parse_proxy_profile(text: str, file: str = "proxy.sh") -> dict[str, str]:
    """The proxy variables of a KaaS v1 management host's ``/etc/profile.d/proxy.sh``.

    KaaS v1 (R6) copied that file onto every node (``configure_proxy.sh``); clusterctl.yaml
    only had ``PROXY_CMD``. Lines ``[export ]NAME=value`` for HTTP_PROXY, HTTPS_PROXY and
    NO_PROXY (either case; upper case wins); shell quoting of a plain value is removed.
    Anything that is not a plain assignment (``$VAR``, command substitution) is refused.
    """
    found: dict[str, dict[bool, str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _PROFILE_LINE.match(line)
        if not match:
            continue
        value = match["value"]
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if any(char in value for char in "$`\\"):
            raise InputError(f"{file}:{number}: {match['name']}: not a plain value; write it out")
        if "@" in value.split("//", 1)[-1].split("/", 1)[0]:
            # never echoed: user information of a proxy URL is a credential
            raise InputError(
                f"{file}:{number}: {match['name']}: the proxy URL carries user information "
                "(credentials); spec.network.proxy takes none, since they would be copied onto "
                "every node: use a proxy that admits the nodes by address (value not shown)"
            )
        name = match["name"]
        found.setdefault(name.upper(), {})[name.isupper()] = value
    return {name: values.get(True, values.get(False, "")) for name, values in found.items()}


def apply_proxy_profile(migration: Migration, variables: dict[str, str], file: str) -> None:
    path = PROXY
    for variable, key in (("HTTP_PROXY", "httpProxy"), ("HTTPS_PROXY", "httpsProxy")):
        if variables.get(variable):
            migration.doc.set((*path, key), variables[variable], comment=f"from {file} {variable}")
    entries = [e.strip() for e in variables.get("NO_PROXY", "").split(",") if e.strip()]
    if entries and (variables.get("HTTP_PROXY") or variables.get("HTTPS_PROXY")):
        migration.doc.set(
            (*path, "noProxy"),
            entries,
            comment=f"from {file} NO_PROXY",
            notes=[
                "the cluster's own networks, service domain and API endpoint are added "
                "automatically"
            ],
        )
