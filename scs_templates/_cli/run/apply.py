"""What the commands of :mod:`scs_templates._cli.cmd_apply` do."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scs_templates._cli.run.lifecycle import ProgressLine, cloud_options, print_pruned, to_stderr
from scs_templates._clikit.common import load_args
from scs_templates._services.deploy import apply

if TYPE_CHECKING:
    import argparse


def run_apply(args: argparse.Namespace) -> int:
    loaded = load_args(args)
    progress = ProgressLine()
    try:
        result = apply(
            loaded.settings,
            kubeconfig=args.kubeconfig,
            context=args.context,
            cloud=cloud_options(args, loaded.settings.spec.provider),
            cloud_progress=to_stderr,
            force_remove=args.force_remove,
            allow_cni_switch=args.allow_cni_switch,
            dry_run=args.dry_run,
            install_cluster=not args.services_only,
            wait=not args.no_wait,
            kubeconfig_timeout=args.timeout,
            poll_interval=args.poll_interval,
            progress=progress,
        )
    finally:
        progress.done()
    if result.cluster is not None:
        release = result.cluster.release
        print(
            f"cluster release {release.name} in namespace {release.namespace}: "
            f"revision {release.revision}, {release.status}"
        )
        print_pruned(result.cluster.pruned)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    prefix = "would " if result.dry_run else ""
    for plan in result.plan:
        print(prefix + plan.line())
    if not result.dry_run:
        print(
            f"services: synced {', '.join(result.synced)}"
            if result.synced
            else "services: nothing to change"
        )
    return 0
