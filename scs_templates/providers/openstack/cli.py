"""``scs-templates openstack``: per-cluster credentials, preflight checks and cleanup.

openstacksdk is imported only when a command runs (inside :mod:`scs_templates.providers.openstack`).
Secrets are never printed: ``appcred create`` shows the credential ID and name, and writes
the Secret's content only to the file named by ``--write-secret`` (mode 0600, atomic).
"""

from __future__ import annotations

import os
import sys

from scs_templates._clikit.common import (
    cluster_options,
    load_args,
    path_argument,
    poll_option,
    settings_arguments,
    usage,
)
from scs_templates._clikit.examples import examples_block
from scs_templates._core.errors import InputError

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any

    from scs_templates._settings.model import ClusterSettings
    from scs_templates._settings.validate import LoadedSettings


#: The example block of each command's help (the key: its words after scs-templates).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "openstack": ("scs-templates openstack preflight cluster.yaml",),
    "openstack appcred": ("scs-templates openstack appcred create cluster.yaml",),
    "openstack appcred create": (
        "scs-templates openstack appcred create cluster.yaml --os-cloud admin",
        "scs-templates openstack appcred create cluster.yaml --write-secret secret.yaml",
    ),
    "openstack appcred delete": ("scs-templates openstack appcred delete cluster.yaml",),
    "openstack appcred rotate": (
        "scs-templates openstack appcred rotate cluster.yaml --dry-run",
        "scs-templates openstack appcred rotate cluster.yaml --kubeconfig mgmt.yaml",
    ),
    "openstack preflight": ("scs-templates openstack preflight cluster.yaml --os-cloud prod",),
    "openstack cleanup": ("scs-templates openstack cleanup cluster.yaml --dry-run",),
}


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``openstack appcred create|delete|rotate``, ``openstack preflight``,
    ``openstack cleanup``."""
    openstack = subparsers.add_parser(
        "openstack",
        epilog=examples_block(EXAMPLES["openstack"]),
        help="per-cluster OpenStack credentials, preflight checks and cleanup",
        description=(
            "Talk to the OpenStack cloud of a cluster. The cloud entry comes from clouds.yaml "
            "(OS_CLIENT_CONFIG_FILE, ./clouds.yaml, ~/.config/openstack/clouds.yaml, "
            "/etc/openstack/clouds.yaml); its name from --os-cloud or spec.openstack.cloud."
        ),
    )
    openstack.set_defaults(func=lambda _args: usage(openstack))
    actions = openstack.add_subparsers(dest="openstack_command", metavar="ACTION")
    _register_appcred(actions)
    _register_checks(actions)


def _register_appcred(actions: argparse._SubParsersAction[Any]) -> None:
    """``openstack appcred create|delete|rotate``."""
    appcred = actions.add_parser(
        "appcred",
        epilog=examples_block(EXAMPLES["openstack appcred"]),
        help="create, rotate or delete the cluster's restricted application credential(s)",
        description=(
            "Manage $PREFIX-$CLUSTER-appcred (and $PREFIX-$CLUSTER-appcred-workload when "
            "spec.openstack.applicationCredential.separateWorkload): restricted application "
            "credentials created with the cloud entry's own (unrestricted) credential."
        ),
    )
    appcred.set_defaults(func=lambda _args: usage(appcred))
    appcred_actions = appcred.add_subparsers(dest="appcred_command", metavar="ACTION")
    _register_appcred_create(appcred_actions)
    delete = appcred_actions.add_parser(
        "delete",
        epilog=examples_block(EXAMPLES["openstack appcred delete"]),
        help="delete the cluster's credential(s); deleting again is harmless",
    )
    _common(delete)
    delete.set_defaults(func=_appcred_delete)
    _register_appcred_rotate(appcred_actions)


def _register_appcred_create(appcred_actions: argparse._SubParsersAction[Any]) -> None:
    """``openstack appcred create``: create or reuse, optionally writing the Secret."""
    create = appcred_actions.add_parser(
        "create",
        epilog=examples_block(EXAMPLES["openstack appcred create"]),
        help="create the credential(s), or reuse them when the stored secret still works",
        description=(
            "Create the restricted credential(s), or reuse existing ones whose secret (read "
            "from --existing-secret, default: the --write-secret file if it exists) still "
            "authenticates; otherwise they are deleted and created again. Prints ID and name "
            "only, never the secret."
        ),
    )
    _common(create)
    create.add_argument(
        "--write-secret",
        type=path_argument,
        metavar="FILE",
        help="write the cluster's credentials Secret (a Kubernetes Secret manifest with "
        "clouds.yaml and cloud.conf) to FILE, mode 0600, atomically",
    )
    create.add_argument(
        "--existing-secret",
        type=path_argument,
        metavar="FILE",
        help="a credentials Secret manifest from an earlier run whose secrets are reused "
        "(default: the --write-secret FILE when it exists)",
    )
    create.set_defaults(func=_appcred_create)


def _register_appcred_rotate(appcred_actions: argparse._SubParsersAction[Any]) -> None:
    """``openstack appcred rotate``: the next credential generation, switched to safely."""
    rotate = appcred_actions.add_parser(
        "rotate",
        epilog=examples_block(EXAMPLES["openstack appcred rotate"]),
        help="make a new credential, switch the cluster's Secret and its users to it, then "
        "delete the old one",
        description=(
            "Create the next generation of the cluster's restricted credential(s), write it "
            "into the credentials Secret on the management cluster (through the Kubernetes "
            "API, never helm), ask CAPO to reconcile the cluster, rewrite the workload "
            "cluster's kube-system/cloud-config and restart OCCM and Cinder CSI onto it, "
            "wait for their rollouts and for CAPO to have reconciled the OpenStackCluster "
            "with the new credential (its Ready condition), and only then delete the old "
            "credential(s). A run "
            "that stopped half way is finished by running it again. Prints names and IDs "
            "only, never a secret. Exit 0 done, 2 nothing scs-templates can rotate (no "
            "Secret, a credential the user brings), 1 OpenStack or an API failed or a "
            "restart or CAPO's reconcile did not finish (the old credential is then kept)."
        ),
    )
    cluster_options(rotate)
    _os_cloud(rotate)
    rotate.add_argument(
        "--dry-run", action="store_true", help="list what would be done; change nothing"
    )
    rotate.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="how long to wait for CAPO's reconcile with the new credential and for the "
        "OCCM and Cinder CSI restarts (default 600)",
    )
    poll_option(rotate)
    rotate.set_defaults(func=_appcred_rotate)


def _register_checks(actions: argparse._SubParsersAction[Any]) -> None:
    """``openstack preflight`` and ``openstack cleanup``."""
    preflight = actions.add_parser(
        "preflight",
        epilog=examples_block(EXAMPLES["openstack preflight"]),
        help="check the cloud before installing: external network, node CIDR, names, "
        "flavors, images",
        description=(
            "Print one line per check (ok / failed / skipped). Exit 0 when nothing failed, "
            "2 when a failure is in the settings (a named network, flavor or image is missing, "
            "the node CIDR overlaps), 1 when only the cloud's state is at fault."
        ),
    )
    _common(preflight)
    preflight.set_defaults(func=_preflight)

    cleanup = actions.add_parser(
        "cleanup",
        epilog=examples_block(EXAMPLES["openstack cleanup"]),
        help="delete the leftover ports, security groups, subnet and network of a deleted cluster",
    )
    _common(cleanup)
    cleanup.add_argument(
        "--dry-run", action="store_true", help="list what would be deleted; change nothing"
    )
    cleanup.set_defaults(func=_cleanup)


def _common(parser: argparse.ArgumentParser) -> None:
    settings_arguments(parser)
    _os_cloud(parser)


def _os_cloud(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--os-cloud",
        metavar="NAME",
        help="clouds.yaml entry to use (default: spec.openstack.cloud of the settings)",
    )


def _load(args: argparse.Namespace) -> ClusterSettings:
    return _loaded(args).settings


def _loaded(args: argparse.Namespace) -> LoadedSettings:
    """The settings file with its positions (for messages that point at a line)."""
    # deferred: scs_templates.providers.openstack.provider
    from scs_templates.providers.openstack.provider import OPENSTACK
    from scs_templates.providers.registry import (
        provider_of,  # deferred: scs_templates.providers.registry
    )

    loaded = load_args(args)
    settings = loaded.settings
    if provider_of(settings) is not OPENSTACK:
        raise InputError(
            f"{args.settings}: spec.provider is {settings.spec.provider}; the openstack "
            "commands need provider openstack"
        )
    return loaded


def _connect(args: argparse.Namespace, settings: ClusterSettings) -> Any:
    # deferred: scs_templates.providers.openstack.connection
    from scs_templates.providers.openstack.connection import open_cloud

    # deferred: scs_templates.providers.openstack.section
    from scs_templates.providers.openstack.section import section

    return open_cloud(args.os_cloud or section(settings).cloud)


# --------------------------------------------------------------------------- appcred


def _appcred_create(args: argparse.Namespace) -> int:
    # deferred: scs_templates.providers.openstack.appcred
    from scs_templates.providers.openstack.appcred import ensure_cluster_credentials
    from scs_templates.providers.openstack.credentials_secret import (
        credentials_secret_data,
        credentials_secret_name,
        read_secret_manifest,
        write_secret_manifest,
    )  # deferred: scs_templates.providers.openstack.credentials_secret

    # deferred: scs_templates.providers.openstack.section
    from scs_templates.providers.openstack.section import section

    settings = _load(args)
    if not section(settings).application_credential.per_cluster:
        print(
            "spec.openstack.applicationCredential.perCluster is false: no per-cluster "
            "credential to create"
        )
        return 0
    existing_file: Path | None = args.existing_secret
    if existing_file is None and args.write_secret is not None and args.write_secret.exists():
        existing_file = args.write_secret
    existing = read_secret_manifest(existing_file) if existing_file else None
    if args.write_secret is not None:
        _check_writable(args.write_secret)
    conn = _connect(args, settings)
    try:
        credentials = ensure_cluster_credentials(conn, settings, existing)
        results = [credentials.cluster] + ([credentials.workload] if credentials.workload else [])
        for result in results:
            state = "created" if result.created else "reused"
            print(
                f"{state} application credential {result.credential.name} "
                f"(ID {result.credential.id}): {result.reason}"
            )
        for kept in credentials.kept:
            print(kept.line())
        if args.write_secret is not None:
            data = credentials_secret_data(credentials, settings)
            name = credentials_secret_name(settings)
            try:
                write_secret_manifest(args.write_secret, settings, data)
            except InputError as error:
                raise InputError(f"--write-secret {error}") from None
            print(f"wrote Secret {settings.metadata.namespace}/{name} to {args.write_secret}")
        elif any(result.created for result in results):
            print(
                "warning: the new secret was not saved anywhere (use --write-secret FILE); "
                "the next run will have to replace the credential",
                file=sys.stderr,
            )
    finally:
        conn.close()
    return 0


def _appcred_delete(args: argparse.Namespace) -> int:
    from scs_templates.providers.openstack.appcred import (
        delete_cluster_credentials,
        kept_legacy_credentials,
    )  # deferred: scs_templates.providers.openstack.appcred

    settings = _load(args)
    conn = _connect(args, settings)
    try:
        for name, deleted in delete_cluster_credentials(conn, settings).items():
            print(
                f"{'deleted' if deleted else 'not found (nothing to delete)'}: "
                f"application credential {name}"
            )
        for kept in kept_legacy_credentials(conn, settings):
            print(kept.line())
    finally:
        conn.close()
    return 0


def _appcred_rotate(args: argparse.Namespace) -> int:
    from scs_templates._tools.kube import KubeClient  # deferred: scs_templates._tools.kube

    # deferred: scs_templates.providers.openstack.rotation
    from scs_templates.providers.openstack.rotation import rotate_credentials

    settings = _load(args)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with KubeClient(args.kubeconfig, args.context) as kube:
        conn = _connect(args, settings)
        try:
            report = rotate_credentials(
                conn,
                settings,
                kube,
                dry_run=args.dry_run,
                timeout=args.timeout,
                poll_interval=args.poll_interval,
                progress=progress,
            )
        finally:
            conn.close()
    for line in report.lines():
        print(line)
    return 0


# --------------------------------------------------------------------------- preflight


def _preflight(args: argparse.Namespace) -> int:
    # deferred: scs_templates.providers.openstack.preflight
    from scs_templates.providers.openstack.preflight import run_preflight

    loaded = _loaded(args)
    conn = _connect(args, loaded.settings)
    try:
        report = run_preflight(
            conn,
            loaded.settings,
            file=loaded.file,
            positions=loaded.positions,
            origins=loaded.origins,
        )
    finally:
        conn.close()
    for result in report.results:
        print(result.line)
    if report.failed:
        where = "settings" if report.exit_code == 2 else "cloud"
        print(
            f"preflight: {len(report.failed)} check(s) failed (fix in the {where})",
            file=sys.stderr,
        )
    return report.exit_code


# --------------------------------------------------------------------------- cleanup


def _cleanup(args: argparse.Namespace) -> int:
    # deferred: scs_templates.providers.openstack.cleanup
    from scs_templates.providers.openstack.cleanup import cleanup_cluster_network

    settings = _load(args)
    conn = _connect(args, settings)
    try:
        report = cleanup_cluster_network(conn, settings, dry_run=args.dry_run)
    finally:
        conn.close()
    for line in report.lines():
        print(line)
    return report.exit_code


# --------------------------------------------------------------------------- Secret files


def _check_writable(path: Path) -> None:
    """Refuse an unwritable ``--write-secret`` BEFORE any credential is created: afterwards
    its secret could not be saved (OpenStack shows a secret only once) and would be lost."""
    from scs_templates._core import atomic  # deferred: scs_templates._core.atomic

    target = path.expanduser()
    if target.is_dir():
        raise InputError(f"--write-secret {path}: is a directory")
    probe = target.parent / f".{target.name}.{os.getpid()}.probe.tmp"  # a stale-sibling name
    try:
        atomic.create_file(probe, "", private=True)
    except (InputError, OSError) as error:
        raise InputError(f"--write-secret {error}") from None
    probe.unlink(missing_ok=True)
