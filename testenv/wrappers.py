"""The test wrappers built optimised share one version of every library they have in common.

The Go build cache compiles a package once only when its whole dependency closure and its
compiler flags are the same, so one module at another version splits every package above it.
The plane's wrappers (``testenv/go/*``), OCCM's, Flux's, containerd-check's and etcdctl's are
built optimised, as ``scs-templates tools install`` builds the product's pinned helm and
helmfile. Each test wrapper therefore requires every module it shares with another of them,
or with the product's wrappers, at the newest version any of them requires, except the
modules in :data:`OWN_RELEASES`, which stay as the upstream releases have them. The product's
wrappers are never changed for the tests: they are what ``tools install`` builds.

:func:`align` makes it so (``python -m testenv align``, after a bump of any of them);
tests/unit/test_wrapper_versions.py fails, naming the module and version, until it is done.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from scs_templates._tools.toolchain import pins
from testenv import containerd, etcdctl, flux, occm
from testenv.build import GO_DIR, GO_TIMEOUT, go_binary
from testenv.process import PlaneError, capture

TESTENV = Path(__file__).resolve().parent

#: Every test wrapper built optimised (testenv.build.PLANE_GCFLAGS).
OPTIMISED: tuple[Path, ...] = (
    *sorted(path for path in GO_DIR.iterdir() if (path / "go.mod").is_file()),
    occm.MODULE_DIR,
    *(flux.FLUX_DIR / name for name in sorted(flux.CONTROLLERS)),
    containerd.MODULE_DIR,
    etcdctl.MODULE_DIR,
)
#: The product's wrappers, built optimised by ``tools install``: read, never changed here.
PRODUCT: tuple[Path, ...] = (pins.go_tool("helm").wrapper, pins.go_tool("helmfile").wrapper)

#: Modules whose versions stay the upstream releases' own: what a wrapper exists to build
#: (Kubernetes, etcd, containerd, Flux, helm, OCCM's gophercloud, the OCI registry) and the
#: libraries that move with a Kubernetes minor (``k8s.io``, ``sigs.k8s.io``, CEL).
OWN_RELEASES = (
    "k8s.io/",
    "sigs.k8s.io/",
    "go.etcd.io/",
    "github.com/containerd/",
    "github.com/fluxcd/",
    "helm.sh/",
    "github.com/gophercloud/",
    "github.com/google/go-containerregistry",
    "github.com/google/cel-go",
)

#: ``path version`` of a require line (inside a block or on its own), up to a comment.
REQUIRE = re.compile(r"^(?:require\s+)?\t?([^\s()]+)\s+(v\S+)(?:\s*//.*)?$", re.MULTILINE)
#: The module of a replace line (inside a block or on its own).
REPLACE = re.compile(r"^(?:replace\s+)?\t?([^\s()]+)(?:\s+v\S+)?\s+=>", re.MULTILINE)
#: What ``go get`` says when a module it was asked for pins another one below what a third
#: one requires.
CONFLICT = re.compile(r"requires (\S+)@(\S+), not \S+@\S+")


def requirements(text: str) -> dict[str, str]:
    """The required modules of a go.mod, without the ones a ``replace`` line pins: those
    stay as the upstream release's own ``replace`` lines have them."""
    replaced = set(REPLACE.findall(text))
    return {path: version for path, version in REQUIRE.findall(text) if path not in replaced}


def semver_key(version: str) -> tuple[int, int, int, bool, tuple[tuple[int, int | str], ...]]:
    """A module version's order, Semantic Versioning's precedence as Go's module code has it:
    a release after its pre-releases and pseudo-versions (``v1.36.12`` after
    ``v1.36.12-0.20260120151049-f2248ac996af``, whose timestamps order them among
    themselves); pre-release identifiers compared one by one, numeric ones as numbers and
    before alphanumeric ones (``-rc.9`` before ``-rc.10``)."""
    found = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)(?:-([^+]*))?(?:\+incompatible)?", version)
    if found is None:
        raise ValueError(f"not a module version: {version}")
    major, minor, patch, pre = found.groups()
    parts = pre.split(".") if pre else []
    identifiers = tuple((0, int(part)) if part.isdigit() else (1, part) for part in parts)
    return int(major), int(minor), int(patch), pre is None, identifiers


def by_module(wrappers: tuple[Path, ...]) -> dict[str, dict[Path, str]]:
    """module -> {wrapper: version} over the requirements of ``wrappers``."""
    found: dict[str, dict[Path, str]] = defaultdict(dict)
    for wrapper in wrappers:
        for path, version in requirements((wrapper / "go.mod").read_text()).items():
            found[path][wrapper] = version
    return found


def behind() -> dict[Path, dict[str, str]]:
    """test wrapper -> {module: the newest version} of each shared module it requires older."""
    found: dict[Path, dict[str, str]] = defaultdict(dict)
    for path, by in sorted(by_module(OPTIMISED + PRODUCT).items()):
        if path.startswith(OWN_RELEASES) or len(by) < 2:
            continue
        newest = max(by.values(), key=semver_key)
        for wrapper, version in by.items():
            if version != newest and wrapper not in PRODUCT:
                found[wrapper][path] = newest
    return dict(found)


def align(log: Callable[[str], None] = print, rounds: int = 8) -> list[Path]:
    """Bring every test wrapper to the newest version of each module it shares (``go get``,
    then ``go mod tidy``), until none is behind; return the wrappers changed. A bump can
    raise further modules, hence the rounds."""
    go = go_binary()
    if go is None:
        raise PlaneError("the Go toolchain (`go`) is not installed: cannot align the wrappers")
    changed: set[Path] = set()
    for _ in range(rounds):
        todo = behind()
        if not todo:
            return sorted(changed)
        for wrapper, modules in sorted(todo.items()):
            log(f"testenv: {wrapper.relative_to(TESTENV)}: {len(modules)} modules to the newest")
            _get(go, wrapper, dict(modules))
            changed.add(wrapper)
    raise PlaneError(f"the wrappers are still behind after {rounds} rounds: {behind()}")


def _get(go: str, wrapper: Path, wanted: dict[str, str]) -> None:
    """``go get`` ``wanted``; where one of them would pin a module below what another
    requires, ask for the higher version (or leave that module to ``go``), then tidy.
    ``tidy -e``: CAPO's module requires test dependencies the proxy does not serve."""
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOWORK": "off", "GOTOOLCHAIN": "local"}
    while True:
        argv = [go, "get", *(f"{path}@{version}" for path, version in sorted(wanted.items()))]
        try:
            capture(argv, cwd=wrapper, env=env, timeout=GO_TIMEOUT)
            break
        except PlaneError as error:
            asked = dict(wanted)
            for path, version in CONFLICT.findall(str(error)):
                if path in wanted and semver_key(version) > semver_key(wanted[path]):
                    wanted[path] = version
                else:
                    wanted.pop(path, None)
            if wanted == asked:  # not a conflict this resolves
                raise
    capture([go, "mod", "tidy", "-e"], cwd=wrapper, env=env, timeout=GO_TIMEOUT)
