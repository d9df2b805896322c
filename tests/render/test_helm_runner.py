"""Tests of scs_templates._tools.helm: the helm runner every helm call goes through.

Most tests use a FAKE HELM: a small shell-script TEST DOUBLE that records its argv, its
environment and its stdin, then prints what the test asks for. That makes flag selection
(helm 4's), hermetic environment, values-on-stdin and error handling checkable without
a cluster. Only the tests marked ``helm`` run the real pinned binary.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from scs_templates._tools.helm import Helm, HelmError, HelmTimeout, ReleaseInfo
from scs_templates._tools.helm import runner as helm_runner
from scs_templates._tools.helm.errors import error_text, redact
from scs_templates._tools.toolchain.resolve import Tool
from tests.support import process_gone, skip_or_fail

SECRET = "s3cr3t-Passw0rd-value"
VALUES = {"cluster": {"name": "demo"}, "openstack": {"password": SECRET}}


# --- the test double ---------------------------------------------------------------------


def fake_helm(
    directory: Path, body: str = "", *, stdout: str = "", stderr: str = "", code: int = 0
) -> Path:
    """Write a TEST DOUBLE for helm into ``directory`` and return its path.

    It records ``argv`` (one argument per line) to ``argv.log``, its environment to
    ``env.log`` and stdin to ``stdin.log``, runs ``body``, prints ``stdout``/``stderr`` and
    exits with ``code``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "out.txt").write_text(stdout)
    (directory / "err.txt").write_text(stderr)
    script = directory / "helm"
    script.write_text(
        "#!/bin/sh\n"
        "# TEST DOUBLE for helm: records argv/env/stdin, prints canned output.\n"
        f'D="{directory}"\n'
        'for a in "$@"; do printf "%s\\n" "$a"; done > "$D/argv.log"\n'
        'env > "$D/env.log"\n'
        'cat > "$D/stdin.log"\n'
        f"{body}\n"
        'cat "$D/out.txt"\n'
        'cat "$D/err.txt" >&2\n'
        f"exit {code}\n"
    )
    script.chmod(0o755)
    return script


def make_helm(path: Path, **kwargs: object) -> Helm:
    tool = Tool(name="helm", path=path, version="4.3.2", major=4, source="argument")
    return Helm(tool, **kwargs)  # type: ignore[arg-type]


def argv_of(directory: Path) -> list[str]:
    return (directory / "argv.log").read_text().splitlines()


def env_of(directory: Path) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in (directory / "env.log").read_text().splitlines():
        key, _, value = line.partition("=")
        env[key] = value
    return env


RELEASE_JSON = json.dumps(
    {
        "name": "demo",
        "namespace": "team-a",
        "version": 2,
        "info": {"status": "deployed", "last_deployed": "2025-01-01T00:00:00Z"},
        "chart": {"metadata": {"name": "openstack-cluster", "version": "0.1.0", "appVersion": "1"}},
        "config": {"openstack": {"password": SECRET}},
    }
)


# --- values, argv, environment -----------------------------------------------------------


def test_template_sends_values_as_json_on_stdin_never_in_argv(tmp_path: Path) -> None:
    d = tmp_path / "h"
    helm = make_helm(fake_helm(d, stdout="---\nkind: X\n"), home=tmp_path / "home")
    out = helm.template(
        "demo", Path("/charts/c"), namespace="team-a", values=VALUES, kube_version="v1.33.5"
    )
    assert out == "---\nkind: X\n"
    argv = argv_of(d)
    assert argv == [
        "template", "demo", "/charts/c", "-n", "team-a", "--kube-version", "v1.33.5", "-f", "-"
    ]  # fmt: skip
    assert not any(SECRET in a for a in argv)
    assert json.loads((d / "stdin.log").read_text()) == VALUES


def test_environment_is_hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM_NAMESPACE", "leaked")
    monkeypatch.setenv("HELM_DRIVER", "memory")
    home = tmp_path / "home"
    d = tmp_path / "h"
    helm = make_helm(fake_helm(d), home=home, kubeconfig="/k/config")
    helm.template("r", Path("/c"), namespace="n", values={}, kube_version="v1.34.1")
    env = env_of(d)
    assert env["HELM_CACHE_HOME"] == str(home / "cache")
    assert env["HELM_CONFIG_HOME"] == str(home / "config")
    assert env["HELM_DATA_HOME"] == str(home / "data")
    assert env["HELM_CONTENT_CACHE"] == str(home / "content")
    assert "KUBECONFIG" not in env  # helm template is offline (issue #41, finding 11)
    assert "HELM_NAMESPACE" not in env
    assert "HELM_DRIVER" not in env


