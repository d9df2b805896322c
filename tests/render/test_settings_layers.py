"""Layered settings (``-f base.yaml -f prod.yaml``) and ``--set PATH=VALUE`` (issue #39).

Proven here, offline: helm's --set typing and syntax; the documented merge order (SETTINGS,
then each -f, then each --set; maps merge, lists replace, null removes); a problem is
reported at the line of the file that set the value, or at ``--set PATH``; one file alone is
exactly ``load_settings``; ``render`` with ``-f`` and ``--set`` prints what the merged file
prints; every command that reads one cluster's settings takes the options.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scs_templates._cli.main import build_parser, main
from scs_templates._settings.layers import load_layers, parse_path, parse_set, parse_value
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import load_settings
from tests.support import REPO

DOCKER = REPO / "examples" / "docker-dev.yaml"


def test_set_values_are_typed_like_helms() -> None:
    assert parse_value("true") is True
    assert parse_value("false") is False
    assert parse_value("null") is None
    assert parse_value("42") == 42
    assert parse_value("-3") == -3
    assert parse_value("0755") == "0755"  # helm: a leading zero stays a string
    assert parse_value("1.5") == "1.5"  # helm types whole numbers only
    assert parse_value("{a,2,true}") == ["a", 2, True]
    assert parse_value("{}") == []
    assert parse_value(r"a\,b") == "a,b"
    assert parse_value("") == ""


def test_set_paths_escape_dots_and_index_lists() -> None:
    assert parse_path("spec.workers[1].replicas") == ("spec", "workers", 1, "replicas")
    assert parse_path(r"metadata.labels.example\.com/team") == (
        "metadata",
        "labels",
        "example.com/team",
    )
    assert parse_set("a=1,b={x,y}") == [("--set a", ("a",), 1), ("--set b", ("b",), ["x", "y"])]
    for bad in ("a", "=1", "a..b=1"):
        with pytest.raises(ValueError):
            parse_set(bad)


@given(st.text(alphabet="abcXYZ-_/09", min_size=1, max_size=12))
def test_any_plain_string_survives_set(text: str) -> None:
    value = parse_value(text)
    assert str(value).lower() == text.lower() or value in (True, False, None)


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


PROD = """\
spec:
  controlPlane:
    replicas: 3
  workers:
    - name: big
      replicas: 4
