"""The workload cluster's ``kube-system/cloud-config`` Secret: what OCCM and Cinder CSI read.

Its name and keys, and how the ``cloud.conf`` from the cluster's credentials Secret is
adjusted on its way there (a CA file next to it, the cluster network as the internal one).
"""

from __future__ import annotations

#: Secret in the workload cluster's kube-system with ``cloud.conf`` for OCCM and Cinder CSI.
CLOUD_CONFIG_SECRET = "cloud-config"  # noqa: S105 - a Secret name, not a password
#: Key of the CA bundle in that Secret. OCCM and Cinder CSI mount the whole Secret at
#: ``/etc/config``, so ``cloud.conf`` must say ``ca-file=`` :data:`CLOUD_CONFIG_CA_FILE`.
CLOUD_CONFIG_CA_KEY = "ca.crt"
CLOUD_CONFIG_CA_FILE = f"/etc/config/{CLOUD_CONFIG_CA_KEY}"


def with_ca_file(cloud_conf: str) -> str:
    """``cloud.conf`` with ``ca-file=/etc/config/ca.crt`` in ``[Global]``, for a CA bundle
    that travels next to it in the ``cloud-config`` Secret. Without it OCCM cannot verify
    Keystone behind a private CA and nodes stay uninitialized. A ``ca-file`` or
    ``tls-insecure`` the file already has is the user's choice and stays."""
    return _with_option(
        cloud_conf, "Global", f"ca-file={CLOUD_CONFIG_CA_FILE}", ("ca-file", "tls-insecure")
    )


def with_internal_network(cloud_conf: str, network: str) -> str:
    """``cloud.conf`` with ``internal-network-name`` = the cluster network in
    ``[Networking]``: OCCM then reports only that network's addresses as the node's (it drops
    the other ports' addresses), so a node with ``extraNetworks`` keeps its node IP in
    ``network.nodeCIDR`` and its serving certificate request passes kubelet-csr-approver's
    IP check. An ``internal-network-name`` the file already has is the user's choice."""
    escaped = network.replace("\\", "\\\\").replace('"', '\\"')
    return _with_option(
        cloud_conf,
        "Networking",
        f'internal-network-name="{escaped}"',
        ("internal-network-name",),
        first=False,
    )


def _with_option(
    cloud_conf: str, title: str, option: str, own: tuple[str, ...], *, first: bool = True
) -> str:
    """``cloud_conf`` (gcfg) with the line ``option`` at the end of section ``[title]``,
    which is added (at the top if ``first``, else at the end) when missing; unchanged when
    that section already sets one of the keys ``own``."""
    wanted = title.lower()
    lines = cloud_conf.splitlines()
    section = ""
    end: int | None = None
    for index, raw in enumerate(lines):
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            if section == wanted and end is None:
                end = index
            section = line[1:-1].strip().lower()
            continue
        key = line.partition("=")[0].strip().lower()
        if section == wanted and key in own:
            return cloud_conf
    if section == wanted and end is None:
        end = len(lines)
    if end is None:
        block = [f"[{title}]", option]
        lines = [*block, "", *lines] if first else [*lines, *([""] if lines else []), *block]
    else:
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        lines.insert(end, option)
    return "\n".join(lines) + "\n"
