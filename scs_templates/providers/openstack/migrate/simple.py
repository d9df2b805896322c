"""Keys whose value is copied as it is: parsed in its shape, written to the row's target.

Most KaaS v1 keys need no interpretation (``NODE_CIDR``, ``ETCD_UNSAFE_FS``, ``MTU_VALUE``):
:func:`copied` makes their handler from the value's shape (:mod:`.shapes`). An empty value
keeps the default; the report says which, quoting the settings model's default unless the
row words it itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scs_templates.providers.openstack.migrate.targets import default_of

if TYPE_CHECKING:
    from scs_templates.providers.openstack.migrate.migration import Handler, KeyInfo, Migration
    from scs_templates.providers.openstack.migrate.reading import Entry


def copied(parse: Callable[[Entry], Any], empty: str | None = None) -> Handler:
    """A handler writing ``parse(entry)`` to the row's target; ``empty``: the report's words
    for an empty value (default: ``the default <the model's default> is kept``)."""

    def handle(m: Migration, entry: Entry, info: KeyInfo) -> None:
        value = parse(entry)
        if value is None:
            m.empty(info, empty or f"the default {default_of(info.path)} is kept")
            return
        m.map_to(info, value)

    return handle
