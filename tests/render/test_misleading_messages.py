"""Issue #39, "Wrong or misleading today": one test per finding, named after it.

Each was a message that said something untrue or unhelpful, or an exit code that differed
between commands for the same cause. All run without a management plane or a cloud: the
kubeconfig checks happen before anything connects, and the OpenStack cases connect to a
local port nothing listens on (a real refused connection, through the real openstacksdk,
keystoneauth, requests and urllib3).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from scs_templates import api
from scs_templates._cli.main import main
from tests.render.test_exit_codes import one_line, run
from tests.support import REPO

DOCKER = REPO / "examples" / "docker-dev.yaml"
OPENSTACK = REPO / "examples" / "openstack-minimal.yaml"
KAAS_V1 = REPO / "tests" / "data" / "kaas-v1" / "r3.yaml"
PREFIX = "scs-templates: error: "


def closed_port() -> int:
    """A local TCP port nothing listens on (bound once, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# --------------------------------------------------------------------------- validate


def test_validate_of_a_docker_cluster_does_not_say_anyone_may_reach_the_api(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _err = run(capsys, "validate", str(DOCKER))
    assert code == 0
    assert "anyone may reach the API" not in out
    assert (
        f"{DOCKER}: API access open: provider docker has no allow-list, network.apiAccess is "
        "not enforced; the API is reachable wherever the provider publishes it (CAPD's load "
        "balancer container, on a random port of every address of the Docker host)"
    ) in out.replace(str(DOCKER.relative_to(REPO)), str(DOCKER))


@pytest.mark.parametrize(
    ("example", "section", "provider"),
    [(DOCKER, "openstack", "docker"), (OPENSTACK, "docker", "openstack")],
)
def test_a_section_of_the_other_provider_is_refused_with_its_file_line_and_column(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    example: Path,
    section: str,
    provider: str,
) -> None:
    text = example.read_text()
    body = "cloud: mine" if section == "openstack" else "nodeImageRepository: example/node"
    text = text.replace("\nspec:\n", f"\nspec:\n  {section}:\n    {body}\n", 1)
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    line = text.splitlines().index(f"  {section}:") + 1
    code, _out, err = run(capsys, "validate", str(path))
    assert code == 2
    assert one_line(err) == (
        f"{path}:{line}:3: spec.{section}: settings for provider {section!r}, but "
        f"spec.provider is {provider!r}: they would be ignored; remove the section (or set "
        f"spec.provider: {section})"
    )


def test_validate_of_a_kaas_v1_clusterctl_yaml_suggests_migrate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _out, err = run(capsys, "validate", str(KAAS_V1))
    assert code == 2
    assert one_line(err) == (
        f"{KAAS_V1}:3:1: KUBERNETES_VERSION: this is a KaaS v1 clusterctl.yaml "
        "(KUBERNETES_VERSION and no apiVersion/kind), not a ClusterSettings file; convert it "
        f"with `scs-templates migrate {KAAS_V1}`"
    )


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            "spec:\n  workers: [\n    {name: a},\n  network:\n    podCIDR: 10.0.0.0/16\n",
            "6:12",
            "'[' is never closed (at line 9, column 12: expected ',' or ']', found ':')",
        ),
        (
            "metadata: {name: x,\n  spec:\n    template: simple\n\n",
            "3:11",
            "'{' is never closed (at line 5, column 13: expected ',' or '}', found ':')",
        ),
    ],
    ids=["list", "map"],
)
def test_an_unclosed_bracket_is_reported_at_the_line_where_it_was_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str, message: str
) -> None:
    path = tmp_path / "cluster.yaml"
    header = "apiVersion: scs-templates.scs.community/v1alpha1\nkind: ClusterSettings\n"
    if not text.startswith("metadata"):
        header += "metadata:\n  name: x\n"
    path.write_text(header + text)
    code, _out, err = run(capsys, "validate", str(path))
    assert code == 2
    assert one_line(err) == f"{path}:{where}: (document): invalid YAML: {message}"


# --------------------------------------------------------------------------- OpenStack


def _clouds_yaml(directory: Path, auth_url: str) -> Path:
    path = directory / "clouds.yaml"
    path.write_text(
        "clouds:\n  dead:\n    auth:\n"
        f"      auth_url: {auth_url}\n"
        "      username: u\n      password: not-a-real-password\n      project_name: p\n"
        "      user_domain_name: Default\n      project_domain_name: Default\n"
        "    region_name: RegionOne\n"
    )
    return path


