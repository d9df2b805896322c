"""Find helm and helmfile, and tell which version each one is.

Order, per tool: an explicit argument (library API) or environment variable, then ``PATH``
when the version found there is supported, then the project's tools cache. An explicit
choice that is missing or unsupported is an error, never silently replaced by another binary:
a user who named a binary must get that binary or be told why not.

Version checks start a process (~65 ms each), and rendering resolves tools often, so results
are cached in-process keyed by path, mtime and size: replacing a binary invalidates its entry.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from scs_templates._core import process, version_numbers
from scs_templates._core.cachedir import ENV_CACHE_DIR as ENV_CACHE_DIR  # re-exported
from scs_templates._core.cachedir import cache_dir
from scs_templates._core.errors import ToolError, ToolNotFoundError
from scs_templates._core.records import record
from scs_templates._core.timeouts import tool_timeout
from scs_templates._core.version_numbers import Version
from scs_templates._tools.toolchain import pins

ENV_HELM = "SCS_TEMPLATES_HELM"
ENV_HELMFILE = "SCS_TEMPLATES_HELMFILE"

SOURCE_ARGUMENT = "argument"
SOURCE_PATH = "PATH"
SOURCE_CACHE = "cache"

#: A version check that takes longer than this is treated as a broken binary.
VERSION_TIMEOUT_SECONDS = 30.0

_HELMFILE_VERSION_LINE = re.compile(r"^\s*Version\s+v?(\d+\.\d+\.\d+)", re.MULTILINE)

_INSTALL_HINT = "run `scs-templates tools install`"


@record
class Tool:
    """A resolved binary: what it is, where it is and why that one was chosen.

    ``source`` records the reason (``argument``, the environment variable's name, ``PATH`` or
    ``cache``) so ``scs-templates tools status`` and error messages can explain the choice.
    """

    name: str
    path: Path
    version: str
    major: int
    source: str

    @property
    def version_info(self) -> tuple[int, int, int]:
        """The version as a comparable tuple, e.g. ``(3, 15, 3)``."""
        return tool_version_numbers(self.version)


def tool_version_numbers(text: str) -> Version:
    """``"v4.3.2+g3bb50bb"`` or ``"1.8.0"`` -> ``(major, minor, patch)``; ToolError if none."""
    found = version_numbers.first_in(text)
    if found is None:
        raise ToolError(f"cannot read a version from {text.strip()[:80]!r}")
    return found


def is_supported(name: str, version: str) -> bool:
    """helm 4 from 4.1.4, helmfile 1 from 1.8.0 (:data:`pins.HELM_MINIMUM`,
    :data:`pins.HELMFILE_MINIMUM`): older ones miss security fixes or helm 4 support."""
    numbers = tool_version_numbers(version)
    if name == "helm":
        return numbers[0] == 4 and numbers >= pins.HELM_MINIMUM
    if name == "helmfile":
        return numbers[0] == 1 and numbers >= pins.HELMFILE_MINIMUM
    raise ValueError(f"unknown tool {name!r}")


def requirement_text(name: str) -> str:
    """Human wording of :func:`is_supported`, for error messages."""
    if name == "helm":
        return "helm 4, {}.{}.{}+".format(*pins.HELM_MINIMUM)
    return "helmfile 1, {}.{}.{}+".format(*pins.HELMFILE_MINIMUM)


def cache_root() -> Path:
    """The project's cache directory: ``$SCS_TEMPLATES_CACHE_DIR``, XDG, or ``~/.cache``
    (:func:`scs_templates._core.cachedir.cache_dir`)."""
    return Path(cache_dir())


def tools_dir(cache_dir: Path | None = None) -> Path:
    """Where ``scs-templates tools install`` puts binaries: ``<cache>/tools``."""
    return (cache_dir if cache_dir is not None else cache_root()) / "tools"


def hermetic_env(helm_home: Path) -> dict[str, str]:
    """Environment for running helm/helmfile without touching the user's helm state.

    helm keeps repositories, plugins and registry logins under $HOME; pointing its three
    homes at ``helm_home`` keeps version checks (and anything else) from reading or writing
    them, and stops helmfile from calling the network to announce upgrades.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("HELM_")}
    env.update(
        HELM_CACHE_HOME=str(helm_home / "cache"),
        HELM_CONFIG_HOME=str(helm_home / "config"),
        HELM_DATA_HOME=str(helm_home / "data"),
        HELMFILE_UPGRADE_NOTICE_DISABLED="1",
    )
    return env


