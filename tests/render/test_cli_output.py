"""One meaning of ``-o`` (issue #39): the output FORMAT in every command; folders are
``--output-dir``, files ``--output-file``; the old folder meaning works for one release
with a deprecation warning; every command's --help ends with examples.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from scs_templates._cli.main import build_parser, main
from scs_templates._clikit.output import object_name
from tests.support import REPO

DOCKER = REPO / "examples" / "docker-dev.yaml"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def yaml_objects(text: str) -> list[Any]:
    return [doc for doc in YAML(typ="safe").load_all(text) if doc]


def test_render_o_json_prints_json_and_creates_no_folder_named_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _, manifests, _ = run(capsys, "render", str(DOCKER))
    code, out, err = run(capsys, "render", str(DOCKER), "-o", "json")
    assert (code, err) == (0, "")
    assert not (tmp_path / "json").exists()
    document = json.loads(out)
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    assert document["items"] == yaml_objects(manifests)


def test_render_o_name_prints_kind_group_name(capsys: pytest.CaptureFixture[str]) -> None:
    _, manifests, _ = run(capsys, "render", str(DOCKER))
    code, out, _ = run(capsys, "render", str(DOCKER), "-o", "name")
    assert code == 0
    assert out.splitlines() == [object_name(obj) for obj in yaml_objects(manifests)]
    assert "cluster.cluster.x-k8s.io/dev" in out.splitlines()
    assert object_name({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}) == (
        "secret/s"
    )


def test_render_o_yaml_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "render", str(DOCKER), "-o", "yaml") == run(capsys, "render", str(DOCKER))


def test_render_o_dir_still_writes_the_folder_with_a_deprecation_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    new, old = tmp_path / "new", tmp_path / "old"
    assert run(capsys, "render", str(DOCKER), "--output-dir", str(new))[0] == 0
    code, out, err = run(capsys, "render", str(DOCKER), "-o", str(old))
    assert (code, out) == (0, "")
    assert err.splitlines()[0] == (
        "scs-templates: warning: -o DIR is deprecated (-o is the output format: "
        f"yaml|json|name); use --output-dir {old}"
    )
    assert sorted(p.name for p in old.iterdir()) == sorted(p.name for p in new.iterdir())


def test_a_format_with_output_dir_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(
        capsys, "render", str(DOCKER), "-o", "json", "--output-dir", str(tmp_path / "x")
    )
    assert (code, out) == (2, "")
    assert "--output-dir writes YAML files" in err
    assert not (tmp_path / "x").exists()


def test_values_o_json_is_the_yaml_values_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    _, as_yaml, _ = run(capsys, "values", str(DOCKER))
    code, as_json, _ = run(capsys, "values", str(DOCKER), "-o", "json")
    assert code == 0
    assert json.loads(as_json) == YAML(typ="safe").load(as_yaml)


def test_versions_o_yaml_is_the_json_table(capsys: pytest.CaptureFixture[str]) -> None:
    _, as_json, _ = run(capsys, "versions", "-o", "json")
    code, as_yaml, _ = run(capsys, "versions", "-o", "yaml")
    assert code == 0
    assert YAML(typ="safe").load(as_yaml) == json.loads(as_json)


def test_migrate_o_file_still_writes_with_a_deprecation_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = REPO / "tests" / "data" / "kaas-v1" / "r3.yaml"
    target = tmp_path / "cluster.yaml"
    code, out, err = run(capsys, "migrate", str(source), "-o", str(target))
    assert (code, out) == (0, "")
    assert f"use --output-file {target}" in err.splitlines()[0]
    assert "kind: ClusterSettings" in target.read_text()


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[f"{prefix}{name}"] = sub
                found.update(_commands(sub, f"{prefix}{name} "))
    return found


COMMANDS = _commands(build_parser())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_o_is_a_format_everywhere(name: str) -> None:
    for action in COMMANDS[name]._actions:
        if "-o" in action.option_strings:
            assert action.option_strings == ["-o", "--output"], name
            assert action.metavar == "FORMAT" or action.choices, name
        if action.dest == "output_dir":
            assert "--output-dir" in action.option_strings and "-o" not in action.option_strings


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_help_ends_with_examples(name: str) -> None:
    parser = COMMANDS[name]
    assert parser.epilog and parser.epilog.startswith("examples:\n"), name
    help_text = parser.format_help()
    examples = help_text[help_text.index("examples:") :]
    assert all(
        line.startswith("  scs-templates ") or line.startswith("    #")
        for line in examples.splitlines()[1:]
        if line.strip()
    ), examples