"""


def test_maps_merge_lists_replace_and_null_removes(tmp_path: Path) -> None:
    base = load_settings(DOCKER).settings
    prod = write(tmp_path, "prod.yaml", PROD + "  services: null\n")
    merged = load_layers([str(DOCKER), prod]).settings
    assert merged.spec.control_plane.replicas == 3
    assert [w.name for w in merged.spec.workers] == ["big"]  # replaced, not appended
    assert merged.metadata.name == base.metadata.name  # untouched keys stay
    assert merged.spec.network == base.spec.network
    assert "services" not in merged.spec.model_fields_set  # null removed it: the default


def test_set_applies_after_every_file_in_order(tmp_path: Path) -> None:
    prod = write(tmp_path, "prod.yaml", PROD)
    merged = load_layers(
        [str(DOCKER), prod],
        ["spec.controlPlane.replicas=5", "spec.workers[0].replicas=7", "spec.workers[1].name=b"],
    ).settings
    assert merged.spec.control_plane.replicas == 5
    assert merged.spec.workers[0].replicas == 7
    assert merged.spec.workers[1].name == "b"  # appended at the list's end


def test_validate_reports_at_the_line_of_the_file_that_set_the_value(tmp_path: Path) -> None:
    prod = write(tmp_path, "prod.yaml", PROD.replace("replicas: 4", "replicas: many"))
    with pytest.raises(SettingsError) as raised:
        load_layers([str(DOCKER), prod])
    assert [str(p) for p in raised.value.problems] == [
        f"{prod}:6:7: spec.workers[0].replicas: expected a whole number, found str 'many'"
    ]


def test_a_bad_value_from_set_is_reported_at_set_path() -> None:
    with pytest.raises(SettingsError) as raised:
        load_layers([str(DOCKER)], ["spec.controlPlane.replicas=2", "spec.kubernetes.vresion=1"])
    lines = sorted(str(p) for p in raised.value.problems)
    assert lines[0].startswith("--set spec.controlPlane.replicas: spec.controlPlane.replicas: ")
    assert lines[1].startswith("--set spec.kubernetes.vresion: spec.kubernetes.vresion: unknown")
    assert "did you mean 'version'?" in lines[1]


def test_a_problem_in_an_untouched_value_stays_at_its_own_file(tmp_path: Path) -> None:
    base = write(tmp_path, "base.yaml", DOCKER.read_text().replace("replicas: 1", "replicas: x"))
    prod = write(tmp_path, "prod.yaml", "metadata:\n  name: other\n")
    with pytest.raises(SettingsError) as raised:
        load_layers([base, prod])
    assert all(p.file == base for p in raised.value.problems)


def test_one_file_alone_is_load_settings() -> None:
    assert load_layers([str(DOCKER)]) == load_settings(DOCKER)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_render_with_layers_prints_what_the_merged_file_prints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    merged = DOCKER.read_text().replace("name: dev\n", "name: layered\n", 1)
    assert merged != DOCKER.read_text()
    expected = run(capsys, "render", write(tmp_path, "merged.yaml", merged))
    overlay = write(tmp_path, "overlay.yaml", "metadata:\n  name: layered\n")
    assert run(capsys, "render", str(DOCKER), "-f", overlay) == expected
    assert run(capsys, "render", "-f", str(DOCKER), "--set", "metadata.name=layered") == expected


def test_validate_takes_layers_and_set(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    prod = write(tmp_path, "prod.yaml", PROD)
    code, _, _ = run(capsys, "validate", "-q", "-f", str(DOCKER), "-f", prod)
    assert code == 0
    code, _, err = run(capsys, "validate", str(DOCKER), "--set", "spec.controlPlane.replicas=2")
    assert code == 2
    assert err.startswith("--set spec.controlPlane.replicas: ")
    code, _, err = run(capsys, "validate")
    assert code == 2
    assert "give SETTINGS or -f FILE" in err


def test_no_settings_at_all_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "render")
    assert code == 2
    assert err.strip() == "scs-templates: error: no settings file: give SETTINGS or -f FILE"


#: Commands that read one cluster's settings (gitops and render-fleet read many clusters).
SETTINGS_COMMANDS = (
    ["render"],
    ["values"],
    ["install"],
    ["status"],
    ["diff"],
    ["delete"],
    ["apply"],
    ["services", "render"],
    ["encryption-key", "create"],
    ["encryption-key", "status"],
    ["encryption-key", "rotate"],
    ["openstack", "preflight"],
)


@pytest.mark.parametrize("command", SETTINGS_COMMANDS, ids=" ".join)
def test_every_settings_command_takes_f_and_set(command: list[str]) -> None:
    args = build_parser().parse_args(
        [*command, "a.yaml", "-f", "b.yaml", "-f", "c.yaml", "--set", "x=1", "--set", "y=2"]
        + (["--step", "add"] if command[-1] == "rotate" and command[0] == "encryption-key" else [])
    )
    assert args.settings == "a.yaml"
    assert args.settings_files == ["b.yaml", "c.yaml"]
    assert args.sets == ["x=1", "y=2"]


def test_preflight_points_at_the_file_that_set_a_value(tmp_path: Path) -> None:
    """openstack preflight names FILE:LINE of the setting to change: with layers, the file
    (or --set PATH) that set it."""
    from scs_templates.providers.openstack.preflight import _Context

    prod = write(tmp_path, "prod.yaml", PROD)
    loaded = load_layers([str(DOCKER), prod], ["metadata.name=other"])
    context = _Context(
        None, loaded.settings, "", loaded.file, loaded.positions, origins=loaded.origins
    )
    assert context.at(("spec", "workers", 0, "replicas")) == f"{prod}:6"
    assert context.at(("spec", "network", "podCIDR")).startswith(f"{DOCKER}:")
    assert context.at(("metadata", "name")) == "--set metadata.name"
    assert loaded.file == f"{DOCKER} + {prod} + --set"
