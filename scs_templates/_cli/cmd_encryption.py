"""``scs-templates encryption-key status|rotate``: the cluster's encryption-at-rest key.

Key material is never printed: only key names. Exit 0 ok, 2 when the step does not fit the
Secret's keys (or no Secret exists), 1 when the API fails.
"""

from __future__ import annotations

from scs_templates._clikit.common import cluster_options, load_args, usage

TYPE_CHECKING = False  # not typing's: --help imports no typing (docs/development.md)
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    group = subparsers.add_parser(
        "encryption-key",
        help="show or rotate the key that encrypts the cluster's Secrets in etcd",
        description="The per-cluster encryption-at-rest key lives in the Secret "
        "$PREFIX-$CLUSTER-encryption on the management cluster (created by `install`). "
        "See docs/cluster-features.md for the rotation procedure.",
    )
    group.set_defaults(func=lambda _args: usage(group))
    actions = group.add_subparsers(dest="encryption_command", metavar="ACTION")
    create = actions.add_parser(
        "create",
        help="create the key Secret if missing (install does it; GitOps users run this)",
        description="Create the Secret $PREFIX-$CLUSTER-encryption with a fresh random key "
        "on the management cluster, as `install` does before the first install; an existing "
        "Secret is never touched. Needed when the cluster is delivered by `gitops`.",
    )
    cluster_options(create)
    create.set_defaults(func=run_create)
    status = actions.add_parser("status", help="the key names, the write key first")
    cluster_options(status)
    status.set_defaults(func=run_status)
    rotate = actions.add_parser(
        "rotate",
        help="one rotation step, then a control-plane rollout",
        description="Steps, each after the previous rollout finished: `add` (a new key, "
        "decrypt only), `promote` (the new key encrypts), then rewrite every Secret of the "
        "workload cluster (`kubectl get secrets -A -o json | kubectl replace -f -`), then "
        "`remove` (drop the old key). Each step rewrites the Secret and sets the "
        "KubeadmControlPlane's spec.rollout.after, so every control-plane machine is replaced.",
    )
    cluster_options(rotate)
    rotate.add_argument("--step", required=True, choices=("add", "promote", "remove"))
    rotate.set_defaults(func=run_rotate)


def _client(args: argparse.Namespace) -> Any:
    from scs_templates._tools.kube import KubeClient  # deferred: scs_templates._tools.kube

    return KubeClient(args.kubeconfig, args.context)


def run_create(args: argparse.Namespace) -> int:
    from scs_templates._render import encryption  # deferred: scs_templates._render.encryption

    settings = load_args(args).settings
    name = f"{settings.metadata.namespace}/{encryption.secret_name(settings)}"
    with _client(args) as kube:
        created = encryption.ensure_secret(kube, settings)
    print(f"created the encryption key Secret {name}" if created else f"{name} exists; kept")
    return 0


def run_status(args: argparse.Namespace) -> int:
    from scs_templates._core.errors import InputError  # deferred: scs_templates._core.errors
    from scs_templates._render import encryption  # deferred: scs_templates._render.encryption

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
    from scs_templates._render import encryption  # deferred: scs_templates._render.encryption

    settings = load_args(args).settings
    with _client(args) as kube:
        result = encryption.rotate(kube, settings, args.step)
    print(
        f"step {result.step}: keys {', '.join(result.keys)} (write key first); control plane "
        f"rolls out (rollout.after {result.rollout_after}); wait until it is done"
    )
    return 0
