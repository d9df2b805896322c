"""Entry points of the installed distributions: how plug-ins (providers, their commands)
are found.

Read from the ``*.dist-info/entry_points.txt`` files on ``sys.path``, the first distribution
of a name winning, as :func:`importlib.metadata.entry_points` does. That module is not used:
its import alone (email, zipfile, csv, pathlib, ...) costs ~20-30 ms of every command, and
``--help`` lists the plug-ins' commands (tests/render/test_cli.py keeps it light).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from importlib import import_module


def entry_points(group: str) -> Iterator[tuple[str, str, str]]:
    """(distribution, name, object reference) of every entry point of ``group``."""
    seen: set[str] = set()
    for entry in sys.path:
        folder = entry or "."
        try:
            names = sorted(name for name in os.listdir(folder) if name.endswith(".dist-info"))
        except OSError:
            continue
        for name in names:
            distribution = name[: -len(".dist-info")].rpartition("-")[0]
            key = distribution.lower().replace("_", "-").replace(".", "-")
            if key in seen:
                continue
            seen.add(key)
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            yield from _group(text, group, key)


def _group(text: str, group: str, distribution: str) -> Iterator[tuple[str, str, str]]:
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group and "=" in line and not line.startswith(("#", ";")):
            point, _, reference = line.partition("=")
            yield distribution, point.strip(), reference.strip()


def load(reference: str) -> object:
    """The object ``module:attribute.path`` names (a module when there is no attribute);
    the caller checks what it got (a plug-in's reference is the plug-in's to get right)."""
    module, _, attributes = reference.partition(":")
    found: object = import_module(module.strip())
    for attribute in filter(None, attributes.strip().split(".")):
        found = getattr(found, attribute)
    return found
