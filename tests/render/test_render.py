"""Render through the library and through the CLI (``render``, ``values``, ``templates``).

Renders use the real pinned helm (tests skip without it, and fail in CI); the exit-code 1
path uses a failing TEST DOUBLE for helm selected with ``SCS_TEMPLATES_HELM``.
"""

from __future__ import annotations

import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from scs_templates import api
from scs_templates._cli.main import main
from scs_templates._core.errors import InputError, ToolError, ToolNotFoundError
from scs_templates._render.charts import ChartRef
from scs_templates._render.render import RenderResult, object_file_names, split_documents
from scs_templates._tools.toolchain.resolve import clear_version_cache, find_helm, hermetic_env
from tests.support import EXAMPLES, REPO, skip_or_fail

pytestmark = pytest.mark.usefixtures("no_tool_overrides")

MINIMAL = REPO / "examples" / "openstack-minimal.yaml"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- library -------------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_render_examples(helm_path: Path, example: Path) -> None:
    settings = api.load_settings(example).settings
    result = api.render(settings)
    assert result.release == settings.metadata.name
    assert result.namespace == settings.metadata.namespace
    assert result.kube_version.startswith("v1.")
    assert result.manifests.startswith("---\n# Source: ")
    assert len(result.objects) == len(result.documents) > 3
    kinds = {obj["kind"] for obj in result.objects}
    assert "Cluster" in kinds
    assert all(o["metadata"]["namespace"] == settings.metadata.namespace for o in result.objects)
    assert "".join("---\n" + doc for doc in result.documents).split() == result.manifests.split()


def test_render_is_deterministic_and_render_many_matches(helm_path: Path) -> None:
    fleet = [api.load_settings(p).settings for p in EXAMPLES]
    first = [api.render(s).manifests for s in fleet]
    assert [api.render(s).manifests for s in fleet] == first
    assert [r.manifests for r in api.render_many(fleet)] == first


def test_write_manifests_privately(helm_path: Path, tmp_path: Path) -> None:
    result = api.render(api.load_settings(MINIMAL).settings)
    assert stat.S_IMODE(api.write_manifests(result, tmp_path / "open")[0].stat().st_mode) != 0o600
    paths = api.write_manifests(result, tmp_path / "out", private=True)
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in paths)


def test_split_documents_drops_empty_documents() -> None:
    text = "---\n# Source: a\nkind: A\nmetadata: {name: x}\n---\n# Source: empty\n---\nkind: B\n"
    documents, objects = split_documents(text)
    assert [o["kind"] for o in objects] == ["A", "B"]
    assert documents[0] == "# Source: a\nkind: A\nmetadata: {name: x}\n"


# --- CLI: render ---------------------------------------------------------------------------


def test_cli_render_stdout(helm_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "render", str(MINIMAL))
    assert code == 0, err
    result = api.render(api.load_settings(MINIMAL).settings)
    assert out == result.manifests
    code, again, _ = cli(capsys, "render", str(MINIMAL))
    assert again == out  # byte-identical


def test_cli_render_invalid_settings_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: scs-templates.scs.community/v1alpha1\nkind: ClusterSettings\n"
        "metadata:\n  name: Bad_Name\nspec:\n  provider: openstak\n"
    )
    code, out, err = cli(capsys, "render", str(bad))
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 2
    assert all(line.startswith(f"{bad}:") for line in lines)
    assert "metadata.name" in err and "spec.provider" in err


def test_cli_render_warnings_go_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = tmp_path / "warn.yaml"
    settings.write_text(
        MINIMAL.read_text().replace(
            "  openstack:\n", "  etcd:\n    prioBoost: true\n  openstack:\n"
        )
    )
    # The render itself is irrelevant here: stop it with a failing helm double.
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(failing_helm(tmp_path)))
    clear_version_cache()
    code, _, err = cli(capsys, "render", str(settings))
    assert "warning: spec.etcd.prioBoost" in err
    assert code == 1


