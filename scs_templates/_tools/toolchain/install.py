"""Build the pinned helm/helmfile from the Go module proxy into the tools cache.

Chain per tool: a supported binary named by the environment variable or found on ``PATH`` is
used as it is (version checked, nothing built); else the tools cache; else ``go build`` of the
wrapper module shipped in :data:`pins.GO_DIR`. ``-mod=readonly`` with the committed ``go.sum``
makes ``go`` refuse any module whose hash differs from the one the Go checksum database
verified when the pin was made, so the binary is built from exactly the upstream source of
the pinned release. The built binary must then report the pinned version.

Why it is built this way:

* Everything is staged in ``tools/.tmp-*`` (same filesystem) and moved into place with one
  rename after the version check: a tool directory is complete or absent. An interrupted run
  leaves only a ``.tmp-*`` directory, which the next run deletes.
* The wrapper is copied into the staging directory first: the package may be read-only.
* ``fcntl.flock`` on ``tools/.lock`` serialises installs; the loser of a race waits and then
  finds the tool built (a helm build takes minutes: building it twice would double that).
* The ``go`` process runs in its own process group with a wall clock (:mod:`..helm.process`),
  and a signal or timeout ends the whole group.
* helmfile is built only when asked for (``tools install --all``, or a helmfile command, via
  :func:`ensure_tool`): ``make demo`` renders with helm alone and must not wait for it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import resource
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from scs_templates._core import process
from scs_templates._core.errors import ToolError, ToolNotFoundError
from scs_templates._core.progress import Progress, quiet
from scs_templates._tools.toolchain import go_build, pins
from scs_templates._tools.toolchain.resolve import (
    ENV_VARS,
    SOURCE_CACHE,
    Tool,
    find_helm,
    find_helmfile,
    tool_version,
    tool_version_numbers,
    tools_dir,
)

#: Wall clock of one ``go build`` (a cold helmfile build on 2 busy cores took ~13 min).
GO_BUILD_TIMEOUT_SECONDS = 3600.0
_STAGING_PREFIX = ".tmp-"
_TRASH_PREFIX = ".trash-"
_LOCK_NAME = ".lock"


def go_binary() -> str | None:
    """The ``go`` command: ``$GO``, then ``PATH``, then the usual ``/usr/local/go/bin/go``."""
    candidates = [os.environ.get("GO", ""), shutil.which("go") or "", "/usr/local/go/bin/go"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def install_tools(
    cache_dir: Path | None = None,
    *,
    names: Sequence[str] = ("helm",),
    force: bool = False,
    progress: Progress | None = None,
) -> list[Tool]:
    """Make each of ``names`` (``helm``, ``helmfile``) available and return them.

    ``cache_dir`` defaults to the project cache (``SCS_TEMPLATES_CACHE_DIR``, XDG, ``~/.cache``).
    ``force`` builds even when a usable binary exists. ``progress`` receives status lines.
    """
    return [
        ensure_tool(name, cache_dir=cache_dir, force=force, progress=progress) for name in names
    ]


def ensure_tool(
    name: str,
    *,
    cache_dir: Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> Tool:
    """The usable ``name``: named, on PATH or cached; else built now from verified modules.

    An explicit choice (``SCS_TEMPLATES_HELM``/``SCS_TEMPLATES_HELMFILE``) that is wrong is an
    error, never silently replaced by a build. Without Go: one line on what to install.
    """
    report = progress or quiet
    find = find_helm if name == "helm" else find_helmfile
    if not force:
        try:
            tool = find(cache_dir=cache_dir)
        except ToolNotFoundError:
            if os.environ.get(ENV_VARS[name]):
                raise
        else:
            report(f"{tool.name} {tool.version}: {describe_source(tool)}: {tool.path}")
            return tool
    go = go_binary()
    if go is None:
        pin = pins.go_tool(name)
        raise ToolNotFoundError(
            f"{name} {pin.version} is not installed and Go is not there to build it: install "
            f"Go 1.26+ (https://go.dev/dl/) or put {name} {_minimum(name)}+ on PATH "
            f"(or set {ENV_VARS[name]}), then run `scs-templates tools install`"
        )
    root = tools_dir(cache_dir)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ToolError(
            f"cannot create the tools cache {root}: {error.strerror or error}"
        ) from error
    final = root / pins.dirname(name)
    with _locked(root / _LOCK_NAME, report):
        _remove_leftovers(root)
        if not force and (final / name).is_file():  # built by whoever held the lock
            return find(cache_dir=cache_dir)
        staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=root))
        try:
            built = build(name, staging / final.name, go=go, progress=report)
            _commit(final, built.parent, staging)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        _update_bin_link(root, name, final.name)
    version = pins.go_tool(name).version
    return Tool(name, final / name, version, tool_version_numbers(version)[0], SOURCE_CACHE)


def describe_source(tool: Tool) -> str:
    """Where a resolved tool came from, in words (``tools status``, install's report)."""
    if tool.source == SOURCE_CACHE:
        return "built from verified Go modules"
    if tool.source == "PATH":
        return "from PATH, version checked"
    return f"named by {tool.source}, version checked"


def _minimum(name: str) -> str:
    floor = pins.HELM_MINIMUM if name == "helm" else pins.HELMFILE_MINIMUM
    return ".".join(map(str, floor))


def build(
    name: str,
    directory: Path,
    *,
    go: str,
    goos: str | None = None,
    goarch: str | None = None,
    progress: Progress | None = None,
    optimise: bool = True,
) -> Path:
    """``go build`` the pinned ``name`` into ``directory/name`` (created) and return its path.

    ``goos``/``goarch`` cross-build (``CGO_ENABLED=0``, as upstream's releases); a binary for
    this machine is run once to check that it reports the pinned version, and gets the
    marker file that makes the directory count as complete. ``optimise=False`` (only the
    arm64 cross-build test's, which reads the binary's header) compiles without the
    compiler's optimisations (:data:`go_build.UNOPTIMISED`): ~18 % fewer CPU seconds for a
    slower program; the marker says so.
    """
    tool = pins.go_tool(name)
    report = progress or quiet
    host = pins.host_platform()
    target = (goos or host[0], goarch or host[1])
    directory.mkdir(parents=True)
    source = directory / ".src"
    source.mkdir()
    for file in pins.WRAPPER_FILES:
        shutil.copyfile(tool.wrapper / file, source / file)
    binary = directory / name
    gcflags = go_build.gcflags("" if optimise else go_build.UNOPTIMISED)
    argv = [go, "build", "-v", "-trimpath", "-gcflags", gcflags]
    argv += ["-ldflags", tool.ldflags, "-o", str(binary), tool.package]
    env = dict(os.environ)
    env.update(go_build.collector_env(os.environ))
    env.update(
        CGO_ENABLED="0",
        GOOS=target[0],
        GOARCH=target[1],
        GOFLAGS="-mod=readonly -buildvcs=false",
        GOWORK="off",
    )
    what = f"{name} {tool.version} ({target[0]}/{target[1]})"
    report(f"{what}: building from the Go module proxy (go.sum-verified); this takes minutes")
    seconds, cpu = _go_build(argv, source, env, what, report)
    report(f"{what}: built in {_duration(seconds)} ({cpu:.0f} CPU s)")
    shutil.rmtree(source)
    if target == host:
        version = tool_version(binary, name)
        if version != tool.version:
            raise ToolError(f"{what}: the build reports version {version}; nothing was installed")
    _write_marker(directory, tool, target, seconds=seconds, cpu=cpu, optimised=optimise)
    return binary


def _write_marker(
    directory: Path,
    tool: pins.GoTool,
    target: tuple[str, str],
    *,
    seconds: float,
    cpu: float,
    optimised: bool,
) -> None:
    """The marker file that makes ``directory`` count as a complete build of ``tool``."""
    marker = {
        "tool": tool.name,
        "version": tool.version,
        "package": tool.package,
        "goos": target[0],
        "goarch": target[1],
        "key": pins.cache_key(tool.name, *target),
        "build_seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "optimised": optimised,
    }
    (directory / pins.MARKER_NAME).write_text(
        json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _go_build(
    argv: list[str], cwd: Path, env: dict[str, str], what: str, report: Progress
) -> tuple[float, float]:
    """Run ``go build -v``: its package lines go to a log, a terminal sees a live count."""

    log = cwd / "build.log"
    live = sys.stderr.isatty()

    def tick(seconds: float) -> None:
        if live:
            with contextlib.suppress(OSError):
                count = log.read_bytes().count(b"\n")
                sys.stderr.write(f"\r{what}: {count} packages, {_duration(seconds)} ")
                sys.stderr.flush()

    cpu_before = _children_cpu()
    with log.open("wb") as handle:
        try:
            done = process.run(
                argv,
                env=env,
                timeout=GO_BUILD_TIMEOUT_SECONDS,
                cwd=cwd,
                stderr_file=handle,
                tick=tick,
            )
        except process.ProcessTimeout:
            raise ToolError(
                f"{what}: go build did not finish within {GO_BUILD_TIMEOUT_SECONDS:g} s"
            ) from None
        except OSError as error:
            raise ToolError(f"{what}: cannot run go: {error.strerror or error}") from error
        finally:
            if live:
                sys.stderr.write("\r\033[K")
                sys.stderr.flush()
    if done.returncode != 0:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        errors = [line for line in lines if "error" in line.lower() or "verifying" in line]
        detail = (errors or lines or ["no output"])[-1]
        raise ToolError(f"{what}: go build exited {done.returncode}: {detail}")
    return done.seconds, _children_cpu() - cpu_before


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


@contextlib.contextmanager
def _locked(lock_path: Path, report: Progress) -> Iterator[None]:
    try:
        handle = lock_path.open("a")
    except OSError as error:
        raise ToolError(f"cannot lock {lock_path}: {error.strerror or error}") from error
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            report(f"waiting for another install to finish ({lock_path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_leftovers(root: Path) -> None:
    """Delete staging/trash directories of interrupted runs (safe: we hold the lock)."""
    for entry in root.iterdir():
        if entry.name.startswith((_STAGING_PREFIX, _TRASH_PREFIX)):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def _commit(final: Path, staged: Path, staging: Path) -> None:
    """Move a complete tool directory into place, replacing a stale or corrupt one."""
    if final.exists() or final.is_symlink():
        # os.replace cannot overwrite a non-empty directory: move the old one aside first
        # (into the staging directory, so an interruption here is cleaned up next time).
        final.replace(staging / f"{_TRASH_PREFIX}{final.name}")
    staged.replace(final)


def _update_bin_link(root: Path, name: str, dirname: str) -> None:
    """Maintain ``tools/bin/{helm,helmfile}`` for people who want them on PATH.

    The resolver never relies on them; they are swapped atomically (symlink + rename).
    """
    bin_dir = root / "bin"
    bin_dir.mkdir(exist_ok=True)
    target = Path("..") / dirname / name
    link = bin_dir / name
    if link.is_symlink() and link.readlink() == target:
        return
    temporary = bin_dir / f"{_STAGING_PREFIX}{name}-{os.getpid()}"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(target)
    temporary.replace(link)
