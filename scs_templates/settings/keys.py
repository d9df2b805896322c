"""The YAML keys of a settings document: its header and the field name <-> key rule.

Kept free of pydantic: the happy path of ``render`` and ``validate`` (:mod:`.plain`) reads
the document's keys without the model classes. :mod:`.model` uses the same rule as its
alias generator, so there is one rule for both directions (a test checks that
:func:`name_for` inverts :func:`alias_for` on every field of the model).
"""

from __future__ import annotations

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
    "qps": "QPS",
}
#: Longest first, so that ``CIDRs`` is read before ``CIDR``.
_SPELLED = sorted(
    ((spelled, word) for word, spelled in _ACRONYMS.items()), key=lambda p: -len(p[0])
)


def alias_for(name: str) -> str:
    """snake_case field name -> the camelCase YAML key (``pod_cidr`` -> ``podCIDR``)."""
    head, *rest = name.split("_")
    return head + "".join(_ACRONYMS.get(part, part.capitalize()) for part in rest)


def name_for(key: str) -> str:
    """camelCase YAML key -> the snake_case field name (``podCIDR`` -> ``pod_cidr``)."""
    parts: list[str] = []
    start = 0
    index = 0
    while index < len(key):
        if index > 0:
            spelled = next((p for p in _SPELLED if key.startswith(p[0], index)), None)
            if spelled is not None:
                parts.append(key[start:index])
                parts.append(spelled[1])
                index += len(spelled[0])
                start = index
                continue
            if key[index].isupper():
                parts.append(key[start:index])
                start = index
        index += 1
    parts.append(key[start:])
    return "_".join(part.lower() for part in parts if part)
