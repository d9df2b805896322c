"""``install``, ``status``, ``diff`` and ``delete``: the cluster on the management cluster.

Exit codes follow :mod:`scs_templates._cli.main`: 0 success, 2 bad input (invalid settings,
refused version change, unreadable kubeconfig, missing ``--yes``), 1 when helm or the API
fails or a wait times out. ``diff`` exits 0 and prints a summary; with ``--exit-code`` it
exits 3 when there are differences. Progress goes to stderr (one rewritten line on a
terminal, plain lines otherwise); results go to stdout. Secrets are never printed.
"""

from __future__ import annotations

import functools
import re
import sys

from scs_templates._clikit.common import cluster_options, load_args, poll_option
from scs_templates._core.entry_points import entry_points, load

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from typing import Any, TextIO

    from scs_templates._lifecycle import DeleteResult, Target


#: ``diff --exit-code`` when the installed release differs from the rendered manifests.
EXIT_DIFFERENCES = 3


def parse_duration(text: str) -> float:
    """``30m``, ``1h30m``, ``90s`` or ``90`` (seconds) -> seconds (argparse type)."""
    import argparse  # deferred: argparse

    # deferred: scs_templates._core.timeouts
    from scs_templates._core.timeouts import parse_duration as parse

    try:
        return parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


#: The entry-point group of the providers' options of the lifecycle commands: the name is the
#: provider, the value a module with ``add_arguments(parser, *, credentials)`` and
#: ``cloud_options(args)`` (docs/architecture.md, "Adding a provider").
CLOUD_OPTIONS_GROUP = "scs_templates.cloud_options"


@functools.cache
def _cloud_option_modules() -> tuple[tuple[str, str], ...]:
    """(provider, module) of every installed provider's lifecycle options, read once: the
    parser and the command both ask."""
    return tuple(sorted((name, module) for _, name, module in entry_points(CLOUD_OPTIONS_GROUP)))


def provider_options(parser: argparse.ArgumentParser, *, credentials: bool) -> None:
    """Each installed provider's options of install, apply (``credentials``: also where the
    cluster's credentials come from) and delete: how they may touch its cloud."""
    for _, module in _cloud_option_modules():
        load(module).add_arguments(parser, credentials=credentials)


def cloud_options(args: argparse.Namespace, provider: str) -> Any:
    """The options of the cluster's ``provider`` as its
    :class:`~scs_templates.providers.interface.CloudOptions` (defaults when it has none)."""
    for name, module in _cloud_option_modules():
        if name == provider:
            return load(module).cloud_options(args)
    from scs_templates.providers.interface import (
        CloudOptions,  # deferred: scs_templates.providers.interface
    )

    return CloudOptions()


def _note(line: str) -> None:
    print(line, file=sys.stderr)


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``install``, ``status``, ``diff`` and ``delete``; importing stays cheap."""
    _register_install(subparsers)
    _register_status(subparsers)
    _register_diff(subparsers)
    _register_delete(subparsers)


def _register_install(subparsers: argparse._SubParsersAction[Any]) -> None:
    """``install``: helm upgrade --install, optionally waiting for the Cluster."""
    install = subparsers.add_parser(
        "install",
        help="install or upgrade the cluster on the management cluster (helm upgrade --install)",
        description=(
            "Install or upgrade the cluster described by SETTINGS: helm upgrade --install into "
            "the settings' namespace (created if missing), rolled back if it fails. Kubernetes "
            "may move up one minor version at a time and never back (exit 2 otherwise). With "
            "--wait, follow the Cluster's conditions until it is Available (exit 1 on "
            "timeout). A clusterclass cluster stays on its installed ClusterClass unless "
            "--rebase-class (exit 2 otherwise). Exit 0 ok, 2 bad input, 1 helm/API failure "
            "or timeout."
        ),
    )
    cluster_options(install)
    install.add_argument(
        "--rebase-class",
        action="store_true",
        help="move a clusterclass cluster onto this release's ClusterClass (the topology "
        "controller rolls what changes); refused without it",
    )
    install.add_argument(
        "--wait", action="store_true", help="wait until the Cluster's Available condition is True"
    )
    install.add_argument(
        "--timeout",
        type=parse_duration,
        default=1800.0,
        metavar="DURATION",
        help="how long --wait waits (default 30m; e.g. 45m, 1h, 90s)",
    )
    provider_options(install, credentials=True)
    poll_option(install)
    install.set_defaults(func=run_install)


def _register_status(subparsers: argparse._SubParsersAction[Any]) -> None:
    """``status``: the release and the Cluster's conditions."""
    status = subparsers.add_parser(
        "status",
        help="show the release and the Cluster's phase and conditions",
        description=(
            "Show the helm release of SETTINGS and the Cluster object's phase and conditions. "
            "Exit 0 also when nothing is installed (the output says so)."
        ),
    )
    cluster_options(status)
    # deferred: scs_templates._clikit.output
    from scs_templates._clikit.output import report_format_option

    report_format_option(status)
    status.set_defaults(func=run_status)


