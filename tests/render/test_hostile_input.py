"""Hostile input to the two readers (settings files, KaaS v1 clusterctl.yaml): bounded.

Every case here was found by a bad-input campaign (issue #18) and failed before the fix:
an alias bomb took seconds and gigabytes, deep nesting ended in ``RecursionError``,
``/dev/zero`` was read until memory ran out and a FIFO blocked forever. Each must now be one
line naming the file (and position), exit 2, quickly. Readers that could block are run in a
subprocess with a deadline so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scs_templates._cli.main import main
from scs_templates._settings.loader import MAX_ALIASES, MAX_DEPTH, MAX_VALUES
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import parse_settings_text
from tests.support import EXAMPLES, REPO


def alias_bomb(levels: int, width: int = 9) -> str:
    """``levels`` levels of ``width`` aliases each: width**(levels+1) values, ~60 bytes/level."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def problems(text: str) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings_text(text, file="s.yaml")
    return [str(problem) for problem in caught.value.problems]


def test_alias_bomb_is_refused_by_its_expanded_size() -> None:
    # 9**6 = 531441 values from 368 bytes: refused when the budget is used up.
    text = alias_bomb(5)
    assert len(text) < 400
    assert problems(text) == [
        f"s.yaml:1:13: (document): more than {MAX_VALUES} values once aliases are expanded"
    ]


def test_too_many_aliases() -> None:
    text = "a: &a x\nb: [" + ", ".join(["*a"] * (MAX_ALIASES + 1)) + "]\n"
    (line,) = problems(text)
    assert line.startswith("s.yaml:2:")
    assert line.endswith(f"invalid YAML: more than {MAX_ALIASES} aliases (*name)")


def test_recursive_alias_is_refused() -> None:
    (line,) = problems("a: &x [*x]\n")
    assert line == (
        f"s.yaml:1:4: (document): nested more than {MAX_DEPTH} levels deep once aliases are "
        "expanded"
    )


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 500 + "]" * 500 + "\n",
        "a: " + "{b: " * 500 + "1" + "}" * 500 + "\n",
        "".join("  " * i + f"k{i}:\n" for i in range(500)) + "  " * 500 + "v: 1\n",
        "".join("  " * i + "-\n" for i in range(500)) + "  " * 500 + "x\n",
    ],
    ids=["flow-lists", "flow-maps", "block-maps", "block-lists"],
)
def test_deep_nesting_is_one_line_not_a_recursion_error(text: str) -> None:
    (line,) = problems(text)
    assert line.endswith(f"(document): invalid YAML: nested more than {MAX_DEPTH} levels deep")
    assert line.startswith("s.yaml:")


def test_nesting_below_the_limit_is_read() -> None:
    text = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    # Read fine (the settings are then wrong, which is a different message).
    assert not any("nested" in line for line in problems(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "a: {x: 1,\nb: 2\n\n\n",
            "s.yaml:1:4: (document): invalid YAML: '{' is never closed (expected '}' before "
            "the end of the file)",
        ),
        (
            "a: [1,\n  2,\n",
            "s.yaml:1:4: (document): invalid YAML: '[' is never closed (expected ']' before "
            "the end of the file)",
        ),
        (
            'a: "abc\n\nb: 1\n',
            "s.yaml:1:4: (document): invalid YAML: quoted string is never closed (no closing "
            "quote before the end of the file)",
        ),
    ],
    ids=["brace", "bracket", "quote"],
)
def test_unclosed_bracket_points_where_it_opened(text: str, expected: str) -> None:
    assert problems(text) == [expected]


def run_cli(*argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess with a deadline: a reader that blocks fails, never hangs."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from scs_templates._cli.main import main; sys.exit(main(sys.argv[1:]))",
            *argv,
        ],
        input=stdin.decode() if stdin is not None else None,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("command", ["validate", "migrate"])
def test_devices_are_refused_without_reading(command: str) -> None:
    done = run_cli(command, "/dev/zero")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        line
        for line in done.stderr.splitlines()
        if "/dev/zero" in line and "is not a regular file (a device)" in line
    ]
    assert len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("command", ["validate", "migrate"])
def test_fifo_without_writer_is_refused_not_waited_for(command: str, tmp_path: Path) -> None:
    fifo = tmp_path / "settings.yaml"
    os.mkfifo(fifo)
    done = run_cli(command, str(fifo))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert str(fifo) in line
    assert "is not a regular file (a FIFO); use - to read from standard input" in line


