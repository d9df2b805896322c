"""Waiting on the management cluster: ONE poll loop (:func:`poll`), and the waits built on it
(the Cluster Available, the Cluster gone; the ClusterClass reconciled in :mod:`.class_step`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from scs_templates._core.errors import ToolError
from scs_templates._core.progress import Progress

if TYPE_CHECKING:
    from scs_templates._tools.kube import ClusterState, KubeClient, ObjectRef

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_WAIT_TIMEOUT",
    "elapsed",
    "poll",
    "wait_for_cluster",
    "wait_until_gone",
]

DEFAULT_WAIT_TIMEOUT = 1800.0
DEFAULT_POLL_INTERVAL = 5.0

T = TypeVar("T")


def elapsed(seconds: float) -> str:
    """``95.2`` -> ``1m35s`` (progress lines and timeout messages)."""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def poll(
    read: Callable[[], T],
    done: Callable[[T], bool],
    *,
    timeout: float,
    poll_interval: float,
    waiting: Callable[[T, float], None] | None = None,
) -> tuple[T, float, bool]:
    """Call ``read`` until ``done`` holds for its value or ``timeout`` seconds have passed.

    Returns the last value, the seconds waited and whether ``done`` held. ``waiting`` sees
    every value that is not done yet (for progress lines). The last sleep is cut short so
    that the final read happens at the deadline, not a poll interval after it.
    """
    start = time.monotonic()
    while True:
        value = read()
        waited = time.monotonic() - start
        if done(value):
            return value, waited, True
        if waiting is not None:
            waiting(value, waited)
        if waited >= timeout:
            return value, waited, False
        time.sleep(min(poll_interval, max(0.0, timeout - waited)) or poll_interval)


def wait_for_cluster(
    kube: KubeClient,
    ref: ObjectRef,
    *,
    timeout: float = DEFAULT_WAIT_TIMEOUT,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    progress: Progress | None = None,
) -> ClusterState:
    """Poll the Cluster until its ``Available`` condition is True; return its state.

    ``progress`` receives one line per poll (the phase and the main conditions). On timeout
    a :class:`ToolError` names the last phase and every condition.
    """

    def waiting(state: ClusterState | None, waited: float) -> None:
        if progress:
            summary = state.summary() if state is not None else "not found yet"
            progress(f"Cluster {ref.name}: {summary} [{elapsed(waited)}]")

    last, waited, available = poll(
        lambda: kube.cluster(ref.namespace, ref.name, api_version=ref.api_version),
        lambda state: state is not None and state.available,
        timeout=timeout,
        poll_interval=poll_interval,
        waiting=waiting,
    )
    if available and last is not None:
        if progress:
            progress(f"Cluster {ref.name}: Available after {elapsed(waited)}")
        return last
    detail = "the Cluster object does not exist"
    if last is not None:
        detail = last.summary()
        if last.details():
            detail += "; conditions: " + " | ".join(last.details())
    raise ToolError(
        f"Cluster {ref.namespace}/{ref.name} is not Available after {elapsed(timeout)}: {detail}"
    )


def wait_until_gone(
    kube: KubeClient,
    ref: ObjectRef,
    *,
    timeout: float,
    poll_interval: float,
    progress: Progress | None,
) -> None:
    """Poll the Cluster until it no longer exists; ToolError (nothing else deleted) after
    ``timeout``."""

    def waiting(state: ClusterState | None, waited: float) -> None:
        if progress and state is not None:
            progress(f"Cluster {ref.name}: being deleted, {state.summary()} [{elapsed(waited)}]")

    last, waited, gone = poll(
        lambda: kube.cluster(ref.namespace, ref.name, api_version=ref.api_version),
        lambda state: state is None,
        timeout=timeout,
        poll_interval=poll_interval,
        waiting=waiting,
    )
    if gone:
        if progress:
            progress(f"Cluster {ref.name}: deleted after {elapsed(waited)}")
        return
    summary = last.summary() if last is not None else ""
    raise ToolError(
        f"Cluster {ref.namespace}/{ref.name} still exists after {elapsed(timeout)} "
        f"({summary}); nothing else was deleted. Cluster API is still tearing "
        "the infrastructure down or is stuck: check the provider controllers' logs, "
        "then run delete again"
    )
