"""The one reader of version numbers (scs_templates._core.version_numbers) and its four uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from scs_templates._core import version_numbers
from tests.support import REPO


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("v1.36.3", (1, 36, 3)),
        ("0.166.0", (0, 166, 0)),
        (" 1.2.3\n", (1, 2, 3)),
        ("v1.36.3-rc.1", None),  # a pre-release is no stable release
        ("1.36", None),
        ("1.36.3.4", None),
        ("", None),
    ],
)
def test_exact(text: str, expected: tuple[int, int, int] | None) -> None:
    assert version_numbers.exact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("v1.33.5", (1, 33, 5)),
        ("v1.33.5+build.1", (1, 33, 5)),
        ("1.33.5-scs", (1, 33, 5)),
        ("release v1.33.5", None),  # must start with it
        ("1.33", None),
        ("", None),
    ],
)
def test_leading(text: str, expected: tuple[int, int, int] | None) -> None:
    assert version_numbers.leading(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('version.BuildInfo{Version:"v3.15.3", GitCommit:"3bb50bb"}', (3, 15, 3)),
        ("v4.1.4+g05fa379", (4, 1, 4)),
        ("Version      v0.166.0\nGit Commit   a1b2c3", (0, 166, 0)),
        ("go1.22.5 v3.15.3", (3, 15, 3)),  # not inside another word
        ("10.1.2.3", (10, 1, 2)),
        ("no version here", None),
    ],
)
def test_first_in(text: str, expected: tuple[int, int, int] | None) -> None:
    assert version_numbers.first_in(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.33.x", (1, 33, None)),
        ("v1.33.5", (1, 33, 5)),
        ("1.33.0", (1, 33, 0)),
        ("1.33.05", None),  # no leading zeros
        ("1.33.12345", None),  # helm reads the parts as uint64: at most 4 digits
        ("1.33.5\n", (1, 33, 5)),  # surrounding white space is stripped ...
        ("1.33.5\nx", None),  # ... but nothing else may follow
        ("1.٣٣.5", None),  # ASCII digits only
        ("1.33", None),
    ],
)
def test_kubernetes(text: str, expected: tuple[int, int, int | None] | None) -> None:
    assert version_numbers.kubernetes(text) == expected


def test_minor() -> None:
    assert version_numbers.minor("1.33") == (1, 33)
    assert version_numbers.minor_text((1, 33)) == "1.33"
    with pytest.raises(ValueError, match="not a minor version"):
        version_numbers.minor("1.33.5")


def test_no_other_module_parses_version_numbers() -> None:
    """The readers that were written four times (settings, toolchain, release history,
    maintainer tooling) stay in one module: no X.Y.Z pattern elsewhere in the package."""
    patterns = (r"(\d+)\.(\d+)\.(\d+)", r"(?P<major>")
    offenders = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "scs_templates").rglob("*.py"))
        if path.name != "version_numbers.py"
        and any(pattern in path.read_text() for pattern in patterns)
    ]
    assert offenders == []


def test_the_readers_module_is_light() -> None:
    """The CLI's start-up reads tool versions: the module imports nothing but ``re``."""
    source = Path(version_numbers.__file__).read_text()
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["from __future__ import annotations", "import re"]
