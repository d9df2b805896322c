"""What a provider does to a cloud and to a workload cluster: the second part of a plug-in.

A provider is two objects. Its :class:`~scs_templates.providers.interface.Provider` is what
every command that reads settings needs (rules, names, values), so it is loaded by
``validate`` and ``render`` and imports only what they use. Its :class:`Operations` is what
only the commands that touch a cloud or a cluster need (``install``, ``delete``, ``apply``,
the services, the versions table's update): the cloud client, credentials, preflight checks,
clean-up. ``Provider.operations`` names it as ``module:attribute`` (an entry-point style
reference, like the plug-in's own entry point), and :func:`operations_of` loads it once, when
such a command first asks. A provider without one gets :class:`Operations`' defaults: no
cloud behind it, nothing to prepare or release, no services of its own.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from scs_templates._core.entry_points import load
from scs_templates._core.progress import Progress, quiet
from scs_templates.providers.interface import CloudOptions, Management, Provider

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from scs_templates._contract.services import ServiceInfo
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.kube import KubeClient
    from scs_templates._versions.upstream import ProviderVersions, Upstream

__all__ = ["Operations", "operations_of"]


class Operations:
    """A provider's cloud and cluster operations; the defaults are those of a provider
    without a cloud."""

    # ----------------------------------------------------------------------- lifecycle

    def cloud_options(self, args: argparse.Namespace) -> CloudOptions:
        """What the provider's options of install, apply and delete ask for (the options
        its module in the entry-point group ``scs_templates.cloud_options`` added to those
        parsers). The default: no options, touch the cloud."""
        del args
        return CloudOptions()

    def prepare(
        self,
        settings: ClusterSettings,
        options: CloudOptions,
        management: Management,
        progress: Progress = quiet,
    ) -> dict[str, str] | None:
        """Before install: create what the cluster needs in the cloud; return the content of
        the cluster's credentials Secret (:meth:`Provider.credentials_secret_name`), which install
        writes through the Kubernetes API, never as helm values (None: the provider has no
        credentials Secret, or the existing one is kept)."""
        del settings, options, management, progress
        return None

    def release(
        self,
        settings: ClusterSettings,
        options: CloudOptions,
        *,
        progress: Progress = quiet,
        credentials: Mapping[str, str] | None = None,
    ) -> None:
        """After delete (the cluster is gone): remove what :meth:`prepare` created and what
        the cluster left behind. Idempotent; ToolError when something remains.
        ``credentials``: the content of the credentials Secret
        (:meth:`Provider.credentials_secret_name`) as delete read it before removing it
        (None: there was none), so the provider still knows which cloud credentials the
        cluster used. A secret: never print or log it."""
        del settings, options, progress, credentials

    # ----------------------------------------------------------------------- services

    def services(self) -> tuple[ServiceInfo, ...]:
        """Its own releases of the service catalogue (the cloud integrations), installed
        after the CNI and before the common services; each row names the provider in
        ``providers``."""
        return ()

    def proxy_protocol_annotations(self) -> dict[str, str]:
        """The annotations of a Service of type LoadBalancer that make its load balancer
        send the PROXY protocol (when :meth:`Provider.proxy_protocol` holds)."""
        return {}

    def prepare_workload(
        self, settings: ClusterSettings, management: KubeClient, workload: KubeClient
    ) -> str:
        """Before the services are installed: what they need in the workload cluster.
        Returns a note for the user ("" when done or nothing is needed)."""
        del settings, management, workload
        return ""

    # ----------------------------------------------------------------------- versions table

    def read_versions(self, upstream: Upstream) -> ProviderVersions | None:
        """Its part of the versions table, read from its upstream sources (the Go module
        proxy: network) when the maintainer script regenerates the table
        (``python -m scs_templates._maintain.update_versions``): its ``providers`` entry and
        ``sources`` rows, the kind node images it adds to the Kubernetes minors and the CRDs
        it adds to the Cluster API set. None: the table holds nothing of its own."""
        del upstream
        return None


@cache
def _loaded(reference: str) -> Operations:
    found = load(reference)
    if not isinstance(found, Operations):
        raise TypeError(f"{reference} is no Operations")
    return found


_DEFAULT = Operations()


def operations_of(provider: Provider) -> Operations:
    """The operations ``provider.operations`` names (loaded once), or the defaults."""
    if provider.operations is None:
        return _DEFAULT
    return _loaded(provider.operations)
