"""The state of one migration: the input's keys, the document being built, the report.

The key handlers (:mod:`.services`, :mod:`.machines`, :mod:`.network`, :mod:`.openstack`)
write into a :class:`Migration` through :meth:`Migration.set` (a settings value with the
comment naming its source key) and say what became of their key with
:meth:`Migration.mapped`, :meth:`Migration.empty` or :meth:`Migration.report`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from scs_templates._contract import migration as migration_contract
from scs_templates._core.naming import in_namespace, resource_name
from scs_templates._settings.keys import API_VERSION, KIND
from scs_templates._settings.problems import format_path
from scs_templates.providers.openstack.appcred import CLUSTER_SUFFIX
from scs_templates.providers.openstack.migrate.emit import DocumentBuilder

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap

    from scs_templates._settings.problems import Path
    from scs_templates.providers.openstack.migrate.reading import Entry

Status = Literal["mapped", "obsolete", "secret", "ignored", "unknown"]

DEFAULT_NAME = migration_contract.DEFAULT_NAME
DEFAULT_PREFIX = migration_contract.DEFAULT_PREFIX
#: The one KaaS v1 MachineDeployment becomes the worker group of this name.
WORKER_GROUP = "md-0"


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


class Migration:
    """One clusterctl.yaml on its way to a ClusterSettings document."""

    def __init__(self, entries: list[Entry], *, file: str, name: str, prefix: str) -> None:
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

    def start(self) -> None:
        """The document's header and the sections in the order a reader expects them."""
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

    def set(
        self, path: Path, value: Any, key: str, notes: tuple[str, ...] | list[str] = ()
    ) -> None:
        self.doc.set(path, value, comment=f"from {key}", notes=notes)
        self.sources[path] = key

    def mapped(self, key: str, targets: str, notes: tuple[str, ...] | list[str] = ()) -> None:
        detail = targets + (f" ({'; '.join(notes)})" if notes else "")
        self.reports[key] = KeyReport(key, "mapped", detail)

    def map_to(self, info: KeyInfo, value: Any, notes: tuple[str, ...] | list[str] = ()) -> None:
        """The common case: ``value`` at the row's one target, the key reported mapped."""
        self.set(info.path, value, info.key, notes)
        self.mapped(info.key, info.target, notes)

    def empty(self, info: KeyInfo, default: str) -> None:
        """The key is there without a value: the default (``default`` says which) is kept."""
        self.mapped(info.key, info.target, [f"empty: {default}"])

    def report(self, key: str, status: Status, detail: str) -> None:
        self.reports[key] = KeyReport(key, status, detail)

    def source(self, path: Path) -> str | None:
        """The input key that wrote ``path`` or the nearest section above it."""
        for end in range(len(path), 0, -1):
            key = self.sources.get(path[:end])
            if key is not None:
                return key
        return None

    def header(self, source: str) -> list[str]:
        kaas_v1 = resource_name(self.prefix, self.name, CLUSTER_SUFFIX)
        appcred = in_namespace(kaas_v1, "$NAMESPACE")
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
            f"{appcred} (KaaS v1's {kaas_v1}, with the cluster's namespace).",
        ]
        if left_out:
            lines.append(
                "Not carried over (see the report on stderr): " + ", ".join(left_out) + "."
            )
        return lines


#: Migrates one key's value: writes the row's targets into the migration and reports.
Handler = Callable[["Migration", "Entry", "KeyInfo"], None]


@dataclass(frozen=True)
class KeyInfo:
    """One KaaS v1 key: what became of it, and (mapped keys) the handler that migrates it."""

    key: str
    status: Literal["mapped", "obsolete", "secret"]
    note: str
    releases: str = "R3-R6"
    #: The settings fields the key maps onto (empty for obsolete and secret keys).
    targets: tuple[Path, ...] = ()
    migrate: Handler | None = None
    #: The value KaaS v1 used when the key was missing (set with a note), if it had one.
    when_missing: str | None = None

    @property
    def path(self) -> Path:
        """The (first) settings field of the key."""
        return self.targets[0]

    @property
    def target(self) -> str:
        """The settings fields as the documentation writes them (``spec.workers[0].zone``)."""
        return ", ".join(format_path(target) for target in self.targets)
