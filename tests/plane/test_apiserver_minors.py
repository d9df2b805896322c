"""Every API-server flag and file we render exists in EACH supported minor's kube-apiserver.

A real kube-apiserver of each minor loads every rendered flag and file
(tests/plane/test_plane_cluster_features.py, a binary per minor built and cached; docs/testing.md,
"Every supported minor"). This cheaper check reads the upstream SOURCE of each minor, fetched
from the Go module proxy (k8s.io/kubernetes, k8s.io/apiserver, k8s.io/pod-security-admission
at the newest patch the proxy serves, testenv.build.KUBEADM_RELEASES), and names what is
missing where the binary would only refuse to start:

* each rendered ``--flag`` is registered (``fs.XxxVar(&..., "flag", ...)``) in the
  kube-apiserver option packages of that minor, and not marked deprecated;
* each admission plugin we enable is defined (``PluginName = "..."``);
* each file's ``apiVersion``/``kind`` (also the plugin configurations nested in the
  AdmissionConfiguration) is a registered type of that minor's API package, and every key
  of the file is a JSON field name of that package (a field added in a later minor is
  caught: strict decoding would refuse it);
* the feature gate ``--authentication-config`` depends on is on by default in that minor.

A static check: it proves names and versions, not the loaders' semantic validation (that
runs in the real binaries). Settings: every supported minor's tested patch, with every
API-server feature on (OIDC with two issuers, audit, encryption of Secrets and ConfigMaps).
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scs_templates._render import encryption
from scs_templates._versions.kubernetes import TESTED_PATCHES
from tests.support import REPO, skip_or_fail
from tests.support.minors import EXAMPLE, render_all_features, supported_minors

#: kube-apiserver's option packages: where its flags are registered.
FLAG_DIRS = (
    ("apiserver", "pkg/server/options"),
    ("kubernetes", "pkg/kubeapiserver/options"),
    ("kubernetes", "pkg/controlplane/apiserver/options"),
    ("kubernetes", "cmd/kube-apiserver/app/options"),
)

#: API group of a configuration file -> (module, package directory of its versions).
GROUP_DIRS = {
    "apiserver.config.k8s.io": ("apiserver", "pkg/apis/apiserver"),
    "audit.k8s.io": ("apiserver", "pkg/apis/audit"),
    "pod-security.admission.config.k8s.io": ("pod-security-admission", "admission/api"),
    "eventratelimit.admission.k8s.io": (
        "kubernetes",
        "plugin/pkg/admission/eventratelimit/apis/eventratelimit",
    ),
}

#: Keys whose values are free-form (no JSON field names below them).
FREE_FORM = frozenset({"metadata"})


def _release(minor: tuple[int, int]) -> str:
    from testenv import build

    return build.kubeadm_release(f"{minor[0]}.{minor[1]}")


@functools.cache
def _module_dirs(release: str) -> dict[str, Path]:
    """module short name -> its source directory in the Go module cache (downloaded from the
    Go module proxy when missing)."""
    from testenv import PlaneError, build
    from testenv.process import capture

    go = build.go_binary()
    if go is None:
        skip_or_fail("the Go toolchain (`go`) fetches each minor's source from the module proxy")
        raise AssertionError  # unreachable
    staging = "v0." + release.split(".", 1)[1]
    wanted = {
        "kubernetes": f"k8s.io/kubernetes@{release}",
        "apiserver": f"k8s.io/apiserver@{staging}",
        "pod-security-admission": f"k8s.io/pod-security-admission@{staging}",
    }
    env = build._go_env() | {"GOFLAGS": "-mod=mod -buildvcs=false"}
    dirs = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, module in wanted.items():
            try:
                out = capture(
                    [go, "mod", "download", "-json", module],
                    cwd=Path(scratch),
                    env=env,
                    timeout=900.0,
                )
            except PlaneError as error:
                pytest.fail(f"cannot fetch {module} from the Go module proxy: {error}")
            dirs[name] = Path(json.loads(out)["Dir"])
    return dirs


def _go_files(directory: Path) -> Iterator[Path]:
    return (p for p in sorted(directory.glob("*.go")) if not p.name.endswith("_test.go"))


@functools.cache
def _registered_flags(release: str) -> tuple[frozenset[str], frozenset[str]]:
    """(registered, deprecated) flag names of kube-apiserver ``release``."""
    dirs = _module_dirs(release)
    registered: set[str] = set()
    deprecated: set[str] = set()
    for module, sub in FLAG_DIRS:
        for path in _go_files(dirs[module] / sub):
            text = path.read_text()
            registered |= set(re.findall(r'\bfs\.\w+\(\s*&?[\w.\[\]]+,\s*"([a-z0-9-]+)"', text))
            deprecated |= set(re.findall(r'\bfs\.MarkDeprecated\(\s*"([a-z0-9-]+)"', text))
    return frozenset(registered), frozenset(deprecated)


@functools.cache
def _admission_plugins(release: str) -> frozenset[str]:
    root = _module_dirs(release)["kubernetes"] / "plugin/pkg/admission"
    names: set[str] = set()
    for path in sorted(root.glob("*/*.go")):
        names |= set(re.findall(r'PluginName\s*=\s*"(\w+)"', path.read_text()))
    return frozenset(names)


@functools.cache
def _api_package(release: str, api_version: str) -> tuple[str, frozenset[str]] | None:
    """(Go source of the version package, its JSON field names), None without the package."""
    group, _, version = api_version.rpartition("/")
    module, sub = GROUP_DIRS[group]
    directory = _module_dirs(release)[module] / sub / version
    if not directory.is_dir():
        return None
    text = "\n".join(p.read_text() for p in _go_files(directory))
    fields = frozenset(re.findall(r'json:"([^,"]+)', text))
    return text, fields


def _keys(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, key) of every mapping key below ``value``, not descending into free-form
    values or into nested documents (those with their own apiVersion)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path, key
            if key in FREE_FORM or (isinstance(item, dict) and "apiVersion" in item):
                continue
            yield from _keys(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _keys(item, f"{path}[{index}]")


def _documents(doc: Any) -> Iterator[dict[str, Any]]:
    """A document and every nested one (AdmissionConfiguration plugin configurations)."""
    if isinstance(doc, dict):
        if "apiVersion" in doc and "kind" in doc:
            yield doc
        for value in doc.values():
            yield from _documents(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from _documents(item)


def file_problems(release: str, name: str, doc: dict[str, Any]) -> list[str]:
    """Why kube-apiserver ``release`` could not decode ``doc`` (a rendered file), or []."""
    found = []
    for part in _documents(doc):
        api_version, kind = part["apiVersion"], part["kind"]
        package = _api_package(release, api_version)
        if package is None:
            found.append(f"{name}: {api_version} does not exist in {release}")
            continue
        source, fields = package
        if not re.search(rf"&{kind}\{{\}}", source):
            found.append(f"{name}: {api_version} has no kind {kind} in {release}")
            continue
        own = {k: v for k, v in part.items() if k not in ("apiVersion", "kind")}
        for where, key in _keys(own):
            if key not in fields:
                found.append(f"{name}: {kind}{where}.{key} is not a field in {release}")
    return found


def flag_problems(release: str, flags: dict[str, str]) -> list[str]:
    registered, deprecated = _registered_flags(release)
    found = [f"--{flag} is not a flag of {release}" for flag in flags if flag not in registered]
    found += [f"--{flag} is deprecated in {release}" for flag in flags if flag in deprecated]
    plugins = _admission_plugins(release)
    for plugin in flags.get("enable-admission-plugins", "").split(","):
        if plugin and plugin not in plugins:
            found.append(f"admission plugin {plugin} does not exist in {release}")
    return found


def gate_problems(release: str, gate: str, minor: tuple[int, int]) -> list[str]:
    """The feature gate's default in ``minor`` (a gate removed after GA is always on)."""
    path = _module_dirs(release)["apiserver"] / "pkg/features/kube_features.go"
    match = re.search(rf"\n\t{gate}: \{{(.*?)\n\t\}},", path.read_text(), re.DOTALL)
    if match is None:
        return []
    specs = re.findall(r'MustParse\("1\.(\d+)"\), Default: (true|false)', match[1])
    current = [default for since, default in specs if int(since) <= minor[1]]
    if not current or current[-1] != "true":
        return [f"feature gate {gate} is off by default in {release}"]
    return []


