"""What the Docker provider does beyond rendering (its
:class:`~scs_templates.providers.operations.Operations`): CAPD has no cloud to prepare or
clean up, so only its part of the versions table (:mod:`.versions_source`) is its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates.providers.docker import versions_source
from scs_templates.providers.operations import Operations

if TYPE_CHECKING:
    from scs_templates._versions.upstream import ProviderVersions, Upstream

__all__ = ["OPERATIONS", "DockerOperations"]


class DockerOperations(Operations):
    """CAPD's versions; the rest are the defaults of a provider without a cloud."""

    def read_versions(self, upstream: Upstream) -> ProviderVersions:
        """CAPD's kind node images, entry and CRDs (:mod:`.versions_source`)."""
        return versions_source.read_versions(upstream)


OPERATIONS = DockerOperations()