def failing_helm(directory: Path) -> Path:
    """A TEST DOUBLE for helm: reports version 4.3.2, fails every other command."""
    script = directory / "helm"
    script.write_text(
        "#!/bin/sh\n# TEST DOUBLE for helm: a helm whose renders fail.\n"
        'if [ "$1" = version ]; then echo v4.3.2; exit 0; fi\n'
        "cat >/dev/null\n"
        'echo "coalesce.go:1: warning: noise" >&2\n'
        'echo "Error: execution error at (openstack-cluster/templates/x.yaml:4:11): boom" >&2\n'
        "exit 1\n"
    )
    script.chmod(0o755)
    return script


def test_cli_render_helm_failure_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(failing_helm(tmp_path)))
    clear_version_cache()
    code, out, err = cli(capsys, "render", str(MINIMAL))
    assert code == 1
    assert out == ""
    assert err.startswith("scs-templates: error: helm template demo failed: Error: execution")
    assert "noise" not in err


def test_cli_render_output_dir(
    helm_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "99-stale-object.yaml").write_text("stale")
    code, out, err = cli(capsys, "render", str(MINIMAL), "--output-dir", str(out_dir))
    assert code == 0, err
    assert out == ""
    result = api.render(api.load_settings(MINIMAL).settings)
    names = sorted(p.name for p in out_dir.iterdir())
    assert names == result.file_names() == sorted(result.file_names())
    assert "99-stale-object.yaml" not in names
    assert names[0].startswith("01-")
    for name, document in zip(result.file_names(), result.documents, strict=True):
        assert (out_dir / name).read_text() == document
        assert stat.S_IMODE((out_dir / name).stat().st_mode) == 0o644
    # No temporary leftovers next to the directory.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_cli_render_output_dir_refuses_foreign_files(
    helm_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    code, _, err = cli(capsys, "render", str(MINIMAL), "--output-dir", str(tmp_path))
    assert code == 2
    assert "refusing to replace" in err
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_output_dir_untouched_when_helm_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "01-old.yaml").write_text("old")
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(failing_helm(tmp_path)))
    clear_version_cache()
    code, _, _ = cli(capsys, "render", str(MINIMAL), "--output-dir", str(out_dir))
    assert code == 1
    assert [p.name for p in out_dir.iterdir()] == ["01-old.yaml"]


