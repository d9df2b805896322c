"""Tests of scs_templates._tools.toolchain and `scs-templates tools`.

No network, no compiler: helm/helmfile are replaced by tiny shell-script TEST DOUBLES that
only print a version, and ``go`` by a Python TEST DOUBLE that records how it was called and
writes such a double where ``go build -o`` asks. Only the tests marked ``helm`` look at the
real binaries in the tools cache; the real cross-build is tests/plane/test_toolchain_cross.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from scs_templates._cli.main import main
from scs_templates._core.errors import ToolError, ToolNotFoundError
from scs_templates._tools.toolchain import install as install_module
from scs_templates._tools.toolchain import pins
from scs_templates._tools.toolchain.install import install_tools
from scs_templates._tools.toolchain.resolve import (
    Tool,
    cache_root,
    clear_version_cache,
    find_helm,
    find_helmfile,
    tool_version,
    tools_dir,
)
from tests.support import REPO, skip_or_fail

if TYPE_CHECKING:
    from collections.abc import Iterator

ENV_VARS = (
    "SCS_TEMPLATES_HELM",
    "SCS_TEMPLATES_HELMFILE",
    "SCS_TEMPLATES_CACHE_DIR",
    "GO",
    "GOGC",
    "GOMEMLIMIT",
)

HELMFILE_OUTPUT = """\
\u2593\u2593\u2593 helmfile

  Version              {version}
  Git Commit           655e1f9
  Go version           1.26.8
  Platform             linux/amd64
"""


# --- test doubles ----------------------------------------------------------------------------


def double_script(output: str, *, log: Path | None = None) -> str:
    """Shell script standing in for helm/helmfile: prints ``output``, optionally logs a call."""
    lines = ["#!/bin/sh", "# TEST DOUBLE for helm/helmfile: prints a fixed version."]
    if log is not None:
        lines.append(f'echo "$HELM_CONFIG_HOME $HELMFILE_UPGRADE_NOTICE_DISABLED" >> "{log}"')
    # Builtins only: the tests run with a PATH that holds nothing but the doubles.
    lines.extend(f"echo '{line}'" for line in output.splitlines())
    return "\n".join(lines) + "\n"


def write_double(path: Path, output: str, *, log: Path | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(double_script(output, log=log))
    path.chmod(0o755)
    return path


def fake_helm_double(directory: Path, version: str) -> Path:
    return write_double(directory / "helm", f"v{version}")


def fake_helmfile_double(directory: Path, version: str) -> Path:
    return write_double(directory / "helmfile", HELMFILE_OUTPUT.format(version=version))


def fake_cache(cache: Path, *, helm: bool = True, helmfile: bool = True) -> Path:
    """Put test doubles where an installed tools cache has the pinned builds."""
    root = cache / "tools"
    if helm:
        fake_helm_double(root / pins.dirname("helm"), pins.HELM_VERSION)
    if helmfile:
        fake_helmfile_double(root / pins.dirname("helmfile"), pins.HELMFILE_VERSION)
    return root


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """No SCS_TEMPLATES_* variables, an empty PATH directory and a private cache dir."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    path_dir = tmp_path / "path"
    path_dir.mkdir()
    cache = tmp_path / "cache"
    monkeypatch.setenv("PATH", str(path_dir))
    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(cache))
    clear_version_cache()
    yield {"path": path_dir, "cache": cache, "tmp": tmp_path}
    clear_version_cache()


# --- resolution order ------------------------------------------------------------------------


def test_env_var_beats_path_beats_cache(env, monkeypatch):
    fake_cache(env["cache"])
    on_path = fake_helm_double(env["path"], "4.2.0")
    explicit = fake_helm_double(env["tmp"] / "mine", "4.3.1")

    assert find_helm().source == "PATH"
    assert find_helm().path == on_path

    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(explicit))
    tool = find_helm()
    assert tool == Tool("helm", explicit, "4.3.1", 4, "SCS_TEMPLATES_HELM")

    argument = fake_helm_double(env["tmp"] / "arg", "4.1.4")
    assert find_helm(argument).source == "argument"

    monkeypatch.delenv("SCS_TEMPLATES_HELM")
    on_path.unlink()
    tool = find_helm()
    assert tool.source == "cache"
    assert tool.path == env["cache"] / "tools" / pins.dirname("helm") / "helm"
    assert tool.version == pins.HELM_VERSION


