"""A FAKE Kubernetes API server for tests: a test double, never a real cluster.

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
