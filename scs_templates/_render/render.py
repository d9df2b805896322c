"""Render a cluster: settings -> helm values -> ``helm template`` -> manifests.

Decision on the output text: :attr:`RenderResult.manifests` is EXACTLY what ``helm template``
printed, ``# Source:`` comments included. Keeping helm's bytes means the output can be
reproduced with helm alone (``scs-templates values --output-dir DIR`` prints the command), compared
with ``helmfile template`` or ``helm get manifest``, and diffed across versions without a
re-serialisation step that could itself introduce changes (key order, quoting, YAML 1.1
booleans). Whoever needs data uses :attr:`RenderResult.objects` (parsed) instead.

Everything that makes a render non-reproducible is pinned: the namespace (``-n``), the
Kubernetes version (``--kube-version``, resolved from the settings, e.g. ``1.33.x`` ->
``v1.33.5``), the chart (vendored in the package) and helm's environment (hermetic homes).
"""

from __future__ import annotations

import functools
import re
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates._core import atomic, yaml_text
from scs_templates._core.errors import ToolError
from scs_templates._core.records import record
from scs_templates._render.charts import chart_for
from scs_templates._render.values import build_values
from scs_templates._tools.helm import Helm
from scs_templates._versions.kubernetes import resolve_version
from scs_templates.providers.registry import provider_of

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from scs_templates._render.charts import ChartRef
    from scs_templates._settings.model import ClusterSettings

_DOCUMENT_SEPARATOR = re.compile(r"^---[ \t]*(?:#.*)?$", re.MULTILINE)
_UNSAFE_NAME = re.compile(r"[^a-z0-9._-]+")


@record
class RenderResult:
    """One rendered cluster.

    ``manifests``: multi-document YAML exactly as helm printed it (see the module doc).
    ``documents``: the same text split into one string per object, in helm's order.
    ``objects``: the parsed objects, same order, parsed on first use (a render that is only
    printed or written never pays for YAML parsing). ``values``: the helm values used (never
    a credential: the OpenStack chart references the credentials Secret by name).
    """

    release: str
    namespace: str
    chart: ChartRef
    kube_version: str
    values: dict[str, Any] = field(repr=False)
    manifests: str = field(repr=False)
    documents: tuple[str, ...] = field(repr=False)

    @classmethod
    def from_manifests(
        cls,
        *,
        release: str,
        namespace: str,
        chart: ChartRef,
        kube_version: str,
        values: dict[str, Any],
        manifests: str,
    ) -> RenderResult:
        """A result from helm's output, split into documents (the one way to build one).

        A cluster chart always renders objects: output without any (helm exiting 0 after
        printing nothing or only comments) is helm's failure, raised here so that it never
        replaces a previous output directory (single renders and fleets alike).
        """
        documents = tuple(split_texts(manifests))
        if not documents:
            raise ToolError(f"helm template {release} exited 0 but printed no manifests")
        return cls(
            release=release,
            namespace=namespace,
            chart=chart,
            kube_version=kube_version,
            values=values,
            manifests=manifests,
            documents=documents,
        )

    @functools.cached_property
    def objects(self) -> tuple[dict[str, Any], ...]:
        return tuple(parse_object(text) for text in self.documents)

    def file_names(self) -> list[str]:
        """Deterministic file names, one per object: ``NN-kind-name.yaml`` in helm's order.

        The number keeps helm's install order (namespaces and CRDs first) when the files are
        applied in name order, and makes names unique even for equal kind/name pairs.
        Unless :attr:`objects` are parsed already, each document is parsed for its name and
        let go: a fleet written to a folder would otherwise hold every cluster's parsed
        objects until the last file is written (peak RSS at 2000 clusters 359 -> 172 MiB).
        """
        return list(self._file_names)

    @functools.cached_property
    def _file_names(self) -> tuple[str, ...]:
        objects = self.__dict__.get("objects")
        if objects is None:  # parsed only to be named, then let go
            objects = [parse_object(text) for text in self.documents]
        return tuple(object_file_names(objects))