def test_helmfile_resolution_and_version_parsing(env, monkeypatch):
    fake_cache(env["cache"])
    tool = find_helmfile()
    assert (tool.source, tool.version) == ("cache", "1.8.0")  # not the Go version 1.26.8

    fake_helmfile_double(env["path"], "1.9.2")
    assert (find_helmfile().source, find_helmfile().version) == ("PATH", "1.9.2")

    explicit = fake_helmfile_double(env["tmp"] / "mine", "1.8.1")
    monkeypatch.setenv("SCS_TEMPLATES_HELMFILE", str(explicit))
    assert find_helmfile().source == "SCS_TEMPLATES_HELMFILE"


@pytest.mark.parametrize(
    ("helm", "helmfile"),
    [("3.22.0", "0.166.0"), ("4.1.3", "1.7.1"), ("5.0.0", "2.0.0")],
    ids=["helm3-and-helmfile0", "below-the-floor", "next-major"],
)
def test_unsupported_version_on_path_falls_through_to_cache(env, helm, helmfile):
    """helm 3 is not accepted (security fixes only); helm 4 below 4.1.4 misses the 2026
    security fixes; helmfile must be 1.8+; an unknown next major is not trusted."""
    fake_helm_double(env["path"], helm)
    fake_helmfile_double(env["path"], helmfile)
    fake_cache(env["cache"])
    assert find_helm().source == "cache"
    assert find_helmfile().source == "cache"


def test_unsupported_version_on_path_without_cache_is_an_error(env):
    fake_helm_double(env["path"], "3.15.3")
    with pytest.raises(ToolNotFoundError) as caught:
        find_helm()
    message = str(caught.value)
    assert "helm not found: run `scs-templates tools install` or set SCS_TEMPLATES_HELM" in message
    assert "3.15.3, need helm 4, 4.1.4+" in message
    assert "\n" not in message


def test_explicit_missing_or_unsupported_binary_is_an_error_not_a_fallback(env, monkeypatch):
    fake_cache(env["cache"])
    fake_helm_double(env["path"], "4.3.2")
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(env["tmp"] / "nowhere" / "helm"))
    with pytest.raises(ToolNotFoundError, match=r"SCS_TEMPLATES_HELM=.*no such executable file"):
        find_helm()

    old = fake_helm_double(env["tmp"] / "old", "3.21.4")
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(old))
    with pytest.raises(ToolNotFoundError, match=r"helm 3\.21\.4 is not supported"):
        find_helm()

    with pytest.raises(ToolNotFoundError, match="no such executable file"):
        find_helmfile(env["tmp"] / "missing-helmfile")


def test_cache_root_order(tmp_path, monkeypatch):
    monkeypatch.delenv("SCS_TEMPLATES_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert tools_dir() == tmp_path / "home" / ".cache" / "scs-templates" / "tools"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "scs-templates"
    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path / "explicit"))
    assert tools_dir() == tmp_path / "explicit" / "tools"
    assert tools_dir(tmp_path / "arg") == tmp_path / "arg" / "tools"


def test_version_check_is_cached_and_hermetic(env):
    log = env["tmp"] / "calls.log"
    helm = write_double(env["tmp"] / "bin" / "helm", "v4.3.2", log=log)
    assert tool_version(helm) == "4.3.2"
    assert tool_version(helm) == "4.3.2"
    calls = log.read_text().splitlines()
    assert len(calls) == 1
    config_home, notice_disabled = calls[0].split()
    assert not config_home.startswith(str(Path.home()))  # helm's homes point at a temp dir
    assert notice_disabled == "1"

    write_double(helm, "v4.4.0-rc.1", log=log)  # replaced binary: new size/mtime
    assert tool_version(helm) == "4.4.0"


def test_broken_binary_reports_one_line(env):
    broken = env["tmp"] / "helm"
    broken.write_text("#!/bin/sh\necho 'Error: boom' >&2\nexit 3\n")
    broken.chmod(0o755)
    with pytest.raises(ToolError, match="exited 3: Error: boom"):
        tool_version(broken)


# --- CLI: status -----------------------------------------------------------------------------


def test_status_reports_tools_and_sources(env, capsys):
    fake_cache(env["cache"])
    fake_helmfile_double(env["path"], "1.8.3")
    assert main(["tools", "status"]) == 0
    out = capsys.readouterr().out
    assert "helm      4.3.2    built from verified Go modules: " in out
    assert "helmfile  1.8.3    from PATH, version checked: " in out