@pytest.mark.parametrize("given", ["argument", "environment"])
def test_finding11_offline_helm_commands_never_get_kubeconfig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """helm template and lint run without KUBECONFIG, whether the caller's environment or
    the runner's ``kubeconfig`` has one; the commands that talk to a cluster get it."""
    monkeypatch.setenv("KUBECONFIG", "/env/config")
    kubeconfig = "/k/config" if given == "argument" else None
    expected = kubeconfig or "/env/config"
    d = tmp_path / "h"
    helm = make_helm(fake_helm(d, stdout="[]"), home=tmp_path / "home", kubeconfig=kubeconfig)
    helm.template("r", Path("/c"), namespace="n", values={}, kube_version="v1.34.1")
    assert "KUBECONFIG" not in env_of(d)
    helm.lint(Path("/c"), namespace="n", values={}, kube_version="v1.34.1")
    assert "KUBECONFIG" not in env_of(d)
    helm.run(["list", "-n", "n"])
    assert env_of(d)["KUBECONFIG"] == expected


def test_default_home_is_a_private_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only our user can enter it (0700, as tempfile.mkdtemp makes it), even with an open
    umask: helm writes its repository and registry configuration there."""
    monkeypatch.setattr(helm_runner, "_process_home", None)  # made anew, under this umask
    d = tmp_path / "h"
    old = os.umask(0)
    try:
        make_helm(fake_helm(d)).template(
            "r", Path("/c"), namespace="n", values={}, kube_version="v1"
        )
    finally:
        os.umask(old)
    cache = Path(env_of(d)["HELM_CACHE_HOME"])
    assert cache.parent.name.startswith("scs-templates-helm-")
    assert not str(cache).startswith(str(Path.home()))
    home = cache.parent.stat()
    assert stat.S_IMODE(home.st_mode) == 0o700 and home.st_uid == os.getuid()


# --- exit codes and messages -------------------------------------------------------------


def test_warnings_on_stderr_with_exit_0_are_success(tmp_path: Path) -> None:
    d = tmp_path / "h"
    stderr = "coalesce.go:286: warning: skipped value for x: Not a table.\nError: not really\n"
    helm = make_helm(fake_helm(d, stdout="ok\n", stderr=stderr))
    assert helm.template("r", Path("/c"), namespace="n", values={}, kube_version="v1") == "ok\n"


def test_failure_raises_helm_error_with_sorted_schema_lines(tmp_path: Path) -> None:
    stderr = (
        "coalesce.go:286: warning: something\n"
        "Error: values don't meet the specifications of the schema(s) in the following "
        "chart(s):\nopenstack-cluster:\n- z: Invalid type\n- a: Invalid type\n- m: required\n"
    )
    d = tmp_path / "h"
    helm = make_helm(fake_helm(d, stderr=stderr, code=1))
    with pytest.raises(HelmError) as caught:
        helm.template("demo", Path("/c"), namespace="n", values=VALUES, kube_version="v1")
    error = caught.value
    assert error.returncode == 1
    assert error.exit_code == 1
    assert error.command[1:3] == ["template", "demo"]
    assert str(error) == (
        "helm template demo failed: Error: values don't meet the specifications of the "
        "schema(s) in the following chart(s):\nopenstack-cluster:\n- a: Invalid type\n"
        "- m: required\n- z: Invalid type"
    )
    assert "warning" not in str(error)


def test_failure_without_error_line_keeps_the_tail(tmp_path: Path) -> None:
    helm = make_helm(fake_helm(tmp_path / "h", stderr="panic: boom\n", code=2))
    with pytest.raises(HelmError, match="panic: boom"):
        helm.template("r", Path("/c"), namespace="n", values={}, kube_version="v1")


def test_secrets_are_scrubbed_from_error_text(tmp_path: Path) -> None:
    # The double echoes its stdin (the values) to stderr, as a careless error message might.
    d = tmp_path / "h"
    body = 'echo "Error: bad values: $(cat "$D/stdin.log")" >&2; exit 1'
    helm = make_helm(fake_helm(d, body))
    with pytest.raises(HelmError) as caught:
        helm.template(
            "r", Path("/c"), namespace="n", values=VALUES, kube_version="v1", sensitive=["demo"]
        )
    assert SECRET not in str(caught.value)
    assert SECRET not in caught.value.stderr
    assert "demo" not in str(caught.value)
    assert "<redacted>" in str(caught.value)
    assert not any(SECRET in a for a in caught.value.command)


def test_error_helpers() -> None:
    assert redact("a-long-secret and a-long", ["a-long", "a-long-secret"]) == (
        "<redacted> and <redacted>"
    )
    assert error_text("W\nError: x\n  - b\n  - a\nmore\n- d\n- c") == (
        "Error: x\n  - a\n  - b\nmore\n- c\n- d"
    )


# --- timeout -----------------------------------------------------------------------------


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    d = tmp_path / "h"
    # The double starts a grandchild that would keep the pipes open, then sleeps.
    body = 'sleep 300 & echo $! > "$D/child.pid"; sleep 300'
    helm = make_helm(fake_helm(d, body), timeout=1.0)
    started = time.monotonic()
    with pytest.raises(HelmTimeout) as caught:
        helm.template("r", Path("/c"), namespace="n", values={}, kube_version="v1")
    assert time.monotonic() - started < 15
    assert "did not finish within 1 s" in str(caught.value)
    assert caught.value.exit_code == 1
    child = int((d / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while not process_gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_gone(child), "the grandchild survived the timeout"


def test_the_users_timeout_is_the_wall_clock_of_upgrade_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--timeout``/``SCS_TEMPLATES_TIMEOUT`` bounds ``helm upgrade --install`` too, and
    helm's own ``--timeout`` ends inside it. Before, that call's wall clock was at least
    helm's 300 s + 60 s whatever the user set (the real API server that stops answering:
    tests/plane/test_plane_faults.py)."""
    d = tmp_path / "h"
    monkeypatch.setenv("SCS_TEMPLATES_TIMEOUT", "2s")
    helm = make_helm(fake_helm(d, "sleep 300"))
    with pytest.raises(HelmTimeout, match="did not finish within 2 s"):
        helm.upgrade_install("demo", Path("/c"), namespace="n", values={}, timeout=600)
    argv = argv_of(d)
    assert argv[argv.index("--timeout") + 1] == "2s"  # max(1 s, 2 s - a quarter), rounded
    monkeypatch.setenv("SCS_TEMPLATES_TIMEOUT", "20m")
    d2 = tmp_path / "h2"
    make_helm(fake_helm(d2, stdout=RELEASE_JSON)).upgrade_install(
        "demo", Path("/c"), namespace="n", values={}
    )
    argv = argv_of(d2)
    assert argv[argv.index("--timeout") + 1] == "300s"  # helm's default fits inside 20 min
    monkeypatch.setenv("SCS_TEMPLATES_TIMEOUT", "4m")
    make_helm(fake_helm(d2, stdout=RELEASE_JSON)).upgrade_install(
        "demo", Path("/c"), namespace="n", values={}
    )
    argv = argv_of(d2)
    assert argv[argv.index("--timeout") + 1] == "180s"  # a minute left to roll back, report


