"""The benchmark cases of docs/performance.md. Each returns a JSON-able dict.

Every comparison runs both sides in ONE process, interleaved (:func:`bench.timing.interleaved`),
and states its target; ``met`` is None where a case has no target.
"""

from __future__ import annotations

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
from bench.timing import interleaved, run_quiet, summary

CLI = str(Path(sys.executable).with_name("scs-templates"))
PYTHON = sys.executable
MINIMAL = REPO / "examples" / "openstack-minimal.yaml"

TARGETS = {
    "render_cli_vs_helm_ratio": 2.0,
    "library_overhead": 0.10,
    "fleet_vs_helmfile_speedup": 3.0,
    "fleet_vs_loop_speedup": 1.5,
    "help_seconds": 0.150,
    "validate_seconds": 0.250,
    "render_python_max_rss_mib": 120.0,
    "spurious_renames": 0,
}


def _helm_env(home: Path) -> dict[str, str]:
    from scs_templates.toolchain import hermetic_env

    return hermetic_env(home)


def _documents(text: str) -> list[str]:
    """Documents of a multi-document YAML text, stripped (blank lines between don't count)."""
    return [d.strip() for d in re.split(r"(?m)^---[ \t]*$", text) if d.strip()]


# --------------------------------------------------------------------------- 1. CLI render


def render_cli(runs: int, work: Path) -> dict[str, Any]:
    """``scs-templates render`` (subprocess) vs the bare ``helm template`` it stands for."""
    from scs_templates.toolchain import find_helm

    done = run_quiet([CLI, "values", str(MINIMAL), "-o", str(work / "values")], stdout=-1)
    command = shlex.split(done.stdout.decode().strip())
    if command[:2] != ["helm", "template"]:
        raise RuntimeError(f"unexpected command from `values -o`: {command}")
    helm_argv = [str(find_helm().path), *command[1:]]
    env = _helm_env(work / "helm-home")
    cli_argv = [CLI, "render", str(MINIMAL)]
    same = run_quiet(cli_argv, stdout=-1).stdout == run_quiet(helm_argv, env=env, stdout=-1).stdout
    samples = interleaved(
        {
            "scs-templates render": lambda: run_quiet(cli_argv),
            "helm template": lambda: run_quiet(helm_argv, env=env),
        },
        runs,
    )
    cli, helm = summary(samples["scs-templates render"]), summary(samples["helm template"])
    ratio = cli["median"] / helm["median"]
    return {
        "cli": cli,
        "helm": helm,
        "ratio": ratio,
        "target": TARGETS["render_cli_vs_helm_ratio"],
        "met": ratio <= TARGETS["render_cli_vs_helm_ratio"],
        "byte_identical": same,
        "helm_command": shlex.join(["helm", *command[1:]]),
    }


# --------------------------------------------------------------------------- 2. library


def library(runs: int, work: Path) -> dict[str, Any]:
    """``render(settings)`` in process vs ``Helm.template`` alone with the same arguments."""
    del work
    from scs_templates.charts import chart_for
    from scs_templates.helm import Helm
    from scs_templates.render import kube_version_of, render, split_documents
    from scs_templates.settings import load_settings
    from scs_templates.values import build_values

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
    from scs_templates.charts import chart_for
    from scs_templates.helm import Helm
    from scs_templates.render import kube_version_of
    from scs_templates.settings import validate_data
    from scs_templates.toolchain import find_helm
    from scs_templates.values import build_values

    helm = str(find_helm().path)
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