def test_missing_helm_exits_1_with_clear_message(env, capsys):
    assert main(["tools", "status"]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        "scs-templates: error: helm not found: run `scs-templates tools install` "
        "or set SCS_TEMPLATES_HELM\n"
    )


def test_helmfile_not_built_yet_does_not_fail_status(env, capsys):
    """helmfile is built lazily, by the first helmfile command or `tools install --all`."""
    fake_cache(env["cache"], helmfile=False)
    assert main(["tools", "status"]) == 0
    assert "helmfile  not built yet (`tools install --all`):" in capsys.readouterr().out


def test_a_wrong_helmfile_named_by_the_env_var_fails_status(env, monkeypatch, capsys):
    fake_cache(env["cache"], helmfile=False)
    monkeypatch.setenv("SCS_TEMPLATES_HELMFILE", str(env["tmp"] / "nowhere"))
    assert main(["tools", "status"]) == 1
    assert "SCS_TEMPLATES_HELMFILE=" in capsys.readouterr().err


# --- install: the Go build -------------------------------------------------------------------

GO_DOUBLE = """#!{python}
# TEST DOUBLE for `go build`: records argv, cwd, environment and the wrapper files, then
# writes a helm/helmfile double where -o asks (reporting VERSION, or the pinned one).
import json, os, sys, time
argv = sys.argv[1:]
record = {{
    "argv": argv,
    "files": sorted(os.listdir(".")),
    "go.sum": open("go.sum").read(),
    "env": {{k: os.environ.get(k) for k in (
        "GOFLAGS", "CGO_ENABLED", "GOOS", "GOARCH", "GOWORK", "GOGC", "GOMEMLIMIT"
    )}},
}}
with open({log!r}, "a") as log:
    log.write(json.dumps(record) + "\\n")
time.sleep(float(os.environ.get("GO_DOUBLE_SLEEP", "0")))
if os.environ.get("GO_DOUBLE_FAIL"):
    print("verifying helm.sh/helm/v4@v4.3.2: checksum mismatch", file=sys.stderr)
    sys.exit(1)
print(argv[-1], file=sys.stderr)  # what `go build -v` prints: the packages it compiled
out = argv[argv.index("-o") + 1]
name = os.path.basename(out)
version = os.environ.get("GO_DOUBLE_VERSION") or {versions!r}[name]
text = "v" + version if name == "helm" else "Version  v" + version
with open(out, "w") as binary:
    binary.write("#!/bin/sh\\n# TEST DOUBLE built by the go double\\necho '" + text + "'\\n")
os.chmod(out, 0o755)
"""


@pytest.fixture
def go(env, monkeypatch) -> Path:
    """A ``go`` TEST DOUBLE named by ``$GO``; returns the log of its calls (JSON lines)."""
    log = env["tmp"] / "go-calls.jsonl"
    double = env["tmp"] / "go-bin" / "go"
    double.parent.mkdir()
    versions = {"helm": pins.HELM_VERSION, "helmfile": pins.HELMFILE_VERSION}
    double.write_text(GO_DOUBLE.format(python=sys.executable, log=str(log), versions=versions))
    double.chmod(0o755)
    monkeypatch.setenv("GO", str(double))
    return log


def go_calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def tool_entries(cache: Path) -> list[str]:
    root = cache / "tools"
    return (
        sorted(p.name for p in root.iterdir() if p.name.startswith(("helm", ".tmp")))
        if (root.is_dir())
        else []
    )


