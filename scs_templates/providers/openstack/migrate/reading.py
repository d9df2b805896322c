"""Reading a KaaS v1 ``clusterctl.yaml``: the file (size-limited) and one :class:`Entry` per key.

Values are kept as the raw text of the composed YAML nodes, so that the KaaS v1 forms
(``[ a, b, ]`` strings, ``vX.Y.Z``, empty values) are interpreted deliberately by
:mod:`.shapes`, not by YAML's type resolution. A secret key's value is never kept.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from scs_templates._core import textinput
from scs_templates._core.errors import InputError
from scs_templates._settings.keys import API_VERSION, KIND
from scs_templates._settings.loader import YamlSyntaxError, compose_yaml

if TYPE_CHECKING:
    from pathlib import Path

MAX_INPUT_BYTES = 1024 * 1024


@dataclass
class Entry:
    """One key of the input: its line and its value as written (``text`` None: empty)."""

    key: str
    line: int
    kind: Literal["scalar", "list", "map"]
    text: str | None = None
    items: list[str] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)


def read_entries(text: str, file: str, secret_keys: Collection[str]) -> list[Entry]:
    """The keys of a clusterctl.yaml in file order; the values of ``secret_keys`` are not read."""
    if "\x00" in text:
        raise InputError(f"{file}: binary data, not a KaaS v1 clusterctl.yaml")
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        raise InputError(f"{file}: file is empty; expected a KaaS v1 clusterctl.yaml")
    try:
        root = compose_yaml(text, name_aliases=False)  # alias names may be secret values
    except YamlSyntaxError as error:
        where = f"{file}:{error.line}" if error.line else file
        raise InputError(f"{where}: not valid YAML: {error.message}") from None
    if root is None:
        raise InputError(f"{file}: file is empty; expected a KaaS v1 clusterctl.yaml")
    if root.id != "mapping":
        what = "a list" if root.id == "sequence" else "a single value"
        raise InputError(
            f"{file}: expected a mapping of KEY: value settings (a KaaS v1 clusterctl.yaml), "
            f"found {what}"
        )
    _refuse_kubernetes_document(root, file)
    shared = _secret_nodes(root, secret_keys)
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + 1
        if key_node.id != "scalar":
            raise InputError(
                f"{file}:{line}: keys must be plain names such as WORKER_MACHINE_COUNT"
            )
        key = str(key_node.value)
        if key in seen:
            raise InputError(f"{file}:{line}: {key}: duplicate key (first at line {seen[key]})")
        seen[key] = line
        if key not in secret_keys:
            secret = next((shared[id(n)] for n in _nodes(value_node) if id(n) in shared), None)
            if secret is not None:
                raise InputError(
                    f"{file}:{line}: {key}: its value is the value of the secret {secret} (a "
                    "YAML anchor and alias), which is never copied; write the value out"
                )
        entries.append(_entry(key, line, value_node, file, secret_keys))
    return entries


def _refuse_kubernetes_document(root: Any, file: str) -> None:
    """A file with ``apiVersion`` and ``kind`` is no clusterctl.yaml (whose keys are
    upper-case variables): say what it is instead of failing on its first nested value."""
    header = {
        str(key.value): str(value.value)
        for key, value in root.value
        if key.id == "scalar" and value.id == "scalar" and key.value in ("apiVersion", "kind")
    }
    if len(header) < 2:
        return

    if header["kind"] == KIND:
        raise InputError(
            f"{file}: already a {KIND} settings file ({header['apiVersion']}), not a KaaS v1 "
            f"clusterctl.yaml: nothing to migrate; check it with `scs-templates validate`"
            + (
                ""
                if header["apiVersion"] == API_VERSION
                else f" (this release reads {API_VERSION})"
            )
        )
    raise InputError(
        f"{file}: a Kubernetes {header['kind']} document ({header['apiVersion']}), not a KaaS "
        "v1 clusterctl.yaml (KEY: value settings such as KUBERNETES_VERSION)"
    )


def _nodes(root: Any) -> list[Any]:
    """``root`` and every node below it, each once, in document order. Once composed an alias
    is the anchored node itself: walking it again for every alias took the time of the
    expansion, not of the text (aliases of aliases: an alias bomb hung ``migrate``)."""
    found: dict[int, Any] = {}
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) in found:
            continue
        found[id(node)] = node
        if node.id == "sequence":
            todo += reversed(node.value)
        elif node.id == "mapping":
            todo += reversed([child for pair in node.value for child in pair])
    return list(found.values())


def _secret_nodes(root: Any, secret_keys: Collection[str]) -> dict[int, str]:
    """id() of every node below a secret key's value -> that key: another key whose value is
    one of them (through an alias, either way round) would carry the secret into the output."""
    found: dict[int, str] = {}
    for key_node, value_node in root.value:
        if key_node.id == "scalar" and str(key_node.value) in secret_keys:
            for node in _nodes(value_node):
                found.setdefault(id(node), str(key_node.value))
    return found


def _entry(key: str, line: int, node: Any, file: str, secret_keys: Collection[str]) -> Entry:
    if key in secret_keys:
        return Entry(key, line, "scalar", None)  # never keep or look at a secret's value
    if node.id == "scalar":
        is_null = node.tag.endswith(":null") and node.style is None
        return Entry(key, line, "scalar", None if is_null else str(node.value))
    if node.id == "sequence":
        items: list[str] = []
        for item in node.value:
            if item.id != "scalar":
                raise InputError(f"{file}:{line}: {key}: nested lists or maps are not supported")
            items.append(str(item.value))
        return Entry(key, line, "list", items=items)
    if node.id == "mapping":
        mapping: dict[str, str] = {}
        for map_key, map_value in node.value:
            if map_key.id != "scalar" or map_value.id != "scalar":
                raise InputError(f"{file}:{line}: {key}: nested lists or maps are not supported")
            mapping[str(map_key.value)] = str(map_value.value)
        return Entry(key, line, "map", mapping=mapping)
    raise InputError(f"{file}:{line}: {key}: unsupported value")


def read_input(path: Path | str) -> str:
    """Read a clusterctl.yaml (``-``: stdin) as text; every failure is one InputError.

    At most :data:`MAX_INPUT_BYTES` are read; devices and FIFOs are refused
    (:mod:`scs_templates._core.textinput`).
    """

    try:
        return textinput.read_text(
            str(path), MAX_INPUT_BYTES, what="a clusterctl.yaml", binary="a KaaS v1 clusterctl.yaml"
        )
    except textinput.InputRefused as refused:
        raise InputError(f"{textinput.display_name(str(path))}: {refused}") from None
