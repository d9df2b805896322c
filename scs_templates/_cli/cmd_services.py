"""``scs-templates services render``: preview the workload cluster's standard services.

Exit codes as ``render``: 0 success, 2 invalid settings or a local chart mirror that lacks
a chart, 1 when helmfile or helm fail (e.g. upstream chart repositories without network).
"""

from __future__ import annotations

from scs_templates._clikit.common import chart_mirror_option, load_args, usage

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``services render``; importing this module stays cheap."""
    # deferred: scs_templates._cli.cmd_render
    from scs_templates._cli.cmd_render import render_arguments

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
    render.set_defaults(func=run_services_render)


def run_services_render(args: argparse.Namespace) -> int:
    # deferred: scs_templates._cli.cmd_render
    from scs_templates._cli.cmd_render import objects_format, print_or_write
    from scs_templates._clikit.output import objects_text  # deferred: scs_templates._clikit.output

    output = objects_format(args)
    loaded = load_args(args)
    from scs_templates._render.render import check_output_dir  # deferred: ruamel

    # deferred: pydantic
    from scs_templates._services.preview import render_services, write_services

    if args.output_dir is not None:
        check_output_dir(args.output_dir)  # before helmfile runs; the write checks again

    result = render_services(loaded.settings)
    chosen = result.selected(args.target)
    return print_or_write(
        lambda: objects_text(
            result.marked(args.target),
            [result.objects[i] for i in chosen] if output != "yaml" else (),
            output,
        ),
        args.output_dir,
        lambda: write_services(result, args.output_dir, args.target),
    )
