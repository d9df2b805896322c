"""Fleet rendering (``scs_templates._render.fleet``, ``render-fleet``) and the benchmark harness.

The central property: for every cluster of a MIXED fleet (both providers, both templates,
three namespaces, two Kubernetes versions), the fleet result is exactly what
``scs_templates._render.render.render`` returns for that cluster alone. Compared: ``manifests``
BYTE FOR BYTE (the umbrella's ``# Source: fleet/charts/c-N/`` prefix is rewritten to the
provider chart's name by ``render_fleet`` itself, so nothing is normalised in the test),
``documents``, ``objects``, ``values``, ``release``, ``namespace``, ``chart`` and
``kube_version``.

Renders use the real pinned helm (skip without it, fail in CI). The benchmark smoke test runs
the harness with tiny counts and asserts nothing about timing.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from bench import cases
from bench.fleetgen import fleet_settings, write_fleet
from scs_templates._cli.main import main
from scs_templates._render import fleet
from scs_templates._render.charts import ChartRef, chart_for
from scs_templates._render.render import RenderJob, kube_version_of, render
from scs_templates._settings.model import ClusterSettings
from scs_templates._settings.validate import load_settings, validate_data
from scs_templates._tools.helm import Helm, HelmError
from tests.support import EXAMPLES, helmfile_tool
from tests.support.strategies import settings_documents

pytestmark = pytest.mark.usefixtures("no_tool_overrides")


def mixed_fleet(count: int) -> list[ClusterSettings]:
    """The benchmark fleet's first ``count`` clusters plus the examples."""
    generated = [validate_data(data).settings for data in fleet_settings(count)]
    return generated + [load_settings(path).settings for path in EXAMPLES]


# --- equality with render() ----------------------------------------------------------------


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_fleet_equals_single_renders(helm_path: Path, jobs: int) -> None:
    settings = mixed_fleet(30)
    providers = {s.spec.provider for s in settings}
    namespaces = {s.metadata.namespace for s in settings}
    templates = {s.spec.template for s in settings}
    assert providers == {"openstack", "docker"}
    assert len(namespaces) >= 3 and templates == {"simple", "multi-md", "clusterclass"}

    results = fleet.render_fleet(settings, jobs=jobs)
    texts = fleet.render_fleet_manifests(settings, jobs=jobs)
    assert len(results) == len(texts) == len(settings)
    for one, result, text in zip(settings, results, texts, strict=True):
        alone = render(one)
        assert result.manifests == alone.manifests  # byte for byte
        assert text == alone.manifests
        assert result.documents == alone.documents
        assert result.objects == alone.objects
        assert result.values == alone.values
        assert (result.release, result.namespace, result.chart, result.kube_version) == (
            alone.release,
            alone.namespace,
            alone.chart,
            alone.kube_version,
        )
        assert result.file_names() == alone.file_names()
        assert "fleet/charts/" not in result.manifests


@hypothesis_settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    documents=st.lists(settings_documents(), min_size=2, max_size=6),
    namespaces=st.lists(st.sampled_from(["default", "team-a"]), min_size=6, max_size=6),
    jobs=st.integers(1, 3),
)
def test_generated_fleets_equal_single_renders(
    helm_path: Path, documents: list[dict[str, Any]], namespaces: list[str], jobs: int
) -> None:
    """Fleets of generated settings (any order, namespaces, sizes, jobs): every cluster's
    text byte for byte what render() prints for it alone."""
    fleet_list: list[ClusterSettings] = []
    seen: set[tuple[str, str]] = set()
    for document, namespace in zip(documents, namespaces, strict=False):
        document["metadata"]["namespace"] = namespace
        key = (namespace, document["metadata"]["name"])
        if key not in seen:
            seen.add(key)
            fleet_list.append(validate_data(document).settings)
    texts = fleet.render_fleet_manifests(fleet_list, jobs=jobs)
    assert texts == [render(one).manifests for one in fleet_list]


