"""``scs-templates encryption-key status|rotate``: the cluster's encryption-at-rest key.

Key material is never printed: only key names. Exit 0 ok, 2 when the step does not fit the
Secret's keys (or no Secret exists), 1 when the API fails.
"""

from __future__ import annotations

import argparse

from scs_templates._clikit.arguments import cluster_options, usage


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    create.set_defaults(func="scs_templates._cli.run.encryption:run_create")
    status = actions.add_parser("status", help="the key names, the write key first")
    cluster_options(status)
    status.set_defaults(func="scs_templates._cli.run.encryption:run_status")
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
    rotate.set_defaults(func="scs_templates._cli.run.encryption:run_rotate")
