"""helmfile over helmfile.d: same objects as ``scs-templates render``, offline commands work.

Uses the real pinned helmfile 1.8 and helm 4 (skip without them, fail in CI). A TEST DOUBLE
for helmfile checks the command line and environment without running anything real.
``sync`` and ``destroy`` against the REAL management plane: tests/plane/test_helmfile_sync.py.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from scs_templates import api
from scs_templates._core.errors import ToolNotFoundError
from scs_templates._lifecycle.helmfile import Helmfile, HelmfileError, helmfile_dir
from scs_templates._render.render import split_documents
from scs_templates._tools.toolchain.resolve import Tool, find_helm
from scs_templates._versions.kubernetes import TESTED_PATCHES
from tests.support import EXAMPLES, REPO, helmfile_tool, skip_or_fail

if TYPE_CHECKING:
    pass

V137 = f"v1.37.{TESTED_PATCHES[(1, 37)]}"  # the examples run 1.37.x

MINIMAL = REPO / "examples" / "openstack-minimal.yaml"


@pytest.fixture(scope="module")
def helmfile() -> Helmfile:
    try:
        return Helmfile(helmfile_tool(), find_helm())
    except ToolNotFoundError as error:
        skip_or_fail(f"helm is not installed (`scs-templates tools install`): {error}")
        raise


def test_helmfile_dir_is_the_repository_one() -> None:
    assert helmfile_dir() == REPO / "helmfile.d"
    assert (helmfile_dir() / "00-cluster.yaml.gotmpl").is_file()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_helmfile_template_equals_render(helmfile: Helmfile, example: Path) -> None:
    settings = api.load_settings(example).settings
    rendered = api.render(settings)
    templated = helmfile.template(settings)
    _, objects = split_documents(templated)
    assert objects == list(rendered.objects)
    # helmfile only adds a blank line after each release's output.
    assert templated.rstrip("\n") == rendered.manifests.rstrip("\n")


def test_helmfile_list_and_build_offline(helmfile: Helmfile) -> None:
    settings = api.load_settings(REPO / "examples" / "openstack-production.yaml").settings
    rows = helmfile.list(settings)
    assert [(r["name"], r["namespace"]) for r in rows] == [("prod1", "team-a")]
    # helmfile 1.x adds its common labels (chart, name, namespace) to the listed ones
    assert "scs-templates.scs.community/role:cluster" in rows[0]["labels"].split(",")
    built = helmfile.build(settings)
    assert "name: prod1" in built
    assert f"kubeVersion: {V137}" in built


def test_helmfile_write_values(helmfile: Helmfile, tmp_path: Path) -> None:
    from ruamel.yaml import YAML

    settings = api.load_settings(MINIMAL).settings
    files = helmfile.write_values(settings, tmp_path)
    assert [f.name for f in files] == ["demo.yaml"]
    assert YAML(typ="safe").load(files[0].read_text()) == api.build_values(settings)


def test_state_files_are_private_json(tmp_path: Path) -> None:
    tool = Tool("helm", Path("/bin/true"), "4.3.2", 4, "argument")
    hf = Helmfile(Tool("helmfile", Path("/bin/true"), "1.8.0", 1, "argument"), tool)
    settings = api.load_settings(MINIMAL).settings
    state = hf.write_state(settings, tmp_path)
    for file in (state.file, state.values_file):
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
    data = json.loads(state.file.read_text())
    cluster = data["cluster"]
    assert cluster["release"] == "demo" and cluster["namespace"] == "default"
    assert cluster["kubeVersion"] == V137
    assert Path(cluster["chart"]).is_dir()
    assert json.loads(state.values_file.read_text()) == api.build_values(settings)


def test_helmfile_gets_the_named_helmfile_without_a_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default helmfile goes through ensure_tool (built on first use); a supported one
    named by SCS_TEMPLATES_HELMFILE is taken as it is, version checked, nothing built."""
    from scs_templates._tools.toolchain.resolve import clear_version_cache

    double = tmp_path / "helmfile"
    double.write_text("#!/bin/sh\n# TEST DOUBLE for helmfile\necho 'Version  v1.8.0'\n")
    double.chmod(0o755)
    monkeypatch.setenv("SCS_TEMPLATES_HELMFILE", str(double))
    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path / "cache"))
    clear_version_cache()
    hf = Helmfile(helm=Tool("helm", Path("/bin/true"), "4.3.2", 4, "argument"))
    assert hf.helmfile.path == double
    assert hf.helmfile.version == "1.8.0"
    assert not (tmp_path / "cache" / "tools").exists() or not any(
        p.name.startswith("helmfile-") for p in (tmp_path / "cache" / "tools").iterdir()
    )


