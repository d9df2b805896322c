"""Timing helpers: interleaved runs, medians, subprocess wall clock, machine description."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


def wall(action: Callable[[], object]) -> float:
    """Seconds one call of ``action`` took."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def interleaved(cases: Mapping[str, Callable[[], object]], runs: int) -> dict[str, list[float]]:
    """Run every case once per round, rotating the order each round, ``runs`` rounds.

    Interleaving makes slow phases of a noisy machine hit all sides alike; rotating the
    order removes the advantage of always running first (warm caches) or last.
    """
    return interleaved_with_cpu(cases, runs)[0]


def interleaved_with_cpu(
    cases: Mapping[str, Callable[[], object]], runs: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """:func:`interleaved`, plus the CPU seconds (user + system) of the subprocesses each
    run waited for. On a machine shared with other busy processes the wall clock mostly
    measures the queue for a core; CPU time is what a run itself costs (it still grows
    somewhat with the load: shared caches, frequency)."""
    names = list(cases)
    samples: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(runs):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            before = _children_cpu()
            samples[name].append(wall(cases[name]))
            cpu[name].append(_children_cpu() - before)
    return samples, cpu


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def summary(samples: Sequence[float]) -> dict[str, Any]:
    """Median, min, max (seconds) and the number of runs."""
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "runs": len(samples),
        "samples": list(samples),
    }


def run_quiet(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    stdout: int | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run a command, output discarded (or piped), failing loudly on a non-zero exit."""
    done = subprocess.run(
        list(argv),
        stdout=subprocess.DEVNULL if stdout is None else stdout,
        stderr=subprocess.PIPE,
        env=None if env is None else dict(env),
        cwd=cwd,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv[:3])}... exited {done.returncode}: {done.stderr.decode()[-2000:]}"
        )
    return done


def _first(path: str, prefix: str) -> str:
    try:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def _version(argv: Sequence[str]) -> str:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    except OSError:
        return "unavailable"
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else "?"


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    from scs_templates._tools.toolchain.resolve import find_helm, find_helmfile

    helm = find_helm()
    helmfile = find_helmfile()
    mem_kb = _first("/proc/meminfo", "MemTotal").split()[0]
    return {
        "nproc": os.cpu_count(),
        "cpu": _first("/proc/cpuinfo", "model name"),
        "memory_gib": round(int(mem_kb) / 1024 / 1024, 1) if mem_kb.isdigit() else None,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "helm": f"{helm.version} ({helm.path})",
        "helmfile": f"{helmfile.version} ({helmfile.path})",
        "loadavg_at_start": list(os.getloadavg()),
    }