def test_install_builds_helm_only_from_the_verified_wrapper(env, go, capsys):
    """`tools install` builds helm (not helmfile: `make demo` needs helm only) with the
    committed go.sum, -mod=readonly (go refuses any module whose hash differs), CGO off and
    the version ldflag upstream's release build sets; it reports the build time."""
    assert main(["tools", "install"]) == 0
    calls = go_calls(go)
    assert len(calls) == 1
    call = calls[0]
    argv = call["argv"]
    assert argv[:3] == ["build", "-v", "-trimpath"]
    assert argv[argv.index("-gcflags") + 1] == "all=-dwarf=false"
    assert argv[argv.index("-ldflags") + 1] == (
        "-s -w -X helm.sh/helm/v4/internal/version.version=v4.3.2"
    )
    assert argv[-1] == "helm.sh/helm/v4/cmd/helm"
    assert call["files"] == ["build.log", "go.mod", "go.sum", "tools.go"]
    assert call["go.sum"] == (pins.GO_DIR / "helm" / "go.sum").read_text()
    goos, goarch = pins.host_platform()
    env_of_go = dict(call["env"])  # type: ignore[call-overload]
    collector = (env_of_go.pop("GOGC"), env_of_go.pop("GOMEMLIMIT"))
    assert env_of_go == {
        "GOFLAGS": "-mod=readonly -buildvcs=false",
        "CGO_ENABLED": "0",
        "GOOS": goos,
        "GOARCH": goarch,
        "GOWORK": "off",
    }
    # The collector's setting from the memory available at the build (go_build.collector_env).
    assert collector == (None, None) or (
        collector[0] == "off" and 1024 <= int(collector[1].removesuffix("MiB")) <= 2048
    )
    out = capsys.readouterr().out
    assert "helm 4.3.2 (" in out and ": built in " in out and "CPU s)" in out
    assert tool_entries(env["cache"]) == [pins.dirname("helm")]
    marker = json.loads(
        (env["cache"] / "tools" / pins.dirname("helm") / pins.MARKER_NAME).read_text()
    )
    assert marker["version"] == "4.3.2" and marker["key"] == pins.cache_key("helm", goos, goarch)
    assert marker["optimised"] is True
    tool = find_helm()
    assert (tool.source, tool.version) == ("cache", "4.3.2")
    link = env["cache"] / "tools" / "bin" / "helm"
    assert link.resolve() == tool.path.resolve()


def test_install_keeps_the_callers_own_go_collector_setting(env, go, monkeypatch):
    """A GOGC of the caller's own reaches `go build` as it is, and no GOMEMLIMIT is added."""
    monkeypatch.setenv("GOGC", "50")
    install_tools(names=("helm",))
    assert go_calls(go)[0]["env"]["GOGC"] == "50"  # type: ignore[index]
    assert go_calls(go)[0]["env"]["GOMEMLIMIT"] is None  # type: ignore[index]


def test_an_unoptimised_build_says_so_in_its_flags_and_marker(env, go, tmp_path):
    """``optimise=False`` (the arm64 cross-build test's) adds ``-N -l`` for every package and
    records it; ``tools install`` never builds that way (the test above)."""
    binary = install_module.build(
        "helm", tmp_path / "out", go=os.environ["GO"], goos="linux", goarch="arm64", optimise=False
    )
    argv = go_calls(go)[0]["argv"]
    assert argv[argv.index("-gcflags") + 1] == "all=-N -l -dwarf=false"  # type: ignore[union-attr]
    assert json.loads((binary.parent / pins.MARKER_NAME).read_text())["optimised"] is False


def test_second_install_builds_nothing(env, go, capsys):
    install_tools(names=("helm", "helmfile"))
    assert len(go_calls(go)) == 2
    capsys.readouterr()
    assert main(["tools", "install", "--all"]) == 0
    assert len(go_calls(go)) == 2
    out = capsys.readouterr().out
    assert "helm 4.3.2: built from verified Go modules: " in out
    assert "helmfile 1.8.0: built from verified Go modules: " in out


def test_helmfile_build_uses_its_wrapper_and_version_variable(env, go):
    (tool,) = install_tools(names=("helmfile",))
    assert (tool.name, tool.version, tool.source) == ("helmfile", "1.8.0", "cache")
    argv = go_calls(go)[0]["argv"]
    assert argv[-1] == "github.com/helmfile/helmfile"
    assert argv[argv.index("-ldflags") + 1] == "-s -w -X go.szostok.io/version.version=v1.8.0"
    assert go_calls(go)[0]["go.sum"] == (pins.GO_DIR / "helmfile" / "go.sum").read_text()


def test_supported_helm_on_path_is_used_without_a_build(env, go, capsys):
    on_path = fake_helm_double(env["path"], "4.2.1")
    assert main(["tools", "install"]) == 0
    assert go_calls(go) == []
    assert f"helm 4.2.1: from PATH, version checked: {on_path}" in capsys.readouterr().out


def test_helm_3_on_path_is_not_used_a_pinned_helm_is_built(env, go):
    fake_helm_double(env["path"], "3.22.0")
    (tool,) = install_tools()
    assert (tool.version, tool.source) == ("4.3.2", "cache")
    assert len(go_calls(go)) == 1


def test_a_wrong_explicit_choice_is_an_error_not_a_build(env, go, monkeypatch, capsys):
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(fake_helm_double(env["tmp"] / "old", "3.21.4")))
    assert main(["tools", "install"]) == 1
    assert "SCS_TEMPLATES_HELM=" in capsys.readouterr().err
    assert go_calls(go) == []


