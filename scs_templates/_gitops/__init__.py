"""GitOps delivery: a Flux repository layout written from cluster settings files.

``write_gitops(DIR, fleet, options)`` writes, per cluster, a HelmRelease of the cluster chart
(from an OCI or git source the user names) and one HelmRelease per standard service that
targets the workload cluster through its kubeconfig Secret, in the same dependency order
as the helmfile path, plus the kustomize indexes and the Flux Kustomization that tie them
together. Deterministic, one file per object, no credentials. See docs/gitops.md.
"""

from scs_templates._gitops.layout import GitopsResult, cluster_files, write_gitops
from scs_templates._gitops.objects import ClusterObjects, GitopsOptions, cluster_objects
from scs_templates._gitops.sources import ChartSourceSpec, parse_chart_source

__all__ = [
    "ChartSourceSpec",
    "ClusterObjects",
    "GitopsOptions",
    "GitopsResult",
    "cluster_files",
    "cluster_objects",
    "parse_chart_source",
    "write_gitops",
]
