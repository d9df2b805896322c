"""Build a commented settings document with ruamel.yaml and write it as YAML text.

The document is assembled from :class:`CommentedMap`/:class:`CommentedSeq` objects, never
from string templates: values are quoted by the YAML emitter, comments are attached to the
keys they explain (``# from WORKER_MACHINE_COUNT``), and notes go on the lines above a key.
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

Path = tuple[str | int, ...]

WIDTH = 96
_SIMPLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096  # never fold long strings such as image names
    yaml.default_flow_style = False
    return yaml


def _indent(path: Path) -> int:
    """Column of the key at ``path`` (mapping indent 2, ``- `` items at offset 2)."""
    return 2 * (len(path) - 1)


def _wrap(lines: Sequence[str], width: int) -> str:
    out: list[str] = []
    for line in lines:
        out.extend(textwrap.wrap(line, width=max(width, 40), break_on_hyphens=False) or [""])
    return "\n".join(out)


def _convert(value: Any) -> Any:
    if isinstance(value, Mapping):
        mapping = CommentedMap()
        for key, item in value.items():
            mapping[key] = _convert(item)
        return mapping
    if isinstance(value, list | tuple):
        seq = CommentedSeq([_convert(item) for item in value])
        if all(isinstance(item, str) and _SIMPLE.match(item) for item in value):
            seq.fa.set_flow_style()  # [a, b] only where every reader agrees on the items
        return seq
    return value


class DocumentBuilder:
    """Set values by path, each with an optional source comment and notes."""

    def __init__(self) -> None:
        self.root = CommentedMap()

    def ensure(self, path: Path) -> None:
        """Create the (empty) mapping at ``path`` so sections appear in a fixed order."""
        self._container((*path, ""))

    def set(
        self,
        path: Path,
        value: Any,
        *,
        comment: str | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        parent = self._container(path)
        key = path[-1]
        converted = _convert(value)
        if isinstance(parent, CommentedSeq):
            assert isinstance(key, int)
            while len(parent) <= key:
                parent.append(CommentedMap())
            parent[key] = converted
        else:
            parent[key] = converted
        if comment:
            parent.yaml_add_eol_comment(comment, key)
        if notes:
            indent = _indent(path)
            text = _wrap([f"NOTE: {note}" for note in notes], WIDTH - indent - 2)
            parent.yaml_set_comment_before_after_key(key, before=text, indent=indent)

    def get(self, path: Path) -> Any:
        node: Any = self.root
        for part in path:
            node = node[part]
        return node

    def has(self, path: Path) -> bool:
        try:
            self.get(path)
        except (KeyError, IndexError, TypeError):
            return False
        return True

    def prune(self) -> None:
        """Drop empty mappings created by :meth:`ensure` that got no values."""

        def walk(node: Any) -> None:
            if isinstance(node, CommentedMap):
                for key in list(node):
                    walk(node[key])
                    child = node[key]
                    if isinstance(child, CommentedMap) and not child:
                        del node[key]

        walk(self.root)

    def header(self, lines: Sequence[str]) -> None:
        self.root.yaml_set_start_comment(_wrap(lines, WIDTH - 2))

    def _container(self, path: Path) -> Any:
        """The collection holding the last element of ``path``, created on the way."""
        node: Any = self.root
        for index, part in enumerate(path[:-1]):
            following = path[index + 1]
            if isinstance(node, CommentedSeq):
                assert isinstance(part, int)
                while len(node) <= part:
                    node.append(CommentedMap())
                node = node[part]
                continue
            if part not in node:
                node[part] = CommentedSeq() if isinstance(following, int) else CommentedMap()
            node = node[part]
        return node


def dump(document: CommentedMap) -> str:
    """YAML text of ``document`` with its comments."""
    stream = io.StringIO()
    _yaml().dump(document, stream)
    text = stream.getvalue()
    return text if text.endswith("\n") else text + "\n"


def plain(node: Any) -> Any:
    """Plain dicts/lists of a commented document (for validation)."""
    if isinstance(node, Mapping):
        return {str(key): plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [plain(item) for item in node]
    return node
