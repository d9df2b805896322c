"""The Flux controllers' wrapper modules (testenv/flux/<name>/go.mod) require every module
they share at one version, so that the Go build cache compiles each shared package once for
all three (testenv/flux.py: 564 -> 323 CPU s from an empty build cache)."""

from __future__ import annotations

import re
from collections import defaultdict

from testenv.flux import CONTROLLERS, FLUX_DIR

#: ``path version`` of a require line (inside a block or on its own), up to a comment.
REQUIRE = re.compile(r"^(?:require\s+)?\t?([^\s()]+)\s+(v\S+)(?:\s*//.*)?$", re.MULTILINE)
REPLACE = re.compile(r"^(?:replace\s+)?\t?([^\s()]+)(?:\s+v\S+)?\s+=>", re.MULTILINE)


def requirements(text: str) -> dict[str, str]:
    """The required modules of a go.mod, without the ones a ``replace`` directive pins."""
    replaced = set(REPLACE.findall(text))
    return {path: version for path, version in REQUIRE.findall(text) if path not in replaced}


def test_the_requirements_reader_reads_blocks_single_lines_and_replaces() -> None:
    text = (
        "module m\n\ngo 1.25.0\n\nrequire a.io/x v1.0.0\n\nrequire (\n\tb.io/y v0.2.0 // indirect\n"
        "\tc.io/z v3.0.0\n)\n\nreplace c.io/z => c.io/z v3.0.1\n"
    )
    assert requirements(text) == {"a.io/x": "v1.0.0", "b.io/y": "v0.2.0"}


def test_the_flux_controllers_share_one_version_of_every_common_module() -> None:
    versions: dict[str, dict[str, str]] = defaultdict(dict)
    for name in CONTROLLERS:
        for path, version in requirements((FLUX_DIR / name / "go.mod").read_text()).items():
            versions[path][name] = version
    assert len(versions) > 300, "the go.mod files were not read"
    split = {path: by for path, by in versions.items() if len(set(by.values())) > 1}
    assert not split, f"modules at different versions in the Flux wrappers: {split}"
