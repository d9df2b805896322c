"""Encryption at rest of the workload cluster's Secrets: the key Secret and its keys.

The key never passes through helm: the chart only names the Secret
(``$PREFIX-$CLUSTER-encryption``, key :data:`SECRET_KEY`) in a ``files[].contentFrom`` of the
KubeadmControlPlane, and the kubeadm bootstrap controller writes it to each control-plane
node as a 0600 file. :func:`ensure_secret` creates the Secret (a fresh random key) before
the first install and never touches an existing one. So the key is in no helm value, no
release history, no rendered output and no log.

Rotation (docs/cluster-features.md; :mod:`scs_templates._lifecycle.key_rotation` does a
step): ``add`` a new key as a read-only second key, roll the control plane; ``promote`` it to
the write key, roll; rewrite every Secret of the workload cluster; ``remove`` the old key,
roll. Each step rewrites the Secret and sets the KubeadmControlPlane's
``spec.rollout.after`` so that every control-plane machine is replaced and boots with the
new file.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
from typing import TYPE_CHECKING, Literal

from scs_templates._core import naming
from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.labels import CLUSTER_LABEL, CLUSTERCTL_MOVE_LABEL

if TYPE_CHECKING:
    from typing import Any

    from scs_templates._settings.model import ClusterSettings
    from scs_templates._tools.kube import KubeClient

__all__ = [
    "SECRET_KEY",
    "RotationStep",
    "config_text",
    "ensure_secret",
    "key_names",
    "next_keys",
    "parse_keys",
    "secret_labels",
    "secret_name",
]

#: Key of the Secret that holds the EncryptionConfiguration document.
SECRET_KEY = "encryption-config.yaml"  # noqa: S105 - a key name, not a password
#: The transformer: XSalsa20-Poly1305 with a 32-byte key (no nonce-reuse limit as aesgcm
#: has, no padding oracle as aescbc has).
PROVIDER = "secretbox"
KEY_BYTES = 32

RotationStep = Literal["add", "promote", "remove"]
Key = tuple[str, str]  # (name, base64 secret)


def secret_name(settings: ClusterSettings) -> str:
    """``$PREFIX-$CLUSTER-encryption`` (the chart and this module use it)."""
    return naming.resource_name(settings.spec.prefix, settings.name, "encryption")


def new_key(now: datetime.datetime | None = None) -> Key:
    """A fresh random key named after its UTC creation time (names are not secret)."""
    moment = now or datetime.datetime.now(datetime.UTC)
    # os.urandom is what secrets.token_bytes returns (the OS's CSPRNG); the secrets module
    # would load hashlib and hmac for it
    secret = base64.b64encode(os.urandom(KEY_BYTES)).decode()
    return f"key-{moment:%Y%m%dT%H%M%SZ}", secret


def config_document(keys: list[Key], resources: list[str]) -> dict[str, Any]:
    """The EncryptionConfiguration: the first key encrypts, all keys decrypt; ``identity``
    last, so Secrets written before encryption was switched on stay readable."""
    return {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [
            {
                "resources": list(resources),
                "providers": [
                    {PROVIDER: {"keys": [{"name": n, "secret": s} for n, s in keys]}},
                    {"identity": {}},
                ],
            }
        ],
    }


def config_text(keys: list[Key], resources: list[str]) -> str:
    """The configuration file's text: JSON, which is YAML too (the API server reads both)."""
    return json.dumps(config_document(keys, resources), indent=2, sort_keys=True) + "\n"


def parse_keys(text: str) -> list[Key]:
    """The keys of a stored EncryptionConfiguration, in order; ToolError when unreadable."""
    from scs_templates._core.yaml_text import YAMLError, load  # deferred: ruamel

    try:
        document = load(text, pure=True)
        providers = document["resources"][0]["providers"]
        found = next(p[PROVIDER]["keys"] for p in providers if PROVIDER in p)
        keys = [(str(k["name"]), str(k["secret"])) for k in found]
    except (YAMLError, KeyError, IndexError, TypeError, StopIteration):
        # never include the text: it holds the keys
        raise ToolError(
            f"the encryption Secret's {SECRET_KEY} is not an EncryptionConfiguration with "
            f"{PROVIDER} keys"
        ) from None
    if not keys:
        raise ToolError(f"the encryption Secret's {SECRET_KEY} has no {PROVIDER} keys")
    return keys


def key_names(text: str) -> list[str]:
    """The key names of a stored configuration (safe to print), write key first."""
    return [name for name, _ in parse_keys(text)]


def next_keys(keys: list[Key], step: RotationStep, new: Key | None = None) -> list[Key]:
    """The key list after one rotation step; InputError when the step does not fit.

    add:     [current]          -> [current, new]   (new can decrypt everywhere)
    promote: [current, new]     -> [new, current]   (new encrypts)
    remove:  [new, current]     -> [new]            (after rewriting every Secret)
    """
    if step == "add":
        if len(keys) != 1:
            raise InputError(
                f"rotation step 'add' needs exactly one key, found {len(keys)} "
                f"({', '.join(n for n, _ in keys)}): finish the running rotation first"
            )
        return [keys[0], new or new_key()]
    if len(keys) != 2:
        raise InputError(
            f"rotation step {step!r} needs two keys (after 'add'), found {len(keys)}: "
            f"{', '.join(n for n, _ in keys)}"
        )
    if step == "promote":
        return [keys[1], keys[0]]
    return [keys[0]]


def secret_labels(settings: ClusterSettings) -> dict[str, str]:
    # the cluster label lets `delete` find and remove it once the Cluster is gone;
    # clusterctl move takes it along with the cluster.
    return {CLUSTER_LABEL: settings.name, CLUSTERCTL_MOVE_LABEL: "true"}


def ensure_secret(kube: KubeClient, settings: ClusterSettings) -> bool:
    """Create the cluster's key Secret with a fresh key unless it exists; True if created.

    An existing Secret is never changed (its key encrypts the cluster's data).
    """
    namespace = settings.metadata.namespace
    name = secret_name(settings)
    current = kube.secret_data(namespace, name)
    if current is not None:
        if SECRET_KEY not in current:
            raise ToolError(f"Secret {namespace}/{name} exists but has no {SECRET_KEY}")
        parse_keys(current[SECRET_KEY])
        return False
    resources = list(settings.spec.security.encryption_at_rest.resources)
    kube.ensure_namespace(namespace)
    kube.put_secret(
        namespace,
        name,
        {SECRET_KEY: config_text([new_key()], resources)},
        labels=secret_labels(settings),
    )
    return True
