"""``gitops``: write a Flux repository layout for clusters (see :mod:`scs_templates._gitops`).

Exit codes follow :mod:`scs_templates._cli.main`: 0 success, 2 invalid settings or
arguments, 1 when a tool underneath (helm, helmfile) failed. The objects are data; Flux
renders the charts on the management cluster. The one exception, flagged on stderr: the
releases written as plain files (the Gateway API CRDs, gitops/crds.py) are rendered here with
helmfile, from ``--chart-mirror`` (``file:///DIR``: offline) or else from their source (the
network). What the command does:
:mod:`scs_templates._cli.run.gitops`.
"""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import chart_mirror_option, path_argument


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gitops`` (what runs each is named, not imported)."""
    gitops = subparsers.add_parser(
        "gitops",
        help="write a Flux repository layout: cluster and service HelmReleases",
        description=(
            "Write, under DIR, the Flux objects that reconcile the clusters described by the "
            "SETTINGS files from a git repository: per cluster a HelmRelease of its cluster "
            "chart (from --chart-source) and one HelmRelease per standard service, targeting "
            "the workload cluster through its kubeconfig Secret in the helmfile order, plus "
            "kustomize indexes and the Flux Kustomization DIR/flux/scs-clusters.yaml. One file "
            "per object, deterministic; no credentials are written. Clusters already in DIR "
            "but not given are kept unless --prune. A symbolic link as DIR or in what gitops "
            "writes there is refused; a folder is removed only while it holds exactly the "
            "files gitops wrote (its scs-templates.sha256). Exit 0 ok, 2 invalid settings or "
            "arguments, a link, or files gitops did not write in a folder it would remove; 1 "
            "when a tool underneath (helm, helmfile) failed."
        ),
    )
    gitops.add_argument(
        "directory", metavar="DIR", type=path_argument, help="folder in the git repository"
    )
    gitops.add_argument("settings", metavar="SETTINGS", nargs="+", help="cluster settings files")
    _chart_source_options(gitops)
    _layout_options(gitops)
    gitops.set_defaults(func="scs_templates._cli.run.gitops:run_gitops")


def _chart_source_options(gitops: argparse.ArgumentParser) -> None:
    """Where Flux finds the cluster charts."""
    gitops.add_argument(
        "--chart-source",
        required=True,
        metavar="URL",
        help="where Flux finds the cluster charts: oci://REGISTRY/PATH (charts pushed as "
        "PATH/<provider>-cluster:<version>) or the https:// or ssh:// URL of a git repository "
        "holding this project's charts/ folder",
    )
    gitops.add_argument(
        "--chart-ref", metavar="REF", help="git tag (vX.Y.Z) or branch of a git --chart-source"
    )
    gitops.add_argument(
        "--plain-http",
        action="store_true",
        help="the oci:// --chart-source registry speaks HTTP without TLS (Flux's "
        "OCIRepository spec.insecure; as `helm push --plain-http`)",
    )


def _layout_options(gitops: argparse.ArgumentParser) -> None:
    """How the repository is laid out and reconciled, and what a run may change in it."""
    gitops.add_argument(
        "--interval", default="10m", metavar="DURATION", help="Flux reconcile interval (10m)"
    )
    gitops.add_argument(
        "--source",
        default="flux-system",
        metavar="NAME",
        help="the GitRepository (in flux-system) that holds DIR (default: flux-system)",
    )
    gitops.add_argument(
        "--path", metavar="PATH", help="DIR's path in that repository (default: ./<DIR name>)"
    )
    gitops.add_argument("--no-services", action="store_true", help="only the cluster HelmReleases")

    chart_mirror_option(
        gitops,
        "where scs-templates reads the charts it renders itself (the Gateway API CRDs, "
        "written as plain files): file:///DIR (packaged charts NAME-VERSION.tgz: no network) "
        "or oci://REGISTRY/PATH; the HelmReleases keep spec.services.chartMirror, which "
        "Flux reads",
    )
    gitops.add_argument(
        "--rebase-class",
        action="store_true",
        help="move topology clusters (template clusterclass) whose release in DIR uses "
        "another ClusterClass onto this release's class, as `install --rebase-class` (exit 2 "
        "otherwise)",
    )
    gitops.add_argument(
        "--prune",
        action="store_true",
        help="remove the folders of clusters in DIR that are not given (their objects stay "
        "on the management cluster: `scs-templates delete` deletes a cluster); refused for a "
        "folder holding files gitops did not write",
    )
