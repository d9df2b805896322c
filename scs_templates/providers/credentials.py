"""The cluster's cloud credentials Secret, written through the Kubernetes API (never helm).

Install writes it before helm runs, and a provider's credential rotation writes the new
one: both through :func:`store_credentials`, so the Secret always has the same labels and
annotations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from scs_templates._core.errors import InputError
from scs_templates._core.labels import KEEP_ANNOTATION, credentials_secret_labels
from scs_templates.providers.registry import provider_of

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.kube import KubeClient


def store_credentials(
    kube: KubeClient, settings: ClusterSettings, secrets: Mapping[str, str]
) -> bool:
    """Create or update the cluster's credentials Secret through the Kubernetes API.

    Labelled for the cluster (delete removes it after the Cluster is gone) and for
    ``clusterctl move``; annotated ``helm.sh/resource-policy: keep`` so that a release from
    before this scheme, whose manifest still holds the Secret, does not delete it when it is
    upgraded to a chart without it. True when the Secret changed. Values are never logged.
    """
    name = provider_of(settings).credentials_secret_name(settings)
    if name is None:
        raise InputError(f"provider {settings.spec.provider!r} takes no credentials Secret")
    namespace = settings.metadata.namespace
    kube.ensure_namespace(namespace)
    return kube.put_secret(
        namespace,
        name,
        secrets,
        labels=credentials_secret_labels(settings.name),
        annotations={KEEP_ANNOTATION: "keep"},
    )
