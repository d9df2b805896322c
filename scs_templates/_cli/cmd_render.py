"""``render``, ``values`` and ``templates``: turn a settings file into manifests, offline.

Exit codes follow :mod:`scs_templates._cli.main`: 0 success, 2 invalid settings or
arguments (every problem printed on stderr, one per line, like ``validate``), 1 when helm
fails. Warnings of the settings go to stderr and never fail a command. What the commands do:
:mod:`scs_templates._cli.run.render`, :mod:`~scs_templates._cli.run.values`
and :mod:`~scs_templates._cli.run.templates`.
"""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import (
    OBJECT_FORMATS,
    format_option,
    path_argument,
    settings_arguments,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``render``, ``values`` and ``templates`` (what runs each is named, not imported)."""
    render = subparsers.add_parser(
        "render",
        help="render the cluster's Cluster API manifests (offline, deterministic)",
        description=(
            "Render the manifests of the cluster described by SETTINGS with helm, offline. "
            "On stdout: the multi-document YAML exactly as `helm template` prints it (-o json: "
            "a v1 List; -o name: kind.group/name per object). With --output-dir DIR: one "
            "file per object (NN-kind-name.yaml, in helm's order), "
            "written atomically; DIR is replaced as a whole and must hold only .yaml files. "
            "No credentials: the provider's credentials Secret is referenced, never rendered "
            "(the provider's own commands write it). Exit 0 ok, 2 invalid settings, "
            "1 helm failed."
        ),
    )
    render_arguments(render)
    render.set_defaults(func="scs_templates._cli.run.render:run_render")

    values = subparsers.add_parser(
        "values",
        help="print the helm values of the cluster, or write them with the helm command line",
        description=(
            "Print the helm values built from SETTINGS as YAML (they never hold a credential). "
            "-o json: as JSON. With --output-dir DIR: "
            "write DIR/values.json (mode 0600) and print the plain `helm template` command that "
            "reproduces `scs-templates render` byte for byte with helm alone."
        ),
    )
    settings_arguments(values)
    format_option(values, ("yaml", "json"), default="yaml", legacy="DIR")
    values.add_argument(
        "--output-dir",
        type=path_argument,
        metavar="DIR",
        help="write DIR/values.json and print the helm command line",
    )
    values.set_defaults(func="scs_templates._cli.run.values:run_values")

    templates = subparsers.add_parser(
        "templates",
        help="list the cluster templates and providers",
        description="List every cluster template on every provider, with its chart and when "
        "to use it.",
    )
    templates.set_defaults(func="scs_templates._cli.run.templates:run_templates")


def render_arguments(parser: argparse.ArgumentParser) -> None:
    """SETTINGS (with ``-f``/``--set``), ``-o FORMAT`` and ``--output-dir DIR``, as every
    rendering command takes them."""
    settings_arguments(parser)
    format_option(parser, OBJECT_FORMATS, default="yaml", legacy="DIR")
    parser.add_argument(
        "--output-dir",
        type=path_argument,
        metavar="DIR",
        help="write one file per object into DIR (NN-kind-name.yaml)",
    )
