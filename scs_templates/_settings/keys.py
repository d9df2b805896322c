"""The YAML keys of a settings document: its header and the field name <-> key rule.

Kept free of pydantic: the happy path of ``render`` and ``validate`` (:mod:`.plain`) reads
the document's keys without the model classes. :mod:`.model` uses the same rule as its
alias generator, so there is one rule for both directions (a test checks that
:func:`name_for` inverts :func:`alias_for` on every field of the model).
"""

from __future__ import annotations

import re

API_VERSION = "scs-templates.scs.community/v1alpha1"
KIND = "ClusterSettings"

_ACRONYMS = {
    "api": "API",
    "cidr": "CIDR",
    "cas": "CAs",
    "cidrs": "CIDRs",
    "csi": "CSI",
    "fs": "FS",
    "gb": "GB",
    "gib": "GiB",
    "mb": "MB",
    "url": "URL",
    "id": "ID",
    "ip": "IP",
    "qps": "QPS",
}
#: An acronym as :func:`alias_for` spells it (longest first: ``CIDRs`` before ``CIDR``) or an
#: upper-case letter, never the first character: where a new word starts.
_WORD_START = re.compile(
    "(?<=.)(?:"
    + "|".join(re.escape(s) for s in sorted(_ACRONYMS.values(), key=len, reverse=True))
    + "|[A-Z])"
)
_WORD_OF = {spelled: word for word, spelled in _ACRONYMS.items()}


def alias_for(name: str) -> str:
    """snake_case field name -> the camelCase YAML key (``pod_cidr`` -> ``podCIDR``)."""
    head, *rest = name.split("_")
    return head + "".join(_ACRONYMS.get(part, part.capitalize()) for part in rest)


def name_for(key: str) -> str:
    """camelCase YAML key -> the snake_case field name (``podCIDR`` -> ``pod_cidr``)."""
    return _WORD_START.sub(
        lambda match: "_" + _WORD_OF.get(match.group(), match.group().lower()), key
    )