def _kind_of(path: Path) -> str:
    """Guess helm vs helmfile from the file name (``helmfile*`` is helmfile, else helm)."""
    return "helmfile" if path.name.startswith("helmfile") else "helm"


def tool_version(path: str | Path, name: str | None = None) -> str:
    """Run the binary's version command and return its version, e.g. ``"4.3.2"``.

    ``name`` is ``helm`` or ``helmfile``; by default it is guessed from the file name. The
    result is cached per (path, mtime, size), so repeated lookups cost a ``stat`` only.
    """
    binary = Path(path)
    try:
        stat = binary.stat()
    except OSError as error:
        raise ToolError(f"{binary}: {error.strerror or error}") from error
    kind = name or _kind_of(binary)
    key = f"{kind}:{binary.resolve()}:{stat.st_ino}:{stat.st_mtime_ns}:{stat.st_size}"
    remembered = _disk_versions()
    known = remembered.get(key)
    if isinstance(known, str) and known:
        if _fading(remembered, key):  # used again: keep it among the recently used
            _remember_version(key, known)
        return known
    version = _cached_version(str(binary), stat.st_mtime_ns, stat.st_size, kind)
    _remember_version(key, version)
    return version


def clear_version_cache() -> None:
    """Forget cached version checks (tests rewrite binaries in place)."""
    _cached_version.cache_clear()
    _disk_versions.cache_clear()


# Every CLI call would otherwise run `helm version` (~40 ms, as much as a whole render of a
# small chart). The answer for one file (inode, mtime, size) never changes, so it is kept on
# disk; a rewritten or replaced binary has another key. A lost update costs one rerun.
_VERSIONS_FILE = ".versions.json"
#: Entries kept in the file, least recently used first (JSON keeps the order of the keys).
#: A hit does not write the file while its entry is in the newer half, so the usual start (one
#: helm, used again and again) stays a ``stat``; an entry in the older half is moved to the end
#: when used, so a binary in use is never pushed out by up to ``_KEEP_VERSIONS // 2`` others.
_KEEP_VERSIONS = 64


def _versions_path() -> Path:
    return tools_dir() / _VERSIONS_FILE


