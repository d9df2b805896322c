"""The local OpenStack's service processes die with the test process that started them.

Each service runs in a session of its own (``Stack.stop`` ends it), so a pytest killed
mid-run never reached ``stop`` and left Keystone, Neutron, Octavia and Nova serving, with
their ports and SQLite files, for the rest of the machine's life: found when a clean-clone
CI run was stopped on 2026-12-04 (four ``openstack_wsgi.py`` processes, parent PID 1).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.support import REPO, process_gone


def test_a_killed_test_process_leaves_no_stack_service_behind(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, sys, time
        from pathlib import Path
        sys.path[:0] = [{str(REPO)!r}, {str(REPO / "tests")!r}]
        from tests.support.openstack_stack import spawn_service

        service = spawn_service(
            [sys.executable, "-c", "import time; time.sleep(300)"],
            Path({str(tmp_path / "service.log")!r}),
            dict(os.environ),
            Path({str(tmp_path)!r}),
        )
        print(service.pid, flush=True)
        time.sleep(300)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        assert line.strip().isdigit(), parent.stderr.read() if parent.stderr else line
        service = int(line)
        assert not process_gone(service)
        parent.send_signal(signal.SIGKILL)  # no cleanup can run: only the kernel's signal
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while not process_gone(service) and time.monotonic() < deadline:
            time.sleep(0.1)
        survived = not process_gone(service)
        if survived:
            os.kill(service, signal.SIGKILL)
        assert not survived, "the service outlived the test process that started it"
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait(timeout=30)
