"""What the commands of :mod:`scs_templates._cli.cmd_lifecycle` do."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, TextIO

from scs_templates import _lifecycle as lifecycle
from scs_templates._cli.cmd_lifecycle import EXIT_DIFFERENCES
from scs_templates._clikit.common import load_args
from scs_templates._clikit.output import data_text
from scs_templates._core.errors import InputError
from scs_templates._lifecycle.target import helm_of
from scs_templates._tools.kube.config import check_kubeconfig
from scs_templates.providers import registry
from scs_templates.providers.interface import CloudOptions
from scs_templates.providers.operations import operations_of

if TYPE_CHECKING:
    import argparse

    from scs_templates._lifecycle import DeleteResult, Target
    from scs_templates._tools.helm import Helm


def cloud_options(args: argparse.Namespace, provider: str) -> CloudOptions:
    """The options of the cluster's ``provider`` (:meth:`Operations.cloud_options
    <scs_templates.providers.operations.Operations.cloud_options>`)."""
    return operations_of(registry.provider(provider)).cloud_options(args)


def to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


class ProgressLine:
    """Progress on stderr: one line rewritten with ``\\r`` on a terminal, else plain lines
    (only when the text changes, so logs do not fill with repeats)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = ""
        self._open = False

    def __call__(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
            self._open = True
        elif _without_clock(text) != _without_clock(self._last):
            self.stream.write(text + "\n")
        self._last = text
        self.stream.flush()

    def done(self) -> None:
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


def _without_clock(text: str) -> str:
    return re.sub(r" \[[0-9ms]+\]$", "", text)


def _helm(args: argparse.Namespace) -> Helm:
    """helm for the management cluster, once its server is known to be a Kubernetes API."""
    # a missing or broken kubeconfig (or --context) is exit 2, not helm's failure
    check_kubeconfig(args.kubeconfig, args.context)
    return helm_of(None, args.kubeconfig, args.context)


def print_pruned(pruned: list[str]) -> None:
    """The superseded templates the cluster release's install removed, on stdout (install
    and apply: the same line, so scripts of either read it the same way)."""
    if pruned:
        print(
            f"pruned {len(pruned)} superseded template(s) no machine uses any more: "
            + ", ".join(pruned)
        )


def run_install(args: argparse.Namespace) -> int:
    loaded = load_args(args)
    cloud = cloud_options(args, loaded.settings.spec.provider)
    progress = ProgressLine()
    try:
        result = lifecycle.install(
            loaded.settings,
            helm=_helm(args),
            kubeconfig=args.kubeconfig,
            context=args.context,
            cloud=cloud,
            cloud_progress=to_stderr,
            wait=args.wait,
            timeout=args.timeout,
            poll_interval=args.poll_interval,
            progress=progress,
            rebase_class=args.rebase_class,
        )
    finally:
        progress.done()
    release = result.release
    change = (
        f"Kubernetes {result.previous_version} -> {result.kubernetes_version}"
        if result.previous_version and result.previous_version != result.kubernetes_version
        else f"Kubernetes {result.kubernetes_version}"
    )
    print(
        f"release {release.name} in namespace {release.namespace}: revision {release.revision}, "
        f"{release.status} ({change})"
    )
    print_pruned(result.pruned)
    if result.cluster is not None:
        print(f"Cluster {result.cluster.name}: {result.cluster.summary()}")
    return 0


def run_status(args: argparse.Namespace) -> int:
    result = lifecycle.status(
        load_args(args).settings, helm=_helm(args), kubeconfig=args.kubeconfig, context=args.context
    )
    if args.output != "text":
        sys.stdout.write(data_text(result.to_dict(), args.output))
        return 0
    target = result.target
    if result.release is None:
        print(f"release {target.release} is not installed in namespace {target.namespace}")
    else:
        r = result.release
        print(
            f"release {r.name} in namespace {r.namespace}: revision {r.revision}, {r.status}, "
            f"chart {r.chart}, Kubernetes {result.kubernetes_version or 'unknown'}, "
            f"updated {r.updated}"
        )
    if result.cluster is None:
        print(f"Cluster {target.cluster}: not found")
    else:
        print(f"Cluster {result.cluster.name}: {result.cluster.summary()}")
        for line in result.cluster.details():
            print(f"  {line}")
    return 0


def run_diff(args: argparse.Namespace) -> int:
    result = lifecycle.diff(
        load_args(args).settings, helm=_helm(args), kubeconfig=args.kubeconfig, context=args.context
    )
    for change in result.changes:
        note = f" ({change.note})" if change.note else ""
        print(f"{change.change}: {change.key}{note}")
        if change.diff:
            sys.stdout.write(change.diff if change.diff.endswith("\n") else change.diff + "\n")
    print(result.summary())
    return EXIT_DIFFERENCES if args.exit_code and result.has_changes else 0


def run_delete(args: argparse.Namespace) -> int:
    loaded = load_args(args)
    target = lifecycle.target_of(loaded.settings)
    # a missing kubeconfig fails before the question is asked; the server is asked nothing
    # before the answer (a refusal is exit 2 whatever the server is)
    check_kubeconfig(args.kubeconfig, args.context)
    if not args.yes and not args.dry_run:
        question = (
            f"Delete cluster {target.cluster} in namespace {target.namespace} with all its "
            "machines? [y/N] "
        )
        if not sys.stdin.isatty():
            raise InputError("delete needs confirmation: pass --yes (stdin is not a terminal)")
        answer = input(question)
        if answer.strip().lower() not in ("y", "yes"):
            print("not deleted", file=sys.stderr)
            return 2
    helm = _helm(args)
    cloud = cloud_options(args, loaded.settings.spec.provider)
    progress = ProgressLine()
    incomplete: lifecycle.DeleteIncomplete | None = None
    try:
        result = lifecycle.delete(
            loaded.settings,
            helm=helm,
            kubeconfig=args.kubeconfig,
            context=args.context,
            timeout=args.timeout,
            poll_interval=args.poll_interval,
            progress=progress,
            cloud=cloud,
            cloud_progress=print,  # what the cloud cleanup removes or keeps is the result
            keep_volumes=args.keep_volumes,
            dry_run=args.dry_run,
        )
    except lifecycle.DeleteIncomplete as error:
        incomplete, result = error, error.result
    finally:
        progress.done()
    _print_deleted(result, target, dry_run=args.dry_run)
    if incomplete is not None:
        raise incomplete
    return 0


def _print_deleted(result: DeleteResult, target: Target, *, dry_run: bool) -> None:
    """What delete removed (or would remove) in the workload cluster, on the management
    cluster and in the cloud, then one summary line."""
    would = "would be " if dry_run else ""
    if result.workload is not None:
        for line in result.workload.lines():
            print(line)
    for note in result.notes:
        print(f"note: {note}")
    done = []
    if result.cluster_deleted:
        done.append(f"Cluster {target.cluster} {would}deleted")
    if result.release_uninstalled:
        done.append(f"release {target.release} {would}uninstalled")
    if result.removed:
        done.append(
            f"{'would remove' if dry_run else 'removed'} {len(result.removed)} leftover "
            f"object(s): {', '.join(result.removed)}"
        )
    print("; ".join(done) if done else f"nothing to delete for {target.cluster}")