def test_write_directory_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scs_templates._core import atomic

    target = tmp_path / "out"
    atomic.write_directory(target, {"a.yaml": "a", "b.yaml": "b"})
    calls = {"n": 0}
    real = atomic._write_new

    def flaky(path: Path, data: bytes, mode: int) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        real(path, data, mode)

    monkeypatch.setattr(atomic, "_write_new", flaky)
    with pytest.raises(InputError, match="cannot write: no space left on the device"):
        atomic.write_directory(target, {"c.yaml": "c", "d.yaml": "d"}, replaceable=lambda _: True)
    assert sorted(p.name for p in target.iterdir()) == ["a.yaml", "b.yaml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    with pytest.raises(InputError):
        atomic.write_directory(target, {"x.yaml": "x"})  # holds files, none replaceable


def test_write_directory_syncs_every_folder_before_it_takes_the_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder's entries survive a power loss only once the folder is fsynced: with
    ``render-fleet -o`` (NS/NAME/ folders) only the top folder was, so the renamed output
    could come back with empty cluster folders. Deepest first, then the rename's parent,
    then the folders made above it."""
    from scs_templates._core import atomic

    synced: list[Path] = []
    real = atomic._fsync_dir

    def recording(path: Path) -> None:
        synced.append(path)
        real(path)

    monkeypatch.setattr(atomic, "_fsync_dir", recording)
    files = {"ns/b/2.yaml": "2", "ns/a/1.yaml": "1", "top.yaml": "t", "other/c/3.yaml": "3"}
    atomic.write_directory(tmp_path / "out", files)
    *inside, parent = synced
    staging = inside[-1]
    assert parent == tmp_path and staging.parent == tmp_path
    assert [str(path.relative_to(staging)) for path in inside] == [
        "ns/a", "ns/b", "other/c", "ns", "other", "."
    ]  # fmt: skip
    synced.clear()  # folders made above the output: each synced into its parent
    atomic.write_directory(tmp_path / "x" / "y" / "out", {"f.yaml": "f"})
    assert synced[1:] == [tmp_path / "x" / "y", tmp_path / "x", tmp_path]


def test_write_file_private(tmp_path: Path) -> None:
    from scs_templates._core import atomic

    path = atomic.write_file(tmp_path / "v.json", "{}", private=True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == "{}"


def test_cli_render_survives_head(helm_path: Path) -> None:
    script = Path(sys.executable).parent / "scs-templates"
    command = f"set -o pipefail; {shlex.quote(str(script))} render {shlex.quote(str(MINIMAL))}"
    done = subprocess.run(
        ["bash", "-c", command + " | head -n 1"], capture_output=True, text=True, check=False
    )
    assert done.stdout == "---\n"
    assert done.stderr == ""
    assert done.returncode == 0


# --- CLI: values, templates ----------------------------------------------------------------


def test_cli_values_prints_yaml_without_credentials(capsys: pytest.CaptureFixture[str]) -> None:
    from ruamel.yaml import YAML

    code, out, err = cli(capsys, "values", str(MINIMAL))
    assert code == 0, err
    data = YAML(typ="safe").load(out)
    assert data == api.build_values(api.load_settings(MINIMAL).settings)
    assert data["openstack"]["credentials"] == {"secretName": "capi-demo-cloud-config"}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_cli_values_command_reproduces_render_exactly(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        helm = find_helm()
    except ToolNotFoundError as error:
        skip_or_fail(f"helm is not installed: {error}")
    code, rendered, err = cli(capsys, "render", str(example))
    assert code == 0, err
    code, out, err = cli(capsys, "values", str(example), "--output-dir", str(tmp_path / "v"))
    assert code == 0, err
    assert "wrote " in err
    values_file = tmp_path / "v" / "values.json"
    assert stat.S_IMODE(values_file.stat().st_mode) == 0o600
    argv = shlex.split(out.strip())
    assert argv[0] == "helm" and argv[1] == "template"
    env = hermetic_env(tmp_path / "home")
    done = subprocess.run(
        [str(helm.path), *argv[1:]], capture_output=True, env=env, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == rendered.encode()


def test_cli_templates_lists_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    from scs_templates._render.catalogue import catalogue

    code, out, _ = cli(capsys, "templates")
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].split()[:3] == ["TEMPLATE", "PROVIDER", "CHART"]
    assert len(lines) == 1 + len(catalogue())
    for row, line in zip(catalogue(), lines[1:], strict=True):
        assert line.split()[:3] == [row.template, row.provider, row.chart]


def helm_output(manifests: str) -> RenderResult:
    """A result of ``manifests`` as helm's output (no helm run)."""
    return RenderResult.from_manifests(
        release="r",
        namespace="n",
        chart=ChartRef("c", "0.1.0", Path("/c")),
        kube_version="v1.34.1",
        values={},
        manifests=manifests,
    )


def test_file_names_let_the_parsed_objects_go() -> None:
    """Naming parses each document for its kind and name but keeps no parsed object: a fleet
    written to a folder held every cluster's objects until the last file was written
    (docs/performance.md, design of the fleet)."""
    result = helm_output(
        "---\nkind: Namespace\nmetadata: {name: a}\n---\nkind: Secret\nmetadata:\n  name: B c\n"
    )
    assert result.file_names() == ["01-namespace-a.yaml", "02-secret-b-c.yaml"]
    assert "objects" not in result.__dict__
    assert object_file_names(result.objects) == result.file_names()


@pytest.mark.parametrize("text", ["a: !!int x\n", "a: !!float x\n", "a: !!bool maybe\n"])
def test_a_tag_ruamel_cannot_read_is_helms_failure_not_an_internal_error(text: str) -> None:
    with pytest.raises(ToolError, match="not a YAML manifest"):
        _ = helm_output(text).objects


def test_objects_are_parsed_only_when_used() -> None:
    """Printing or counting documents must not pay for YAML parsing (performance.md:
    "One render")."""
    result = helm_output("---\n# Source: c/a.yaml\n- not an object\n---\n# only a comment\n")
    assert result.documents == ("# Source: c/a.yaml\n- not an object\n",)
    with pytest.raises(ToolError, match="not an object"):
        _ = result.objects