def test_without_go_one_line_says_what_to_install(env, monkeypatch, capsys):
    monkeypatch.setattr(install_module, "go_binary", lambda: None)
    assert main(["tools", "install"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "scs-templates: error: helm 4.3.2 is not installed and Go is not there to build it: "
        "install Go 1.26+ (https://go.dev/dl/) or put helm 4.1.4+ on PATH (or set "
        "SCS_TEMPLATES_HELM), then run `scs-templates tools install`\n"
    )
    assert tool_entries(env["cache"]) == []


def test_failed_build_installs_nothing_and_names_the_cause(env, go, monkeypatch):
    monkeypatch.setenv("GO_DOUBLE_FAIL", "1")
    with pytest.raises(ToolError, match=r"go build exited 1: verifying .*checksum mismatch"):
        install_tools()
    assert tool_entries(env["cache"]) == []


def test_wrong_version_from_the_build_is_refused(env, go, monkeypatch):
    monkeypatch.setenv("GO_DOUBLE_VERSION", "4.3.1")
    with pytest.raises(ToolError, match=r"reports version 4\.3\.1; nothing was installed"):
        install_tools()
    assert tool_entries(env["cache"]) == []


def test_concurrent_installs_build_once(env, go, monkeypatch):
    """The tools lock: the second installer waits, then finds helm built (a real build takes
    minutes; building it twice would double that)."""
    monkeypatch.setenv("GO_DOUBLE_SLEEP", "1")
    results: list[Tool] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            results.extend(install_tools())
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(go_calls(go)) == 1
    assert {tool.path for tool in results} == {find_helm().path}


def test_interrupted_build_leaves_nothing_and_is_cleaned_up(env, go, monkeypatch):
    staging = env["cache"] / "tools" / ".tmp-leftover"
    staging.mkdir(parents=True)
    (staging / "helm").write_text("half")
    install_tools()
    assert tool_entries(env["cache"]) == [pins.dirname("helm")]


def test_build_timeout_ends_the_go_process_group(env, go, monkeypatch):
    monkeypatch.setenv("GO_DOUBLE_SLEEP", "30")
    monkeypatch.setattr(install_module, "GO_BUILD_TIMEOUT_SECONDS", 1.5)
    with pytest.raises(ToolError, match=r"go build did not finish within 1\.5 s"):
        install_tools()
    assert tool_entries(env["cache"]) == []


def test_cache_key_follows_the_wrapper_content(tmp_path, monkeypatch):
    """A changed go.sum (a dependency bump) builds into a fresh directory; the platform is
    part of the key (a cache shared by an amd64 and an arm64 machine)."""
    before = pins.dirname("helm", "linux", "amd64")
    assert pins.dirname("helm", "linux", "arm64") != before
    copy = tmp_path / "go"
    for name in ("helm", "helmfile"):
        (copy / name).mkdir(parents=True)
        for file in pins.WRAPPER_FILES:
            (copy / name / file).write_bytes((pins.GO_DIR / name / file).read_bytes())
    with (copy / "helm" / "go.sum").open("a") as handle:
        handle.write("example.com/x v1.0.0 h1:AAAA=\n")
    monkeypatch.setattr(pins, "GO_DIR", copy)
    pins.cache_key.cache_clear()
    try:
        assert pins.dirname("helm", "linux", "amd64") != before
    finally:
        pins.cache_key.cache_clear()


# --- the pins ---------------------------------------------------------------------------------


def test_wrappers_require_the_pinned_releases():
    """The wrapper modules build exactly the pinned versions (the cache key and the version
    check rely on it); helmfile's wrapper carries the replace lines of helmfile's go.mod."""
    helm_mod = (pins.GO_DIR / "helm" / "go.mod").read_text()
    assert f"require helm.sh/helm/v4 v{pins.HELM_VERSION}\n" in helm_mod
    helmfile_mod = (pins.GO_DIR / "helmfile" / "go.mod").read_text()
    assert f"require github.com/helmfile/helmfile v{pins.HELMFILE_VERSION}\n" in helmfile_mod
    for line in (
        "k8s.io/api => k8s.io/api v0.35.4",
        "k8s.io/apimachinery => k8s.io/apimachinery v0.36.0",
        "k8s.io/client-go => k8s.io/client-go v0.35.4",
    ):
        assert line in helmfile_mod
    for tool in pins.TOOLS:
        assert f'import _ "{tool.package}"' in (tool.wrapper / "tools.go").read_text()
        assert (
            f"{tool.package.split('/cmd/')[0]} v{tool.version} h1:"
            in (tool.wrapper / "go.sum").read_text()
        )


def test_no_aws_lambda_wheel_is_referenced_anywhere():
    """The toolchain no longer comes from third-party AWS Lambda layer wheels."""
    needles = ("lambda" + "-layer", "lambda" + "_layer")
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    hits = [
        name
        for name in listed
        if (REPO / name).is_file()
        and any(n in (REPO / name).read_text(errors="replace").lower() for n in needles)
    ]
    assert hits == []


# --- the real binaries -----------------------------------------------------------------------


def test_real_tools_report_the_pinned_versions():
    """The helm (and helmfile, when built) that the default cache holds are the pins."""
    clear_version_cache()
    helm = tools_dir() / pins.dirname("helm") / "helm"
    if not helm.is_file() and not os.environ.get("SCS_TEMPLATES_HELM"):
        skip_or_fail(f"helm not built ({helm}): run `scs-templates tools install`")
    if helm.is_file():
        assert tool_version(helm, "helm") == pins.HELM_VERSION
    helmfile = tools_dir() / pins.dirname("helmfile") / "helmfile"
    if helmfile.is_file():
        assert tool_version(helmfile, "helmfile") == pins.HELMFILE_VERSION


def test_version_checks_are_remembered_on_disk(tmp_path, monkeypatch):
    """`helm version` costs as much as a render: a second process must not run it again."""
    from scs_templates._tools.toolchain import resolve

    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path / "cache"))
    counter = tmp_path / "calls"
    helm = tmp_path / "helm"
    helm.write_text(f"#!/bin/sh\necho x >> {counter}\necho v3.15.3\n")
    helm.chmod(0o755)
    resolve.clear_version_cache()
    assert resolve.tool_version(helm) == "3.15.3"
    resolve.clear_version_cache()  # a new process: only the disk cache is left
    assert resolve.tool_version(helm) == "3.15.3"
    assert counter.read_text().count("x") == 1
    helm.write_text(f"#!/bin/sh\necho x >> {counter}\necho v4.1.4\n")  # replaced binary
    resolve.clear_version_cache()
    assert resolve.tool_version(helm) == "4.1.4"
    assert counter.read_text().count("x") == 2


