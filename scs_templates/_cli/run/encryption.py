"""What the commands of :mod:`scs_templates._cli.cmd_encryption` do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scs_templates._clikit.common import load_args
from scs_templates._core.errors import InputError
from scs_templates._lifecycle import key_rotation
from scs_templates._render import encryption
from scs_templates._tools.kube import KubeClient

if TYPE_CHECKING:
    import argparse


def _client(args: argparse.Namespace) -> KubeClient:
    return KubeClient(args.kubeconfig, args.context)


def run_create(args: argparse.Namespace) -> int:
    settings = load_args(args).settings
    name = f"{settings.metadata.namespace}/{encryption.secret_name(settings)}"
    with _client(args) as kube:
        created = encryption.ensure_secret(kube, settings)
    print(f"created the encryption key Secret {name}" if created else f"{name} exists; kept")
    return 0


def run_status(args: argparse.Namespace) -> int:
    settings = load_args(args).settings
    name = encryption.secret_name(settings)
    with _client(args) as kube:
        data = kube.secret_data(settings.metadata.namespace, name)
    if data is None or encryption.SECRET_KEY not in data:
        raise InputError(f"no encryption Secret {settings.metadata.namespace}/{name}")
    names = encryption.key_names(data[encryption.SECRET_KEY])
    print(f"Secret {settings.metadata.namespace}/{name}: keys {', '.join(names)} (write key first)")
    return 0


def run_rotate(args: argparse.Namespace) -> int:
    settings = load_args(args).settings
    with _client(args) as kube:
        result = key_rotation.rotate(kube, settings, args.step)
    print(
        f"step {result.step}: keys {', '.join(result.keys)} (write key first); control plane "
        f"rolls out (rollout.after {result.rollout_after}); wait until it is done"
    )
    return 0