def fleet(runs: int, work: Path, count: int) -> dict[str, Any]:
    """render-fleet (CLI) vs helmfile template --skip-deps vs a sequential helm loop."""
    from scs_templates.toolchain import find_helm_for_helmfile, find_helmfile

    files = [str(p) for p in write_fleet(work / "settings", count)]
    helmfile_file, commands = _helmfile_yaml(work, count)
    env = _helm_env(work / "helm-home")
    hf_env = dict(env, HELMFILE_UPGRADE_NOTICE_DISABLED="1", HELMFILE_TEMPDIR=str(work / "hf-tmp"))
    (work / "hf-tmp").mkdir()
    fleet_argv = [CLI, "render-fleet", *files, "--stdout"]
    helmfile_argv = [
        str(find_helmfile().path),
        "--file",
        str(helmfile_file),
        "--helm-binary",
        str(find_helm_for_helmfile().path),
        "--no-color",
        "template",
        "--skip-deps",
    ]

    def loop() -> bytes:
        return b"".join(run_quiet(c, env=env, stdout=-1).stdout for c in commands)

    fleet_out = run_quiet(fleet_argv, stdout=-1).stdout
    loop_out = loop()
    helmfile_out = run_quiet(helmfile_argv, env=hf_env, stdout=-1).stdout
    equal = {
        "render-fleet == helm loop (bytes)": fleet_out == loop_out,
        "render-fleet == helmfile (documents)": _documents(fleet_out.decode())
        == _documents(helmfile_out.decode()),
    }
    samples = interleaved(
        {
            "scs-templates render-fleet": lambda: run_quiet(fleet_argv),
            "helmfile template --skip-deps": lambda: run_quiet(helmfile_argv, env=hf_env),
            "helm template loop": loop,
        },
        runs,
    )
    result = {name: summary(values) for name, values in samples.items()}
    fleet_median = result["scs-templates render-fleet"]["median"]
    vs_helmfile = result["helmfile template --skip-deps"]["median"] / fleet_median
    vs_loop = result["helm template loop"]["median"] / fleet_median
    return {
        "clusters": count,
        "parts": result,
        "equal_outputs": equal,
        "speedup_vs_helmfile": vs_helmfile,
        "speedup_vs_loop": vs_loop,
        "target_vs_helmfile": TARGETS["fleet_vs_helmfile_speedup"],
        "target_vs_loop": TARGETS["fleet_vs_loop_speedup"],
        "met": vs_helmfile >= TARGETS["fleet_vs_helmfile_speedup"]
        and vs_loop >= TARGETS["fleet_vs_loop_speedup"],
        "batches": _batches(files),
        "memory": memory_of(["render-fleet", *files, "--stdout"]),
    }


def _batches(files: list[str]) -> list[dict[str, Any]]:
    """How render_fleet cuts this fleet (for the report)."""
    import os

    from scs_templates.charts import chart_for
    from scs_templates.fleet import plan_batches
    from scs_templates.render import kube_version_of
    from scs_templates.settings import load_settings

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
    """``--help`` and ``validate`` as subprocess wall time; import-time top offenders."""
    del work
    samples = interleaved(
        {
            "scs-templates --help": lambda: run_quiet([CLI, "--help"]),
            "scs-templates validate": lambda: run_quiet([CLI, "validate", str(MINIMAL)]),
            "python -c pass (floor)": lambda: run_quiet([PYTHON, "-c", "pass"]),
        },
        runs,
    )
    result = {name: summary(values) for name, values in samples.items()}
    help_s = result["scs-templates --help"]["median"]
    validate_s = result["scs-templates validate"]["median"]
    return {
        "parts": result,
        "help_target": TARGETS["help_seconds"],
        "validate_target": TARGETS["validate_seconds"],
        "met": help_s <= TARGETS["help_seconds"] and validate_s <= TARGETS["validate_seconds"],
        "importtime_validate": importtime(["validate", str(MINIMAL)]),
        "importtime_render": importtime(["render", str(MINIMAL)]),
    }


def importtime(argv: list[str], top: int = 12) -> list[dict[str, Any]]:
    """``python -X importtime`` of the CLI: the slowest top-level imports (cumulative ms)."""
    code = "import sys; from scs_templates.cli.main import main; sys.exit(main(sys.argv[1:]))"
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


# --------------------------------------------------------------------------- 5. memory

_SHIM = """
import json, resource, sys
from scs_templates.cli.main import main
code = main(sys.argv[1:])
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
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
    ``RUSAGE_SELF`` and its ``RUSAGE_CHILDREN`` (the largest helm). A wrapper that runs the
    console script reports ``RUSAGE_CHILDREN`` too: the largest of the Python process and
    helm (rusage keeps the max of the descendants, not their sum).
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
    from scs_templates.fleet import render_fleet
    from scs_templates.settings import validate_data

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


def all_cases(fleet_size: int) -> dict[str, Case]:
    return {
        "render_cli": render_cli,
        "library": library,
        "fleet": lambda runs, work: fleet(runs, work, fleet_size),
        "startup": startup,
        "memory": memory,
        "rollout": rollout,
    }


def run_case(case: Case, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scs-templates-bench-") as temp:
        return case(runs, Path(temp))
