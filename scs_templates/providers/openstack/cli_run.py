"""What the commands of :mod:`scs_templates.providers.openstack.cli` do."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from scs_templates._clikit.common import load_args
from scs_templates._core import atomic
from scs_templates._core.errors import InputError
from scs_templates._tools.kube import KubeClient
from scs_templates.providers.openstack.appcred import (
    delete_cluster_credentials,
    ensure_cluster_credentials,
    kept_legacy_credentials,
)
from scs_templates.providers.openstack.cleanup import cleanup_cluster_network
from scs_templates.providers.openstack.connection import open_cloud
from scs_templates.providers.openstack.credentials_secret import (
    credentials_secret_data,
    credentials_secret_name,
    read_secret_manifest,
    write_secret_manifest,
)
from scs_templates.providers.openstack.preflight import run_preflight
from scs_templates.providers.openstack.provider import OPENSTACK
from scs_templates.providers.openstack.rotation import rotate_credentials
from scs_templates.providers.openstack.section import section
from scs_templates.providers.registry import provider_of

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from scs_templates._settings.model import ClusterSettings
    from scs_templates._settings.validate import LoadedSettings


def _load(args: argparse.Namespace) -> ClusterSettings:
    return _loaded(args).settings


def _loaded(args: argparse.Namespace) -> LoadedSettings:
    """The settings file with its positions (for messages that point at a line)."""
    loaded = load_args(args)
    settings = loaded.settings
    if provider_of(settings) is not OPENSTACK:
        raise InputError(
            f"{args.settings}: spec.provider is {settings.spec.provider}; the openstack "
            "commands need provider openstack"
        )
    return loaded


def _connect(args: argparse.Namespace, settings: ClusterSettings) -> Any:
    return open_cloud(args.os_cloud or section(settings).cloud)


def run_appcred_create(args: argparse.Namespace) -> int:
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


def run_appcred_delete(args: argparse.Namespace) -> int:
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


def run_appcred_rotate(args: argparse.Namespace) -> int:
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


def run_openstack_preflight(args: argparse.Namespace) -> int:
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


def run_cleanup(args: argparse.Namespace) -> int:
    settings = _load(args)
    conn = _connect(args, settings)
    try:
        report = cleanup_cluster_network(conn, settings, dry_run=args.dry_run)
    finally:
        conn.close()
    for line in report.lines():
        print(line)
    return report.exit_code


def _check_writable(path: Path) -> None:
    """Refuse an unwritable ``--write-secret`` BEFORE any credential is created: afterwards
    its secret could not be saved (OpenStack shows a secret only once) and would be lost."""
    target = path.expanduser()
    if target.is_dir():
        raise InputError(f"--write-secret {path}: is a directory")
    probe = target.parent / f".{target.name}.{os.getpid()}.probe.tmp"  # a stale-sibling name
    try:
        atomic.create_file(probe, "", private=True)
    except (InputError, OSError) as error:
        raise InputError(f"--write-secret {error}") from None
    probe.unlink(missing_ok=True)
