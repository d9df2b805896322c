"""remove_all, the one delete-then-wait loop of every cleanup: what it records per item.

The cleanups that use it run in the plane and cloud tiers; this pins the loop itself, in
Python, so a change to it is proven without a cluster or a cloud.
"""

from __future__ import annotations

import pytest

from scs_templates._tools.removal import remove_all


class Gone(Exception):
    """The service says: no such object."""


def _delete(item: str) -> bool | None:
    if item == "absent":
        return False
    if item == "404":
        raise Gone(item)
    if item == "broken":
        raise RuntimeError("the service failed")
    return None


def test_each_item_is_recorded_as_deleted_absent_or_failed_in_order() -> None:
    done = remove_all(
        ["a", "absent", "404", "broken", "b"], _delete, gone=lambda e: isinstance(e, Gone)
    )
    assert done.deleted == ["a", "b"]
    assert done.absent == ["absent", "404"]
    assert [(item, str(error)) for item, error in done.failed] == [("broken", "the service failed")]
    assert (done.left, done.waited) == ([], 0.0)


def test_without_gone_the_callers_own_error_is_raised() -> None:
    with pytest.raises(Gone):
        remove_all(["a", "404"], _delete)


def test_a_dry_run_deletes_nothing_and_reports_every_item_as_deleted() -> None:
    def refuse(item: str) -> None:
        raise AssertionError(f"deleted {item} in a dry run")

    assert remove_all(["a", "b"], refuse, dry_run=True).deleted == ["a", "b"]


def test_the_wait_covers_what_was_deleted_absent_or_also_awaited() -> None:
    seen: list[list[str]] = []
    there = [{"a", "absent", "pv", "other"}, {"pv"}, set()]

    def present() -> set[str]:
        return there.pop(0)

    done = remove_all(
        ["a", "absent"],
        _delete,
        present=present,
        also_await=["pv"],
        timeout=10.0,
        poll_interval=0.001,
        waiting=lambda left, _waited: seen.append(left),
    )
    assert seen == [["a", "absent", "pv"], ["pv"]]
    assert done.left == []


def test_what_is_still_there_at_the_timeout_is_left() -> None:
    done = remove_all(["a"], _delete, present=lambda: {"a"}, timeout=0.0, poll_interval=0.001)
    assert done.left == ["a"]
