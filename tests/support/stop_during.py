"""Run the scs-templates CLI and freeze a real service of the test stack at a chosen moment:
``python tests/support/stop_during.py PGID before|after MODULE:FUNCTION -- CLI ARGS...``.

It sends SIGSTOP to the process group PGID right before or right after the CLI calls
MODULE.FUNCTION (e.g. right after ``open_cloud`` returned: the login is done, the next call
meets a service that accepts the connection and answers nothing). Only the moment is
chosen here: the service that hangs is the real one. The caller resumes it (SIGCONT,
``Stack.paused(service, now=False)`` of tests/support/openstack_stack.py), also when this
process is gone. Only stdlib and scs_templates are imported: the CLI runs as users run it.
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
from typing import Any


def freeze_at(group: int, when: str, target: str) -> None:
    """Wrap MODULE:FUNCTION so that it stops ``group`` ``when`` (``before``/``after``) it
    runs. Callers look it up in its module at call time (the CLI imports lazily)."""
    if when not in ("before", "after"):
        raise SystemExit(f"stop_during: {when!r}: expected before or after")
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)
    original = getattr(module, name)

    @functools.wraps(original)
    def frozen(*args: Any, **kwargs: Any) -> Any:
        if when == "before":
            os.killpg(group, signal.SIGSTOP)
        result = original(*args, **kwargs)
        if when == "after":
            os.killpg(group, signal.SIGSTOP)
        return result

    setattr(module, name, frozen)


def main(argv: list[str]) -> None:
    group, when, target, separator, *cli = argv
    if separator != "--":
        raise SystemExit("usage: stop_during.py PGID before|after MODULE:FUNCTION -- ARGS...")
    freeze_at(int(group), when, target)
    from scs_templates._cli.main import run

    sys.argv = ["scs-templates", *cli]
    run()


if __name__ == "__main__":
    main(sys.argv[1:])