def test_a_failed_openstack_login_is_one_line_without_keystoneauths_warning_or_urllib3_reprs(
    tmp_path: Path,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v3"
    clouds = _clouds_yaml(tmp_path, url)
    settings = tmp_path / "cluster.yaml"
    settings.write_text(OPENSTACK.read_text().replace("cloud: openstack", "cloud: dead"))
    done = subprocess.run(
        [sys.executable, "-m", "scs_templates._cli.main", "openstack", "preflight", str(settings)],
        env={**os.environ, "OS_CLIENT_CONFIG_FILE": str(clouds)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert one_line(done.stderr) == (
        f"{PREFIX}cloud 'dead': login at {url} failed: cannot reach {url}/auth/tokens: "
        "Connection refused"
    )


def test_an_unreachable_openstack_endpoint_is_named_without_urllib3s_exception_text() -> None:
    import requests

    from scs_templates.providers.openstack.connection import tool_error

    url = f"http://127.0.0.1:{closed_port()}/compute/v2.1/servers"
    with pytest.raises(requests.exceptions.ConnectionError) as raised:
        requests.get(url, timeout=10)
    assert "object at 0x" in str(raised.value)  # what was printed before
    assert str(tool_error("listing servers", raised.value)) == (
        f"listing servers: cannot reach {url}: Connection refused"
    )


# --------------------------------------------------------------------------- values


def test_values_o_onto_an_existing_file_says_it_is_not_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "values.yaml"
    file.write_text("kept\n")
    code, _out, err = run(capsys, "values", str(DOCKER), "--output-dir", str(file))
    assert code == 2
    assert one_line(err) == (
        f"{PREFIX}{file}: exists and is not a directory "
        "(values --output-dir DIR writes DIR/values.json)"
    )
    assert file.read_text() == "kept\n"


# --------------------------------------------------------------------------- kubeconfig


@pytest.fixture
def no_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME without ~/.kube/config and no $KUBECONFIG; the expected default path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    return home / ".kube" / "config"


def _kubeconfig(path: Path) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\n'
        "users: [{name: u, user: {token: x}}]\n"
        "contexts: [{name: mgmt, context: {cluster: c, user: u}}, "
        "{name: other, context: {cluster: c, user: u}}]\n"
        "current-context: mgmt\n"
    )
    return path


COMMANDS = [["status"], ["install"], ["diff"], ["delete", "--yes"], ["apply"]]


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_no_kubeconfig_says_which_file_was_looked_for_and_how_to_pass_one(
    capsys: pytest.CaptureFixture[str], no_kubeconfig: Path, command: list[str]
) -> None:
    code, out, err = run(capsys, command[0], str(DOCKER), *command[1:])
    assert code == 2
    assert out == ""
    assert one_line(err) == (
        f"{PREFIX}no kubeconfig of the management cluster: {no_kubeconfig} does not exist "
        "(KUBECONFIG is not set); pass --kubeconfig FILE or set KUBECONFIG"
    )


def test_diff_without_a_kubeconfig_exits_2_as_status_and_install(
    capsys: pytest.CaptureFixture[str], no_kubeconfig: Path
) -> None:
    codes = {command: run(capsys, command, str(DOCKER))[0] for command in ("diff", "status")}
    assert codes == {"diff": 2, "status": 2}  # diff went to localhost:8080 and exited 1


def test_apply_checks_the_kubeconfig_before_it_says_installing(
    capsys: pytest.CaptureFixture[str], no_kubeconfig: Path
) -> None:
    code, _out, err = run(capsys, "apply", str(DOCKER))
    assert code == 2
    assert "installing/upgrading" not in err


def test_delete_checks_the_kubeconfig_before_it_asks_for_confirmation(
    capsys: pytest.CaptureFixture[str], no_kubeconfig: Path
) -> None:
    code, _out, err = run(capsys, "delete", str(DOCKER))  # no --yes, stdin no terminal
    assert code == 2
    assert one_line(err).startswith(f"{PREFIX}no kubeconfig of the management cluster: ")


@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_missing_context_is_named_not_an_invalid_kube_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig")
    argv = [command[0], str(DOCKER), *command[1:], "--kubeconfig", str(kubeconfig)]
    code, _out, err = run(capsys, *argv, "--context", "nope")
    assert code == 2
    assert one_line(err) == (
        f"{PREFIX}kubeconfig {kubeconfig}: no context 'nope' (it has: mgmt, other)"
    )


def test_a_missing_kubeconfig_in_kubeconfig_variable_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = f"{tmp_path}/a{os.pathsep}{tmp_path}/b"
    monkeypatch.setenv("KUBECONFIG", listed)
    code, _out, err = run(capsys, "status", str(DOCKER))
    assert code == 2
    assert one_line(err) == (
        f"{PREFIX}kubeconfig {listed} (from $KUBECONFIG): no such file; pass --kubeconfig FILE "
        "or set KUBECONFIG naming an existing file"
    )


@pytest.mark.parametrize("function", ["status", "diff", "install", "delete", "apply_services"])
def test_the_library_raises_the_clis_input_error_for_a_missing_kubeconfig(
    no_kubeconfig: Path, function: str
) -> None:
    settings = api.load_settings(DOCKER).settings
    with pytest.raises(api.InputError) as raised:  # was helm's HelmError, exit code 1
        getattr(api, function)(settings)
    assert raised.value.exit_code == 2
    assert str(raised.value).startswith(f"no kubeconfig of the management cluster: {no_kubeconfig}")


# --------------------------------------------------------------------------- versions


def test_versions_prints_no_path_of_the_reference_folder(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _err = run(capsys, "versions")
    assert code == 0
    assert "../" not in out and "shared/" not in out


def test_versions_hold_notes_agree_with_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    from scs_templates._core.version_numbers import exact
    from scs_templates._versions import table

    code, out, _err = run(capsys, "versions")
    assert code == 0
    for release, entry in table().services.items():
        if not entry.hold:
            continue
        used = sorted(set(entry.by_minor.values()))
        note = next(line for line in out.splitlines() if f"{release} held below" in line)
        assert f"held below {entry.hold['below']} (the table uses {', '.join(used)}):" in note
        below = exact(entry.hold["below"])
        assert below is not None
        assert all(exact(version) < below for version in used)  # type: ignore[operator]


# --------------------------------------------------------------------------- the parser


def test_debug_after_the_command_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "render", "/nonexistent/s.yaml", "--debug")
    assert code == 2
    assert "Traceback (most recent call last)" in err
    assert run(capsys, "validate", str(DOCKER), "--debug", "-q")[0] == 0


def test_an_unknown_option_reports_the_usage_of_its_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate", "--bogus", str(DOCKER)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: scs-templates validate ")
    assert err.rstrip().endswith("scs-templates validate: error: unrecognized arguments: --bogus")
    with pytest.raises(SystemExit):
        main(["tools", "install", "--bogus"])
    assert "scs-templates tools install: error: unrecognized arguments: --bogus" in (
        capsys.readouterr().err
    )


# --------------------------------------------------------------------------- gitops, migrate


def test_gitops_help_and_exit_code_agree_when_a_tool_underneath_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import scs_templates._cli.run.gitops
    from scs_templates._lifecycle.helmfile import HelmfileError

    with pytest.raises(SystemExit):
        main(["gitops", "--help"])
    help_text = re.sub(r"\s+", " ", capsys.readouterr().out)
    assert "Exit 0 ok, 2 invalid settings or arguments" in help_text
    assert "1 when a tool underneath (helm, helmfile) failed" in help_text

    def failing(*_args: object, **_options: object) -> None:
        raise HelmfileError(
            "helmfile template failed: Error: boom",
            command=["helmfile", "template"],
            returncode=1,
            stderr="Error: boom",
        )

    monkeypatch.setattr(scs_templates._cli.run.gitops, "write_gitops", failing)
    argv = ["gitops", str(tmp_path / "fleet"), str(DOCKER), "--chart-source", "oci://r.example/c"]
    code, _out, err = run(capsys, *argv)
    assert code == 1
    assert one_line(err) == f"{PREFIX}helmfile template failed: Error: boom"


def test_migrate_of_a_settings_file_says_it_already_is_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "migrate", str(DOCKER))
    assert code == 2
    assert out == ""
    assert one_line(err) == (
        f"{PREFIX}{DOCKER}: already a ClusterSettings settings file "
        "(scs-templates.scs.community/v1alpha1), not a KaaS v1 clusterctl.yaml: nothing to "
        "migrate; check it with `scs-templates validate`"
    )