def test_missing_binary_is_a_tool_error(tmp_path: Path) -> None:
    from scs_templates._core.errors import ToolError

    helm = make_helm(tmp_path / "nonexistent")
    with pytest.raises(ToolError, match="cannot run"):
        helm.template("r", Path("/c"), namespace="n", values={}, kube_version="v1")


# --- helm 4's flags -----------------------------------------------------------------------


def test_upgrade_install_flags(tmp_path: Path) -> None:
    rollback, wait_flag = "--rollback-on-failure", "--wait=legacy"
    d = tmp_path / "h"
    helm = make_helm(fake_helm(d, stdout=RELEASE_JSON), kubeconfig="/kc", kube_context="mgmt")
    info = helm.upgrade_install(
        "demo", Path("/c"), namespace="team-a", values=VALUES, wait=True, timeout=600
    )
    assert info == ReleaseInfo(
        "demo", "team-a", 2, "deployed", "openstack-cluster-0.1.0", "1", "2025-01-01T00:00:00Z"
    )
    argv = argv_of(d)
    assert argv[:4] == ["upgrade", "--install", "demo", "/c"]
    assert rollback in argv and wait_flag in argv
    other = {"--atomic", "--rollback-on-failure", "--wait", "--wait=watcher", "--wait=legacy"} - {
        rollback,
        wait_flag,
    }
    assert not other & set(argv)
    assert argv[argv.index("-n") + 1] == "team-a"
    assert argv[argv.index("--kubeconfig") + 1] == "/kc"
    assert argv[argv.index("--kube-context") + 1] == "mgmt"
    assert argv[argv.index("--timeout") + 1] == "600s"
    assert "--create-namespace" in argv
    assert "--kube-version" not in argv
    assert argv[-2:] == ["-f", "-"]
    assert not any(SECRET in a for a in argv)


