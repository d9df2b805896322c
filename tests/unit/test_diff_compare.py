"""diff's comparison of the rendered and installed objects, in Python: which objects are
added, removed (kept by helm or not) or changed, in key order, and how many are unchanged.
The plane tier proves diff against a real release; this pins the comparison itself.
"""

from __future__ import annotations

from typing import Any

from scs_templates._lifecycle.diff_step import _compare


def _config_map(name: str, value: str, **annotations: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "n"}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"k": value}}


def test_objects_are_added_removed_or_changed_in_key_order_and_the_rest_counted() -> None:
    keep = {"helm.sh/resource-policy": "keep"}
    rendered = {
        ("ConfigMap", "n", "changed"): _config_map("changed", "new"),
        ("ConfigMap", "n", "same"): _config_map("same", "v"),
        ("Secret", "n", "added"): {"apiVersion": "v1", "kind": "Secret", "metadata": {}},
    }
    installed = {
        ("ConfigMap", "n", "changed"): _config_map("changed", "old"),
        ("ConfigMap", "n", "same"): _config_map("same", "v"),
        ("ConfigMap", "n", "gone"): _config_map("gone", "v"),
        ("ConfigMap", "n", "kept"): _config_map("kept", "v", **keep),
    }
    changes, unchanged = _compare(rendered, installed)
    assert [(c.key, c.change) for c in changes] == [
        ("ConfigMap/n/changed", "changed"),
        ("ConfigMap/n/gone", "removed"),
        ("ConfigMap/n/kept", "removed"),
        ("Secret/n/added", "added"),
    ]
    assert unchanged == 1
    changed, gone, kept, added = changes
    assert "-  k: old\n+  k: new\n" in changed.diff
    assert changed.diff.startswith(
        "--- installed/ConfigMap/changed\n+++ rendered/ConfigMap/changed"
    )
    assert (gone.diff, gone.note) == ("", "")
    assert kept.note.startswith("kept by helm")
    assert added.diff.startswith("--- /dev/null\n+++ rendered/Secret/added")
    assert added.note == "secret values are not compared"
