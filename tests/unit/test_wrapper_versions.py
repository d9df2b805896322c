"""Wrapper modules whose programs are built with the same compiler flags require every module
they share at one version, so that the Go build cache compiles each shared package once
(testenv/wrappers.py says why and how). Two rules:

* **The same Kubernetes minor: every common module.** Flux's three controllers
  (testenv/flux/<name>/go.mod) with the plane's CAPO (testenv/go/capo), after the plane
  298 -> 198 CPU s (testenv/flux.py); OCCM and the Cinder CSI plugin (testenv/occm/go.mod)
  with the plane's Cluster API managers (testenv/go/capi, testenv/go/capd), 195 -> 27 CPU s
  (testenv/occm.py).
* **Every optimised build: every common module but the upstream releases' own**
  (``testenv.wrappers.OWN_RELEASES``), at the newest version any of them or the product's
  pinned helm and helmfile require. With helm compiled first
  (testenv.build.ensure_pinned_helm) the plane's Kubernetes programs reuse ~670 of its
  packages (helm v4.3.2 requires the plane's ``k8s.io/*`` v0.37.2).

When a test fails here: ``python -m testenv align`` (it ``go get``s the versions named).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testenv import occm, wrappers
from testenv.build import GO_DIR
from testenv.flux import CONTROLLERS, FLUX_DIR
from testenv.wrappers import by_module, requirements, semver_key

#: The groups of one Kubernetes minor: wrapper directories built with one set of flags.
GROUPS: dict[str, tuple[Path, ...]] = {
    "Flux's controllers and the plane's CAPO": (
        *(FLUX_DIR / name for name in sorted(CONTROLLERS)),
        GO_DIR / "capo",
    ),
    "OCCM and the plane's Cluster API": (occm.MODULE_DIR, GO_DIR / "capi", GO_DIR / "capd"),
}


def test_the_requirements_reader_reads_blocks_single_lines_and_replaces() -> None:
    text = (
        "module m\n\ngo 1.25.0\n\nrequire a.io/x v1.0.0\n\nrequire (\n\tb.io/y v0.2.0 // indirect\n"
        "\tc.io/z v3.0.0\n\td.io/w v1.0.0\n)\n\nreplace c.io/z => c.io/z v3.0.1\n\n"
        "replace (\n\td.io/w v1.0.0 => ../w\n)\n"
    )
    assert requirements(text) == {"a.io/x": "v1.0.0", "b.io/y": "v0.2.0"}


def test_a_release_sorts_after_its_pseudo_versions() -> None:
    ordered = ["v0.9.10", "v1.36.12-0.20260120151049-f2248ac996af", "v1.36.12", "v1.36.13"]
    assert sorted(reversed(ordered), key=semver_key) == ordered


def test_pre_releases_sort_by_semantic_versioning() -> None:
    """Numeric identifiers as numbers, before alphanumeric ones; fewer identifiers first;
    a pseudo-version after the pre-release it is based on (Go's ``vX.Y.Z-pre.0.stamp-hash``)."""
    ordered = [
        "v2.0.0-alpha",
        "v2.0.0-alpha.1",
        "v2.0.0-alpha.beta",
        "v2.0.0-beta.2",
        "v2.0.0-rc.9",
        "v2.0.0-rc.10",
        "v2.0.0-rc.10.0.20260120151049-f2248ac996af",
        "v2.0.0",
    ]
    assert sorted(reversed(ordered), key=semver_key) == ordered
    assert semver_key("v2.0.0+incompatible") == semver_key("v2.0.0")


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_wrappers_built_alike_share_one_version_of_every_common_module(group: str) -> None:
    modules = by_module(GROUPS[group])
    assert len(modules) > 150, f"the go.mod files of {group} were not read"
    shared = {path for path, by in modules.items() if len(by) > 1}
    assert "k8s.io/client-go" in shared, f"{group} share no Kubernetes library"
    split = {path: by for path, by in modules.items() if len(set(by.values())) > 1}
    assert not split, f"modules at different versions in the wrappers of {group}: {split}"


def test_optimised_wrappers_require_the_newest_version_of_each_library_they_share() -> None:
    assert GO_DIR / "kubernetes" in wrappers.OPTIMISED and len(wrappers.OPTIMISED) == 11
    modules = by_module(wrappers.OPTIMISED + wrappers.PRODUCT)
    assert "golang.org/x/net" in modules and "google.golang.org/grpc" in modules
    behind = {f"{w.parent.name}/{w.name}": m for w, m in wrappers.behind().items()}
    assert not behind, f"run `python -m testenv align`; behind the newest version: {behind}"


def test_a_test_wrapper_behind_the_product_s_helm_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule reads the product's wrappers but never asks to change them: a test wrapper
    older than helm's wrapper is behind; helm's wrapper older than a test wrapper is not."""
    helm, capi = tmp_path / "helm", tmp_path / "capi"
    for wrapper, net, grpc in ((helm, "v0.62.0", "v1.80.0"), (capi, "v0.57.0", "v1.83.1")):
        wrapper.mkdir()
        text = f"module m\n\nrequire (\n\tgolang.org/x/net {net}\n"
        text += f"\tgoogle.golang.org/grpc {grpc}\n\tk8s.io/api v0.3{len(net)}.0\n)\n"
        (wrapper / "go.mod").write_text(text)
    monkeypatch.setattr(wrappers, "OPTIMISED", (capi,))
    monkeypatch.setattr(wrappers, "PRODUCT", (helm,))
    assert wrappers.behind() == {capi: {"golang.org/x/net": "v0.62.0"}}