def test_upgrade_install_without_rollback_or_wait(tmp_path: Path) -> None:
    d = tmp_path / "h"
    helm = make_helm(fake_helm(d, stdout=RELEASE_JSON))
    helm.upgrade_install(
        "demo", Path("/c"), namespace="n", values={}, rollback_on_failure=False,
        create_namespace=False,
    )  # fmt: skip
    argv = set(argv_of(d))
    assert not argv & {"--rollback-on-failure", "--wait=legacy", "--wait=watcher"}
    assert "--create-namespace" not in argv


def test_rollback_waits_with_helm3_wait_semantics(tmp_path: Path) -> None:
    """helm 4's kstatus watcher would wait out provisioning CAPI objects and roll back."""
    d = tmp_path / "h"
    make_helm(fake_helm(d, stdout=RELEASE_JSON)).upgrade_install(
        "demo", Path("/c"), namespace="n", values={}
    )
    argv = argv_of(d)
    assert "--rollback-on-failure" in argv
    assert "--wait=legacy" in argv
    assert "--wait=watcher" not in argv


def test_status(tmp_path: Path) -> None:
    d = tmp_path / "h"
    row = {
        "name": "demo", "namespace": "team-a", "revision": "3", "updated": "now",
        "status": "failed", "chart": "openstack-cluster-0.1.0", "app_version": "",
    }  # fmt: skip
    helm = make_helm(fake_helm(d, stdout=json.dumps([row])))
    info = helm.status("demo", namespace="team-a")
    assert info == ReleaseInfo("demo", "team-a", 3, "failed", "openstack-cluster-0.1.0", "", "now")
    argv = argv_of(d)
    assert argv[:3] == ["list", "-n", "team-a"]
    assert argv[argv.index("--filter") + 1] == "^demo$"
    assert "--all" not in argv

    empty = make_helm(fake_helm(tmp_path / "e", stdout="[]\n"))
    assert empty.status("demo", namespace="team-a") is None


def test_get_values_manifest_uninstall(tmp_path: Path) -> None:
    d = tmp_path / "v"
    helm = make_helm(fake_helm(d, stdout=json.dumps(VALUES)))
    assert helm.get_values("demo", namespace="n") == VALUES
    assert argv_of(d) == ["get", "values", "demo", "-n", "n", "-o", "json"]
    assert (
        make_helm(fake_helm(tmp_path / "null", stdout="null")).get_values("demo", namespace="n")
        == {}
    )

    m = tmp_path / "m"
    assert make_helm(fake_helm(m, stdout="kind: A\n")).get_manifest("demo", namespace="n") == (
        "kind: A\n"
    )
    assert argv_of(m) == ["get", "manifest", "demo", "-n", "n"]

    u = tmp_path / "u"
    make_helm(fake_helm(u)).uninstall("demo", namespace="n", wait=True)
    assert argv_of(u) == ["uninstall", "demo", "-n", "n", "--wait=legacy"]


def test_lint_flags(tmp_path: Path) -> None:
    d = tmp_path / "h"
    make_helm(fake_helm(d, stdout="linted")).lint(
        Path("/c"), values={}, namespace="n", kube_version="v1.33.5"
    )
    assert argv_of(d) == [
        "lint", "/c", "-n", "n", "--kube-version", "v1.33.5", "--strict", "-f", "-"
    ]  # fmt: skip


@pytest.mark.parametrize("version", ["2.17.0", "3.22.0"])
def test_unsupported_major_is_refused(tmp_path: Path, version: str) -> None:
    """helm 3 is refused too: it gets security fixes only (docs/toolchain.md)."""
    from scs_templates._core.errors import ToolNotFoundError

    major = int(version.split(".")[0])
    tool = Tool(name="helm", path=tmp_path / "helm", version=version, major=major, source="x")
    with pytest.raises(ToolNotFoundError, match="need helm 4"):
        Helm(tool)


# --- the real binaries ---------------------------------------------------------------------


def real_helm() -> Helm:
    from scs_templates._core.errors import ToolNotFoundError
    from scs_templates._tools.toolchain.resolve import find_helm

    try:
        return Helm(find_helm())
    except ToolNotFoundError as error:
        skip_or_fail(f"helm is not installed (`scs-templates tools install`): {error}")
        raise


@pytest.fixture
def tiny_chart(tmp_path: Path) -> Path:
    chart = tmp_path / "tiny"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: tiny\nversion: 0.1.0\n")
    (chart / "values.schema.json").write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {
                    "x": {"type": "string"},
                    "y": {"type": "integer"},
                    "z": {"type": "integer"},
                },
            }
        )
    )
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"
        "  namespace: {{ .Release.Namespace }}\ndata:\n  x: {{ .Values.x | quote }}\n"
        "  kube: {{ .Capabilities.KubeVersion.Version }}\n"
    )
    return chart