def _register_diff(subparsers: argparse._SubParsersAction[Any]) -> None:
    """``diff``: the rendered manifests against the installed release."""
    diff = subparsers.add_parser(
        "diff",
        help="compare the rendered manifests with the installed release",
        description=(
            "Render SETTINGS and compare each object (by kind/namespace/name) with the installed "
            "release's manifest (helm get manifest): a unified diff per added, removed or "
            "changed object, then a summary. Secret values are never compared or shown. Exit 0 "
            f"(with --exit-code: {EXIT_DIFFERENCES} when there are differences); 1 is kept for "
            "helm/API failures."
        ),
    )
    cluster_options(diff)
    diff.add_argument(
        "--exit-code",
        action="store_true",
        help=f"exit {EXIT_DIFFERENCES} when there are differences",
    )
    diff.set_defaults(func=run_diff)


def _register_delete(subparsers: argparse._SubParsersAction[Any]) -> None:
    """``delete``: the cluster, its release and its leftovers, in order."""
    delete = subparsers.add_parser(
        "delete",
        help="delete the cluster: the Cluster object first, then the release and its leftovers",
        description=(
            "Delete the cluster of SETTINGS, in order: (a) while the workload cluster is "
            "reachable, its Gateways, LoadBalancer Services and PersistentVolumeClaims, "
            "waiting until the cloud controller manager and CSI driver removed their load "
            "balancers and volumes; (b) the Cluster object, waiting until Cluster API has "
            "removed it, then the release, the kept templates and the credentials Secret; "
            "(c) what the provider finds left in the cloud that belongs to the cluster (load "
            "balancers, floating IPs, security groups, volumes and snapshots, ports, the "
            "network, server groups, application credentials). Everything removed or kept is "
            "printed. On timeout nothing else is deleted (exit 1). Asks for confirmation "
            "unless --yes or --dry-run."
        ),
    )
    cluster_options(delete)
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    provider_options(delete, credentials=False)
    delete.add_argument(
        "--timeout",
        type=parse_duration,
        default=1800.0,
        metavar="DURATION",
        help="how long to wait for the Cluster to disappear (default 30m)",
    )
    delete.add_argument(
        "--keep-volumes",
        action="store_true",
        help="keep the cluster's volumes: its PersistentVolumeClaims and the Cinder volumes "
        "and snapshots of the cluster are listed, not deleted",
    )
    delete.add_argument(
        "--dry-run",
        action="store_true",
        help="change nothing: list what delete would remove and keep, step by step",
    )
    poll_option(delete)
    delete.set_defaults(func=run_delete)


# --------------------------------------------------------------------------- helpers


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


def _helm(args: argparse.Namespace) -> Any:
    """helm for the management cluster, once its server is known to be a Kubernetes API."""
    from scs_templates._lifecycle.target import helm_of  # deferred: scs_templates._lifecycle.target
    from scs_templates._tools.kube.config import check_kubeconfig  # deferred: scs_templates._tools

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


# --------------------------------------------------------------------------- commands


def run_install(args: argparse.Namespace) -> int:
    from scs_templates import _lifecycle as lifecycle  # deferred: scs_templates._lifecycle

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
            cloud_progress=_note,
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
    from scs_templates import _lifecycle as lifecycle  # deferred: scs_templates._lifecycle

    loaded = load_args(args)
    result = lifecycle.status(
        loaded.settings, helm=_helm(args), kubeconfig=args.kubeconfig, context=args.context
    )
    if args.output != "text":
        from scs_templates._clikit.output import data_text  # deferred: scs_templates._clikit.output

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
    from scs_templates import _lifecycle as lifecycle  # deferred: scs_templates._lifecycle

    loaded = load_args(args)
    result = lifecycle.diff(
        loaded.settings, helm=_helm(args), kubeconfig=args.kubeconfig, context=args.context
    )
    for change in result.changes:
        note = f" ({change.note})" if change.note else ""
        print(f"{change.change}: {change.key}{note}")
        if change.diff:
            sys.stdout.write(change.diff if change.diff.endswith("\n") else change.diff + "\n")
    print(result.summary())
    return EXIT_DIFFERENCES if args.exit_code and result.has_changes else 0


def run_delete(args: argparse.Namespace) -> int:
    from scs_templates import _lifecycle as lifecycle  # deferred: scs_templates._lifecycle
    from scs_templates._core.errors import InputError  # deferred: scs_templates._core.errors
    from scs_templates._tools.kube.config import check_kubeconfig  # deferred: scs_templates._tools

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
