"""Run the benchmarks of docs/performance.md: ``make bench`` or ``python bench/run.py``.

Prints one table and writes ``bench/results/latest.json`` (gitignored). ``--quick`` is a
smoke run (2 runs per side, fleets of 20): its numbers are NOT the documented ones.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import FLEET_SIZES, SCALING_SIZES, all_cases, run_case
from bench.report import table
from bench.timing import machine

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[1]


def compile_bytecode() -> str:
    """Byte-compile the package as installed users have it, and say so.

    A wheel install (pip) writes ``__pycache__`` for every module and ``make setup`` runs
    ``python -m compileall -q scs_templates``; a checkout run under
    ``PYTHONDONTWRITEBYTECODE=1`` (set on this machine) would otherwise compile every edited
    module again in every timed run and measure what no user pays. compileall writes the
    ``.pyc`` files whatever that variable says; a failure stops the benchmark.
    """
    package = REPO / "scs_templates"
    if not compileall.compile_dir(str(package), quiet=1):
        raise SystemExit(f"bench: compileall failed for {package}; not timing stale bytecode")
    note = f"compileall {package.relative_to(REPO)} (as make setup / a wheel install)"
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        note += "; PYTHONDONTWRITEBYTECODE is set, so this is the bytecode the runs use"
    print(f"bytecode: {note}", file=sys.stderr, flush=True)
    return note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smoke run: few runs, small fleet")
    parser.add_argument("--runs", type=int, help="runs per side (default 7, quick 2)")
    parser.add_argument(
        "--fleet-size",
        type=int,
        action="append",
        help="clusters of a fleet compared with helmfile and the helm loop (repeatable; "
        "default 100 and 500)",
    )
    parser.add_argument(
        "--scaling-size",
        type=int,
        action="append",
        help="clusters of a fleet in the per-cluster cost (repeatable; default 10, 100, 500, 2000)",
    )
    parser.add_argument(
        "--only", action="append", metavar="CASE", help="run only this case (repeatable)"
    )
    parser.add_argument("--output", type=Path, default=RESULTS / "latest.json")
    args = parser.parse_args(argv)
    runs = args.runs or (2 if args.quick else 7)
    fleet_sizes = tuple(args.fleet_size or ((20,) if args.quick else FLEET_SIZES))
    scaling = tuple(args.scaling_size or ((5, 20) if args.quick else SCALING_SIZES))
    cases = all_cases(fleet_sizes, scaling)
    selected = args.only or list(cases)
    unknown = sorted(set(selected) - set(cases))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(cases)}")

    bytecode = compile_bytecode()
    report: dict[str, Any] = {
        "machine": machine(),
        "bytecode": bytecode,
        "runs": runs,
        "quick": args.quick,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cases": {},
    }
    for name in selected:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        load_before = os.getloadavg()
        report["cases"][name] = run_case(cases[name], runs)
        # the load next to every case's numbers: on a shared machine it changes within a run
        report["cases"][name]["load"] = {
            "before": list(load_before),
            "after": list(os.getloadavg()),
            "finished": time.strftime("%H:%M:%S %Z"),
        }
        print(f"  {name}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        # after every case: a long run that is stopped keeps what it measured
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(report))
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
