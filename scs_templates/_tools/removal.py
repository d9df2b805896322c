"""Delete each of some things, then wait until they are gone: ONE loop for every cleanup.

The cloud cleanup (load balancers, floating IPs, security groups, snapshots, volumes, ports:
:mod:`scs_templates.providers.openstack.leftovers`,
:mod:`scs_templates.providers.openstack.cleanup`) and step
(a) of delete in the workload cluster (:mod:`scs_templates._lifecycle.workload_cleanup`) all delete
a
list of objects one by one, note what could not be deleted, and (where the service deletes
asynchronously: Octavia's cascade, Cinder's snapshots, OCCM's and CSI's finalizers) wait
until what they deleted has disappeared. :func:`remove_all` is that, once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from scs_templates._tools.kube.wait import poll

T = TypeVar("T")

__all__ = ["Removal", "remove_all"]


@dataclass
class Removal(Generic[T]):
    """What :func:`remove_all` did with each item."""

    deleted: list[T] = field(default_factory=list)
    """Deleted (a dry run: would be deleted)."""
    absent: list[T] = field(default_factory=list)
    """Already gone when its deletion was asked for."""
    failed: list[tuple[T, Exception]] = field(default_factory=list)
    """Could not be deleted (the service's error)."""
    left: list[T] = field(default_factory=list)
    """Deleted, but still present when the wait ended (timeout)."""
    waited: float = 0.0


def remove_all(
    items: Sequence[T],
    delete: Callable[[T], bool | None],
    *,
    present: Callable[[], Collection[Hashable]] | None = None,
    key: Callable[[T], Hashable] = lambda item: item,
    also_await: Sequence[T] = (),
    gone: Callable[[Exception], bool] | None = None,
    dry_run: bool = False,
    timeout: float = 0.0,
    poll_interval: float = 5.0,
    waiting: Callable[[list[T], float], None] | None = None,
) -> Removal[T]:
    """Delete every item in order, then wait (``present`` given) until none is present.

    ``delete`` returns False when the item was already gone (anything else: deleted). An
    exception for which ``gone`` holds (e.g. HTTP 404) also means already gone; any other is
    recorded in ``failed`` when ``gone`` is given, else raised (the caller's own errors).
    ``present`` lists the keys (``key``; default: the item itself) of what is still there,
    once per poll. The wait covers what was deleted or already gone plus ``also_await``
    (what a controller removes after ours, e.g. a released PersistentVolume) and ends after
    ``timeout`` seconds with the rest in ``left``. ``waiting`` sees what is still there and
    the seconds waited, before each sleep. A dry run deletes nothing, waits for nothing and
    reports every item as deleted.
    """
    result: Removal[T] = Removal()
    if dry_run:
        result.deleted = list(items)
        return result
    _delete_each(items, delete, gone, result)
    if present is None:
        return result

    pending = [*result.deleted, *result.absent, *also_await]
    if not pending:
        return result

    def still_there() -> list[T]:
        there = set(present())
        return [item for item in pending if key(item) in there]

    left, result.waited, done = poll(
        still_there,
        lambda left: not left,
        timeout=timeout,
        poll_interval=poll_interval,
        waiting=waiting,
    )
    if not done:
        result.left = left
    return result


def _delete_each(
    items: Sequence[T],
    delete: Callable[[T], bool | None],
    gone: Callable[[Exception], bool] | None,
    result: Removal[T],
) -> None:
    """Delete the items in order into ``result``'s deleted, absent and failed (see
    :func:`remove_all`)."""
    for item in items:
        try:
            deleted = delete(item)
        except Exception as error:
            if gone is None:
                raise
            if gone(error):
                result.absent.append(item)
            else:
                result.failed.append((item, error))
            continue
        (result.absent if deleted is False else result.deleted).append(item)
