"""Exit codes: whatever a user can cause is ONE line and exit 2; a tool failing is exit 1.

Each case was an ``internal error`` (exit 1), a traceback or a lost file before (issue #18).
``--debug`` adds the traceback and never changes the code. Cases that depend on the process'
own stdout (closed, full, ASCII-only) run the CLI in a subprocess; the others in-process.
helm is the real pinned helm unless a case needs helm to misbehave: then a FAKE HELM, a
TEST DOUBLE shell script, because a real helm cannot be made to print garbage on purpose.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scs_templates._cli.main import main
from tests.support import EXAMPLES, REPO, fake_helm_binary

CLI = "import sys; from scs_templates._cli.main import main; sys.exit(main(sys.argv[1:]))"
DOCKER = REPO / "examples" / "docker-dev.yaml"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err
    return lines[0]


def fake_helm(directory: Path, output: str, *, stderr: str = "", code: int = 0) -> Path:
    """A TEST DOUBLE for helm that prints ``output`` (and ``stderr``) for every command."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "out").write_text(output)
    (directory / "err").write_text(stderr)
    return fake_helm_binary(
        directory, f'cat "{directory}/out"; cat "{directory}/err" >&2; exit {code}'
    )


# --------------------------------------------------------------------------- output paths


def test_render_output_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    code, _out, err = run(
        capsys, "render", str(DOCKER), "--output-dir", str(tmp_path / "file" / "out")
    )
    assert code == 2
    assert one_line(err) == (
        f"scs-templates: error: {tmp_path}/file/out: cannot write: {tmp_path}/file is not a "
        "directory"
    )


def test_render_output_under_proc(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "render", str(DOCKER), "--output-dir", "/proc/scs-templates-out")
    assert code == 2
    assert one_line(err).startswith("scs-templates: error: /proc/scs-templates-out: cannot write")


def test_values_json_is_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "out" / "values.json").mkdir(parents=True)
    code, _out, err = run(capsys, "values", str(DOCKER), "--output-dir", str(tmp_path / "out"))
    assert code == 2
    assert one_line(err) == (
        f"scs-templates: error: {tmp_path}/out/values.json: is a directory; cannot write a "
        "file there"
    )


def test_render_fleet_into_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    code, _out, err = run(
        capsys, "render-fleet", str(DOCKER), "--output-dir", str(tmp_path / "file")
    )
    assert code == 2
    assert "is not a directory" in one_line(err)


def test_cache_directory_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cache").write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code, _out, err = run(capsys, "render", str(DOCKER))
    assert code == 2
    assert one_line(err).startswith(f"scs-templates: error: {tmp_path}/cache/")


def test_full_disk_keeps_the_previous_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from scs_templates._core import atomic

    out = tmp_path / "out"
    assert main(["render", str(DOCKER), "--output-dir", str(out)]) == 0
    before = sorted(p.name for p in out.iterdir())
    capsys.readouterr()

    def full(path: Path, data: bytes, mode: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic, "_write_new", full)
    code, _out, err = run(capsys, "render", str(DOCKER), "--output-dir", str(out))
    assert code == 2
    assert (
        one_line(err) == f"scs-templates: error: {out}: cannot write: no space left on the device"
    )
    assert sorted(p.name for p in out.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_stale_temp_siblings_of_a_killed_run_are_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    out = tmp_path / "out"
    stale_dir = tmp_path / f".out.{dead.pid}.k9x2.tmp"
    stale_old = tmp_path / f".out.{dead.pid}.k9x3.old"
    for stale in (stale_dir, stale_old):
        (stale / "content").mkdir(parents=True)
    mine = tmp_path / f".out.{os.getpid()}.live.tmp"  # a live writer's: kept
    mine.mkdir()
    other = tmp_path / f".other.{dead.pid}.k9x4.tmp"  # another target's: kept
    other.mkdir()
    assert main(["render", str(DOCKER), "--output-dir", str(out)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", mine.name, other.name])


# --------------------------------------------------------------------------- helm lies


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("", "helm template dev exited 0 but printed no manifests"),
        ("---\n# Source: x\n", "helm template dev exited 0 but printed no manifests"),
        ("---\nkind: [unclosed\n", "helm printed output that is not a YAML manifest"),
        ("---\n- a list\n", "helm printed a document that is not an object"),
    ],
    ids=["empty", "comments-only", "garbage", "not-an-object"],
)
def test_helm_output_that_is_no_manifests_never_replaces_the_output(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    output: str,
    message: str,
) -> None:
    out = tmp_path / "out"
    assert main(["render", str(DOCKER), "--output-dir", str(out)]) == 0
    before = {p.name: p.read_text() for p in out.iterdir()}
    capsys.readouterr()
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(fake_helm(tmp_path / "helm", output)))
    code, _out, err = run(capsys, "render", str(DOCKER), "--output-dir", str(out))
    assert code == 1
    assert message in one_line(err)
    assert {p.name: p.read_text() for p in out.iterdir()} == before


