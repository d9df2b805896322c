"""The workload cluster's kubeconfig, read from the management cluster, as a private file.

Cluster API keeps the admin kubeconfig of every workload cluster in the Secret
``<cluster>-kubeconfig`` (key ``value``) next to the Cluster object. It is read through the
install engineer's :meth:`scs_templates._tools.kube.KubeClient.cluster_kubeconfig` (the
``kubernetes`` client) and written to a 0600 file in a private 0700 temporary directory that
is removed when the ``with`` block ends, whatever happens. It is a credential: it is never
printed, logged or put into an error message.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates._core.errors import ToolError
from scs_templates._core.naming import kubeconfig_secret
from scs_templates._core.progress import Progress
from scs_templates._tools.kube.wait import poll

if TYPE_CHECKING:
    from scs_templates._tools.kube import KubeClient

__all__ = ["private_kubeconfig", "read_workload_kubeconfig", "wait_for_workload_kubeconfig"]


def read_workload_kubeconfig(kube: KubeClient, namespace: str, cluster: str) -> str | None:
    """The workload kubeconfig text, or None while Cluster API has not written it yet."""
    return kube.cluster_kubeconfig(namespace, cluster)


def wait_for_workload_kubeconfig(
    kube: KubeClient,
    namespace: str,
    cluster: str,
    *,
    timeout: float,
    poll_interval: float = 5.0,
    progress: Progress | None = None,
) -> str:
    """Poll until the Secret ``<cluster>-kubeconfig`` exists; ToolError after ``timeout``."""

    secret = f"{namespace}/{kubeconfig_secret(cluster)}"

    def waiting(_: str | None, waited: float) -> None:
        if progress is not None and waited < timeout:  # no line for the read that timed out
            progress(f"waiting for Secret {secret} [{int(waited)}s]")

    text, _, found = poll(
        lambda: read_workload_kubeconfig(kube, namespace, cluster),
        bool,
        timeout=timeout,
        poll_interval=poll_interval,
        waiting=waiting,
    )
    if found and text:
        return text
    raise ToolError(
        f"the workload kubeconfig Secret {secret} did not appear within {timeout:g} s (is the "
        "control plane coming up? see `scs-templates status`)"
    )


@contextlib.contextmanager
def private_kubeconfig(text: str) -> Iterator[Path]:
    """Write ``text`` to a 0600 file in a fresh 0700 directory; both removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="scs-templates-workload-"))
    try:
        directory.chmod(0o700)
        path = directory / "kubeconfig"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
        yield path
    finally:
        shutil.rmtree(directory, ignore_errors=True)
