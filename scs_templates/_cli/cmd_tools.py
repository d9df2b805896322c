"""``scs-templates tools``: install the pinned helm/helmfile and show which binaries are used."""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import path_argument, usage


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``tools install`` and ``tools status`` (what runs each is named, not imported)."""
    tools = subparsers.add_parser(
        "tools",
        help="build or inspect the helm/helmfile toolchain",
        description=(
            "Manage the pinned helm 4.3.2 and helmfile 1.8.0. Resolution order: "
            "SCS_TEMPLATES_HELM / SCS_TEMPLATES_HELMFILE, then PATH (if supported: helm 4.1.4+, "
            "helmfile 1.8+), then the tools cache, where `tools install` builds them from the "
            "Go module proxy (docs/toolchain.md)."
        ),
    )
    tools.set_defaults(func=lambda _args: usage(tools))
    actions = tools.add_subparsers(dest="tools_command", metavar="ACTION")

    install = actions.add_parser(
        "install",
        help="build the pinned helm (and with --all helmfile) from verified Go modules",
        description=(
            "Use a supported helm on PATH or named by SCS_TEMPLATES_HELM; else build the pinned "
            "helm with `go build` from the Go module proxy (every module checked against the "
            "committed go.sum) into <cache>/tools. helmfile is built the first time a helmfile "
            "command needs it, or here with --all. Fast when already there."
        ),
    )
    _add_cache_dir(install)
    install.add_argument(
        "--all", action="store_true", help="helmfile too (the helmfile commands need it)"
    )
    install.add_argument(
        "--force", action="store_true", help="build even if a usable binary is already there"
    )
    install.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    install.set_defaults(func="scs_templates._cli.run.tools:run_install")

    status = actions.add_parser(
        "status",
        help="show which helm/helmfile binaries are used, their versions and sources",
    )
    _add_cache_dir(status)
    status.set_defaults(func="scs_templates._cli.run.tools:run_status")


def _add_cache_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        type=path_argument,
        metavar="DIR",
        help="cache root (tools go to DIR/tools); default $SCS_TEMPLATES_CACHE_DIR, "
        "$XDG_CACHE_HOME/scs-templates or ~/.cache/scs-templates",
    )