def test_a_flood_after_helms_error_line_is_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    flood = "Error: template failed\n" + "".join(f"line {i} {'x' * 100}\n" for i in range(20000))
    monkeypatch.setenv(
        "SCS_TEMPLATES_HELM", str(fake_helm(tmp_path / "h", "", stderr=flood, code=1))
    )
    code, _out, err = run(capsys, "render", str(DOCKER))
    assert code == 1
    assert len(err) < 6000
    assert "Error: template failed" in err
    assert "not shown)" in err


# --------------------------------------------------------------------------- stdout


def cli(
    *argv: str, env: dict[str, str] | None = None, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, *argv],
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def test_full_stdout() -> None:
    with open("/dev/full", "w") as full:
        done = cli("render", str(DOCKER), stdout=full)
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        "scs-templates: error: cannot write to standard output: No space left on device"
    )


def test_closed_stdout() -> None:
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" -c "$1" render "$2" >&-', sys.executable, CLI, str(DOCKER)],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        "scs-templates: error: cannot write to standard output: standard output is closed"
    )


def test_ascii_only_stdout_with_non_ascii_values(tmp_path: Path) -> None:
    source = (REPO / "examples" / "openstack-minimal.yaml").read_text()
    assert "  openstack:\n" in source
    settings = tmp_path / "s.yaml"
    settings.write_text(
        source.replace("  openstack:\n", "  openstack:\n    image: Übuntu-{version}\n", 1)
    )
    done = cli("values", str(settings), env={"PYTHONIOENCODING": "ascii"}, stdout=subprocess.PIPE)
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        "scs-templates: error: cannot write U+00DC in the output encoding ascii; set "
        "PYTHONIOENCODING=utf-8 (or a UTF-8 locale)"
    )


# --------------------------------------------------------------------------- kubeconfig


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"apiVersion: v1\nclusters: [unclosed\n", "not valid YAML (line 3)"),
        (b"just a string\n", "not a kubeconfig (expected a mapping"),
        (b"\x00\x01binary", "binary data, not a kubeconfig"),
        (b"clusters: {a: 1}\n", "clusters must be a list"),
        (None, "no such file"),
    ],
    ids=["not-yaml", "not-a-mapping", "binary", "wrong-shape", "missing"],
)
@pytest.mark.parametrize("command", ["status", "install"])
def test_broken_kubeconfig_is_an_input_error(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    content: bytes | None,
    message: str,
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    if content is not None:
        kubeconfig.write_bytes(content)
    code, _out, err = run(capsys, command, str(DOCKER), "--kubeconfig", str(kubeconfig))
    assert code == 2
    assert one_line(err) == f"scs-templates: error: kubeconfig {kubeconfig}: {message}" or (
        message in err
    )


# --------------------------------------------------------------------------- --debug


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["render", "/nonexistent/s.yaml"], 2),
        (["render", str(EXAMPLES[0]), "--output-dir", "/proc/scs-templates-out"], 2),
        (["status", str(DOCKER), "--kubeconfig", "/nonexistent/kubeconfig"], 2),
    ],
    ids=["settings", "output", "kubeconfig"],
)
def test_debug_adds_a_traceback_but_keeps_the_exit_code(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: int
) -> None:
    plain, _out, plain_err = run(capsys, *argv)
    debug, _out, debug_err = run(capsys, "--debug", *argv)
    assert plain == debug == code
    assert "Traceback" not in plain_err
    assert "Traceback (most recent call last)" in debug_err
    assert debug_err.rstrip().endswith(plain_err.rstrip().splitlines()[-1])


def test_debug_keeps_exit_1_of_a_failing_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "SCS_TEMPLATES_HELM", str(fake_helm(tmp_path / "h", "", stderr="Error: boom\n", code=1))
    )
    assert run(capsys, "render", str(DOCKER))[0] == 1
    code, _out, err = run(capsys, "--debug", "render", str(DOCKER))
    assert code == 1
    assert "Traceback" in err


def test_migrate_output_on_a_full_disk_leaves_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from scs_templates._core import atomic

    source = REPO / "tests" / "data" / "kaas-v1" / "r3.yaml"
    target = tmp_path / "settings.yaml"
    real = atomic._write_new

    def full(path: Path, data: bytes, mode: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic, "_write_new", full)
    code, _out, err = run(capsys, "migrate", str(source), "--output-file", str(target))
    assert code == 2
    assert one_line(err) == (
        f"scs-templates: error: {target}: cannot write: no space left on the device"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    monkeypatch.setattr(atomic, "_write_new", real)
    code, _out, err = run(capsys, "migrate", str(source), "--output-file", str(target))
    assert code == 0, err  # the next run is not refused by an empty leftover
    assert "kind: ClusterSettings" in target.read_text()


def test_empty_helm_output_never_replaces_a_fleet_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "fleet"
    files = [str(path) for path in EXAMPLES[:2]]
    assert main(["render-fleet", *files, "--output-dir", str(out)]) == 0
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    capsys.readouterr()
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(fake_helm(tmp_path / "helm", "")))
    code, _out, err = run(capsys, "render-fleet", *files, "--output-dir", str(out))
    assert code == 1
    assert "exited 0 but printed no manifests" in one_line(err)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
