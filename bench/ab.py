"""A/B of one change: the same commands from two trees, interleaved, in CPU time.

``python bench/ab.py BASE [--runs N] [--command "render examples/x.yaml"]...``: BASE (a git
ref) is exported with ``git archive`` to a temporary directory; both it and this checkout are
byte-compiled (as ``make setup`` does); every command then runs as ``python -c "...run()"``
with ``PYTHONPATH`` set to its tree, the working directory outside both trees, and the same
interpreter, one run of each side per round with the order rotated (:mod:`bench.timing`).
The outputs (stdout, stderr, exit code) of the two sides must be equal, or nothing is timed.
Printed: the median CPU time (user + system of the process and its children, i.e. helm's
too) and wall clock of each side, and the load average before and after. On a shared machine
the CPU time of a run is what it costs itself (the wall clock mostly its wait for a core);
only the difference of sides measured in the same rounds means something.
"""

from __future__ import annotations

import argparse
import compileall
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.timing import interleaved_with_cpu

REPO = Path(__file__).resolve().parents[1]
DEFAULT_COMMANDS = (
    "render examples/openstack-minimal.yaml",
    "validate examples/openstack-minimal.yaml",
    "--help",
)
#: What the package reads beside itself in a checkout (scs_templates/_core/shipped.py, fastpath).
SHIPPED = ("scs_templates", "charts", "helmfile.d", "schemas")
_RUN = "import sys; sys.argv[0] = 'scs-templates'; from scs_templates._cli.main import run; run()"


def _export(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", ref, *SHIPPED],
        check=True,
        capture_output=True,
    ).stdout
    into.mkdir()
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _argv(command: str) -> list[str]:
    """The command's words, a relative path made absolute against this checkout."""
    words = command.split()
    return [str(REPO / w) if (REPO / w).is_file() else w for w in words]


def _side(tree: Path, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    return subprocess.run(
        [sys.executable, "-c", _RUN, *argv], env=env, cwd=cwd, capture_output=True, check=False
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="git ref of the A side (the B side is this checkout)")
    parser.add_argument("--runs", type=int, default=21, help="rounds (default 21)")
    parser.add_argument("--command", action="append", help="CLI arguments (repeatable)")
    args = parser.parse_args(argv)
    commands = args.command or list(DEFAULT_COMMANDS)
    with tempfile.TemporaryDirectory(prefix="scs-ab-") as scratch:
        base = _export(args.base, Path(scratch) / "base")
        trees = {"A": base, "B": REPO}
        for tree in trees.values():
            compileall.compile_dir(str(tree / "scs_templates"), quiet=1)
        cwd = Path(scratch)
        for command in commands:
            words = _argv(command)
            a, b = (_side(tree, words, cwd) for tree in trees.values())
            if (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
                print(f"{command}: the two sides' outputs differ; not timed", file=sys.stderr)
                return 1
            load = os.getloadavg()[0]
            started = time.strftime("%H:%M:%S")
            wall, cpu = interleaved_with_cpu(
                {name: functools.partial(_side, tree, words, cwd) for name, tree in trees.items()},
                args.runs,
            )
            a_cpu, b_cpu = (statistics.median(cpu[name]) * 1000 for name in trees)
            a_wall, b_wall = (statistics.median(wall[name]) * 1000 for name in trees)
            print(
                f"{command}: CPU {a_cpu:.1f} -> {b_cpu:.1f} ms "
                f"({(b_cpu / a_cpu - 1) * 100:+.1f} %), "
                f"wall {a_wall:.0f} -> {b_wall:.0f} ms; {args.runs} rounds from {started} UTC, "
                f"load {load:.1f} -> {os.getloadavg()[0]:.1f}; outputs identical",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
