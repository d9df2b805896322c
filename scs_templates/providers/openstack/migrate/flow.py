"""Parse the KaaS v1 flow-list and flow-map strings such as ``[ a, b, ]`` and ``{ k: 'v', }``.

KaaS v1 wrote lists and maps into ``clusterctl.yaml`` with a terraform template that leaves
a trailing comma and, depending on the release, quotes the whole thing
(``OPENSTACK_DNS_NAMESERVERS: "[ 5.1.66.255, 185.150.99.255, ]"``). These helpers read that
syntax without handing it to a YAML parser: items are split at top-level commas, quotes
around single items are removed, empty items are dropped.
"""

from __future__ import annotations


def split_items(inner: str) -> list[str]:
    """Split ``inner`` at commas outside quotes; strip items and drop empty ones."""
    items: list[str] = []
    current: list[str] = []
    quote = ""
    for char in inner:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
            current.append(char)
        elif char == ",":
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    if quote:
        raise ValueError(f"unterminated {quote} quote")
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def unquote(text: str) -> str:
    """Remove one pair of matching quotes (YAML style: '' inside single quotes is ')."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if text[:1] in ("'", '"'):
        raise ValueError(f"unbalanced quote in {text!r}")
    return text


def parse_list(text: str) -> list[str]:
    """``[ a, 'b', ]`` -> ``["a", "b"]``; a bare ``a`` (no brackets) is a one-item list."""
    text = text.strip()
    if not text:
        return []
    if text.startswith("["):
        if not text.endswith("]"):
            raise ValueError("a list must end with ']'")
        inner = text[1:-1]
    elif text.endswith("]"):
        raise ValueError("a list must start with '['")
    else:
        inner = text
    if any(char in inner for char in "[]{}"):
        raise ValueError("nested lists or maps are not supported here")
    return [unquote(item) for item in split_items(inner)]


def parse_map(text: str) -> dict[str, str]:
    """``{ k: 'v', k2: v2, }`` -> ``{"k": "v", "k2": "v2"}``; empty text is an empty map."""
    text = text.strip()
    if not text:
        return {}
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError("expected a map such as { key: 'value', }")
    result: dict[str, str] = {}
    for item in split_items(text[1:-1]):
        key, separator, value = _split_pair(item)
        if not separator:
            raise ValueError(f"{item!r} is not a 'key: value' pair")
        key = unquote(key)
        if not key:
            raise ValueError("empty key")
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = unquote(value)
    return result


def _split_pair(item: str) -> tuple[str, str, str]:
    """Split at the first ':' outside quotes."""
    quote = ""
    for index, char in enumerate(item):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == ":":
            return item[:index].strip(), ":", item[index + 1 :].strip()
    return item, "", ""
