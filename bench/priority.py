"""Run a benchmark so that its processes never wait for a core on a shared machine.

``sudo python bench/priority.py python bench/run.py --only startup`` (root only: lowering a
priority needs it). On a machine whose cores are busy with other work, the wall clock of a
run mostly measures its wait for a core; ``nice`` alone does not change that, because with
``sched_autogroup_enabled`` the kernel shares the CPU between sessions first and applies
nice only within one. So the command runs in a session of its own (``setsid``) whose
autogroup nice is -20 (``/proc/self/autogroup``), at nice -20. helm is run through a wrapper
that does the same for the session it is in: the helm runner starts helm in a new session
(``start_new_session``, so that a timeout can end its process group), which would otherwise
be a new autogroup at nice 0 (``find_helm`` honours ``SCS_TEMPLATES_HELM``). The bare sides
(plain ``helm template``, the helm loop, helmfile's helm) run the real binary directly
(``bench.cases.BARE_HELM_ENV``): they stay in this session without a wrapper, and only the
CLI pays the wrapper's ``sh`` exec, which can only make its ratios worse.

What this does NOT give is a quiet machine: the other processes still run on the core the
benchmark leaves free, and share caches and memory bandwidth with it, so even the CPU time
of ``python -c pass`` stays above a quiet machine's. docs/performance.md says for every
number taken this way that it was, and the load at the time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_RAISE = "echo -20 > /proc/self/autogroup 2>/dev/null || exit 97"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("bench/priority.py: needs root (a negative nice)", file=sys.stderr)
        return 2
    from bench.cases import BARE_HELM_ENV
    from scs_templates._tools.toolchain.resolve import find_helm

    real = find_helm().path
    with tempfile.TemporaryDirectory(prefix="scs-bench-priority-") as scratch:
        wrapper = Path(scratch) / "helm"
        wrapper.write_text(f'#!/bin/sh\n{_RAISE}\nexec "{real}" "$@"\n', encoding="utf-8")
        wrapper.chmod(0o755)
        env = dict(os.environ, SCS_TEMPLATES_HELM=str(wrapper), **{BARE_HELM_ENV: str(real)})
        # $0 is the sh's name; the command follows as "$@"
        command = ["setsid", "-w", "sh", "-c", f'{_RAISE}; exec nice -n -20 "$@"', "sh", *argv]
        return subprocess.run(command, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
