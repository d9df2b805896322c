"""Migrate a SCS KaaS v1 ``clusterctl.yaml`` (k8s-cluster-api-provider R3..R6) to settings.

KaaS v1 kept one flat ``KEY: value`` file per cluster. :data:`KEY_TABLE` lists every key
those releases wrote (the documentation table in ``docs/migration-from-kaas-v1.md`` is kept
in sync with it by a test) and :func:`migrate_kaas_v1` turns such a file into a commented
ClusterSettings document that validates, plus one report line per input key.

Values are read from the composed YAML nodes as raw text so that the KaaS v1 forms can be
interpreted deliberately: ``true``/``false``/``vX.Y.Z``/``master`` service values, empty
values, and lists and maps written as ``[ a, b, ]`` or ``{ k: 'v', }`` (quoted or not).
The values of the ``*_B64`` keys are never read into any message or output.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from scs_templates.errors import InputError
from scs_templates.migrate import flow
from scs_templates.migrate.emit import DocumentBuilder, dump
from scs_templates.settings.model import API_VERSION, KIND
from scs_templates.settings.problems import SettingsError, did_you_mean, format_path
from scs_templates.settings.versions import SUPPORTED_MINORS, TESTED_PATCHES

if TYPE_CHECKING:
    from pathlib import Path as FsPath

    from ruamel.yaml.comments import CommentedMap

    from scs_templates.settings.problems import Path

Status = Literal["mapped", "obsolete", "secret", "ignored", "unknown"]

DEFAULT_NAME = "testcluster"
DEFAULT_PREFIX = "capi"
DEFAULT_FLAVOR = "SCS-2V-4-20s"
WORKER_GROUP = "md-0"
MAX_INPUT_BYTES = 1024 * 1024

_GENERATION = "template names are hashed now, no counters: a change rolls the machines by itself"
_CREDENTIALS = (
    "credentials come from the clouds.yaml entry spec.openstack.cloud; "
    "`scs-templates openstack appcred create` makes the per-cluster application credential"
)


@dataclass(frozen=True)
class KeyInfo:
    """One KaaS v1 key: what became of it."""

    key: str
    status: Literal["mapped", "obsolete", "secret"]
    target: str
    note: str
    releases: str = "R3-R6"


# Every key KaaS v1 (R3 = v4.0.0 .. R6 = v7.0.0, plus main) wrote into clusterctl.yaml, in the
# order they are migrated. docs/migration-from-kaas-v1.md has the same table (tested).
KEY_TABLE: tuple[KeyInfo, ...] = (
    KeyInfo(
        "KUBERNETES_VERSION",
        "mapped",
        "spec.kubernetes.version",
        "`v1.28.x` -> `1.28.x`. A minor below the supported range becomes the oldest supported "
        "`.x` with a note: upgrade one minor at a time. Newer than supported is an error.",
    ),
    KeyInfo(
        "OPENSTACK_IMAGE_NAME",
        "mapped",
        "spec.openstack.image",
        "The embedded Kubernetes version (`v1.28.5`, `v1.28.x`) becomes `{version}`.",
    ),
    KeyInfo(
        "DEPLOY_OCCM",
        "mapped",
        "spec.services.cloudControllerManager",
        "`true` -> enabled; `vX.Y.Z` -> version (note: manifest vs chart versions); `master` "
        "-> enabled with a note. `false` is emitted enabled with a note: it must stay enabled.",
    ),
    KeyInfo(
        "DEPLOY_CINDERCSI",
        "mapped",
        "spec.services.cinderCSI",
        "`true`/`false`/`vX.Y.Z`/`master` -> enabled/version.",
    ),
    KeyInfo(
        "USE_CILIUM",
        "mapped",
        "spec.services.cni",
        "`true` -> type cilium; `vX.Y.Z` -> cilium with that version; `false` -> calico.",
    ),
    KeyInfo(
        "CALICO_VERSION",
        "mapped",
        "spec.services.cni.version",
        "Only with `USE_CILIUM: false`; ignored (and reported so) with Cilium.",
        "R4-R6",
    ),
    KeyInfo(
        "DEPLOY_NGINX_INGRESS",
        "mapped",
        "spec.services.ingressNginx",
        "`true`/`false`/`vX.Y.Z` -> enabled/version; enabled gets a deprecation note "
        "(ingress-nginx is retired upstream; use gatewayAPI).",
    ),
    KeyInfo(
        "NGINX_INGRESS_PROXY",
        "mapped",
        "spec.services.ingressNginx.proxyProtocol",
        "PROXY protocol on the ingress load balancer.",
    ),
    KeyInfo(
        "DEPLOY_GATEWAY_API",
        "mapped",
        "spec.services.gatewayAPI",
        "Cilium's Gateway API; with Calico, Envoy Gateway (a note says so).",
        "R5-R6",
    ),
    KeyInfo(
        "USE_OVN_LB_PROVIDER",
        "mapped",
        "spec.openstack.loadBalancerProvider",
        "`false` -> amphora, `true` -> ovn, `auto` -> amphora with a note.",
        "R4-R6",
    ),
    KeyInfo(
        "DEPLOY_CERT_MANAGER",
        "mapped",
        "spec.services.certManager",
        "`true`/`false`/`vX.Y.Z` -> enabled/version.",
    ),
    KeyInfo(
        "DEPLOY_FLUX",
        "mapped",
        "spec.services.flux",
        "`true`/`false`/`vX.Y.Z` -> enabled/version.",
    ),
    KeyInfo(
        "DEPLOY_METRICS",
        "mapped",
        "spec.services.metricsServer",
        "metrics-server now verifies the kubelet certificates (no --kubelet-insecure-tls).",
    ),
    KeyInfo(
        "OPENSTACK_CONTROL_PLANE_MACHINE_METADATA",
        "mapped",
        "spec.openstack.serverMetadata.controlPlane",
        "`{ k: 'v', }` -> a mapping.",
        "after R6",
    ),
    KeyInfo(
        "OPENSTACK_NODE_MACHINE_METADATA",
        "mapped",
        "spec.openstack.serverMetadata.workers",
        "`{ k: 'v', }` -> a mapping.",
        "after R6",
    ),
    KeyInfo(
        "OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR",
        "mapped",
        "spec.controlPlane.machineType",
        f"Empty -> the KaaS v1 default {DEFAULT_FLAVOR} with a note.",
    ),
    KeyInfo(
        "CONTROL_PLANE_MACHINE_COUNT",
        "mapped",
        "spec.controlPlane.replicas",
        "An even count is rounded up to the next odd one, 0 (no test cluster) becomes 1, more "
        "than 5 becomes 5; each with a note.",
    ),
    KeyInfo("CONTROL_PLANE_MACHINE_GEN", "obsolete", "", _GENERATION),
    KeyInfo(
        "OPENSTACK_NODE_MACHINE_FLAVOR",
        "mapped",
        "spec.workers[0].machineType",
        f"The one KaaS v1 MachineDeployment becomes worker group `{WORKER_GROUP}`. Empty -> "
        f"{DEFAULT_FLAVOR} with a note.",
    ),
    KeyInfo("WORKER_MACHINE_COUNT", "mapped", "spec.workers[0].replicas", "0..1000."),
    KeyInfo("WORKER_MACHINE_GEN", "obsolete", "", _GENERATION),
    KeyInfo(
        "CONTROL_PLANE_ROOT_DISKSIZE",
        "mapped",
        "spec.controlPlane.rootDiskGB",
        "KaaS v1 used it only for diskless flavors (0 = sized automatically); 0 now means "
        "booting from the flavor's disk.",
        "R5-R6",
    ),
    KeyInfo(
        "WORKER_ROOT_DISKSIZE",
        "mapped",
        "spec.workers[0].rootDiskGB",
        "As CONTROL_PLANE_ROOT_DISKSIZE.",
        "R5-R6",
    ),
    KeyInfo(
        "OPENSTACK_FAILURE_DOMAIN",
        "mapped",
        "spec.controlPlane.zones, spec.workers[0].zone",
        "One zone -> both; a list -> all for the control plane, the first for the workers.",
    ),
    KeyInfo(
        "ETCD_PRIO_BOOST",
        "obsolete",
        "",
        "always on now: heartbeat 250 ms, election timeout 2500 ms and etcd I/O priority are "
        "always set",
        "R3",
    ),
    KeyInfo("ETCD_UNSAFE_FS", "mapped", "spec.etcd.unsafeFS", "barrier=0,commit=20 remount."),
    KeyInfo(
        "PROXY_CMD",
        "obsolete",
        "",
        "internal to the KaaS v1 management-host scripts; the proxy itself came from the "
        "host's /etc/profile.d/proxy.sh: pass it with --proxy-profile (spec.network.proxy)",
        "R6",
    ),
    KeyInfo("NODE_CIDR", "mapped", "spec.network.nodeCIDR", "Node subnet."),
    KeyInfo("SERVICE_CIDR", "mapped", "spec.network.serviceCIDR", "Service network.", "R5-R6"),
    KeyInfo("POD_CIDR", "mapped", "spec.network.podCIDR", "Pod network.", "R5-R6"),
    KeyInfo("MTU_VALUE", "mapped", "spec.network.mtu", "0 = automatic."),
    KeyInfo(
        "RESTRICT_KUBEAPI",
        "mapped",
        "spec.network.apiAccess",
        "`[ ]` -> mode open; `[ none ]` -> mode internal; a CIDR list -> mode cidrs (a bare "
        "address gets /32).",
        "R4-R6",
    ),
    KeyInfo(
        "OPENSTACK_EXTERNAL_NETWORK_ID",
        "mapped",
        "spec.openstack.externalNetworkID",
        "Empty -> auto-detect (the default).",
    ),
    KeyInfo(
        "OPENSTACK_DNS_NAMESERVERS",
        "mapped",
        "spec.network.dnsServers",
        "`[ 5.1.66.255, 185.150.99.255, ]` -> a list.",
    ),
    KeyInfo("OPENSTACK_CLUSTER_GEN", "obsolete", "", _GENERATION, "R6"),
    KeyInfo(
        "OPENSTACK_SSH_KEY_NAME",
        "mapped",
        "spec.openstack.sshKeyName",
        "The keypair must exist in the project (KaaS v1 created `<prefix>-keypair`).",
    ),
    KeyInfo(
        "OPENSTACK_CONTROL_PLANE_IP",
        "obsolete",
        "",
        "internal: the API load balancer address is managed by Cluster API",
        "R3-R5",
    ),
    KeyInfo(
        "OPENSTACK_ANTI_AFFINITY",
        "mapped",
        "spec.openstack.antiAffinity",
        "`true` -> controlPlane hard (soft with OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER), "
        "workers soft; `false` -> none for both.",
    ),
    KeyInfo(
        "OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER",
        "mapped",
        "spec.openstack.antiAffinity.controlPlane",
        "`true` -> soft (only with OPENSTACK_ANTI_AFFINITY true).",
        "after R6",
    ),
    KeyInfo(
        "OPENSTACK_SRVGRP_CONTROLLER",
        "obsolete",
        "",
        "server groups are managed (see spec.openstack.antiAffinity)",
    ),
    KeyInfo(
        "OPENSTACK_SRVGRP_WORKER",
        "obsolete",
        "",
        "server groups are managed (see spec.openstack.antiAffinity)",
    ),
    KeyInfo(
        "OPENSTACK_IMAGE_RAW",
        "obsolete",
        "",
        "image upload is out of scope: upload the node images beforehand",
    ),
    KeyInfo(
        "OPENSTACK_IMAGE_REGISTRATION_EXTRA_FLAGS",
        "obsolete",
        "",
        "image upload is out of scope: upload the node images beforehand",
    ),
    KeyInfo(
        "OPENSTACK_CLOUD",
        "mapped",
        "spec.openstack.cloud",
        "The clouds.yaml entry. When OLD_OPENSTACK_CLOUD is present, OPENSTACK_CLOUD named the "
        "per-cluster credential entry KaaS v1 made and is reported obsolete.",
    ),
    KeyInfo(
        "OLD_OPENSTACK_CLOUD",
        "mapped",
        "spec.openstack.cloud",
        "Internal (written by KaaS v1 when it switched OPENSTACK_CLOUD to the per-cluster "
        "application credential): it holds the original clouds.yaml entry, which is used.",
        "R5-R6",
    ),
    KeyInfo("OPENSTACK_CLOUD_YAML_B64", "secret", "", _CREDENTIALS),
    KeyInfo("OPENSTACK_CLOUD_PROVIDER_CONF_B64", "secret", "", _CREDENTIALS),
    KeyInfo(
        "OPENSTACK_CLOUD_CACERT_B64",
        "secret",
        "",
        "the CA certificate comes from the cacert of the clouds.yaml entry",
    ),
    KeyInfo(
        "CLUSTER_API_OPENSTACK_INSTANCE_CREATE_TIMEOUT",
        "obsolete",
        "",
        "no per-cluster setting in CAPO",
        "R5-R6",
    ),
)

KEYS: dict[str, KeyInfo] = {info.key: info for info in KEY_TABLE}


class KeyReport(NamedTuple):
    """What happened to one input key. ``detail``: target path(s) and notes, or the reason."""

    key: str
    status: Status
    detail: str

    @property
    def line(self) -> str:
        if self.status == "mapped":
            return f"{self.key}: mapped -> {self.detail}"
        if self.status == "secret":
            return f"{self.key}: secret, not copied ({self.detail})"
        return f"{self.key}: {self.status} ({self.detail})"


@dataclass(frozen=True)
class MigrationResult:
    """The migrated document (commented), its YAML text, and the per-key report."""

    document: CommentedMap
    text: str
    report: list[KeyReport]
    notes: list[str] = field(default_factory=list)

    @property
    def report_lines(self) -> list[str]:
        return [entry.line for entry in self.report] + [f"note: {note}" for note in self.notes]


# --------------------------------------------------------------------------- reading


class _Problem(Exception):
    """A value of the wrong shape; the message is shown as FILE:LINE: KEY: message."""


@dataclass
class _Entry:
    key: str
    line: int
    kind: Literal["scalar", "list", "map"]
    text: str | None = None
    items: list[str] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)


def _read_entries(text: str, file: str) -> list[_Entry]:
    from scs_templates.settings.loader import YamlSyntaxError, compose_yaml

    if "\x00" in text:
        raise InputError(f"{file}: binary data, not a KaaS v1 clusterctl.yaml")
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        raise InputError(f"{file}: file is empty; expected a KaaS v1 clusterctl.yaml")
    try:
        root = compose_yaml(text, name_aliases=False)  # alias names may be secret values
    except YamlSyntaxError as error:
        where = f"{file}:{error.line}" if error.line else file
        raise InputError(f"{where}: not valid YAML: {error.message}") from None
    if root is None:
        raise InputError(f"{file}: file is empty; expected a KaaS v1 clusterctl.yaml")
    if root.id != "mapping":
        what = "a list" if root.id == "sequence" else "a single value"
        raise InputError(
            f"{file}: expected a mapping of KEY: value settings (a KaaS v1 clusterctl.yaml), "
            f"found {what}"
        )
    entries: list[_Entry] = []
    seen: dict[str, int] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + 1
        if key_node.id != "scalar":
            raise InputError(
                f"{file}:{line}: keys must be plain names such as WORKER_MACHINE_COUNT"
            )
        key = str(key_node.value)
        if key in seen:
            raise InputError(f"{file}:{line}: {key}: duplicate key (first at line {seen[key]})")
        seen[key] = line
        entries.append(_entry(key, line, value_node, file))
    return entries


def _entry(key: str, line: int, node: Any, file: str) -> _Entry:
    info = KEYS.get(key)
    if info is not None and info.status == "secret":
        return _Entry(key, line, "scalar", None)  # never keep or look at a secret's value
    if node.id == "scalar":
        is_null = node.tag.endswith(":null") and node.style is None
        return _Entry(key, line, "scalar", None if is_null else str(node.value))
    if node.id == "sequence":
        items: list[str] = []
        for item in node.value:
            if item.id != "scalar":
                raise InputError(f"{file}:{line}: {key}: nested lists or maps are not supported")
            items.append(str(item.value))
        return _Entry(key, line, "list", items=items)
    if node.id == "mapping":
        mapping: dict[str, str] = {}
        for map_key, map_value in node.value:
            if map_key.id != "scalar" or map_value.id != "scalar":
                raise InputError(f"{file}:{line}: {key}: nested lists or maps are not supported")
            mapping[str(map_key.value)] = str(map_value.value)
        return _Entry(key, line, "map", mapping=mapping)
    raise InputError(f"{file}:{line}: {key}: unsupported value")


# --------------------------------------------------------------------------- values


def _scalar(entry: _Entry) -> str | None:
    if entry.kind != "scalar":
        raise _Problem(f"expected a single value, found a {entry.kind}")
    if entry.text is None or not entry.text.strip():
        return None
    return entry.text.strip()


def _list(entry: _Entry) -> list[str] | None:
    """None for an empty value; [] for an empty list."""
    if entry.kind == "map":
        raise _Problem("expected a list such as [ a, b, ], found a map")
    if entry.kind == "list":
        return [item.strip() for item in entry.items if item.strip()]
    if entry.text is None or not entry.text.strip():
        return None
    try:
        return flow.parse_list(entry.text)
    except ValueError as error:
        raise _Problem(f"expected a list such as [ a, b, ]: {error}") from None


def _map(entry: _Entry) -> dict[str, str] | None:
    if entry.kind == "list":
        raise _Problem("expected a map such as { key: 'value', }, found a list")
    if entry.kind == "map":
        return dict(entry.mapping)
    if entry.text is None or not entry.text.strip():
        return None
    try:
        return flow.parse_map(entry.text)
    except ValueError as error:
        raise _Problem(f"expected a map such as {{ key: 'value', }}: {error}") from None


def _bool(entry: _Entry) -> bool | None:
    text = _scalar(entry)
    if text is None:
        return None
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise _Problem(f"expected true or false, found {text!r}")


def _int(entry: _Entry) -> int | None:
    text = _scalar(entry)
    if text is None:
        return None
    if not re.fullmatch(r"[+-]?\d+", text):
        raise _Problem(f"expected a whole number, found {text!r}")
    return int(text)


_SERVICE_VERSION = re.compile(r"^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
_VERSIONISH = re.compile(r"^v?\d+(\.\d+)*([-+][0-9A-Za-z.-]+)?$")
_K8S_VERSION = re.compile(r"^v?(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+|x)$")

_MANIFEST_NOTE = (
    "KaaS v1 versions were manifest/release versions, which may not match the chart "
    "versions scs-templates installs: check {version} against the chart, or remove it to "
    "use the tested default"
)


@dataclass(frozen=True)
class _ServiceValue:
    enabled: bool
    version: str | None
    notes: tuple[str, ...] = ()


def _service(entry: _Entry) -> _ServiceValue | None:
    text = _scalar(entry)
    if text is None:
        return None
    lowered = text.lower()
    if lowered in ("true", "false"):
        return _ServiceValue(lowered == "true", None)
    if lowered in ("master", "main"):
        return _ServiceValue(
            True,
            None,
            (
                f"{text!r} (the upstream development branch) has no chart equivalent: the "
                "tested default version is used",
            ),
        )
    if _SERVICE_VERSION.match(text):
        return _ServiceValue(True, text, (_MANIFEST_NOTE.format(version=text),))
    if _VERSIONISH.match(text):
        return _ServiceValue(
            True,
            None,
            (f"{text!r} is not a full X.Y.Z version; the tested default version is used",),
        )
    raise _Problem(f"expected true, false, master or a version such as v1.2.3, found {text!r}")


# --------------------------------------------------------------------------- migration

Handler = Callable[["_Migration", _Entry], None]


class _Migration:
    def __init__(self, entries: list[_Entry], *, file: str, name: str, prefix: str) -> None:
        self.entries = {entry.key: entry for entry in entries}
        self.order = [entry.key for entry in entries]
        self.file = file
        self.name = name
        self.prefix = prefix
        self.doc = DocumentBuilder()
        self.reports: dict[str, KeyReport] = {}
        self.notes: list[str] = []
        self.problems: list[str] = []
        self.sources: dict[Path, str] = {}
        self.k8s_minor: tuple[int, int] | None = None
        self.cni = "cilium"
        self.anti_affinity: bool | None = None

    # -- helpers

    def set(
        self, path: Path, value: Any, key: str, notes: tuple[str, ...] | list[str] = ()
    ) -> None:
        self.doc.set(path, value, comment=f"from {key}", notes=notes)
        self.sources[path] = key

    def mapped(self, key: str, targets: str, notes: tuple[str, ...] | list[str] = ()) -> None:
        detail = targets + (f" ({'; '.join(notes)})" if notes else "")
        self.reports[key] = KeyReport(key, "mapped", detail)

    def empty(self, key: str, default: str) -> None:
        self.mapped(key, KEYS[key].target, [f"empty: {default}"])

    def report(self, key: str, status: Status, detail: str) -> None:
        self.reports[key] = KeyReport(key, status, detail)

    # -- run

    def run(self) -> None:
        self.doc.set(("apiVersion",), API_VERSION)
        self.doc.set(("kind",), KIND)
        self.doc.set(("metadata", "name"), self.name, comment="from --name")
        spec = ("spec",)
        self.doc.set((*spec, "template"), "simple", comment="KaaS v1 had one worker group")
        self.doc.set((*spec, "provider"), "openstack")
        self.doc.set((*spec, "prefix"), self.prefix, comment="from --prefix")
        for section in ("kubernetes", "controlPlane"):
            self.doc.ensure((*spec, section))
        self.doc.set((*spec, "workers", 0, "name"), WORKER_GROUP)
        for section in ("network", "services", "etcd", "openstack"):
            self.doc.ensure((*spec, section))

        for info in KEY_TABLE:
            entry = self.entries.get(info.key)
            if entry is None:
                continue
            handler = _HANDLERS.get(info.key)
            try:
                if handler is not None:
                    handler(self, entry)
                elif info.status == "secret":
                    self.report(info.key, "secret", info.note)
                else:
                    self.report(info.key, "obsolete", info.note)
            except _Problem as problem:
                self.problems.append(f"{self.file}:{entry.line}: {info.key}: {problem}")
        for key in self.order:
            if key not in KEYS:
                hint = did_you_mean(key, list(KEYS))
                self.report(key, "unknown", f"not a KaaS v1 clusterctl.yaml key; ignored{hint}")
        self._required_flavors()
        self.doc.prune()
        if self.problems:
            raise InputError("\n".join(self.problems))

    def _required_flavors(self) -> None:
        for path, key in (
            (("spec", "controlPlane", "machineType"), "OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR"),
            (("spec", "workers", 0, "machineType"), "OPENSTACK_NODE_MACHINE_FLAVOR"),
        ):
            if not self.doc.has(path):
                note = f"{key} is missing: the KaaS v1 default {DEFAULT_FLAVOR} is used"
                self.doc.set(path, DEFAULT_FLAVOR, comment="KaaS v1 default", notes=[note])
                self.notes.append(note)

    def header(self, source: str) -> list[str]:
        left_out = [
            key
            for key in self.order
            if self.reports.get(key) and self.reports[key].status != "mapped"
        ]
        lines = [
            f"ClusterSettings migrated by `scs-templates migrate` from the SCS KaaS v1 "
            f"(k8s-cluster-api-provider) settings file {source}.",
            "Review every NOTE below before using it.",
            "Credentials are NOT copied: the *_B64 secrets of KaaS v1 stay behind. They come "
            "from the clouds.yaml entry spec.openstack.cloud, and `scs-templates openstack "
            f"appcred create` makes the restricted per-cluster application credential "
            f"{self.prefix}-{self.name}-appcred (as KaaS v1 did).",
        ]
        if left_out:
            lines.append(
                "Not carried over (see the report on stderr): " + ", ".join(left_out) + "."
            )
        return lines


# --------------------------------------------------------------------------- handlers


def _kubernetes_version(m: _Migration, entry: _Entry) -> None:
    text = _scalar(entry)
    if text is None:
        m.empty(entry.key, "the default version of scs-templates is used")
        return
    match = _K8S_VERSION.match(text)
    if not match:
        raise _Problem(f"{text!r} is not a Kubernetes version such as v1.28.x or v1.28.5")
    major, minor, patch = int(match["major"]), int(match["minor"]), match["patch"]
    m.k8s_minor = (major, minor)
    low, high = SUPPORTED_MINORS[0], SUPPORTED_MINORS[-1]
    path = ("spec", "kubernetes", "version")
    notes: list[str] = []
    if (major, minor) in TESTED_PATCHES:
        value = f"{major}.{minor}.{patch}"
    elif (major, minor) < low:
        value = f"{low[0]}.{low[1]}.x"
        steps = ", ".join(f"{major}.{step}" for step in range(minor + 1, low[1] + 1))
        notes.append(
            f"KaaS v1 ran Kubernetes {major}.{minor}, older than the supported "
            f"{low[0]}.{low[1]} to {high[0]}.{high[1]}: set to {value}. Upgrade the cluster "
            f"step by step, one minor at a time ({major}.{minor} -> {steps}), before it is "
            "managed with these settings; never skip a minor"
        )
    else:
        raise _Problem(
            f"Kubernetes {major}.{minor} is newer than this release of scs-templates supports "
            f"({low[0]}.{low[1]} to {high[0]}.{high[1]}); use a newer scs-templates"
        )
    m.set(path, value, entry.key, notes)
    m.mapped(entry.key, "spec.kubernetes.version", notes)


def _image(m: _Migration, entry: _Entry) -> None:
    text = _scalar(entry)
    if text is None:
        m.empty(entry.key, "the default ubuntu-capi-image-{version} is used")
        return
    notes: list[str] = []
    embedded = list(re.finditer(r"v(\d+)\.(\d+)\.(\d+|x)", text))
    value = text
    if m.k8s_minor is not None and embedded:
        same = [e for e in embedded if (int(e[1]), int(e[2])) == m.k8s_minor]
        if same:
            value = text[: same[0].start()] + "{version}" + text[same[0].end() :]
        else:
            notes.append(
                f"the image names {embedded[0][0]}, not the KUBERNETES_VERSION minor; it is "
                "kept as is: make sure it matches spec.kubernetes.version"
            )
    elif m.k8s_minor is not None:
        notes.append(
            "the image name embeds no Kubernetes version: it is used for every version, so "
            "change it on every upgrade"
        )
    m.set(("spec", "openstack", "image"), value, entry.key, notes)
    m.mapped(entry.key, "spec.openstack.image", notes)


#: Said by migrate when KaaS v1 deployed ingress-nginx (also a settings warning).
INGRESS_NGINX_DEPRECATION = (
    "ingress-nginx is deprecated (retired upstream, no security fixes since March 2026): "
    "plan the move to spec.services.gatewayAPI"
)


def _service_handler(field_name: str) -> Handler:
    def handle(m: _Migration, entry: _Entry) -> None:
        value = _service(entry)
        base = ("spec", "services", field_name)
        target = f"spec.services.{field_name}"
        if value is None:
            m.empty(entry.key, "the default is kept")
            return
        notes = list(value.notes)
        enabled = value.enabled
        if field_name == "cloudControllerManager" and not enabled:
            enabled = True
            notes.append(
                "false is not possible: the OpenStack cloud controller manager must stay "
                "enabled (nodes stay uninitialized without it); emitted enabled"
            )
        if field_name == "gatewayAPI" and enabled and m.cni != "cilium":
            notes.append(
                "with Calico the Gateway API implementation is Envoy Gateway (KaaS v1 had "
                "Cilium's only)"
            )
        if field_name == "ingressNginx" and enabled:
            notes.append(INGRESS_NGINX_DEPRECATION)
            m.notes.append(f"{entry.key}: {INGRESS_NGINX_DEPRECATION}")
        m.set((*base, "enabled"), enabled, entry.key, notes)
        targets = f"{target}.enabled"
        if value.version is not None and enabled:
            m.set((*base, "version"), value.version, entry.key)
            targets += f", {target}.version"
        m.mapped(entry.key, targets, notes)

    return handle


def _cilium(m: _Migration, entry: _Entry) -> None:
    value = _service(entry)
    if value is None:
        m.empty(entry.key, "Cilium, the default, is kept")
        return
    base = ("spec", "services", "cni")
    m.cni = "cilium" if value.enabled else "calico"
    m.set((*base, "type"), m.cni, entry.key, list(value.notes))
    targets = "spec.services.cni.type"
    if value.version is not None:
        m.set((*base, "version"), value.version, entry.key)
        targets += ", spec.services.cni.version"
    m.mapped(entry.key, targets, list(value.notes))


def _calico(m: _Migration, entry: _Entry) -> None:
    text = _scalar(entry)
    if m.cni != "calico":
        m.report(entry.key, "ignored", "only used with Calico; USE_CILIUM selects Cilium")
        return
    if text is None:
        m.empty(entry.key, "the tested default Calico version is used")
        return
    if not _SERVICE_VERSION.match(text):
        raise _Problem(f"expected a version such as v3.27.3, found {text!r}")
    m.set(("spec", "services", "cni", "version"), text, entry.key)
    m.mapped(entry.key, "spec.services.cni.version")


def _simple(path: Path, parse: Callable[[_Entry], Any], empty: str) -> Handler:
    """The common case: parse the value and map it; an empty value keeps the default."""

    def handle(m: _Migration, entry: _Entry) -> None:
        value = parse(entry)
        if value is None:
            m.empty(entry.key, empty)
            return
        m.set(path, value, entry.key)
        m.mapped(entry.key, format_path(path))

    return handle


def _bool_handler(path: Path) -> Handler:
    return _simple(path, _bool, "the default is kept")


def _lb_provider(m: _Migration, entry: _Entry) -> None:
    text = _scalar(entry)
    path = ("spec", "openstack", "loadBalancerProvider")
    if text is None:
        m.empty(entry.key, "amphora, the default, is kept")
        return
    notes: list[str] = []
    lowered = text.lower()
    if lowered == "true":
        value = "ovn"
    elif lowered == "false":
        value = "amphora"
    elif lowered == "auto":
        value = "amphora"
        notes.append(
            "auto (ovn where the cloud offers it) has no equivalent: amphora is used; set ovn "
            "if your cloud has the OVN Octavia provider"
        )
    else:
        raise _Problem(f"expected true, false or auto, found {text!r}")
    m.set(path, value, entry.key, notes)
    m.mapped(entry.key, format_path(path), notes)


def _metadata(field_name: str) -> Handler:
    def handle(m: _Migration, entry: _Entry) -> None:
        value = _map(entry)
        path = ("spec", "openstack", "serverMetadata", field_name)
        if not value:
            m.empty(entry.key, "no server metadata")
            return
        m.set(path, value, entry.key)
        m.mapped(entry.key, format_path(path))

    return handle


_DISK_FLAVOR = re.compile(r"^SCS-\d+[A-Za-z]*(:\d+)?-\d+(\.\d+)?[a-z]*-\d+[a-z]?([_-].*)?$")


def _flavor(path: Path) -> Handler:
    def handle(m: _Migration, entry: _Entry) -> None:
        text = _scalar(entry)
        notes: list[str] = []
        if text is None:
            text = DEFAULT_FLAVOR
            notes.append(f"empty: the KaaS v1 default {DEFAULT_FLAVOR} is used")
        m.set(path, text, entry.key, notes)
        m.mapped(entry.key, format_path(path), notes)

    return handle


def _control_plane_count(m: _Migration, entry: _Entry) -> None:
    value = _int(entry)
    path = ("spec", "controlPlane", "replicas")
    if value is None:
        m.empty(entry.key, "the default is kept")
        return
    if value < 0:
        raise _Problem(f"expected 0 or more machines, found {value}")
    notes: list[str] = []
    replicas = value
    if value == 0:
        replicas = 1
        notes.append(
            "0 meant 'no test cluster' in KaaS v1; a cluster needs a control plane: 1 is used"
        )
    elif value > 5:
        replicas = 5
        notes.append(f"{value} control-plane machines are not supported; 5 is used")
    elif value % 2 == 0:
        replicas = value + 1
        notes.append(
            f"an even count ({value}) does not improve etcd quorum; rounded up to {replicas}"
        )
    m.set(path, replicas, entry.key, notes)
    m.mapped(entry.key, format_path(path), notes)


def _worker_count(m: _Migration, entry: _Entry) -> None:
    value = _int(entry)
    path = ("spec", "workers", 0, "replicas")
    if value is None:
        m.empty(entry.key, "the default (3) is kept")
        return
    if value < 0:
        raise _Problem(f"expected 0 or more machines, found {value}")
    notes = (
        ["no worker machines: workloads only run if the control plane allows it"]
        if value == 0
        else []
    )
    m.set(path, value, entry.key, notes)
    m.mapped(entry.key, format_path(path), notes)


def _root_disk(path: Path, flavor_key: str) -> Handler:
    def handle(m: _Migration, entry: _Entry) -> None:
        value = _int(entry)
        if value is None:
            m.empty(entry.key, "0, boot from the flavor's disk")
            return
        if value < 0:
            raise _Problem(f"expected a size in GB (0 or more), found {value}")
        notes: list[str] = []
        flavor_entry = m.entries.get(flavor_key)
        flavor = None
        if flavor_entry is not None and flavor_entry.kind == "scalar" and flavor_entry.text:
            flavor = flavor_entry.text.strip()
        if value == 0:
            notes.append(
                "0 now means booting from the flavor's own disk (KaaS v1 sized a volume "
                "automatically for diskless flavors): set a size if the flavor has no disk"
            )
        elif flavor and _DISK_FLAVOR.match(flavor):
            notes.append(
                f"KaaS v1 ignored this for flavors with a local disk, and {flavor} seems to "
                "have one: set 0 to keep booting from it"
            )
        m.set(path, value, entry.key, notes)
        m.mapped(entry.key, format_path(path), notes)

    return handle


def _failure_domain(m: _Migration, entry: _Entry) -> None:
    if entry.kind == "scalar" and entry.text is not None and not entry.text.strip().startswith("["):
        zones = [entry.text.strip()] if entry.text.strip() else []
    else:
        zones = _list(entry) or []
    if not zones:
        m.empty(entry.key, "the provider's default placement")
        return
    notes: list[str] = []
    if len(zones) > 1:
        notes.append(
            f"the control plane is spread over all {len(zones)} zones, the worker group uses "
            f"{zones[0]}; use template multi-md for one worker group per zone"
        )
    m.set(("spec", "controlPlane", "zones"), zones, entry.key, notes)
    m.set(("spec", "workers", 0, "zone"), zones[0], entry.key)
    m.mapped(entry.key, KEYS[entry.key].target, notes)


def _string(path: Path, empty: str) -> Handler:
    return _simple(path, _scalar, empty)


_mtu = _simple(("spec", "network", "mtu"), _int, "0, automatic")


def _restrict_kubeapi(m: _Migration, entry: _Entry) -> None:
    items = _list(entry)
    base = ("spec", "network", "apiAccess")
    if items is None or not items:
        m.set((*base, "mode"), "open", entry.key)
        m.mapped(entry.key, "spec.network.apiAccess.mode (open)")
        return
    has_none = any(item.lower() == "none" for item in items)
    cidrs = [item for item in items if item.lower() != "none"]
    notes: list[str] = []
    if not cidrs:
        m.set((*base, "mode"), "internal", entry.key)
        m.mapped(entry.key, "spec.network.apiAccess.mode (internal)")
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
    m.mapped(entry.key, "spec.network.apiAccess.mode (cidrs), spec.network.apiAccess.cidrs", notes)


def _dns(m: _Migration, entry: _Entry) -> None:
    items = _list(entry)
    path = ("spec", "network", "dnsServers")
    if items is None:
        m.empty(entry.key, "the default resolvers are kept")
        return
    notes = (
        ["an empty list: the node subnet gets no DNS servers (as in KaaS v1)"] if not items else []
    )
    m.set(path, items, entry.key, notes)
    m.mapped(entry.key, format_path(path), notes)


def _ssh_key(m: _Migration, entry: _Entry) -> None:
    text = _scalar(entry)
    path = ("spec", "openstack", "sshKeyName")
    if text is None:
        m.empty(entry.key, "no keypair is injected")
        return
    notes = [
        f"the keypair {text} must exist in the project; scs-templates does not create it "
        "(KaaS v1 made <prefix>-keypair on the management host)"
    ]
    m.set(path, text, entry.key, notes)
    m.mapped(entry.key, format_path(path), notes)


def _anti_affinity(m: _Migration, entry: _Entry) -> None:
    value = _bool(entry)
    base = ("spec", "openstack", "antiAffinity")
    if value is None:
        m.empty(entry.key, "hard for the control plane, soft for workers")
        return
    m.anti_affinity = value
    soft_entry = m.entries.get("OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER")
    soft = False
    if soft_entry is not None:
        try:
            soft = bool(_bool(soft_entry))
        except _Problem:
            soft = False  # reported by its own handler
    control_plane = ("soft" if soft else "hard") if value else "none"
    workers = "soft" if value else "none"
    m.set((*base, "controlPlane"), control_plane, entry.key)
    m.set((*base, "workers"), workers, entry.key)
    m.mapped(entry.key, f"{format_path(base)}.controlPlane, {format_path(base)}.workers")


def _soft_anti_affinity(m: _Migration, entry: _Entry) -> None:
    value = _bool(entry)
    path = ("spec", "openstack", "antiAffinity", "controlPlane")
    if value is None:
        m.empty(entry.key, "hard anti-affinity for the control plane")
        return
    if m.anti_affinity is False:
        m.report(entry.key, "ignored", "OPENSTACK_ANTI_AFFINITY is false: no server groups")
        return
    if m.anti_affinity is None:
        m.set(path, "soft" if value else "hard", entry.key)
    m.sources[path] = entry.key
    m.mapped(entry.key, format_path(path))


def _cloud(m: _Migration, entry: _Entry) -> None:
    text = _scalar(entry)
    path = ("spec", "openstack", "cloud")
    old = m.entries.get("OLD_OPENSTACK_CLOUD")
    if old is not None and old.kind == "scalar" and old.text and old.text.strip():
        m.report(
            entry.key,
            "obsolete",
            "it named the per-cluster application credential entry KaaS v1 made; "
            "OLD_OPENSTACK_CLOUD holds the original clouds.yaml entry and is used instead",
        )
        return
    if text is None:
        m.empty(entry.key, "the default clouds.yaml entry 'openstack' is used")
        return
    m.set(path, text, entry.key)
    m.mapped(entry.key, format_path(path))


def _old_cloud(m: _Migration, entry: _Entry) -> None:
    text = _scalar(entry)
    if text is None:
        m.report(entry.key, "obsolete", "internal to KaaS v1 and empty here")
        return
    notes = [
        "the original clouds.yaml entry, before KaaS v1 switched to the per-cluster credential"
    ]
    m.set(("spec", "openstack", "cloud"), text, entry.key, notes)
    m.mapped(entry.key, "spec.openstack.cloud", notes)


_HANDLERS: dict[str, Handler] = {
    "KUBERNETES_VERSION": _kubernetes_version,
    "OPENSTACK_IMAGE_NAME": _image,
    "DEPLOY_OCCM": _service_handler("cloudControllerManager"),
    "DEPLOY_CINDERCSI": _service_handler("cinderCSI"),
    "USE_CILIUM": _cilium,
    "CALICO_VERSION": _calico,
    "DEPLOY_NGINX_INGRESS": _service_handler("ingressNginx"),
    "NGINX_INGRESS_PROXY": _bool_handler(("spec", "services", "ingressNginx", "proxyProtocol")),
    "DEPLOY_GATEWAY_API": _service_handler("gatewayAPI"),
    "USE_OVN_LB_PROVIDER": _lb_provider,
    "DEPLOY_CERT_MANAGER": _service_handler("certManager"),
    "DEPLOY_FLUX": _service_handler("flux"),
    "DEPLOY_METRICS": _service_handler("metricsServer"),
    "OPENSTACK_CONTROL_PLANE_MACHINE_METADATA": _metadata("controlPlane"),
    "OPENSTACK_NODE_MACHINE_METADATA": _metadata("workers"),
    "OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR": _flavor(("spec", "controlPlane", "machineType")),
    "CONTROL_PLANE_MACHINE_COUNT": _control_plane_count,
    "OPENSTACK_NODE_MACHINE_FLAVOR": _flavor(("spec", "workers", 0, "machineType")),
    "WORKER_MACHINE_COUNT": _worker_count,
    "CONTROL_PLANE_ROOT_DISKSIZE": _root_disk(
        ("spec", "controlPlane", "rootDiskGB"), "OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR"
    ),
    "WORKER_ROOT_DISKSIZE": _root_disk(
        ("spec", "workers", 0, "rootDiskGB"), "OPENSTACK_NODE_MACHINE_FLAVOR"
    ),
    "OPENSTACK_FAILURE_DOMAIN": _failure_domain,
    "ETCD_UNSAFE_FS": _bool_handler(("spec", "etcd", "unsafeFS")),
    "NODE_CIDR": _string(("spec", "network", "nodeCIDR"), "the default 10.8.0.0/20 is kept"),
    "SERVICE_CIDR": _string(("spec", "network", "serviceCIDR"), "the default 10.96.0.0/12 is kept"),
    "POD_CIDR": _string(("spec", "network", "podCIDR"), "the default 192.168.0.0/16 is kept"),
    "MTU_VALUE": _mtu,
    "RESTRICT_KUBEAPI": _restrict_kubeapi,
    "OPENSTACK_EXTERNAL_NETWORK_ID": _string(
        ("spec", "openstack", "externalNetworkID"), "auto-detect, the default"
    ),
    "OPENSTACK_DNS_NAMESERVERS": _dns,
    "OPENSTACK_SSH_KEY_NAME": _ssh_key,
    "OPENSTACK_ANTI_AFFINITY": _anti_affinity,
    "OPENSTACK_SOFT_ANTI_AFFINITY_CONTROLLER": _soft_anti_affinity,
    "OPENSTACK_CLOUD": _cloud,
    "OLD_OPENSTACK_CLOUD": _old_cloud,
}


# --------------------------------------------------------------------------- entry point


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


def _proxy_profile(migration: _Migration, variables: dict[str, str], file: str) -> None:
    path = ("spec", "network", "proxy")
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


def migrate_kaas_v1(
    text: str,
    *,
    name: str = DEFAULT_NAME,
    prefix: str = DEFAULT_PREFIX,
    file: str = "clusterctl.yaml",
    proxy_profile: str | None = None,
    proxy_file: str = "proxy.sh",
) -> MigrationResult:
    """Migrate the text of a KaaS v1 ``clusterctl.yaml`` into a ClusterSettings document.

    ``proxy_profile`` is the text of the management host's ``/etc/profile.d/proxy.sh``
    (``proxy_file`` its name in messages): its proxy variables become
    ``spec.network.proxy``.

    Raises :class:`InputError` (exit code 2) when the text is not such a file, when a value
    of a known key has the wrong shape (``FILE:LINE: KEY: message``, one line per problem),
    or when the result would not validate. Secret values never appear in any message.
    """
    from scs_templates.settings.validate import parse_settings_text

    entries = _read_entries(text, file)
    if not any(entry.key in KEYS for entry in entries):
        raise InputError(
            f"{file}: no KaaS v1 settings found (expected keys such as KUBERNETES_VERSION "
            "and WORKER_MACHINE_COUNT)"
        )
    migration = _Migration(entries, file=file, name=name, prefix=prefix)
    migration.run()
    proxy_cmd = migration.entries.get("PROXY_CMD")
    if proxy_profile is not None:
        _proxy_profile(migration, parse_proxy_profile(proxy_profile, proxy_file), proxy_file)
    elif proxy_cmd is not None and proxy_cmd.kind == "scalar" and (proxy_cmd.text or "").strip():
        migration.notes.append(
            "PROXY_CMD is set: the cluster used the management host's proxy; pass "
            "--proxy-profile /etc/profile.d/proxy.sh to carry it over"
        )
    migration.doc.header(migration.header(file))
    output = dump(migration.doc.root)
    try:
        loaded = parse_settings_text(output, file="<migrated>")
    except SettingsError as error:
        raise InputError(
            "\n".join(
                _locate(migration, problem.path, problem.message) for problem in error.problems
            )
        ) from None
    for warning in loaded.warnings:
        key = _source(migration, warning.path)
        message = f"{format_path(warning.path)}: {warning.message}"
        if key is not None and key in migration.reports:
            old = migration.reports[key]
            migration.reports[key] = old._replace(detail=f"{old.detail} (warning: {message})")
        else:
            migration.notes.append(message)
    entries_by_key = {entry.key: entry for entry in entries}
    report = [migration.reports[entry.key] for entry in entries if entry.key in migration.reports]
    assert len(report) == len(entries_by_key), "every input key must be reported"
    return MigrationResult(migration.doc.root, output, report, migration.notes)


def _source(migration: _Migration, path: Path) -> str | None:
    for end in range(len(path), 0, -1):
        key = migration.sources.get(path[:end])
        if key is not None:
            return key
    return None


def _locate(migration: _Migration, path: Path, message: str) -> str:
    key = _source(migration, path)
    if key is not None:
        entry = migration.entries[key]
        return f"{migration.file}:{entry.line}: {key}: {message}"
    if path[:2] == ("metadata", "name"):
        return f"--name: {message}"
    if path == ("spec", "workers", 0, "name"):
        return f"--name/--prefix: {message}"
    if path[:2] == ("spec", "prefix"):
        return f"--prefix: {message}"
    dotted = format_path(path)
    for info in KEY_TABLE:
        if info.target == dotted:
            return f"{migration.file}: {info.key} (not set; the default {dotted}): {message}"
    return f"{migration.file}: migrated {dotted}: {message}"


def read_input(path: FsPath | str) -> str:
    """Read a clusterctl.yaml (``-``: stdin) as text; every failure is one InputError.

    At most :data:`MAX_INPUT_BYTES` are read; devices and FIFOs are refused
    (:mod:`scs_templates.textinput`).
    """
    from scs_templates.textinput import InputRefused, display_name, read_limited

    file = display_name(str(path))
    try:
        raw = read_limited(str(path), MAX_INPUT_BYTES)
    except InputRefused as refused:
        message = str(refused)
        if message == "is a directory":
            message = "is a directory, not a clusterctl.yaml"
        raise InputError(f"{file}: {message}") from None
    if b"\x00" in raw:
        raise InputError(f"{file}: binary data, not a KaaS v1 clusterctl.yaml")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{file}: not UTF-8 text (invalid byte at offset {error.start})") from None
