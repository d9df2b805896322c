"""A FAKE Kubernetes API server for tests: a test double, never a real cluster.

Kept for FAULT INJECTION only: what a real API server cannot be made to do on purpose (die
mid-request, answer slowly, fail the next call, hold a deletion). Everything else belongs on
the real management plane (the ``plane`` fixture, ``testenv/``, docs/testing.md), which runs
the real kube-apiserver and Cluster API controllers. Tests still on the fake that do not
inject faults are listed in docs/testing.md as not yet moved.

See :class:`FakeKubeAPI` and ``docs/install.md`` ("How the tests use a fake API").
"""

from __future__ import annotations

from tests.fakekube.resources import ResourceType, default_resources
from tests.fakekube.server import ApiError, FakeKubeAPI, RequestRecord, merge_patch

__all__ = [
    "ApiError",
    "FakeKubeAPI",
    "RequestRecord",
    "ResourceType",
    "default_resources",
    "merge_patch",
]
