"""A real Cluster API management plane for tests, built from upstream Go modules.

Use from Python::

    from testenv import running
    with running(tmp_dir) as plane:          # builds what is missing, then starts
        plane.kubeconfig                     # cluster-admin kubeconfig file
        plane.api.apply(obj, dry_run=True)   # server-side apply through the real webhooks
        ns = plane.namespace("mytest")       # a fresh namespace per test

From a shell (from the repository root, in the project's venv)::

    python -m testenv build                  # build the binaries into the cache
    python -m testenv up --dir DIR           # start; prints `ready`; Ctrl-C stops everything

In pytest, the session fixture ``plane`` (tests/conftest.py) gives every test the same
plane. What runs, what it costs and what is still a double: docs/testing.md.
"""

from testenv.kubeapi import APIError, KubeAPI
from testenv.plane import MANAGERS, Manager, Plane, running, start
from testenv.process import PlaneError

__all__ = ["MANAGERS", "APIError", "KubeAPI", "Manager", "Plane", "PlaneError", "running", "start"]