def test_a_named_fleet_names_each_result_as_it_arrives(helm_path: Path) -> None:
    """``render-fleet --output-dir`` names the files of each batch while helm renders the
    others: every result comes back with its file names known (and they are the names of
    the cluster's own render)."""
    del helm_path
    settings = [load_settings(f).settings for f in EXAMPLES[:3]]
    results = fleet.render_fleet(settings, jobs=2, named=True)
    assert all("_file_names" in r.__dict__ for r in results)
    assert [r.file_names() for r in results] == [render(s).file_names() for s in settings]


def test_fleet_really_batches(helm_path: Path) -> None:
    settings = mixed_fleet(20)
    batches = fleet.plan_batches(
        [(chart_for(s.spec.provider), s.metadata.namespace, kube_version_of(s)) for s in settings],
        jobs=2,
    )
    assert all(b.umbrella for b in batches)
    assert len(batches) < len(settings) / 2
    for batch in batches:  # never mixes charts or namespaces
        members = [settings[i] for i in batch.members]
        assert {s.spec.provider for s in members} == {batch.chart.name.removesuffix("-cluster")}
        assert {s.metadata.namespace for s in members} == {batch.namespace}


def test_fleet_error_names_the_cluster(helm_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch that fails is re-rendered one by one: the error is that cluster's own."""
    settings = mixed_fleet(6)
    original = fleet.prepare_render

    def broken(one: ClusterSettings, *rest: Any) -> Any:
        job = original(one, *rest)
        if one is settings[4]:
            job.values["controlPlane"]["replicas"] = "three"  # violates the chart schema
        return job

    monkeypatch.setattr(fleet, "prepare_render", broken)
    with pytest.raises(HelmError) as raised:
        fleet.render_fleet(settings, jobs=2)
    assert f"helm template {settings[4].metadata.name} failed" in str(raised.value)
    assert "replicas" in str(raised.value)


@pytest.mark.parametrize(
    ("own", "expected"),
    [({}, fleet.BATCH_ENV), ({"GOGC": "50"}, {}), ({"GOMEMLIMIT": "64MiB"}, {})],
)
def test_fleet_batches_keep_the_callers_own_collector_setting(
    helm_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    own: dict[str, str],
    expected: dict[str, str],
) -> None:
    """A batch's helm collects less often (fleet.BATCH_ENV) unless the caller set GOGC or
    GOMEMLIMIT itself: then the caller's setting reaches helm untouched."""
    monkeypatch.delenv("GOGC", raising=False)
    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    for key, value in own.items():
        monkeypatch.setenv(key, value)
    seen: list[dict[str, str]] = []
    original = Helm.run

    def recording(self: Helm, args: Any, **kwargs: Any) -> Any:
        if kwargs.get("what", "").startswith("helm template (fleet batch"):
            seen.append(dict(kwargs.get("extra_env") or {}))
        return original(self, args, **kwargs)

    monkeypatch.setattr(Helm, "run", recording)
    fleet.render_fleet(mixed_fleet(4), jobs=1)
    assert seen and all(env == expected for env in seen)


def test_fleet_starts_helm_while_settings_still_arrive(
    helm_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``expected``, a full batch goes to helm before the input is exhausted; the
    results are the same as for the whole list at once."""
    settings = [s for s in mixed_fleet(40) if s.spec.provider == "openstack"]
    settings = [s for s in settings if s.metadata.namespace == settings[0].metadata.namespace]
    consumed: list[int] = []
    started_after: list[int] = []
    original = fleet._run_batch

    def recording(helm: Any, batch: fleet.Batch, clusters: Any) -> Any:
        started_after.append(len(consumed))
        return original(helm, batch, clusters)

    def arriving() -> Any:
        for one in settings:
            consumed.append(1)
            yield one

    monkeypatch.setattr(fleet, "_run_batch", recording)
    texts = fleet.render_fleet_manifests(arriving(), jobs=2, expected=len(settings))
    assert len(settings) >= 6 and len(started_after) >= 2
    assert started_after[0] < len(settings)  # helm ran before the last settings arrived
    assert texts == fleet.render_fleet_manifests(settings, jobs=2)


def test_stream_batches_cut_full_groups_first(tmp_path: Path) -> None:
    a = _chart(tmp_path, "a", "x: {{ .Values.x }}\n")
    c = _chart(tmp_path, "c", "n: {{ .Release.Name }}\n")
    clusters = [
        fleet._Cluster(i, RenderJob(f"c{i}", f"ns{i % 2}", c if i == 5 else a, "v1.33.5", {}))
        for i in range(12)
    ]
    order: list[tuple[int, ...]] = []
    seen: list[int] = []
    arrived_at: list[int] = []

    def arriving() -> Any:
        for cluster in clusters:
            seen.append(cluster.index)
            yield cluster

    for batch in fleet._stream_batches(arriving(), expected=12, jobs=2):  # batch size 6
        order.append(batch.members)
        arrived_at.append(len(seen))
    assert sorted(i for members in order for i in members) == list(range(12))
    assert order == [(5,), (0, 2, 4, 6, 8, 10), (1, 3, 7, 9, 11)]
    assert arrived_at == [6, 11, 12]  # at once (not batchable), when full, at the end


def test_empty_fleet() -> None:
    assert fleet.render_fleet([]) == []
    assert fleet.render_fleet_manifests([]) == []


# --- units without helm --------------------------------------------------------------------


def test_split_umbrella_output() -> None:
    output = (
        "---\n# Source: fleet/charts/c-1/templates/a.yaml\nkind: A\nname: x\n"
        "---\n# Source: fleet/charts/c-0/templates/a.yaml\nkind: A\nname: y\n"
        "---\n# Source: fleet/charts/c-1/templates/b.yaml\nkind: B\n"
    )
    parts = fleet.split_umbrella_output(output, "openstack-cluster", ["c-0", "c-1", "c-2"])
    assert parts == {
        "c-0": "---\n# Source: openstack-cluster/templates/a.yaml\nkind: A\nname: y\n",
        "c-1": "---\n# Source: openstack-cluster/templates/a.yaml\nkind: A\nname: x\n"
        "---\n# Source: openstack-cluster/templates/b.yaml\nkind: B\n",
        "c-2": "",
    }
    with pytest.raises(ValueError, match="unexpected document"):
        fleet.split_umbrella_output(output, "x", ["c-0"])
    with pytest.raises(ValueError, match="before the first"):
        fleet.split_umbrella_output("junk\n" + output, "x", ["c-0", "c-1"])


def test_split_umbrella_output_ends_each_cluster_as_a_single_render_ends() -> None:
    """helm 4.3 keeps a template's trailing blank line on a document that another follows
    (in a batch: the next cluster's), never on the last one it prints."""
    output = (
        "---\n# Source: fleet/charts/c-0/templates/a.yaml\nkind: A\n\n"
        "---\n# Source: fleet/charts/c-0/templates/a.yaml\nkind: B\n\n"
        "---\n# Source: fleet/charts/c-1/templates/a.yaml\nkind: A\n"
    )
    parts = fleet.split_umbrella_output(output, "x", ["c-0", "c-1"])
    assert parts["c-0"] == (
        "---\n# Source: x/templates/a.yaml\nkind: A\n\n---\n# Source: x/templates/a.yaml\nkind: B\n"
    )
    assert parts["c-1"] == "---\n# Source: x/templates/a.yaml\nkind: A\n"


def _chart(tmp_path: Path, name: str, template: str, chart_yaml: str = "") -> ChartRef:
    path = tmp_path / name
    (path / "templates").mkdir(parents=True)
    (path / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n{chart_yaml}")
    (path / "templates" / "x.yaml").write_text(template)
    return ChartRef(name=name, version="0.1.0", path=path)


def test_chart_traits(tmp_path: Path) -> None:
    plain = _chart(tmp_path, "plain", "name: {{ .Values.cluster.name }}\n")
    release = _chart(tmp_path, "release", "name: {{ .Release.Name }}\n")
    namespace = _chart(tmp_path, "namespace", "ns: {{ $.Release.Namespace }}\n")
    caps = _chart(tmp_path, "caps", "v: {{ .Capabilities.KubeVersion }}\n")
    constrained = _chart(tmp_path, "constrained", "a: b\n", "kubeVersion: '>=1.30'\n")
    chart_name = _chart(tmp_path, "chartname", "n: {{ .Chart.Name }}\n")
    traits = {c.name: fleet.chart_traits(c.path) for c in (plain, release, namespace, caps)}
    assert traits["plain"] == fleet.ChartTraits(True, False, False)
    assert traits["release"] == fleet.ChartTraits(False, False, False)
    assert traits["namespace"] == fleet.ChartTraits(True, True, False)
    assert traits["caps"] == fleet.ChartTraits(True, False, True)
    assert fleet.chart_traits(constrained.path).uses_kube_version
    assert not fleet.chart_traits(chart_name.path).batchable


def _library(tmp_path: Path, provider: str, defines: str, library: str, **extra: str) -> ChartRef:
    """A provider chart with a library subchart, prepared as ``chart_for`` lays it out."""
    chart = _chart(
        tmp_path,
        provider,
        defines,
        "dependencies:\n  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n"
        + extra.get("dependency", ""),
    )
    lib = chart.path / "charts" / "lib"
    (lib / "templates").mkdir(parents=True)
    (lib / "Chart.yaml").write_text("apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n")
    (lib / "templates" / extra.get("library_file", "_lib.tpl")).write_text(library)
    (lib / "values.yaml").write_text(extra.get("library_values", "{}\n"))
    return chart


def test_shared_libraries_only_where_they_render_the_same(tmp_path: Path) -> None:
    for provider in ("openstack", "docker"):  # the real charts qualify
        assert fleet.shared_libraries(Path(chart_for(provider).path).resolve()) is not None
    uses = 'a: {{ include "lib.x" . }}\n'
    library = '{{- define "lib.x" -}}{{ .Values.x }}{{- end -}}\n'
    good = _library(tmp_path, "good", uses, library)
    shared = fleet.shared_libraries(good.path)
    assert shared is not None
    assert shared.libraries == (("lib", "0.1.0", (good.path / "charts" / "lib").resolve()),)
    assert "dependencies" not in json.loads(shared.metadata)
    refused = {
        "manifest": _library(tmp_path / "1", "p", uses, library, library_file="lib.yaml"),
        "defaults": _library(tmp_path / "2", "p", uses, library, library_values="x: 1\n"),
        "condition": _library(tmp_path / "3", "p", uses, library, dependency="    condition: a\n"),
        "twice": _library(tmp_path / "4", "p", uses + '{{ define "lib.x" }}{{ end }}', library),
    }
    assert {name: fleet.shared_libraries(c.path) for name, c in refused.items()} == dict.fromkeys(
        refused
    )
    assert fleet.shared_libraries(_chart(tmp_path, "alone", "a: b\n").path) is None


def test_shared_libraries_give_each_alias_the_values_of_a_plain_render(
    helm_path: Path, tmp_path: Path
) -> None:
    """What a template sees in ``.Values`` (the library's key included) is what it sees in a
    plain render, but for the ``global`` key every umbrella adds (the charts' schemas allow
    it); every text equals the plain render's."""
    dump = (
        '{{ include "lib.x" . }}'
        'values: {{ omit .Values "global" | toJson | quote }}\n'
        'keys: {{ without (keys .Values | sortAlpha) "global" | toJson | quote }}\n'
    )
    library = '{{- define "lib.x" -}}kind: X\nx: {{ .Values.x }}\n{{ end -}}\n'
    chart = _library(tmp_path, "p", dump, library)
    assert fleet.shared_libraries(chart.path) is not None
    jobs = [RenderJob(f"c{i}", "ns", chart, "v1.33.5", {"x": i, "y": {"z": [i]}}) for i in range(3)]
    clusters = [fleet._Cluster(i, job) for i, job in enumerate(jobs)]
    helm = Helm()
    batch = fleet.Batch(chart, "ns", "v1.33.5", (0, 1, 2), umbrella=True)
    texts = fleet._run_batch(helm, batch, clusters)
    alone = [job.template(helm) for job in jobs]
    assert [texts[i] for i in range(3)] == alone
    assert '\\"lib\\":{\\"global\\":{}}' in alone[0]  # the library's key is there in both
    umbrella = fleet.write_umbrella(tmp_path / "u", chart, ["c-0"], [jobs[0].values])
    assert (umbrella / "charts" / "lib").is_symlink()  # the library once, beside the aliases
    assert not (umbrella / "charts" / "p").is_symlink()
    kept = fleet.write_umbrella(tmp_path / "k", chart, ["c-0"], [{"lib": {}}])
    assert (kept / "charts" / "p").is_symlink()  # a cluster's own key: libraries per alias


def test_plan_batches(tmp_path: Path) -> None:
    a = _chart(tmp_path, "a", "x: {{ .Values.x }}\n")
    b = _chart(tmp_path, "b", "v: {{ .Capabilities.KubeVersion }}\n")
    c = _chart(tmp_path, "c", "n: {{ .Release.Name }}\n")
    clusters = (
        [(a, "ns1", "v1.33.5")] * 30
        + [(a, "ns1", "v1.34.1")] * 30  # chart a ignores the version: same group
        + [(a, "ns2", "v1.33.5")] * 5
        + [(b, "ns1", "v1.33.5")] * 4
        + [(b, "ns1", "v1.34.1")] * 4  # chart b reads it: separate group
        + [(c, "ns1", "v1.33.5")] * 2  # not batchable: one plain batch each
    )
    batches = fleet.plan_batches(clusters, jobs=2)
    covered = sorted(i for batch in batches for i in batch.members)
    assert covered == list(range(len(clusters)))
    assert all(len(batch.members) <= fleet.MAX_BATCH for batch in batches)
    for batch in batches:
        keys = {clusters[i][:2] for i in batch.members}
        assert keys == {(batch.chart, batch.namespace)}
        if batch.chart is b:
            assert {clusters[i][2] for i in batch.members} == {batch.kube_version}
        assert batch.umbrella is (batch.chart is not c)
    sizes = sorted(len(batch.members) for batch in batches if batch.chart is a)
    assert sum(sizes) == 65 and sizes[-1] - sizes[1] <= 1  # 60 in ns1 cut evenly
    assert [len(batch.members) for batch in batches] == sorted(
        (len(batch.members) for batch in batches), reverse=True
    )
    with pytest.raises(ValueError):
        fleet.plan_batches(clusters, jobs=0)


# --- CLI -----------------------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class RecordingStdout(io.StringIO):
    """A stdout that keeps the length of every write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[int] = []

    def write(self, text: str) -> int:
        self.writes.append(len(text))
        return super().write(text)


def test_cli_render_fleet_stdout_and_dir(
    helm_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = [str(p) for p in write_fleet(tmp_path / "settings", 8)] + [str(p) for p in EXAMPLES]
    stdout = RecordingStdout()
    monkeypatch.setattr(sys, "stdout", stdout)
    code = main(["render-fleet", *files, "--stdout", "-j", "2"])
    monkeypatch.undo()
    alone = [render(load_settings(f).settings).manifests for f in files]
    assert code == 0
    assert stdout.getvalue() == "".join(alone)
    # Cluster by cluster, never joined first: at 2000 clusters a joined text (and its
    # encoding) held two more copies of the fleet's ~45 MB (docs/performance.md, row 4).
    assert max(stdout.writes) == max(len(text) for text in alone)

    code, _, err = cli(capsys, "render-fleet", *files, "--output-dir", str(tmp_path / "out"))
    assert code == 0 and f"of {len(files)} clusters" in err
    prod = load_settings(EXAMPLES[-1]).settings
    alone = render(prod)
    written = sorted((tmp_path / "out" / prod.metadata.namespace / prod.metadata.name).iterdir())
    assert [p.name for p in written] == sorted(alone.file_names())
    by_name = dict(zip(alone.file_names(), alone.documents, strict=True))
    assert all(p.read_text() == by_name[p.name] for p in written)


def test_cli_render_fleet_input_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = str(EXAMPLES[0])
    code, _, err = cli(capsys, "render-fleet", good, good, "--stdout")
    assert code == 2 and "is also defined in" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text(json.dumps({"apiVersion": "nope"}))
    code, out, err = cli(capsys, "render-fleet", good, str(bad), "--stdout")
    assert code == 2 and "bad.yaml" in err and out == ""
    code, out, err = cli(capsys, "render-fleet", str(bad), good, good, "--stdout")
    assert code == 2 and "bad.yaml" in err and "is also defined in" in err and out == ""
    with pytest.raises(SystemExit) as exited:  # -o or --stdout is required
        main(["render-fleet", good])
    assert exited.value.code == 2
    with pytest.raises(SystemExit):
        main(["render-fleet", good, "--stdout", "-j", "0"])


# --- benchmark harness smoke test (no timing assertions) -----------------------------------


def test_bench_harness_smoke(helm_path: Path, tmp_path: Path) -> None:
    """The bench cases run once each. The helmfile case needs helmfile: built now when
    missing (``helmfile_tool``), as another worker's helmfile test may be doing already
    (the tools cache's lock), never a failure because that build has not finished."""
    helmfile_tool()
    results: dict[str, Any] = {}
    for name, case in cases.all_cases(fleet_sizes=(3,), scaling_sizes=(2, 3)).items():
        work = tmp_path / name
        work.mkdir()
        results[name] = case(1, work)
    assert results["render_cli"]["byte_identical"] is True
    assert set(results["render_cli"]["examples"]) == {p.name for p in EXAMPLES}
    assert set(results["library"]["parts"]) >= {"render()", "Helm.template()"}
    assert all(results["fleet_3"]["equal_outputs"].values())
    assert set(results["fleet_scaling"]["sizes"]) == {"2", "3"}
    assert results["startup"]["parts"]["scs-templates --version"]["runs"] == 1
    assert "helm template (subprocess)" in results["breakdown"]["steps"]
    assert set(results["breakdown"]["steps_cpu"]) == set(results["breakdown"]["steps"])
    assert results["fleet_3"]["parts"]["scs-templates render-fleet"]["cpu"]["runs"] == 1
    assert results["fleet_scaling"]["sizes"]["3"]["cpu_per_cluster_ms"] > 0
    assert results["helm_batch"]["equal_outputs"] is True
    assert set(results["helm_batch"]["cpu_per_cluster_ms"]) == {
        "libraries per alias",
        "shared libraries, helm checks the schema",
        "shared libraries, values gate",
        "one plain helm template",
    }
    assert results["helm_batch"]["gate_accepted"] is True
    assert results["memory"]["python_mib"] > 0
    assert results["rollout"]["spurious_total"] == 0
    for result in results.values():
        assert "met" in result
        json.dumps(result)  # the report is JSON-able
    from bench.report import table
    from bench.timing import machine

    text = table({"machine": machine(), "runs": 1, "quick": True, "cases": results})
    assert "1. render" in text and "6. breakdown" in text and "8. rollout" in text