def object_file_names(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """``NN-kind-name.yaml`` for each object, numbered in the given order (see
    :meth:`RenderResult.file_names`; ``services render -o`` names its files the same way)."""
    width = max(2, len(str(len(objects))))
    names = []
    for index, obj in enumerate(objects, start=1):
        kind = _safe_part(str(obj.get("kind") or "object"))
        metadata = obj.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        names.append(f"{index:0{width}d}-{kind}-{_safe_part(str(name or 'unnamed'))}.yaml")
    return names


def _safe_part(text: str) -> str:
    return _UNSAFE_NAME.sub("-", text.lower()).strip("-.") or "x"


def kube_version_of(settings: ClusterSettings) -> str:
    """The concrete Kubernetes version passed as ``--kube-version`` (``1.37.x`` -> ``v1.37.2``;
    on Docker the version of the kind node image it resolves to)."""
    spec = settings.spec
    return str(
        resolve_version(spec.kubernetes.version, provider_of(settings).kind_node_images).version
    )


def split_texts(manifests: str) -> list[str]:
    """Split helm output into per-object texts; documents of only comments are dropped."""
    texts: list[str] = []
    for chunk in _DOCUMENT_SEPARATOR.split(manifests):
        lines = [line.strip() for line in chunk.splitlines()]
        if all(not line or line.startswith("#") for line in lines):
            continue
        texts.append(chunk.lstrip("\n").rstrip() + "\n")
    return texts


def parse_object(text: str) -> dict[str, Any]:
    """One object of helm's (or helmfile's) output; helm printing anything else is helm's
    failure (exit 1), never an internal error (:mod:`scs_templates._core.yaml_text`)."""
    try:
        data = yaml_text.load(text)
    except yaml_text.YAMLError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "invalid YAML"
        raise ToolError(f"helm printed output that is not a YAML manifest: {first}") from None
    if not isinstance(data, dict):
        raise ToolError(f"helm printed a document that is not an object: {text[:80]!r}")
    return data


def split_documents(manifests: str) -> tuple[list[str], list[dict[str, Any]]]:
    """Split helm output into per-object texts and parsed objects (empty documents dropped)."""
    texts = split_texts(manifests)
    return texts, [parse_object(text) for text in texts]


@record
class RenderJob:
    """One cluster prepared for ``helm template``: the ONE preparation of single renders
    (:func:`render`) and fleets (:func:`scs_templates._render.fleet.render_fleet`).

    ``kube_version`` is the values' ``kubernetes.version``: the values builder resolves the
    Kubernetes version once, and ``--kube-version`` is that same string.
    """

    release: str
    namespace: str
    chart: ChartRef
    kube_version: str
    values: dict[str, Any] = field(repr=False)

    def template(self, helm: Helm) -> str:
        """helm's output for this cluster alone."""
        return helm.template(
            self.release,
            Path(self.chart.path),
            namespace=self.namespace,
            values=self.values,
            kube_version=self.kube_version,
        )

    def result(self, manifests: str) -> RenderResult:
        """The result of helm's output for this cluster (ToolError when it holds nothing)."""
        return RenderResult.from_manifests(
            release=self.release,
            namespace=self.namespace,
            chart=self.chart,
            kube_version=self.kube_version,
            values=self.values,
            manifests=manifests,
        )


def prepare_render(settings: ClusterSettings, chart: ChartRef | None = None) -> RenderJob:
    """Values, chart and Kubernetes version of one cluster (``chart``: the provider's chart,
    when the caller looked it up already)."""
    values = build_values(settings)
    return RenderJob(
        release=settings.metadata.name,
        namespace=settings.metadata.namespace,
        chart=chart if chart is not None else chart_for(provider_of(settings)),
        kube_version=str(values["kubernetes"]["version"]),
        values=values,
    )


def render(settings: ClusterSettings, *, helm: Helm | None = None) -> RenderResult:
    """Render one cluster offline. Raises :class:`~scs_templates._tools.helm.HelmError` if helm
    fails.

    The output never holds a credential: the OpenStack credentials Secret is not part of the
    chart (see :func:`scs_templates._lifecycle.store_credentials`).
    """
    job = prepare_render(settings)
    return job.result(job.template(helm if helm is not None else Helm()))


def _is_manifest_file(entry: Path) -> bool:
    return entry.is_file() and not entry.is_symlink() and entry.suffix == ".yaml"


def _is_fleet_folder(entry: Path, depth: int = 2) -> bool:
    """A ``NS`` (depth 2) or ``NS/NAME`` (depth 1) folder of a fleet output: manifests only.

    A link inside says yes: :func:`scs_templates._core.atomic.check_replaceable` then names it.
    """
    if entry.is_symlink():
        return True
    if depth == 0:
        return _is_manifest_file(entry)
    return entry.is_dir() and all(_is_fleet_folder(child, depth - 1) for child in entry.iterdir())


def check_output_dir(directory: Path, *, fleet: bool = False) -> None:
    """Refuse (exit 2) an output folder that ``write_manifests`` (``fleet``:
    ``write_fleet``) would refuse, before any work: a link at or below it, or a file that is
    not a manifest (a fleet's: not in a ``NS/NAME`` folder)."""
    atomic.check_replaceable(directory, _is_fleet_folder if fleet else _is_manifest_file)


def write_manifests(
    result: RenderResult, directory: str | Path, *, private: bool = False
) -> list[Path]:
    """Write one file per object into ``directory``, atomically; return the paths.

    Each file holds the object's document exactly as helm printed it. The directory is
    replaced as a whole (see :func:`scs_templates._core.atomic.write_directory`): stale files of a
    previous render disappear, but only after the new set is complete. An existing directory
    holding anything but ``*.yaml`` files, or a symbolic link, is refused. ``private`` writes a
    0700 directory with 0600 files.
    """
    names = result.file_names()
    files = dict(zip(names, result.documents, strict=True))
    target = atomic.write_directory(
        directory, files, private=private, replaceable=_is_manifest_file
    )
    return [target / name for name in names]


def write_fleet(
    results: Sequence[RenderResult], directory: str | Path, *, private: bool = False
) -> list[Path]:
    """Write ``DIR/NAMESPACE/NAME/NN-kind-name.yaml`` for every result; return the paths.

    The whole of ``directory`` is replaced at once, as :func:`write_manifests` replaces one
    cluster's folder: a signal, a full disk or a crash leaves the previous fleet or nothing,
    never a mixture, and the folders of clusters not in ``results`` (an earlier run with
    more clusters) are gone. An existing directory holding anything but such folders of
    ``*.yaml`` files, or a symbolic link, is refused.
    """
    files: dict[str, str] = {}
    for result in results:
        folder = f"{result.namespace}/{result.release}"
        for name, document in zip(result.file_names(), result.documents, strict=True):
            files[f"{folder}/{name}"] = document
    target = atomic.write_directory(directory, files, private=private, replaceable=_is_fleet_folder)
    return [target / name for name in files]