def test_command_line_environment_and_error(tmp_path: Path) -> None:
    """A helmfile TEST DOUBLE records argv/env/stdin and fails like helmfile wrapping helm."""
    log = tmp_path / "log"
    double = tmp_path / "helmfile"
    double.write_text(
        "#!/bin/sh\n# TEST DOUBLE for helmfile: records, then fails as helmfile does.\n"
        f'for a in "$@"; do printf "%s\\n" "$a"; done > "{log}.argv"\n'
        f'env > "{log}.env"\n'
        f'if read line; then echo got-stdin > "{log}.stdin"; fi\n'
        "cat >&2 <<'EOF'\n"
        'in ./helmfile.d/00-cluster.yaml.gotmpl: command "/x/helm" exited with non-zero status:\n'
        "\nPATH:\n  /x/helm\n\nARGS:\n  0: helm\n\nERROR:\n  exit status 1\n\n"
        "EXIT STATUS\n  1\n\nSTDERR:\n  Error: values don't meet the specifications:\n"
        "  - b: wrong\n  - a: wrong\n\nCOMBINED OUTPUT:\n  Error: values don't meet\n"
        "EOF\nexit 1\n"
    )
    double.chmod(0o755)
    hf = Helmfile(
        Tool("helmfile", double, "1.8.0", 1, "argument"),
        Tool("helm", Path("/opt/helm"), "4.3.2", 4, "argument"),
        home=tmp_path / "home",
    )
    settings = api.load_settings(MINIMAL).settings
    with pytest.raises(HelmfileError) as caught:
        # sync's helmfile call (sync first creates Secrets through the API: on the real plane,
        # test_helmfile_sync_and_destroy_on_the_real_plane below)
        hf.run(settings, ["sync", "--skip-deps"], cluster=True, kubeconfig="/k/config")
    assert str(caught.value) == (
        "helmfile sync failed (exit 1): Error: values don't meet the specifications:\n"
        "- a: wrong\n- b: wrong"
    )
    argv = Path(f"{log}.argv").read_text().splitlines()
    assert argv[argv.index("--helm-binary") + 1] == "/opt/helm"
    assert argv[argv.index("--kubeconfig") + 1] == "/k/config"
    assert argv[argv.index("--file") + 1] == str(helmfile_dir())
    assert argv[-2:] == ["sync", "--skip-deps"]
    assert "init" not in argv
    env = dict(
        line.split("=", 1) for line in Path(f"{log}.env").read_text().splitlines() if "=" in line
    )
    assert env["HELMFILE_UPGRADE_NOTICE_DISABLED"] == "1"
    assert env["HELMFILE_TEMPDIR"].startswith("/")
    assert env["HELM_CONFIG_HOME"] == str(tmp_path / "home" / "config")
    assert env["KUBECONFIG"] == "/k/config"
    assert not Path(f"{log}.stdin").exists()  # stdin is /dev/null: never interactive
    # The state directory (with the 0600 values) is gone after the call.
    assert not Path(env["HELMFILE_TEMPDIR"]).exists()


def test_finding11_offline_helmfile_commands_never_get_kubeconfig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """helmfile template/build/list/write-values run without KUBECONFIG (the caller's
    environment has one, and so may the runner); sync, a cluster command, gets it."""
    log = tmp_path / "env.log"
    double = tmp_path / "helmfile"
    double.write_text(
        "#!/bin/sh\n# TEST DOUBLE for helmfile: records its environment, prints nothing.\n"
        f'env > "{log}"\n'
    )
    double.chmod(0o755)
    monkeypatch.setenv("KUBECONFIG", "/env/config")
    hf = Helmfile(
        Tool("helmfile", double, "1.8.0", 1, "argument"),
        Tool("helm", Path("/opt/helm"), "4.3.2", 4, "argument"),
        home=tmp_path / "home",
    )
    settings = api.load_settings(MINIMAL).settings
    hf.run(settings, ["template", "--skip-deps"])
    assert "KUBECONFIG=" not in log.read_text()
    hf.run(settings, ["sync", "--skip-deps"], cluster=True)
    assert "KUBECONFIG=/env/config" in log.read_text().splitlines()
