"""The benchmark cases of docs/performance.md. Each returns a JSON-able dict.

Every comparison runs both sides in ONE process, interleaved (:func:`bench.timing.interleaved`),
and states its target; ``met`` is None where a case has no target.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.fleetgen import REPO, fleet_settings, write_fleet
from bench.rollout import run_scenarios
from bench.timing import interleaved, interleaved_with_cpu, run_quiet, summary

CLI = str(Path(sys.executable).with_name("scs-templates"))
PYTHON = sys.executable
MINIMAL = REPO / "examples" / "openstack-minimal.yaml"

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
#: The helm the bare sides (plain helm template, the helm loop, helmfile's --helm-binary)
#: run, when bench/priority.py routes the CLI's helm through its wrapper: the bare sides then
#: run the real binary directly and do not pay the wrapper's exec (which favours them).
BARE_HELM_ENV = "SCS_BENCH_BARE_HELM"


def bare_helm() -> str:
    """The helm binary of the bare sides (see :data:`BARE_HELM_ENV`)."""
    import os

    from scs_templates._tools.toolchain.resolve import find_helm

    return os.environ.get(BARE_HELM_ENV) or str(find_helm().path)


TARGETS = {
    "render_cli_vs_helm_ratio": 2.5,
    "render_cli_vs_helm_stretch": 2.0,
    "library_overhead": 0.10,
    "fleet_vs_helmfile_speedup": 5.0,
    "fleet_vs_parallel_loop_speedup": 3.0,
    "help_seconds": 0.030,
    "version_seconds": 0.030,
    "validate_seconds": 0.080,
    "render_python_max_rss_mib": 120.0,
    "fleet_2000_max_rss_mib": 300.0,
    "spurious_renames": 0,
}
#: Fleet sizes of the comparison with helmfile and the parallel helm loop.
FLEET_SIZES = (100, 500)
#: Fleet sizes of the per-cluster cost; the largest one also gives the peak memory.
SCALING_SIZES = (10, 100, 500, 2000)


def _helm_env(home: Path) -> dict[str, str]:
    from scs_templates._tools.toolchain.resolve import hermetic_env

    return hermetic_env(home)


def _documents(text: str) -> list[str]:
    """Documents of a multi-document YAML text, stripped (blank lines between don't count)."""
    return [d.strip() for d in re.split(r"(?m)^---[ \t]*$", text) if d.strip()]


# --------------------------------------------------------------------------- 1. CLI render


def render_cli(runs: int, work: Path) -> dict[str, Any]:
    """``scs-templates render`` (subprocess) of every example vs the bare ``helm template``
    it stands for; all sides interleaved in the same rounds."""

    env = _helm_env(work / "helm-home")
    sides: dict[str, Callable[[], object]] = {}
    checks: dict[str, dict[str, Any]] = {}
    for example in EXAMPLES:
        out = work / example.stem
        done = run_quiet([CLI, "values", str(example), "--output-dir", str(out)], stdout=-1)
        command = shlex.split(done.stdout.decode().strip())
        if command[:2] != ["helm", "template"]:
            raise RuntimeError(f"unexpected command from `values --output-dir`: {command}")
        helm_argv = [bare_helm(), *command[1:]]
        cli_argv = [CLI, "render", str(example)]
        same = (
            run_quiet(cli_argv, stdout=-1).stdout == run_quiet(helm_argv, env=env, stdout=-1).stdout
        )
        checks[example.name] = {
            "byte_identical": same,
            "helm_command": shlex.join(["helm", *command[1:]]),
        }
        sides[f"render {example.name}"] = lambda argv=cli_argv: run_quiet(argv)
        sides[f"helm {example.name}"] = lambda argv=helm_argv: run_quiet(argv, env=env)
    samples, cpu = interleaved_with_cpu(sides, runs)
    rows = {}
    for example in EXAMPLES:
        cli = summary(samples[f"render {example.name}"])
        helm = summary(samples[f"helm {example.name}"])
        ratio = cli["median"] / helm["median"]
        cli_cpu = summary(cpu[f"render {example.name}"])
        helm_cpu = summary(cpu[f"helm {example.name}"])
        rows[example.name] = {
            "cli": cli,
            "helm": helm,
            "cli_cpu": cli_cpu,
            "helm_cpu": helm_cpu,
            "cpu_ratio": cli_cpu["median"] / helm_cpu["median"],
            # CPU time: on a machine shared with other busy processes the wall clock of
            # each side mostly measures its wait for a core (docs/performance.md)
            "cpu_met": cli_cpu["median"] / helm_cpu["median"]
            <= TARGETS["render_cli_vs_helm_ratio"],
            "ratio": ratio,
            "met": ratio <= TARGETS["render_cli_vs_helm_ratio"],
            "stretch_met": ratio <= TARGETS["render_cli_vs_helm_stretch"],
            **checks[example.name],
        }
    return {
        "examples": rows,
        "target": TARGETS["render_cli_vs_helm_ratio"],
        "stretch": TARGETS["render_cli_vs_helm_stretch"],
        "met": all(r["met"] for r in rows.values()),
        "cpu_met": all(r["cpu_met"] for r in rows.values()),
        "byte_identical": all(r["byte_identical"] for r in rows.values()),
    }


# --------------------------------------------------------------------------- 2. library


def library(runs: int, work: Path) -> dict[str, Any]:
    """``render(settings)`` in process vs ``Helm.template`` alone with the same arguments."""
    del work
    from scs_templates._render.charts import chart_for
    from scs_templates._render.render import kube_version_of, render, split_documents
    from scs_templates._render.values import build_values
    from scs_templates._settings.validate import load_settings
    from scs_templates._tools.helm import Helm

    settings = load_settings(MINIMAL).settings
    values = build_values(settings)
    chart = chart_for(settings.spec.provider)
    kube = kube_version_of(settings)
    helm = Helm()
    manifests = render(settings).manifests  # warm: chart cache, helm version lookup

    def bare() -> str:
        return helm.template(
            settings.metadata.name,
            Path(chart.path),
            namespace=settings.metadata.namespace,
            values=values,
            kube_version=kube,
        )

    assert bare() == manifests
    samples = interleaved(
        {
            "render()": lambda: render(settings),
            "Helm.template()": bare,
            # the parts render() adds, timed alone (same rounds, so the same noise)
            "build_values": lambda: build_values(settings),
            "chart_for": lambda: chart_for(settings.spec.provider),
            "split_documents": lambda: split_documents(manifests),
        },
        runs,
    )
    result = {name: summary(values) for name, values in samples.items()}
    overhead = result["render()"]["median"] / result["Helm.template()"]["median"] - 1
    return {
        "parts": result,
        "overhead": overhead,
        "target": TARGETS["library_overhead"],
        "met": overhead <= TARGETS["library_overhead"],
    }


# --------------------------------------------------------------------------- 3. fleet


def _helmfile_yaml(directory: Path, count: int) -> tuple[Path, list[list[str]]]:
    """values files, a helmfile with one release per cluster, and the plain helm commands."""
    from scs_templates._render.charts import chart_for
    from scs_templates._render.render import kube_version_of
    from scs_templates._render.values import build_values
    from scs_templates._settings.validate import validate_data
    from scs_templates._tools.helm import Helm

    helm = bare_helm()
    releases = []
    commands = []
    for data in fleet_settings(count):
        settings = validate_data(data).settings
        values_file = directory / "values" / f"{settings.metadata.name}.json"
        values_file.parent.mkdir(parents=True, exist_ok=True)
        values_file.write_text(json.dumps(build_values(settings), indent=2) + "\n")
        chart = str(chart_for(settings.spec.provider).path)
        kube = kube_version_of(settings)
        namespace = settings.metadata.namespace
        releases.append(
            {
                "name": settings.metadata.name,
                "namespace": namespace,
                "chart": chart,
                "kubeVersion": kube,
                "values": [str(values_file)],
            }
        )
        args = Helm.template_args(
            settings.metadata.name, chart, namespace=namespace, kube_version=kube
        )
        commands.append([helm, *args, "-f", str(values_file)])
    file = directory / "helmfile.yaml"
    # helmfile reads YAML (it refuses a JSON document); every scalar is JSON-quoted.
    lines = ["releases:"]
    for release in releases:
        lines.append(f"  - name: {json.dumps(release['name'])}")
        for key in ("namespace", "chart", "kubeVersion"):
            lines.append(f"    {key}: {json.dumps(release[key])}")
        lines.append(f"    values: [{json.dumps(release['values'][0])}]")
    file.write_text("\n".join(lines) + "\n")
    return file, commands


def _parallel(commands: list[list[str]], env: dict[str, str], jobs: int) -> bytes:
    """The helm commands, ``jobs`` at a time (a shell's ``xargs -P``), outputs in order."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outputs = pool.map(lambda c: run_quiet(c, env=env, stdout=-1).stdout, commands)
        return b"".join(outputs)


def fleet(runs: int, work: Path, count: int) -> dict[str, Any]:
    """render-fleet (CLI) vs helmfile template --skip-deps vs a helm loop run with as many
    parallel processes as CPUs."""
    import os

    from scs_templates._tools.toolchain.install import ensure_tool

    files = [str(p) for p in write_fleet(work / "settings", count)]
    helmfile_file, commands = _helmfile_yaml(work, count)
    env = _helm_env(work / "helm-home")
    hf_env = dict(env, HELMFILE_UPGRADE_NOTICE_DISABLED="1", HELMFILE_TEMPDIR=str(work / "hf-tmp"))
    (work / "hf-tmp").mkdir()
    fleet_argv = [CLI, "render-fleet", *files, "--stdout"]
    helmfile_argv = [
        str(ensure_tool("helmfile").path),
        "--file",
        str(helmfile_file),
        "--helm-binary",
        bare_helm(),
        "--no-color",
        "template",
        "--skip-deps",
    ]
    jobs = os.cpu_count() or 1

    def loop() -> bytes:
        return _parallel(commands, env, jobs)

    fleet_out = run_quiet(fleet_argv, stdout=-1).stdout
    loop_out = loop()
    helmfile_out = run_quiet(helmfile_argv, env=hf_env, stdout=-1).stdout
    equal = {
        "render-fleet == helm loop (bytes)": fleet_out == loop_out,
        "render-fleet == helmfile (documents)": _documents(fleet_out.decode())
        == _documents(helmfile_out.decode()),
    }
    loop_name = f"helm template loop, {jobs} parallel"
    samples, cpu = interleaved_with_cpu(
        {
            "scs-templates render-fleet": lambda: run_quiet(fleet_argv),
            "helmfile template --skip-deps": lambda: run_quiet(helmfile_argv, env=hf_env),
            loop_name: loop,
        },
        runs,
    )
    result = {name: summary(values) for name, values in samples.items()}
    for name, values in cpu.items():
        result[name]["cpu"] = summary(values)
    fleet_median = result["scs-templates render-fleet"]["median"]
    vs_helmfile = result["helmfile template --skip-deps"]["median"] / fleet_median
    vs_loop = result[loop_name]["median"] / fleet_median
    return {
        "clusters": count,
        "parallel_jobs": jobs,
        "parts": result,
        "loop": loop_name,
        "equal_outputs": equal,
        "speedup_vs_helmfile": vs_helmfile,
        "speedup_vs_loop": vs_loop,
        "target_vs_helmfile": TARGETS["fleet_vs_helmfile_speedup"],
        "target_vs_loop": TARGETS["fleet_vs_parallel_loop_speedup"],
        "met": vs_helmfile >= TARGETS["fleet_vs_helmfile_speedup"]
        and vs_loop >= TARGETS["fleet_vs_parallel_loop_speedup"],
        "batches": _batches(files),
        "memory": memory_of(["render-fleet", *files, "--stdout"]),
    }


def helm_batch_parts(runs: int, work: Path) -> dict[str, Any]:
    """What one umbrella batch of :data:`~scs_templates._render.fleet.MAX_BATCH` clusters costs helm
    per cluster, in CPU time, beside one plain ``helm template`` of its first cluster:

    * ``libraries per alias``: the umbrella of round 3 (each alias with its own library);
    * ``shared libraries, helm checks the schema``: the library chart once;
    * ``shared libraries, values gate``: what render-fleet runs for values the gate accepts
      (the chart's ``values.schema.json`` left out; the gate's own CPU is timed apart).

    The outputs of the three umbrellas are checked to be equal first."""
    import resource
    import time

    from scs_templates._render.charts import chart_for
    from scs_templates._render.fleet import (
        BATCH_ENV,
        MAX_BATCH,
        UMBRELLA_NAME,
        umbrella_values,
        values_checked_by_gate,
        write_umbrella,
    )
    from scs_templates._render.render import kube_version_of
    from scs_templates._render.values import build_values
    from scs_templates._settings.validate import validate_data
    from scs_templates._tools.helm import Helm
    from scs_templates._tools.toolchain.resolve import find_helm

    settings = [
        validate_data(d).settings
        for d in fleet_settings(4 * MAX_BATCH)
        if d["spec"].get("provider", "openstack") == "openstack"
    ][:MAX_BATCH]
    chart = chart_for("openstack")
    aliases = [f"c-{i}" for i in range(len(settings))]
    own = {a: build_values(s) for a, s in zip(aliases, settings, strict=True)}
    shared_values = json.dumps(umbrella_values(chart, own)).encode()
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    gated = values_checked_by_gate(chart, own)
    gate_wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    gate_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    kube = kube_version_of(settings[0])
    umbrellas = {
        "libraries per alias": (
            write_umbrella(work / "per-alias", chart, aliases, share_libraries=False),
            json.dumps(umbrella_values(chart, own, share_libraries=False)).encode(),
        ),
        "shared libraries, helm checks the schema": (
            write_umbrella(work / "shared", chart, aliases),
            shared_values,
        ),
        "shared libraries, values gate": (
            write_umbrella(work / "gate", chart, aliases, own.values(), values_checked=gated),
            shared_values,
        ),
    }
    env = _helm_env(work / "helm-home")
    single_values = work / "single.json"
    single_values.write_text(json.dumps(own[aliases[0]]))
    single = [str(find_helm().path)]
    single += Helm.template_args("c-0", chart.path, namespace="bench", kube_version=kube)
    single += ["-f", str(single_values)]

    def batch(umbrella: Path, values: bytes) -> bytes:
        argv = [str(find_helm().path), "template", UMBRELLA_NAME, str(umbrella)]
        argv += ["-n", "bench", "--kube-version", kube, "-f", "-"]
        done = subprocess.run(
            argv, input=values, capture_output=True, env=dict(env, **BATCH_ENV), check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"helm batch failed: {done.stderr.decode()[-2000:]}")
        return done.stdout

    outputs = {name: batch(*side) for name, side in umbrellas.items()}
    same = len(set(outputs.values())) == 1
    sides: dict[str, Callable[[], object]] = {
        name: (lambda side=side: batch(*side)) for name, side in umbrellas.items()
    }
    sides["one plain helm template"] = lambda: run_quiet(single, env=env)
    samples, cpu = interleaved_with_cpu(sides, runs)
    count = len(settings)
    per = {
        name: statistics_per(cpu[name], 1 if name == "one plain helm template" else count)
        for name in cpu
    }
    return {
        "clusters_per_batch": count,
        "equal_outputs": same,
        "gate_accepted": gated,
        "gate_ms_per_cluster": {"cpu": gate_cpu / count * 1000, "wall": gate_wall / count * 1000},
        "wall": {name: summary(values) for name, values in samples.items()},
        "cpu_per_cluster_ms": per,
        "schema_share": 1
        - per["shared libraries, values gate"] / per["shared libraries, helm checks the schema"],
        "sharing_saves": 1
        - per["shared libraries, helm checks the schema"] / per["libraries per alias"],
        "met": None,
    }


def statistics_per(samples: list[float], count: int) -> float:
    """Median of ``samples`` (seconds) per item, in milliseconds."""
    import statistics

    return statistics.median(samples) / count * 1000


def fleet_scaling(runs: int, work: Path, sizes: tuple[int, ...] = SCALING_SIZES) -> dict[str, Any]:
    """Wall time of ``render-fleet --stdout`` per cluster at growing sizes; peak memory of
    the largest. Fewer runs for the large sizes (a run of 2000 clusters takes ~20 s)."""
    rows: dict[str, Any] = {}
    for count in sizes:
        files = [str(p) for p in write_fleet(work / f"settings-{count}", count)]
        argv = [CLI, "render-fleet", *files, "--stdout"]
        repeat = max(1, runs if count <= 100 else min(runs, 3))
        samples, cpu = interleaved_with_cpu({"render-fleet": lambda a=argv: run_quiet(a)}, repeat)
        wall = summary(samples["render-fleet"])
        cpu_time = summary(cpu["render-fleet"])
        rows[str(count)] = {
            "clusters": count,
            "wall": wall,
            "cpu": cpu_time,
            "per_cluster_ms": wall["median"] / count * 1000,
            "cpu_per_cluster_ms": cpu_time["median"] / count * 1000,
        }
    largest = max(sizes)
    files = [str(p) for p in write_fleet(work / f"settings-{largest}", largest)]
    memory = memory_of(["render-fleet", *files, "--stdout"])
    return {
        "sizes": rows,
        "memory_largest": {"clusters": largest, **memory},
        "target_mib": TARGETS["fleet_2000_max_rss_mib"],
        "met": largest < 2000 or memory["python_mib"] <= TARGETS["fleet_2000_max_rss_mib"],
    }


def _batches(files: list[str]) -> list[dict[str, Any]]:
    """How render_fleet cuts this fleet (for the report)."""
    import os

    from scs_templates._render.charts import chart_for
    from scs_templates._render.fleet import plan_batches
    from scs_templates._render.render import kube_version_of
    from scs_templates._settings.validate import load_settings

    prepared = []
    for file in files:
        s = load_settings(file).settings
        prepared.append((chart_for(s.spec.provider), s.metadata.namespace, kube_version_of(s)))
    return [
        {"chart": b.chart.name, "namespace": b.namespace, "clusters": len(b.members)}
        for b in plan_batches(prepared, jobs=os.cpu_count() or 1)
    ]


# --------------------------------------------------------------------------- 4. start-up


def startup(runs: int, work: Path) -> dict[str, Any]:
    """``--help``, ``--version`` and ``validate`` as subprocess wall time; import profile."""
    del work
    samples, cpu = interleaved_with_cpu(
        {
            "scs-templates --help": lambda: run_quiet([CLI, "--help"]),
            "scs-templates --version": lambda: run_quiet([CLI, "--version"]),
            "scs-templates validate": lambda: run_quiet([CLI, "validate", str(MINIMAL)]),
            "python -c pass (floor)": lambda: run_quiet([PYTHON, "-c", "pass"]),
        },
        runs,
    )
    result = {name: summary(values) for name, values in samples.items()}
    for name, values in cpu.items():
        result[name]["cpu"] = summary(values)
    checks = {
        "help": result["scs-templates --help"]["median"] <= TARGETS["help_seconds"],
        "version": result["scs-templates --version"]["median"] <= TARGETS["version_seconds"],
        "validate": result["scs-templates validate"]["median"] <= TARGETS["validate_seconds"],
    }
    return {
        "parts": result,
        "help_target": TARGETS["help_seconds"],
        "version_target": TARGETS["version_seconds"],
        "validate_target": TARGETS["validate_seconds"],
        "checks": checks,
        "met": all(checks.values()),
        "importtime_validate": importtime(["validate", str(MINIMAL)]),
        "importtime_render": importtime(["render", str(MINIMAL)]),
    }


def importtime(argv: list[str], top: int = 12) -> list[dict[str, Any]]:
    """``python -X importtime`` of the CLI: the slowest top-level imports (cumulative ms)."""
    code = "import sys; from scs_templates._cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [PYTHON, "-X", "importtime", "-c", code, *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if match and len(match.group(3)) <= 2:  # top-level and first-level imports
            rows.append(
                {
                    "module": match.group(4),
                    "cumulative_ms": int(match.group(2)) / 1000,
                    "depth": len(match.group(3)) // 2,
                }
            )
    rows.sort(key=lambda r: r["cumulative_ms"], reverse=True)
    return rows[:top]


# --------------------------------------------------------------------------- 4b. breakdown

# One `render` done step by step in a fresh interpreter, each step timed in process. The
# imports come in the order the CLI needs them, so each line is what that step ADDS.
_PHASES = """
import json, resource, sys, time
clock = time.perf_counter
def cpu():
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime
marks = [("start", clock(), cpu())]
def mark(name):
    marks.append((name, clock(), cpu()))
import argparse
from scs_templates._cli.main import build_parser, modules_for
argv = ["render", sys.argv[1]]
args = build_parser(modules_for(argv)).parse_args(argv)
mark("CLI: argparse, the render command's parser")
import scs_templates._core.secrets, scs_templates._core.signals
mark("secrets (json, typing, threading), signal handling; logging deferred")
import ruamel.yaml
mark("import ruamel.yaml")
import scs_templates._settings.validate
mark("import the settings reader (rules, versions table, problems)")
import scs_templates._render.render
mark("import scs_templates._render.render (helm runner, charts, values)")
from scs_templates._settings import _schema_check
mark("import the compiled schema check (fastjsonschema's, generated)")
from scs_templates._settings import plain
plain._builder()
mark("schema: build the plain classes (once per process)")
from scs_templates._clikit.common import load
loaded = load(args.settings, plain=True)
mark("load + validate the settings file (plain path)")
from scs_templates._render.values import build_values
values = build_values(loaded.settings)
mark("build_values")
from scs_templates._render.charts import chart_for
chart = chart_for(loaded.settings.spec.provider)
mark("chart_for")
from scs_templates._tools.helm import Helm
from scs_templates._render.render import kube_version_of
helm = Helm()
mark("Helm() (binary lookup, version from the on-disk memo)")
text = helm.template(loaded.settings.metadata.name, chart.path,
    namespace=loaded.settings.metadata.namespace, values=values,
    kube_version=kube_version_of(loaded.settings))
mark("helm template (subprocess)")
sys.stdout.write(text); sys.stdout.flush()
mark("write the output")
print(json.dumps([list(m) for m in marks]), file=sys.stderr)
"""


def breakdown(runs: int, work: Path) -> dict[str, Any]:
    """Where one ``render`` of the minimal example goes, including what the in-process
    clock cannot see: interpreter start, interpreter teardown (what the console script's
    fast exit saves) and bytecode compilation (a source tree without ``__pycache__`` under
    ``PYTHONDONTWRITEBYTECODE``, as in a fresh CI checkout)."""
    import os
    import shutil
    import statistics

    package = REPO / "scs_templates"
    compiled = work / "compiled"
    uncompiled = work / "uncompiled"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(package, compiled / "scs_templates", ignore=ignore)
    shutil.copytree(package, uncompiled / "scs_templates", ignore=ignore)
    # The charts and schema the package finds next to itself in a checkout.
    for tree in (compiled, uncompiled):
        for name in ("charts", "schemas"):
            (tree / name).symlink_to(REPO / name)
    run_quiet([PYTHON, "-m", "compileall", "-q", str(compiled / "scs_templates")])
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    no_bytecode = dict(base, PYTHONDONTWRITEBYTECODE="1")
    fast_exit = "from scs_templates._cli.main import run; run()"
    normal_exit = "import sys; from scs_templates._cli.main import main; sys.exit(main())"
    argv = ["render", str(MINIMAL)]

    def with_path(tree: Path, code: str) -> Callable[[], object]:
        # cwd: `python -c` puts the current directory first on sys.path
        env = dict(no_bytecode, PYTHONPATH=str(tree))
        return lambda: run_quiet([PYTHON, "-c", code, *argv], env=env, cwd=tree)

    phases: list[list[tuple[str, float, float]]] = []

    def in_process() -> None:
        done = run_quiet(
            [PYTHON, "-c", _PHASES, str(MINIMAL)],
            env=dict(no_bytecode, PYTHONPATH=str(compiled)),
            cwd=compiled,
        )
        phases.append([(n, t, c) for n, t, c in json.loads(done.stderr.decode().splitlines()[-1])])

    samples, cpu = interleaved_with_cpu(
        {
            "python -c pass": lambda: run_quiet([PYTHON, "-c", "pass"], cwd=compiled),
            "render, fast exit (the console script)": with_path(compiled, fast_exit),
            "render, normal interpreter exit": with_path(compiled, normal_exit),
            "render, no bytecode (compiles every module)": with_path(uncompiled, fast_exit),
            "phases": in_process,
        },
        runs,
    )
    result = {name: summary(values) for name, values in samples.items() if name != "phases"}
    for name, values in cpu.items():
        if name in result:
            result[name]["cpu"] = summary(values)
    steps: dict[str, list[float]] = {}
    steps_cpu: dict[str, list[float]] = {}
    for run in phases:
        for (_, before, cpu_before), (name, after, cpu_after) in itertools.pairwise(run):
            steps.setdefault(name, []).append(after - before)
            steps_cpu.setdefault(name, []).append(cpu_after - cpu_before)
    median = {name: statistics.median(values) for name, values in steps.items()}
    median_cpu = {name: statistics.median(values) for name, values in steps_cpu.items()}

    def cost(name: str, key: str) -> float:
        return float(result[name][key]["median"] if key == "cpu" else result[name]["median"])

    fast = "render, fast exit (the console script)"
    extra: dict[str, dict[str, float]] = {}
    for key in ("wall", "cpu"):
        extra[key] = {
            "interpreter_start": cost("python -c pass", key),
            "teardown": cost("render, normal interpreter exit", key) - cost(fast, key),
            "bytecode_compilation": cost("render, no bytecode (compiles every module)", key)
            - cost(fast, key),
        }
    return {
        "parts": result,
        "steps": median,
        "steps_cpu": median_cpu,
        **extra["wall"],
        "cpu": extra["cpu"],
        "met": None,
    }


# --------------------------------------------------------------------------- 5. memory

# The shim's own peak is VmHWM of /proc/self/status, NOT RUSAGE_SELF: Linux keeps ru_maxrss
# across execve (the old address space's high-water mark is folded into the process's), and a
# process spawned by this harness starts from the harness's address space (fork/vfork), so
# ru_maxrss reported the harness's RSS at spawn: 112 MiB for one `render` late in a full run
# (2026-12-03), 18 MiB when measured alone. VmHWM belongs to the address space exec made.
# (The children's ru_maxrss folds in the shim's RSS at their spawn, ~18 MiB: below helm's.)
_SHIM = """
import json, resource, sys
from scs_templates._cli.main import main
code = main(sys.argv[1:])
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    with open("/proc/self/status") as status:
        me = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
except (OSError, StopIteration):
    pass  # not Linux: ru_maxrss, which may include the harness's RSS (see above)
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
sys.stdout.flush()
print(json.dumps({"code": code, "self_kib": me, "children_kib": kids}), file=sys.stderr)
"""

_WRAPPER = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"code": done.returncode, "children_kib": kids}))
"""


def memory_of(argv: list[str]) -> dict[str, Any]:
    """Peak RSS (MiB) of the CLI's Python process and of its helm children, separately.

    The CLI runs in a shim process (same code as the console script) that reports its own
    peak (``VmHWM``, see :data:`_SHIM`) and its ``RUSAGE_CHILDREN`` (the largest helm). A
    wrapper that runs the console script reports ``RUSAGE_CHILDREN`` too: the largest of the
    Python process and helm (rusage keeps the max of the descendants, not their sum).
    """
    done = subprocess.run(
        [PYTHON, "-c", _SHIM, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    shim = json.loads(done.stderr.decode().strip().splitlines()[-1])
    outer = subprocess.run(
        [PYTHON, "-c", _WRAPPER, CLI, *argv], capture_output=True, text=True, check=True
    )
    wrapper = json.loads(outer.stdout.strip().splitlines()[-1])
    python_mib = shim["self_kib"] / 1024
    helm_mib = shim["children_kib"] / 1024
    return {
        "python_mib": python_mib,
        "helm_mib": helm_mib,
        "sum_mib": python_mib + helm_mib,
        "console_script_children_max_mib": wrapper["children_kib"] / 1024,
    }


def memory(runs: int, work: Path) -> dict[str, Any]:
    """Peak memory of ``scs-templates render`` (median over runs)."""
    del work
    rows = [memory_of(["render", str(MINIMAL)]) for _ in range(max(1, runs))]
    result = {key: sorted(r[key] for r in rows)[len(rows) // 2] for key in rows[0]}
    result["target_python_mib"] = TARGETS["render_python_max_rss_mib"]
    result["met"] = result["python_mib"] <= TARGETS["render_python_max_rss_mib"]
    return result


# --------------------------------------------------------------------------- 6. rollout


def rollout(runs: int, work: Path) -> dict[str, Any]:
    """Template renames of each settings change, against the minimum."""
    del runs, work
    from scs_templates._render.fleet import render_fleet
    from scs_templates._settings.validate import validate_data

    def render_objects(documents: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        settings = [validate_data(d).settings for d in documents]
        return [r.objects for r in render_fleet(settings)]

    outcomes = run_scenarios(render_objects)
    rows = [
        {
            "change": o.scenario,
            "expected": len(o.expected),
            "renamed": len(o.renamed),
            "spurious": [list(k) for k in o.spurious],
            "missing": [list(k) for k in o.missing],
        }
        for o in outcomes
    ]
    spurious = sum(len(o.spurious) for o in outcomes)
    missing = sum(len(o.missing) for o in outcomes)
    return {
        "changes": rows,
        "spurious_total": spurious,
        "missing_total": missing,
        "target_spurious": TARGETS["spurious_renames"],
        "met": spurious == 0 and missing == 0,
    }


Case = Callable[[int, Path], dict[str, Any]]


def all_cases(
    fleet_sizes: tuple[int, ...] = FLEET_SIZES, scaling_sizes: tuple[int, ...] = SCALING_SIZES
) -> dict[str, Case]:
    cases: dict[str, Case] = {
        "render_cli": render_cli,
        "library": library,
    }
    for count in fleet_sizes:
        cases[f"fleet_{count}"] = lambda runs, work, count=count: fleet(runs, work, count)
    cases.update(
        {
            "fleet_scaling": lambda runs, work: fleet_scaling(runs, work, scaling_sizes),
            "helm_batch": helm_batch_parts,
            "startup": startup,
            "breakdown": breakdown,
            "memory": memory,
            "rollout": rollout,
        }
    )
    return cases


def run_case(case: Case, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scs-templates-bench-") as temp:
        return case(runs, Path(temp))