def test_dash_reads_settings_from_stdin() -> None:
    text = EXAMPLES[0].read_bytes()
    done = run_cli("validate", "-", stdin=text)
    assert done.returncode == 0
    assert done.stdout.startswith("<stdin>: valid\n<stdin>: API access ")


def test_stdin_is_read_only_up_to_the_limit() -> None:
    done = run_cli("validate", "-", stdin=b"a: " + b"x" * (2 * 1024 * 1024))
    assert done.returncode == 2
    assert done.stderr == ("<stdin>: (document): file is too large (more than 1048576 bytes)\n")


def test_migrate_reads_stdin(tmp_path: Path) -> None:
    data = REPO / "tests" / "data" / "kaas-v1" / "r3.yaml"
    done = run_cli("migrate", "-", stdin=data.read_bytes())
    assert done.returncode == 0, done.stderr
    assert "kind: ClusterSettings" in done.stdout


def test_migrate_bounds_depth_and_does_not_name_undefined_aliases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "clusterctl.yaml"
    path.write_text("KUBERNETES_VERSION: " + "[" * 500 + "]" * 500 + "\n")
    assert main(["migrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"scs-templates: error: {path}:1: not valid YAML: nested more than 64 levels deep\n"
    )
    # The alias name here is the secret value someone meant to write.
    path.write_text("OPENSTACK_CLOUD_YAML_B64: *c2VjcmV0LXBhc3N3b3Jk\n")
    assert main(["migrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "c2VjcmV0LXBhc3N3b3Jk" not in err
    assert err == (
        f"scs-templates: error: {path}:1: not valid YAML: found an undefined alias "
        "(*name without a matching &name)\n"
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "is a directory, not {what}"),
        (b"\x00\x01binary", "binary data, not {binary}"),
        (b"a: \xff\xfe", "not UTF-8 text (invalid byte at offset 3)"),
    ],
    ids=["directory", "binary", "not-utf8"],
)
def test_every_reader_refuses_with_the_same_reasons(
    tmp_path: Path, content: bytes | None, reason: str
) -> None:
    """Settings, clusterctl.yaml and kubeconfig go through one reader (textinput.read_text):
    the same refusal, worded for the kind of file."""
    from scs_templates._core.errors import InputError
    from scs_templates._settings.loader import read_text
    from scs_templates._tools.kube.config import check_kubeconfig
    from scs_templates.providers.openstack.migrate.reading import read_input

    path = tmp_path / "input"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    readers = [
        (read_text, SettingsError, "a settings file", "a YAML text file"),
        (read_input, InputError, "a clusterctl.yaml", "a KaaS v1 clusterctl.yaml"),
        (check_kubeconfig, InputError, "a kubeconfig", "a kubeconfig"),
    ]
    for reader, error, what, binary in readers:
        with pytest.raises(error) as caught:
            reader(str(path))
        assert str(caught.value).endswith(reason.format(what=what, binary=binary)), reader


def test_input_bytes_are_read_in_one_place() -> None:
    """Only textinput reads input files' bytes (read_limited): every reader asks read_text."""
    callers = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "scs_templates").rglob("*.py"))
        if path.name != "textinput.py" and "read_limited" in path.read_text(encoding="utf-8")
    ]
    assert callers == []


@pytest.mark.parametrize("option", ["--clouds-yaml", "--cacert"])
def test_a_credentials_fifo_is_refused_not_waited_for(option: str, tmp_path: Path) -> None:
    """install read --clouds-yaml/--cacert with Path.read_text: a FIFO without a writer
    blocked it for ever (found by this test: run_cli's deadline)."""
    fifo = tmp_path / "clouds.yaml"
    os.mkfifo(fifo)
    clouds = tmp_path / "real-clouds.yaml"
    clouds.write_text("clouds: {}\n")
    settings = str(REPO / "examples" / "openstack-minimal.yaml")
    args = (
        ["--clouds-yaml", str(fifo)]
        if option == "--clouds-yaml"
        else ["--clouds-yaml", str(clouds), "--cacert", str(fifo)]
    )
    done = run_cli("install", settings, *args)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.endswith(
        f"{option} {fifo}: is not a regular file (a FIFO); use - to read from standard input"
    )
