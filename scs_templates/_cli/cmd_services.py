"""``scs-templates services render``: preview the workload cluster's standard services.

Exit codes as ``render``: 0 success, 2 invalid settings or a local chart mirror that lacks
a chart, 1 when helmfile or helm fail (e.g. upstream chart repositories without network).
"""

from __future__ import annotations

import argparse

from scs_templates._cli.cmd_render import render_arguments
from scs_templates._clikit.arguments import chart_mirror_option, usage


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``services render`` (what runs each is named, not imported)."""
    services = subparsers.add_parser(
        "services",
        help="preview the standard services of the workload cluster",
        description="Inspect the standard services (CNI, cloud integration, metrics-server, "
        "Gateway API, ...) that `apply` installs into the workload cluster.",
    )
    services.set_defaults(func=lambda _args: usage(services))
    actions = services.add_subparsers(dest="services_command", metavar="ACTION")
    render = actions.add_parser(
        "render",
        help="render every service release offline, exactly as `apply` installs it",
        description=(
            "Render the manifests of every standard-service release of SETTINGS with "
            "helmfile and helm: exactly what `apply` installs into a new workload cluster "
            "(same releases, chart sources, versions and values; CRDs included, test hooks "
            "not). Charts come from spec.services.chartMirror: a local directory of "
            "packaged charts (file:///DIR) needs no network (--chart-mirror replaces it). "
            "Without -o: multi-document YAML on stdout, each document headed by `# target: "
            "workload` or `# target: management` (--target keeps one) (-o json|name as "
            "`render`). With --output-dir DIR: one file per "
            "object (NN-kind-name.yaml), written atomically; DIR is replaced as a whole "
            "and must hold only .yaml files. "
            "Deterministic. Exit 0 ok, 2 invalid settings or a chart missing from a local "
            "mirror, 1 helmfile/helm failed."
        ),
    )
    render_arguments(render)

    chart_mirror_option(render)
    render.add_argument(
        "--target",
        choices=("workload", "management"),
        help="only the objects for this cluster (each document is marked `# target: "
        "workload` or `# target: management`; the cluster-autoscaler runs next to the "
        "Cluster on the management cluster)",
    )
    render.set_defaults(func="scs_templates._cli.run.services:run_services_render")