def _rendered(minor: tuple[int, int]) -> tuple[dict[str, str], dict[str, Any]]:
    """(API server flags, rendered files by flag) of the all-features example at ``minor``."""
    settings, result = render_all_features(minor)
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    spec = kcp["spec"]["kubeadmConfigSpec"]
    flags = {a["name"]: a["value"] for a in spec["clusterConfiguration"]["apiServer"]["extraArgs"]}
    files = {f["path"]: f for f in spec["files"]}
    resources = list(settings.spec.security.encryption_at_rest.resources)
    docs: dict[str, Any] = {}
    for flag, value in flags.items():
        if value in files:
            entry = files[value]
            text = (
                encryption.config_text([encryption.new_key()], resources)
                if "contentFrom" in entry
                else entry["content"]
            )
            docs[flag] = yaml.safe_load(text)
    return flags, docs


@pytest.mark.parametrize("minor", supported_minors(), ids=lambda m: f"{m[0]}.{m[1]}")
def test_the_all_features_example_is_crd_valid_and_deterministic_at_the_minor(
    minor: tuple[int, int], tmp_path: Path
) -> None:
    """Issue #16's "done when" at every supported minor: the settings file using every
    feature validates (render_all_features validates it) and renders objects that pass the
    upstream CRDs strictly, byte-identical in a fresh process with another hash seed (the
    CLI, as a pipeline would run it)."""
    import os
    import subprocess
    import sys

    from tests.support import crd_validation

    reason = crd_validation.skip_or_fail_reason()
    if reason:
        skip_or_fail(reason)
    _settings, result = render_all_features(minor)
    assert crd_validation.validate_all(result.objects) == []
    data = yaml.safe_load(EXAMPLE.read_text())
    data["spec"]["kubernetes"] = {"version": f"{minor[0]}.{minor[1]}.{TESTED_PATCHES[minor]}"}
    settings_file = tmp_path / "all-features.yaml"
    settings_file.write_text(yaml.safe_dump(data))
    code = "from scs_templates._cli.main import run; run()"
    done = subprocess.run(
        [sys.executable, "-c", code, "render", str(settings_file)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=os.environ | {"PYTHONHASHSEED": str(minor[1])},
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == result.manifests


@pytest.mark.parametrize("minor", supported_minors(), ids=lambda m: f"{m[0]}.{m[1]}")
def test_every_rendered_flag_and_file_exists_in_the_minor(minor: tuple[int, int]) -> None:
    release = _release(minor)
    flags, docs = _rendered(minor)
    assert set(docs) == {
        "admission-control-config-file",
        "audit-policy-file",
        "authentication-config",
        "encryption-provider-config",
    }, "every API-server feature on"
    problems = flag_problems(release, flags)
    for flag, doc in docs.items():
        problems += file_problems(release, flag, doc)
    problems += gate_problems(release, "StructuredAuthenticationConfiguration", minor)
    assert not problems, "\n".join(problems)


def test_the_check_finds_what_an_older_minor_lacks() -> None:
    """It can fail: AuthenticationConfiguration v1 (GA in 1.34) is refused for 1.33, a field
    of a later minor and an unknown flag or plugin are found."""
    release = _release((1, 33))
    v1 = {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthenticationConfiguration"}
    assert file_problems(release, "authentication-config", v1) == [
        "authentication-config: apiserver.config.k8s.io/v1 has no kind "
        f"AuthenticationConfiguration in {release}"
    ]
    policy = {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"levell": "None"}]}
    assert file_problems(release, "audit-policy-file", policy) == [
        f"audit-policy-file: Policy.rules[0].levell is not a field in {release}"
    ]
    assert flag_problems(release, {"audit-log-max-age": "1", "enable-admission-plugins": "X"}) == [
        f"--audit-log-max-age is not a flag of {release}",
        f"admission plugin X does not exist in {release}",
    ]
    assert gate_problems(release, "StructuredAuthenticationConfiguration", (1, 29)) == [
        f"feature gate StructuredAuthenticationConfiguration is off by default in {release}"
    ]
