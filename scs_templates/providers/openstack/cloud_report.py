"""How the cloud cleanup says what it did: one object, one line, in one wording.

Step (c) of ``delete`` prints :mod:`.leftovers`' report (load balancers, floating IPs, OCCM's
security groups, snapshots, volumes) and then :mod:`.cleanup`'s (ports, CAPO's security
groups, the subnet and the network), and ``openstack cleanup`` prints the latter alone. So
both describe an object as :class:`CloudItem` does and order their lines as
:func:`report_lines` does, and the two halves of delete's output read as one list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["CloudItem", "report_lines"]


@dataclass(frozen=True)
class CloudItem:
    """One OpenStack resource the cleanup deletes, would delete or keeps."""

    kind: str
    id: str
    name: str = ""
    detail: str = ""

    def describe(self) -> str:
        """``KIND [NAME] ID [(DETAIL)]``, e.g. ``port capi-x 1f3c... (DOWN, compute:nova)``."""
        name = f" {self.name}" if self.name else ""
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.kind}{name} {self.id}{detail}"


def report_lines(
    dry_run: bool,
    deleted: Iterable[CloudItem],
    *,
    kept: Iterable[CloudItem] = (),
    notes: Iterable[str] = (),
    problems: Iterable[str] = (),
) -> list[str]:
    """What was deleted (a dry run: ``would delete``), kept, noted, and what failed."""
    verb = "would delete" if dry_run else "deleted"
    out = [f"{verb} {item.describe()}" for item in deleted]
    out += [f"kept {item.describe()}" for item in kept]
    out += [f"note: {note}" for note in notes]
    out += [f"FAILED {problem}" for problem in problems]
    return out