def test_real_helm_renders_the_explicit_kube_version(tiny_chart: Path) -> None:
    """helm 4's default kube version comes from its client-go: always pass ours."""
    output = real_helm().template(
        "r", tiny_chart, namespace="ns", values={"x": "on"}, kube_version="v1.33.5"
    )
    assert "kube: v1.33.5" in output
    assert 'x: "on"' in output
    assert "namespace: ns" in output


def test_real_helm_schema_errors_are_stable(tiny_chart: Path) -> None:
    helm = real_helm()
    messages = set()
    for _ in range(3):
        with pytest.raises(HelmError) as caught:
            helm.template(
                "r", tiny_chart, namespace="n", values={"x": 1, "y": "a", "z": "b"},
                kube_version="v1.33.5",
            )  # fmt: skip
        messages.add(str(caught.value))
    assert len(messages) == 1
    lines = messages.pop().splitlines()
    bullets = [line for line in lines if line.startswith("- ")]
    assert len(bullets) == 3 and bullets == sorted(bullets)


def test_template_runs_helm_without_collections_up_to_a_backstop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-cluster ``helm template`` is short-lived: no garbage collection, GOMEMLIMIT
    as the backstop (~25 % of its CPU, runner.TEMPLATE_COLLECTOR); other commands keep Go's
    default."""
    monkeypatch.delenv("GOGC", raising=False)
    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    d = tmp_path / "h"
    helm = make_helm(fake_helm(d, stdout="ok"))
    helm.template("r", Path("/c"), namespace="n", values={}, kube_version="v1.34.1")
    env = env_of(d)
    assert (env.get("GOGC"), env.get("GOMEMLIMIT")) == ("off", "256MiB")
    helm.run(["version"])
    env = env_of(d)
    assert "GOGC" not in env and "GOMEMLIMIT" not in env


@pytest.mark.parametrize("own", [{"GOGC": "50"}, {"GOMEMLIMIT": "64MiB"}])
def test_template_keeps_the_callers_own_collector_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own: dict[str, str]
) -> None:
    monkeypatch.delenv("GOGC", raising=False)
    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    for key, value in own.items():
        monkeypatch.setenv(key, value)
    d = tmp_path / "h"
    make_helm(fake_helm(d)).template("r", Path("/c"), namespace="n", values={}, kube_version="v1")
    env = env_of(d)
    assert {key: env[key] for key in ("GOGC", "GOMEMLIMIT") if key in env} == own


def test_extra_env_is_added_but_cannot_override_helm_homes(tmp_path: Path) -> None:
    d = tmp_path / "h"
    helm = make_helm(fake_helm(d, stdout="ok"))
    helm.run(["version"], extra_env={"GOGC": "400", "HELM_CACHE_HOME": "/tmp/evil"})
    env = dict(
        line.split("=", 1) for line in (d / "env.log").read_text().splitlines() if "=" in line
    )
    assert env["GOGC"] == "400"
    assert env["HELM_CACHE_HOME"] != "/tmp/evil"


def test_finding11_offline_render_with_debug_never_hands_kubeconfig_to_helm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``scs-templates --debug render`` with ``KUBECONFIG`` set: the real helm renders, run by a
    TEST DOUBLE wrapper that records its environment first; KUBECONFIG is not in it."""
    from scs_templates._cli.main import main
    from scs_templates._core.errors import ToolNotFoundError
    from scs_templates._tools.toolchain.resolve import find_helm
    from tests.support import EXAMPLES

    try:
        real = find_helm().path
    except ToolNotFoundError as error:
        skip_or_fail(f"helm not found: {error}")
    wrapper = tmp_path / "helm"
    wrapper.write_text(
        "#!/bin/sh\n# TEST DOUBLE: records the environment, then runs the real helm.\n"
        f'env >> "{tmp_path}/env.log"\nexec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    kubeconfig = tmp_path / "management.kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(wrapper))
    example = next(path for path in EXAMPLES if path.stem == "openstack-minimal")
    assert main(["--debug", "render", str(example), "-o", str(tmp_path / "out")]) == 0
    recorded = (tmp_path / "env.log").read_text()
    assert "HELM_CACHE_HOME=" in recorded  # the wrapper ran
    assert "KUBECONFIG=" not in recorded
    assert str(kubeconfig) not in capsys.readouterr().err