def test_version_cache_keeps_the_binary_in_use(tmp_path, monkeypatch):
    """The on-disk version cache evicts the LEAST RECENTLY USED entry: a helm used between
    the version checks of many other binaries (the suite's fake helms) keeps its entry, so
    its next start is a ``stat``, not a ``helm version`` run. Before, the file kept the last
    64 keys in sorted order, and the real helm (``/root/...``) went before ``/tmp/...``."""
    from scs_templates._tools.toolchain import resolve

    monkeypatch.setenv("SCS_TEMPLATES_CACHE_DIR", str(tmp_path / "cache"))
    runs: list[str] = []

    def version_run(path: str, mtime_ns: int, size: int, kind: str) -> str:
        del mtime_ns, size, kind
        runs.append(path)
        return "3.15.3"

    version_run.cache_clear = lambda: None  # type: ignore[attr-defined]
    monkeypatch.setattr(resolve, "_cached_version", version_run)
    in_use = tmp_path / "a" / "helm"  # sorts before every other binary's key
    in_use.parent.mkdir()
    in_use.write_text("")
    others = tmp_path / "z"
    others.mkdir()
    resolve.clear_version_cache()
    assert resolve.tool_version(in_use) == "3.15.3"
    for index in range(3 * 64):
        other = others / f"helm-{index:03d}"
        other.write_text(str(index))  # another file: another key
        resolve.tool_version(other)
        resolve.clear_version_cache()  # a new process each time: only the file is left
        assert resolve.tool_version(in_use) == "3.15.3"
        resolve.clear_version_cache()
    assert runs.count(str(in_use)) == 1
    remembered = json.loads((resolve._versions_path()).read_text())
    assert len(remembered) == resolve._KEEP_VERSIONS
    # A hit on a recently used entry does not rewrite the file (a start stays a stat).
    before = resolve._versions_path().stat()
    assert resolve.tool_version(in_use) == "3.15.3"
    after = resolve._versions_path().stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
