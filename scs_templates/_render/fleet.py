# One module over 500 lines: the umbrella-chart render is one mechanism (plan the batches,
# write the umbrella, run helm, split the output back) whose parts rely on the same
# invariants, stated once in the docstring below.
"""Render a fleet of clusters with few helm processes: one UMBRELLA chart per batch.

Why: a ``helm template`` costs ~40-60 ms of process start and chart loading before it renders
anything, so 100 clusters rendered one by one spend most of their time starting helm (and
helmfile adds its own ``helm version`` and per-release overhead on top). Here the clusters
are split into a few batches (by default one per CPU, run in parallel) and each batch is ONE
``helm template`` of a generated umbrella chart:

    <tmp>/fleet/Chart.yaml      dependencies: the prepared provider chart, once per cluster,
                                ``alias: c-<index>`` (index = position in the input list),
                                no ``condition``
    <tmp>/fleet/charts/<chart>  a symlink to the prepared chart (``chart_for``): helm copies
                                the one loaded chart once per alias, nothing is copied on disk;
                                or, where its library subcharts can be shared
                                (:func:`shared_libraries`), symlinks to its files with a
                                Chart.yaml without dependencies, and each library once in
                                ``<tmp>/fleet/charts/`` beside it
    values (JSON on stdin)      ``{"c-<index>": <that cluster's values>, ...}``

helm prints every object with a ``# Source: fleet/charts/c-<index>/templates/...`` comment;
the output is split back per cluster on those comments and the prefix is rewritten to the
provider chart's own name (``# Source: openstack-cluster/templates/...``). The result is
BYTE-IDENTICAL to :func:`scs_templates._render.render.render` of the cluster alone (the tests prove
it for a mixed fleet): helm orders objects by kind, then by template path, then by order in
the file, and the relative order of one cluster's paths does not change under the common
``fleet/charts/c-<index>/`` prefix.

What an umbrella changes, and how it is handled (checked on the prepared charts, not assumed):

* templates named the same in different provider charts (``provider.machineSpec`` exists in
  every provider chart) are global in helm, so one umbrella holds ONE provider chart: batches
  never mix charts;
* ``-n`` sets ``.Release.Namespace`` for the whole batch: batches never mix namespaces;
* ``--kube-version`` is per batch: batches mix Kubernetes versions only when no template uses
  ``.Capabilities`` and the chart has no ``kubeVersion`` constraint;
* ``.Release.Name`` (and the other ``.Release`` fields), ``.Chart`` and ``.Template`` are the
  umbrella's: a chart using any of them is not batched at all; each of its clusters gets its
  own plain ``helm template`` (exactly what :func:`~scs_templates._render.render.render` runs);
* values schema validation runs per alias against the subchart's own schema, as for a plain
  render (the schemas accept the ``global`` key helm adds to subchart values);
* when a batch fails, its clusters are rendered one by one so that the error names the
  cluster (and its own helm message) instead of an alias in a batch.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ruamel.yaml import YAML

from scs_templates._core.errors import ToolError
from scs_templates._render.charts import ChartRef, chart_for
from scs_templates._render.render import RenderJob, RenderResult, prepare_render
from scs_templates._render.values.gate import values_gate
from scs_templates._tools.helm import Helm, HelmError
from scs_templates._tools.toolchain.go_build import unless_callers

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings

__all__ = [
    "UMBRELLA_NAME",
    "Batch",
    "ChartTraits",
    "SharedLibraries",
    "chart_traits",
    "plan_batches",
    "render_fleet",
    "render_fleet_manifests",
    "shared_libraries",
    "split_umbrella_output",
    "umbrella_values",
    "values_checked_by_gate",
    "write_umbrella",
]

#: Name (and release name) of the generated umbrella chart.
UMBRELLA_NAME = "fleet"
#: At most this many clusters per umbrella. helm's cost per alias grows with the number of
#: aliases (measured with helm 3.15, CPU per cluster: ~14 ms at 10-25 aliases, ~17 ms at 50,
#: ~25 ms at 100), so large fleets get more, smaller batches than ``jobs``.
MAX_BATCH = 25

_T = TypeVar("_T")

_SOURCE = re.compile(r"^---\n# Source: ", re.MULTILINE)
_ALIAS_SOURCE = re.compile(rf"# Source: {UMBRELLA_NAME}/charts/(c-[0-9]+)/")
_KUBE_VERSION_FIELD = re.compile(r"^kubeVersion\s*:", re.MULTILINE)
# Built-in objects whose value differs between a plain render and an aliased subchart.
_RELEASE_NAMESPACE = re.compile(r"\.Release\.Namespace\b")
_RELEASE_OTHER = re.compile(r"\.Release\.(?!Namespace\b)[A-Za-z]+")
_CHART_OR_TEMPLATE = re.compile(r"\.(?:Chart|Template|Subcharts)\b")
_CAPABILITIES = re.compile(r"\.Capabilities\b")


@dataclass(frozen=True)
class ChartTraits:
    """What a prepared chart's templates read from helm's built-in objects."""

    batchable: bool  # no .Release.Name/.Chart/.Template: aliases render like the chart alone
    uses_namespace: bool  # .Release.Namespace (batches never mix namespaces anyway)
    uses_kube_version: bool  # .Capabilities or a kubeVersion constraint in Chart.yaml


@lru_cache(maxsize=32)
def chart_traits(path: Path) -> ChartTraits:
    """Scan every template of the chart (subcharts included) for the built-in objects.

    Conservative: a mention inside a template comment counts as a use.
    """
    batchable, namespace, kube = True, False, False
    for file in sorted(path.rglob("*")):
        if not file.is_file():
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        if file.name == "Chart.yaml":
            kube = kube or bool(_KUBE_VERSION_FIELD.search(text))
            continue
        if "templates" not in file.relative_to(path).parts:
            continue
        namespace = namespace or bool(_RELEASE_NAMESPACE.search(text))
        kube = kube or bool(_CAPABILITIES.search(text))
        if _RELEASE_OTHER.search(text) or _CHART_OR_TEMPLATE.search(text):
            batchable = False
    return ChartTraits(batchable=batchable, uses_namespace=namespace, uses_kube_version=kube)


@dataclass(frozen=True)
class _Cluster:
    """A fleet member: its place in the input and its render job (as :func:`render` has)."""

    index: int
    job: RenderJob


@dataclass(frozen=True)
class Batch:
    """Clusters rendered by one helm process (``umbrella`` False: one plain render)."""

    chart: ChartRef
    namespace: str
    kube_version: str
    members: tuple[int, ...]
    umbrella: bool


def _batch_size(count: int, jobs: int) -> int:
    """Clusters per umbrella: about a multiple of ``jobs`` batches, at most MAX_BATCH each."""
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    rounds = max(1, math.ceil(count / (jobs * MAX_BATCH)))
    return max(1, math.ceil(count / (jobs * rounds)))


def _group_key(chart: ChartRef, namespace: str, kube_version: str) -> tuple[Path, str, str] | None:
    """Clusters with the same key may share an umbrella; None: the chart cannot be batched."""
    traits = chart_traits(Path(chart.path))
    if not traits.batchable:
        return None
    return (Path(chart.path), namespace, kube_version if traits.uses_kube_version else "")


def plan_batches(clusters: Sequence[tuple[ChartRef, str, str]], *, jobs: int) -> list[Batch]:
    """Group clusters (chart, namespace, kube version) into batches, largest first.

    Clusters that may share an umbrella (same chart and namespace; same Kubernetes version
    when the chart depends on it) form a group; groups are cut into chunks of about the same
    size, at most :data:`MAX_BATCH`, and about a multiple of ``jobs`` of them, so that
    ``jobs`` parallel helm processes get about the same work. Charts that cannot be batched
    give one plain batch per cluster.
    """
    size = _batch_size(len(clusters), jobs)
    groups: dict[tuple[Path, str, str], list[int]] = {}
    plain: list[Batch] = []
    charts: dict[Path, ChartRef] = {}
    for index, (chart, namespace, kube_version) in enumerate(clusters):
        key = _group_key(chart, namespace, kube_version)
        if key is None:
            plain.append(Batch(chart, namespace, kube_version, (index,), umbrella=False))
            continue
        charts[key[0]] = chart
        groups.setdefault(key, []).append(index)
    batches: list[Batch] = []
    for (path, namespace, _), members in groups.items():
        count = math.ceil(len(members) / size)
        # Equal-sized chunks (e.g. 51 over 2 -> 26 + 25, not 50 + 1).
        step = len(members) / count
        for k in range(count):
            chunk = tuple(members[round(k * step) : round((k + 1) * step)])
            kube_version = clusters[chunk[0]][2]
            batches.append(Batch(charts[path], namespace, kube_version, chunk, umbrella=True))
    batches.extend(plain)
    batches.sort(key=lambda b: len(b.members), reverse=True)
    return batches


def _stream_batches(clusters: Iterable[_Cluster], *, expected: int, jobs: int) -> Iterator[Batch]:
    """:func:`plan_batches` for clusters that are still arriving (files still loading).

    A group's batch is handed out as soon as it holds the batch size for ``expected``
    clusters, so helm starts while the rest loads; what is left at the end follows, largest
    first. Batches differ from :func:`plan_batches` only in where groups are cut, which
    never changes a cluster's output.
    """
    size = _batch_size(expected, jobs)
    groups: dict[tuple[Path, str, str], list[_Cluster]] = {}
    for cluster in clusters:
        job = cluster.job
        key = _group_key(job.chart, job.namespace, job.kube_version)
        if key is None:
            yield Batch(
                job.chart, job.namespace, job.kube_version, (cluster.index,), umbrella=False
            )
            continue
        members = groups.setdefault(key, [])
        members.append(cluster)
        if len(members) >= size:
            yield _umbrella_batch(groups.pop(key))
    for members in sorted(groups.values(), key=len, reverse=True):
        yield _umbrella_batch(members)


def _umbrella_batch(members: Sequence[_Cluster]) -> Batch:
    first = members[0].job
    return Batch(
        first.chart,
        first.namespace,
        first.kube_version,
        tuple(c.index for c in members),
        umbrella=True,
    )


@dataclass(frozen=True)
class SharedLibraries:
    """A chart whose library subcharts one umbrella holds ONCE instead of once per alias.

    Why: with the library inside every alias, helm parses the library's templates once per
    alias and, for each alias that has dependencies of its own, coalesces a deep copy of the
    WHOLE umbrella's values (``processDependencyEnabled`` recurses with them): a cost per
    cluster that grows with the batch (measured, helm 3.15, 25 aliases: 42 -> 24 ms of CPU
    per cluster; at 50 aliases 44 -> 20 ms). A library chart contributes only named
    templates (``define``), which are global in helm, so parsing them once renders the same.
    """

    metadata: str  #: the chart's Chart.yaml without ``dependencies`` (JSON, which is YAML)
    libraries: tuple[tuple[str, str, Path], ...]  #: (name, version, folder) of each library
    #: the chart's values.yaml sets nothing: helm validates exactly the values it is given
    #: (plus ``global``), so the values gate may stand in for the chart's schema
    no_defaults: bool = False


_DEFINE = re.compile(r"\{\{-?\s*(?:define|block)\s+\"([^\"]*)\"")
_CHART_FILES = {"Chart.yaml", "Chart.lock", "charts"}


def _yaml_file(path: Path) -> object:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _partials_of_library(path: Path, name: str, version: object) -> list[Path] | None:
    """The template files of library chart ``path``, or None unless sharing it is safe."""
    meta = _yaml_file(path / "Chart.yaml") if (path / "Chart.yaml").is_file() else None
    if not isinstance(meta, dict) or meta.get("type") != "library" or meta.get("name") != name:
        return None
    if str(meta.get("version")) != str(version) or (path / "charts").exists():
        return None  # nested dependencies would be coalesced per alias again
    values = path / "values.yaml"
    if values.is_file() and _yaml_file(values) not in (None, {}):
        return None  # defaults of its own would reach each alias's .Values in a plain render
    files = sorted(f for f in (path / "templates").rglob("*") if f.is_file())
    if any(not f.name.startswith("_") for f in files):
        return None  # only partials: nothing of the library renders by itself
    return files


@lru_cache(maxsize=32)
def shared_libraries(path: Path) -> SharedLibraries | None:
    """How an umbrella may hold the library subcharts of prepared chart ``path`` once; None
    when that could change what an alias renders (then each alias keeps its own copy).

    Required: every dependency is a plain entry (no alias, condition, tags or import-values)
    of a library chart under ``charts/`` that has partials only, no dependencies and no
    default values; and no template name is defined twice among the chart and its
    libraries (so the order in which helm parses them cannot matter).
    """
    meta = _yaml_file(path / "Chart.yaml")
    if not isinstance(meta, dict) or meta.get("apiVersion") != "v2":
        return None
    dependencies = meta.get("dependencies") or []
    folders = (
        sorted(p.name for p in (path / "charts").iterdir()) if (path / "charts").is_dir() else []
    )
    if not dependencies or not isinstance(dependencies, list):
        return None
    libraries: list[tuple[str, str, Path]] = []
    templates = sorted(f for f in (path / "templates").rglob("*") if f.is_file())
    for dependency in dependencies:
        if not isinstance(dependency, dict) or set(dependency) - {"name", "version", "repository"}:
            return None
        name, version = str(dependency.get("name")), dependency.get("version")
        files = _partials_of_library(path / "charts" / name, name, version)
        if files is None:
            return None
        templates += files
        libraries.append((name, str(version), (path / "charts" / name).resolve()))
    if folders != sorted(name for name, _, _ in libraries):
        return None
    defined = [
        name
        for file in templates
        for name in _DEFINE.findall(file.read_text(encoding="utf-8", errors="replace"))
    ]
    if len(defined) != len(set(defined)):
        return None
    flat = {key: value for key, value in meta.items() if key != "dependencies"}
    values = path / "values.yaml"
    return SharedLibraries(
        metadata=json.dumps(flat, indent=2) + "\n",
        libraries=tuple(libraries),
        no_defaults=not values.is_file() or _yaml_file(values) in (None, {}),
    )


def umbrella_values(
    chart: ChartRef, values: dict[str, dict[str, Any]], *, share_libraries: bool = True
) -> dict[str, Any]:
    """helm's values for an umbrella of ``chart`` from each alias's values.

    With shared libraries, each alias gets the ``{"global": {}}`` that helm puts under each
    library's key in a plain render (a library's key in a cluster's own values keeps the
    libraries per alias: :func:`_shares_libraries`).
    """
    shared = shared_libraries(Path(chart.path).resolve()) if share_libraries else None
    if shared is None or not _shares_libraries(shared, values.values()):
        return dict(values)
    extra: dict[str, Any] = {name: {"global": {}} for name, _, _ in shared.libraries}
    return {alias: {**alias_values, **extra} for alias, alias_values in values.items()}


def values_checked_by_gate(chart: ChartRef, values: dict[str, dict[str, Any]]) -> bool:
    """True when helm's values schema check may be left to the gate for this umbrella.

    ``values``: each alias's own values (as for :func:`umbrella_values`). Requires the
    shared layout, a chart without default values (helm then checks each alias's values as
    given, plus the ``global: {}`` it adds)
    and a gate for its schema (:func:`scs_templates._render.values.gate.values_gate`) that accepts
    every alias's values; otherwise helm checks them (and words any error) as before.
    """
    source = Path(chart.path).resolve()
    shared = shared_libraries(source)
    if shared is None or not shared.no_defaults or not _shares_libraries(shared, values.values()):
        return False

    gate = values_gate(source)
    given = umbrella_values(chart, values).values()
    return gate is not None and all(gate({**one, "global": {}}) for one in given)


def _shares_libraries(shared: SharedLibraries, values: Iterable[dict[str, Any]]) -> bool:
    names = {name for name, _, _ in shared.libraries} | {"global"}
    return not any(names & one.keys() for one in values)


def write_umbrella(
    directory: Path,
    chart: ChartRef,
    aliases: Sequence[str],
    values: Iterable[dict[str, Any]] = (),
    *,
    share_libraries: bool = True,
    values_checked: bool = False,
) -> Path:
    """Write the umbrella chart (Chart.yaml, ``charts/`` symlinks); return its folder.

    When the chart's libraries can be shared (:func:`shared_libraries`, and none of
    ``values`` sets a library's key or ``global``), ``charts/<chart>`` is a folder of
    symlinks to the chart's files with a Chart.yaml without dependencies, and each library
    is a dependency of the umbrella, once; otherwise (or with ``share_libraries`` False, the
    benchmark's comparison) ``charts/<chart>`` links the chart. ``values_checked``: every
    alias's values passed :func:`values_checked_by_gate`; the shared layout then leaves the
    chart's ``values.schema.json`` out (helm would check each alias against it again).
    """
    root = directory / UMBRELLA_NAME
    (root / "charts").mkdir(parents=True)
    source = Path(chart.path).resolve()
    shared = shared_libraries(source) if share_libraries else None
    lines = [
        "apiVersion: v2",
        f"name: {UMBRELLA_NAME}",
        "description: generated by scs-templates render-fleet; one alias per cluster",
        "type: application",
        "version: 0.0.0",
        "dependencies:",
    ]
    if shared is None or not _shares_libraries(shared, values):
        (root / "charts" / chart.name).symlink_to(source, target_is_directory=True)
    else:
        flat = root / "charts" / chart.name
        flat.mkdir()
        (flat / "Chart.yaml").write_text(shared.metadata, encoding="utf-8")
        skipped = _CHART_FILES | ({"values.schema.json"} if values_checked else set())
        for entry in sorted(source.iterdir()):
            if entry.name not in skipped:
                (flat / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
        for name, version, folder in shared.libraries:
            (root / "charts" / name).symlink_to(folder, target_is_directory=True)
            lines += [
                f"  - name: {name}",
                f"    version: {json.dumps(version)}",
                f"    repository: {json.dumps(f'file://{folder}')}",
            ]
    repository = json.dumps(f"file://{source}")
    for alias in aliases:
        lines += [
            f"  - name: {chart.name}",
            f"    version: {json.dumps(chart.version)}",
            f"    repository: {repository}",
            f"    alias: {alias}",
        ]
    (root / "Chart.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def split_umbrella_output(output: str, chart_name: str, aliases: Sequence[str]) -> dict[str, str]:
    """helm's umbrella output as one text per alias, each as the chart alone prints it.

    Every document of ``output`` starts with ``---\\n# Source: fleet/charts/<alias>/``;
    that prefix becomes ``# Source: <chart_name>/``, the documents of one alias keep helm's
    order. Raises ValueError on output that does not have this shape.
    """
    parts: dict[str, list[str]] = {alias: [] for alias in aliases}
    starts = [m.start() for m in _SOURCE.finditer(output)]
    if output.strip() and (not starts or output[: starts[0]].strip()):
        raise ValueError("helm printed text before the first '# Source:' document")
    for begin, end in zip(starts, [*starts[1:], len(output)], strict=True):
        document = output[begin:end]
        match = _ALIAS_SOURCE.match(document, 4)
        if match is None or match.group(1) not in parts:
            raise ValueError(f"unexpected document in the umbrella output: {document[:120]!r}")
        rewritten = f"# Source: {chart_name}/"
        parts[match.group(1)].append(document[:4] + rewritten + document[4 + len(match.group(0)) :])
    return {alias: _end_of_output("".join(documents)) for alias, documents in parts.items()}


def _end_of_output(text: str) -> str:
    """End a cluster's text as helm ends its output: with one newline.

    helm 4.3 keeps a template's trailing blank line on a document that another document
    follows, but not on the last one it prints; in a batch the next cluster's documents
    follow a cluster's last one, which would then differ from the cluster's single render.
    """
    return text.rstrip("\n") + "\n" if text else text


#: A batch helm allocates a lot of short-lived memory; collecting garbage four times less
#: often cut its CPU time by ~20 % in the fleet benchmark for ~2x the (small) peak heap.
#: A caller's own GOGC or GOMEMLIMIT wins, as for a one-cluster ``helm template``.
BATCH_ENV = {"GOGC": "400"}


def _alias(index: int) -> str:
    return f"c-{index}"


def _result(cluster: _Cluster, manifests: str) -> RenderResult:
    return cluster.job.result(manifests)


def _run_batch(helm: Helm, batch: Batch, clusters: Sequence[_Cluster]) -> dict[int, str]:
    members = [clusters[i] for i in batch.members]
    if not batch.umbrella or len(members) == 1:
        return {c.index: c.job.template(helm) for c in members}
    aliases = [_alias(c.index) for c in members]
    own = {_alias(c.index): c.job.values for c in members}
    values = umbrella_values(batch.chart, own)
    checked = values_checked_by_gate(batch.chart, own)
    with tempfile.TemporaryDirectory(prefix="scs-templates-fleet-") as temp:
        umbrella = write_umbrella(
            Path(temp), batch.chart, aliases, own.values(), values_checked=checked
        )
        args = [
            *Helm.template_args(
                UMBRELLA_NAME, umbrella, namespace=batch.namespace, kube_version=batch.kube_version
            ),
            "-f",
            "-",
        ]
        try:
            done = helm.run(
                args,
                values=values,
                what=f"helm template (fleet batch of {len(members)})",
                extra_env=unless_callers(BATCH_ENV, os.environ),
            )
        except HelmError:
            # Re-render one by one: the error then names the cluster with helm's own message.
            return {c.index: c.job.template(helm) for c in members}
    try:
        texts = split_umbrella_output(done.stdout, batch.chart.name, aliases)
    except ValueError as error:
        raise ToolError(f"cannot split the fleet batch output: {error}") from None
    return {c.index: texts[_alias(c.index)] for c in members}


def _render(
    settings_list: Iterable[ClusterSettings],
    jobs: int | None,
    helm: Helm | None,
    finish: Callable[[_Cluster, str], _T],
    expected: int | None = None,
) -> list[_T]:
    """Prepare, batch and render; ``finish`` turns each cluster's text into the result.

    With ``expected`` (the number of clusters ``settings_list`` will yield), batches start
    while the rest is still produced (e.g. loaded from files); otherwise the whole fleet is
    planned first. ``finish`` runs in the calling thread as soon as a batch is done, while
    helm still renders the others (parsing is pure Python, ~10 ms per cluster).
    """
    if isinstance(settings_list, Sequence) and expected is None and not settings_list:
        return []
    workers = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    clusters: list[_Cluster] = []
    charts: dict[str, ChartRef] = {}

    def prepared() -> Iterator[_Cluster]:
        for index, settings in enumerate(settings_list):
            provider = settings.spec.provider
            if provider not in charts:  # chart_for checks the chart sources on every call
                charts[provider] = chart_for(settings.resolved_provider())
            cluster = _Cluster(index, prepare_render(settings, charts[provider]))
            clusters.append(cluster)
            yield cluster

    batches: Iterable[Batch]
    if expected is None:
        prepared_all = list(prepared())
        batches = plan_batches(
            [(c.job.chart, c.job.namespace, c.job.kube_version) for c in prepared_all], jobs=workers
        )
    else:
        batches = _stream_batches(prepared(), expected=expected, jobs=workers)
    runner = helm if helm is not None else Helm()
    results: dict[int, _T] = {}

    def collect(part: dict[int, str]) -> None:
        for index, manifests in part.items():
            results[index] = finish(clusters[index], manifests)

    if workers == 1 and expected is None:
        for batch in batches:
            collect(_run_batch(runner, batch, clusters))
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fleet") as pool:
            futures = []
            try:
                for batch in batches:
                    futures.append(pool.submit(_run_batch, runner, batch, clusters))
                for future in as_completed(futures):
                    collect(future.result())
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    return [results[c.index] for c in clusters]


def render_fleet(
    settings_list: Iterable[ClusterSettings],
    *,
    jobs: int | None = None,
    helm: Helm | None = None,
    expected: int | None = None,
    named: bool = False,
) -> list[RenderResult]:
    """Render many clusters, results in input order, each equal to ``render`` of it alone.

    ``jobs``: parallel helm processes (default: the CPU count); the fleet is cut into about
    that many umbrella batches (more for large fleets, see :data:`MAX_BATCH`).
    ``expected``: how many clusters ``settings_list`` (an iterator, e.g. of files being
    loaded) will yield; helm then starts on full batches while it still yields.
    ``named``: each result's :meth:`~RenderResult.file_names` is known (for a caller that
    writes the fleet to a folder): naming parses every object, ~7 ms a cluster, which then
    runs in this thread as each batch arrives, while helm still renders the others.
    Raises :class:`~scs_templates._tools.helm.HelmError` naming the first failing cluster.
    """
    return _render(settings_list, jobs, helm, _named_result if named else _result, expected)


def _named_result(cluster: _Cluster, manifests: str) -> RenderResult:
    result = _result(cluster, manifests)
    result.file_names()  # remembered by the result
    return result


def render_fleet_manifests(
    settings_list: Iterable[ClusterSettings],
    *,
    jobs: int | None = None,
    helm: Helm | None = None,
    expected: int | None = None,
) -> list[str]:
    """Like :func:`render_fleet`, but only each cluster's ``manifests`` text (not parsed).

    For callers that print or store helm's bytes (``render-fleet --stdout``): parsing the
    documents costs as much CPU as helm's rendering of them.
    """
    return _render(settings_list, jobs, helm, lambda _cluster, text: text, expected)


def render_many(
    fleet: Sequence[ClusterSettings], *, helm: Helm | None = None
) -> list[RenderResult]:
    """Render many clusters, results in input order:
    :func:`scs_templates._render.fleet.render_fleet`
    (parallel helm processes, bounded by the CPU count)."""
    return render_fleet(fleet, helm=helm)