@functools.lru_cache(maxsize=1)
def _disk_versions() -> dict[str, object]:

    try:
        data = json.loads(_versions_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _remember_version(key: str, version: str) -> None:
    known = dict(_disk_versions())
    known.pop(key, None)
    known[key] = version  # the most recently used: last
    if len(known) > _KEEP_VERSIONS:  # the least recently used entries go: keep the file small
        known = dict(list(known.items())[-_KEEP_VERSIONS:])
    path = _versions_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".versions-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(known, handle, indent=1)  # in order of use, not sorted
        Path(temp).replace(path)
    except OSError:
        return  # a read-only cache only costs the version check next time
    _disk_versions.cache_clear()


def _fading(remembered: dict[str, object], key: str) -> bool:
    """Whether ``key`` sits in the older half of the remembered entries (see above)."""
    keys = list(remembered)
    return keys.index(key) < len(keys) - _KEEP_VERSIONS // 2


@functools.lru_cache(maxsize=64)
def _cached_version(path: str, mtime_ns: int, size: int, kind: str) -> str:
    del mtime_ns, size  # only part of the cache key
    if kind == "helm":
        # `--template`: `--client` is gone in helm 4.
        argv = [path, "version", "--template", "{{.Version}}"]
    elif kind == "helmfile":
        argv = [path, "version"]
    else:
        raise ValueError(f"unknown tool {kind!r}")

    limit = tool_timeout(VERSION_TIMEOUT_SECONDS)

    with tempfile.TemporaryDirectory(prefix="scs-templates-helm-") as helm_home:
        try:  # process.run: a timeout ends the tool's whole process group
            env = hermetic_env(Path(helm_home))
            env.pop("KUBECONFIG", None)  # a version query never talks to a cluster (#41)
            result = process.run(argv, env=env, timeout=limit)
        except process.ProcessTimeout:
            raise ToolError(f"{path}: `{kind} version` did not finish within {limit:g} s") from None
        except OSError as error:
            raise ToolError(f"{path}: cannot run: {error.strerror or error}") from error
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        detail = lines[-1] if lines else "no output"
        raise ToolError(f"{path}: `{kind} version` exited {result.returncode}: {detail}")
    output = result.stdout
    if kind == "helmfile":
        line = _HELMFILE_VERSION_LINE.search(output)
        if line:
            return line.group(1)
    major, minor, patch = tool_version_numbers(output)
    return f"{major}.{minor}.{patch}"


def _executable(candidate: str | Path) -> Path | None:
    """An executable regular file for ``candidate`` (a path, or a bare name looked up on PATH)."""
    text = str(candidate)
    if os.sep not in text:
        found = shutil.which(text)
        return Path(found) if found else None
    path = Path(text).expanduser()
    if path.is_file() and os.access(path, os.X_OK):
        return path
    return None


def _make_tool(name: str, path: Path, source: str) -> Tool:
    version = tool_version(path, name)
    return Tool(
        name=name, path=path, version=version, major=tool_version_numbers(version)[0], source=source
    )


def _explicit_tool(name: str, candidate: str | Path, source: str) -> Tool:
    """Resolve a binary the user named; anything wrong with it is an error."""
    if source == SOURCE_ARGUMENT:
        where, hint = str(candidate), "pass another binary"
    else:
        where, hint = f"{source}={candidate}", f"fix or unset {source}"
    path = _executable(candidate)
    if path is None:
        raise ToolNotFoundError(f"{where}: no such executable file ({hint})")
    try:
        tool = _make_tool(name, path, source)
    except ToolError as error:
        raise ToolNotFoundError(f"{where}: not a working {name}: {error}") from error
    if not is_supported(name, tool.version):
        raise ToolNotFoundError(
            f"{where}: {name} {tool.version} is not supported "
            f"(need {requirement_text(name)}; {hint})"
        )
    return tool


def cached_binary(name: str, cache_dir: Path | None = None) -> Path:
    """Where ``scs-templates tools install`` puts the pinned ``name`` for this machine."""
    return tools_dir(cache_dir) / pins.dirname(name) / name


def _find(name: str, explicit: str | Path | None, env_var: str, cache_dir: Path | None) -> Tool:
    if explicit is not None and str(explicit) != "":
        return _explicit_tool(name, explicit, SOURCE_ARGUMENT)
    from_env = os.environ.get(env_var)
    if from_env:
        return _explicit_tool(name, from_env, env_var)

    skipped: list[str] = []
    found = shutil.which(name)
    if found:
        try:
            tool = _make_tool(name, Path(found), SOURCE_PATH)
        except ToolError as error:
            skipped.append(f"{found} is broken: {error}")
        else:
            if is_supported(name, tool.version):
                return tool
            skipped.append(f"{found} is {tool.version}, need {requirement_text(name)}")

    cached = cached_binary(name, cache_dir)
    if cached.is_file():
        try:
            return _make_tool(name, cached, SOURCE_CACHE)
        except ToolError as error:
            raise ToolNotFoundError(
                f"{name} in the tools cache is broken ({error}): remove "
                f"{cached.parent} and {_INSTALL_HINT}"
            ) from error
    note = f" (skipped on PATH: {'; '.join(skipped)})" if skipped else ""
    hint = _INSTALL_HINT if name == "helm" else _INSTALL_HINT.replace("install", "install --all")
    raise ToolNotFoundError(f"{name} not found: {hint} or set {env_var}{note}")


def find_helm(explicit: str | Path | None = None, *, cache_dir: Path | None = None) -> Tool:
    """Find the helm to run: the argument, ``SCS_TEMPLATES_HELM``, a supported helm on PATH,
    then the pinned build in the tools cache (``cache_dir`` overrides the cache root, as
    ``SCS_TEMPLATES_CACHE_DIR`` does). Never builds: :func:`ensure_tool` does."""
    return _find("helm", explicit, ENV_HELM, cache_dir)


def find_helmfile(explicit: str | Path | None = None, *, cache_dir: Path | None = None) -> Tool:
    """Find helmfile (argument, ``SCS_TEMPLATES_HELMFILE``, PATH, then the tools cache)."""
    return _find("helmfile", explicit, ENV_HELMFILE, cache_dir)


#: The environment variable that names each tool explicitly.
ENV_VARS = {"helm": ENV_HELM, "helmfile": ENV_HELMFILE}
