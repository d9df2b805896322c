"""A FAKE Kubernetes API server for tests: a test double, never a real cluster.

Kept for FAULT INJECTION only: what a real API server cannot be made to do on purpose (its
one fault hook, ``FakeKubeAPI.fail_next``, fails exactly the next call of a kind; no test
outside tests/test_fakekube.py uses it today). Everything else belongs on the real
management plane (the ``plane`` fixture, ``testenv/``, docs/testing.md), which runs
the real kube-apiserver and Cluster API controllers; a healthy real server is made to
misbehave with real mechanisms there (a finalizer holds a deletion, a
ValidatingAdmissionPolicy refuses a write, a closed port is an unreachable server). Every
remaining use of this fake, with its reason, is listed in docs/testing.md ("What is still a
double, and why").

See :class:`FakeKubeAPI`.
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
