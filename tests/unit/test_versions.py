"""The versions table: its rules, its consumers and its docs, in pure Python.

The service defaults are checked against the REAL packaged charts in ../shared/charts (read,
not run). The table's reproduction from the Cluster API and CAPO sources on the Go module proxy
is tests/plane/test_versions_upstream.py; what renders from it,
tests/render/test_versions_render.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scs_templates._cli.main import main
from scs_templates._cli.versions_report import BEGIN, END, markdown, render_doc
from scs_templates._core import version_numbers
from scs_templates._maintain import update_versions as maintainer
from scs_templates._services.catalogue import CATALOGUE, default_version, service_info
from scs_templates._services.releases import service_releases
from scs_templates._settings.validate import parse_settings_text
from scs_templates._versions import parse_table
from scs_templates._versions.kubernetes import (
    DEFAULT_VERSION,
    TESTED_PATCHES,
    parse_version,
    resolve_version,
    support_warning,
)
from scs_templates._versions.upstream import UpdateError
from tests.support import REPO, versions
from tests.support.versions import INPUTS, RAW, TABLE_RELEASES, VERSIONS, settings_text

# --------------------------------------------------------------------------- table rules


def test_minors_are_the_cluster_api_workload_minors_with_a_patch_each() -> None:
    assert tuple(m.minor for m in VERSIONS.minors) == VERSIONS.workload_minors
    assert set(VERSIONS.management_minors) <= set(VERSIONS.workload_minors)
    proxy = maintainer.newest_patches(RAW["sources"]["k8s-tags"]["versions"])
    for release in VERSIONS.minors:
        # the newest patch any recorded release list knows, and the source says which
        from_kind = max((i.patch for i in release.kind_images), default=-1)
        assert release.patch == max(proxy.get(release.minor, -1), from_kind), release.name
        expected = "k8s-tags" if proxy.get(release.minor, -1) >= from_kind else "kind-mapper"
        assert release.patch_source == expected, release.name


def test_new_clusters_default_to_the_newest_minor_upstream_still_supports() -> None:
    default = VERSIONS.default_minor
    assert f"{default.name}.x" == DEFAULT_VERSION
    assert not VERSIONS.end_of_life_reached(default)
    assert default.minor == max(
        m.minor for m in VERSIONS.minors if not VERSIONS.end_of_life_reached(m)
    )
    settings = parse_settings_text(settings_text("openstack", None)).settings
    assert settings.spec.kubernetes.version == DEFAULT_VERSION
    assert str(parse_version(DEFAULT_VERSION)) == default.patch_version


def test_support_status_follows_the_end_of_life_dates_of_the_table_date() -> None:
    # 1.34's upstream end of life (2026-10-27) is before the table's date (2026-12-01)
    release = VERSIONS.minor((1, 34))
    assert release is not None and release.end_of_life == "2026-10-27"
    assert VERSIONS.read_on >= "2026-12-01"
    assert VERSIONS.status(release) == "end of life"
    # a minor without a known date is out of support once a NEWER minor is
    unknown = VERSIONS.minor((1, 32))
    assert unknown is not None and unknown.end_of_life is None
    assert VERSIONS.status(unknown) == "end of life"
    changed = json.loads(json.dumps(RAW))
    changed["readOn"] = "2026-01-01"
    earlier = parse_table(changed)
    assert earlier.status(earlier.minor((1, 34))) == "supported"  # type: ignore[arg-type]
    assert earlier.status(earlier.minor((1, 32))) == "supported"  # type: ignore[arg-type]


def test_old_minors_are_accepted_with_a_warning_and_supported_ones_without() -> None:
    warning = support_warning("1.34.x")
    assert warning is not None
    assert "out of upstream support since 2026-10-27" in warning
    assert "upgrade to 1.35.x next" in warning
    assert support_warning("1.37.x") is None
    assert support_warning("1.36.2") is None
    # validate: exit 0, the warning names the field
    settings = parse_settings_text(settings_text("openstack", "1.33.x"))
    messages = [w.message for w in settings.warnings]
    assert any("Kubernetes 1.33 is out of upstream support" in m for m in messages), messages


def test_validate_prints_the_support_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(settings_text("openstack", "1.34.x"))
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err
    assert "warning: spec.kubernetes.version: Kubernetes 1.34 is out of upstream support" in err


# --------------------------------------------------------------------------- Docker images


def test_every_kind_image_is_pinned_by_digest() -> None:
    for release in VERSIONS.minors:
        assert release.kind_images, f"no published kind image for {release.name}"
        for image in release.kind_images:
            repository, _, rest = image.image.partition(":")
            tag, _, digest = rest.partition("@")
            assert repository == "kindest/node"
            assert tag == image.version and tag.startswith(f"v{release.name}.")
            assert digest.startswith("sha256:") and len(digest) == len("sha256:") + 64


def test_a_patch_with_a_published_image_runs_exactly_that_image() -> None:
    resolved = resolve_version("1.36.x", kind_node_images=True)
    release = VERSIONS.minor((1, 36))
    assert release is not None
    assert str(resolved.version) == release.patch_version
    assert resolved.kind_image is not None and resolved.kind_image.version == release.patch_version
    assert resolved.note is None


def test_a_patch_without_a_published_image_falls_back_and_says_so() -> None:
    release = VERSIONS.minor((1, 37))
    assert release is not None and release.kind_image(release.patch) is None
    resolved = resolve_version("1.37.x", kind_node_images=True)
    newest = release.kind_images[0]
    assert str(resolved.version) == newest.version  # the cluster runs what the image holds
    assert resolved.kind_image == newest
    assert resolved.note is not None
    assert f"1.37.x is Kubernetes {release.patch_version}, and no kind node image is " in (
        resolved.note
    )
    assert f"the cluster's kind nodes run {newest.version}" in resolved.note
    # OpenStack is not affected: the table's patch
    assert str(resolve_version("1.37.x").version) == release.patch_version
    # and validate says so
    settings = parse_settings_text(settings_text("docker", "1.37.x"))
    assert any("no kind node image is published" in w.message for w in settings.warnings)


def test_docker_values_and_manifests_use_the_pinned_image() -> None:
    from scs_templates._render.values import build_values

    settings = parse_settings_text(settings_text("docker", "1.37.x")).settings
    values = build_values(settings)
    newest = VERSIONS.minor((1, 37)).kind_images[0]  # type: ignore[union-attr]
    assert values["kubernetes"]["version"] == newest.version
    assert values["controlPlane"]["image"] == newest.image
    assert all(w["image"] == newest.image for w in values["workers"])


# --------------------------------------------------------------------------- service charts


#: The releases with a row of their own (the others take their ``version_of``'s version).
def test_every_catalogue_release_has_a_default_for_every_minor() -> None:
    assert set(VERSIONS.services) == {info.release for info in TABLE_RELEASES}
    for info in CATALOGUE:
        if info.version_of is not None:  # Calico's CRD chart: the operator chart's version
            for release in VERSIONS.minors:
                assert default_version(info, release.minor) == VERSIONS.service_version(
                    info.version_of, release.minor
                )
            continue
        if info.packaged:  # a chart of ours: its Chart.yaml version on every minor
            assert {default_version(info, r.minor) for r in VERSIONS.minors} == {info.version}
            continue
        entry = VERSIONS.services[info.release]
        assert entry.chart == info.chart
        assert set(entry.by_minor) == {m.name for m in VERSIONS.minors}
        assert info.version == entry.by_minor[VERSIONS.default_minor.name]


def test_cloud_provider_charts_follow_the_kubernetes_minor() -> None:
    occm = service_info("openstack-cloud-controller-manager")
    csi = service_info("openstack-cinder-csi")
    for release in VERSIONS.minors:
        for info in (occm, csi):
            version = default_version(info, release.minor)
            chart_minor = int(version.split(".")[1])
            note = VERSIONS.services[info.release].notes.get(release.name, "")
            if chart_minor in (release.minor[1], release.minor[1] - 1):
                assert "outside" not in note
                assert (chart_minor == release.minor[1]) == (note == ""), (release.name, note)
            else:
                assert "outside the Kubernetes version skew policy" in note, release.name


def test_service_releases_take_the_default_of_the_clusters_minor() -> None:
    for version in ("1.34.x", "1.37.x"):
        settings = parse_settings_text(settings_text("openstack", version)).settings
        minor = parse_version(version).minor_key
        releases = {r.name: r for r in service_releases(settings)}
        occm = releases["openstack-cloud-controller-manager"]
        assert occm.version == VERSIONS.service_version(occm.name, minor)
        assert releases["cilium"].version == VERSIONS.service_version("cilium", minor)
    # the two minors really differ for the cloud controller manager
    assert VERSIONS.service_version(
        "openstack-cloud-controller-manager", (1, 34)
    ) != VERSIONS.service_version("openstack-cloud-controller-manager", (1, 37))


def test_a_cloud_provider_chart_outside_the_skew_policy_is_a_warning() -> None:
    outside = [
        m
        for m in VERSIONS.minors
        if "outside"
        in VERSIONS.services["openstack-cloud-controller-manager"].notes.get(m.name, "")
    ]
    assert outside, "the table has no compromise to warn about (then drop this test)"
    version = f"{outside[-1].name}.x"
    messages = [
        w.message for w in parse_settings_text(settings_text("openstack", version)).warnings
    ]
    assert any(
        "openstack-cloud-controller-manager chart" in m and "skew policy" in m for m in messages
    ), messages
    # pinned, or on a minor with its own chart: no such warning
    pinned = settings_text("openstack", version) + (
        "  services:\n    cloudControllerManager:\n      version: 2.35.0\n"
        "    cinderCSI:\n      version: 2.35.0\n"
    )
    for text in (pinned, settings_text("openstack", "1.36.x")):
        messages = [w.message for w in parse_settings_text(text).warnings]
        assert not any("skew policy" in m for m in messages), messages


def test_holds_come_from_the_inputs_with_a_reason() -> None:
    for release, hold in INPUTS["holds"].items():
        entry = VERSIONS.services[release]
        assert entry.hold == hold and hold["reason"]
        below = version_numbers.exact(hold["below"])
        assert below is not None
        assert all(version_numbers.exact(v) < below for v in entry.by_minor.values())  # type: ignore[operator]


@pytest.fixture(scope="module")
def chart_packages() -> list[maintainer.ChartPackage]:
    return versions.chart_packages()


def test_service_defaults_are_the_newest_real_releases_that_fit(
    chart_packages: list[maintainer.ChartPackage],
) -> None:
    for info in TABLE_RELEASES:
        entry = VERSIONS.services[info.release]
        real = {p.version for p in chart_packages if p.name == info.chart}
        for release in VERSIONS.minors:
            chosen = entry.by_minor[release.name]
            assert chosen in real, f"{info.chart} {chosen} is not a real packaged release"
            again, _ = maintainer.pick_chart(
                info.chart,
                chart_packages,
                release.minor,
                INPUTS["holds"].get(info.release),
                INPUTS["support"].get(info.release, []),
            )
            assert chosen == again, (info.release, release.name)


def test_occm_and_cinder_csi_charts_of_kubernetes_1_34_and_1_35_follow_the_skew_policy(
    chart_packages: list[maintainer.ChartPackage],
) -> None:
    """Issue 40, defect 10: Kubernetes 1.34 and 1.35 got OCCM/Cinder CSI 2.33.1 (a minor
    the version skew policy does not allow) although the real 2.34 and 2.35 charts exist;
    the chart whose minor is the cluster's is the default, its appVersion that minor."""
    for info in (
        service_info("openstack-cloud-controller-manager"),
        service_info("openstack-cinder-csi"),
    ):
        for minor in ((1, 34), (1, 35)):
            version = default_version(info, minor)
            assert version.split(".")[:2] == ["2", str(minor[1])], (info.release, version)
            same_line = [
                p.version
                for p in chart_packages
                if p.name == info.chart and p.version.startswith(f"2.{minor[1]}.")
            ]
            assert version == max(same_line, key=version_numbers.exact), (info.release, version)
            assert f"{minor[0]}.{minor[1]}" not in VERSIONS.services[info.release].notes


def test_cilium_1_20_and_calico_3_32_are_the_defaults_of_the_kubernetes_minors_they_support(
    chart_packages: list[maintainer.ChartPackage],
) -> None:
    """Issue 40, defect 4: every minor got Cilium 1.18.12 and Calico v3.30.7 (holds whose
    reasons no longer held). Cilium 1.20 is tested on 1.33-1.36 and Calico v3.32 on
    1.34-1.36 (inputs.json ``support``, with the pages): those minors and the newer ones get
    them; older minors keep the newest older line, never a release not tested on them."""
    assert not RAW["services"]["cilium"].get("hold")
    assert not RAW["services"]["tigera-operator"].get("hold")
    for release in VERSIONS.minors:
        cilium = VERSIONS.service_version("cilium", release.minor)
        calico = VERSIONS.service_version("tigera-operator", release.minor)
        assert (cilium == "1.20.0") == (release.minor >= (1, 33)), (release.name, cilium)
        assert (calico == "v3.32.1") == (release.minor >= (1, 34)), (release.name, calico)
    assert VERSIONS.service_version("cilium", (1, 32)) == "1.18.12"
    assert VERSIONS.service_version("tigera-operator", (1, 33)) == "v3.30.7"
    # a minor newer than the tested ones gets the newest release, with a note saying so
    assert (
        "newer than the Kubernetes minors cilium 1.20 is tested on (1.33 to 1.36)"
        in (VERSIONS.services["cilium"].notes["1.37"])
    )
    # without the support input, the newest release would go to every minor
    assert maintainer.pick_chart("cilium", chart_packages, (1, 31), None)[0] == "1.20.0"


def test_cluster_autoscaler_image_follows_the_kubernetes_minor() -> None:
    """Issue 40, defect 7: the autoscaler ran its chart's image v1.35.0 on every minor (1.37
    included). Its release 1.M is for Kubernetes 1.M: the newest release of the cluster's
    minor, else of the newest older minor (no 1.37 release exists: v1.36.1)."""
    from scs_templates._services.values import cluster_autoscaler_values

    expected = {"1.37": "v1.36.1", "1.36": "v1.36.1", "1.35": "v1.35.2", "1.34": "v1.34.5"}
    for minor, tag in expected.items():
        settings = parse_settings_text(settings_text("openstack", f"{minor}.x")).settings
        image = cluster_autoscaler_values(settings)["image"]
        assert image == {"repository": "registry.k8s.io/autoscaling/cluster-autoscaler", "tag": tag}
    assert "no release for Kubernetes 1.37" in VERSIONS.services["cluster-autoscaler"].notes["1.37"]
    assert VERSIONS.service_version("cluster-autoscaler", (1, 37)) == "9.59.0"


def test_pick_image_never_takes_a_newer_minor() -> None:
    releases = ["1.35.0", "1.35.2", "1.36.0", "1.36.1", "1.36.2-rc.0"]
    assert maintainer.pick_image(releases, (1, 36)) == ("v1.36.1", None)
    tag, note = maintainer.pick_image(releases, (1, 37))
    assert tag == "v1.36.1" and note and "no release for Kubernetes 1.37" in note
    with pytest.raises(UpdateError):
        maintainer.pick_image(releases, (1, 34))


# --------------------------------------------------------------------------- parsers


@pytest.mark.parametrize(
    ("constraint", "version", "ok"),
    [
        (None, (1, 37, 0), True),
        (">= 1.22.0-0", (1, 37, 0), True),
        (">= 1.22.0-0", (1, 21, 9), False),
        (">=1.21.0-0 <1.36.0-0", (1, 36, 0), False),
        (">=1.21.0-0, <1.36.0-0", (1, 35, 8), True),
        ("<1.20.0 || >=1.30.0", (1, 31, 0), True),
        ("~1.33.0", (1, 34, 0), False),
    ],
)
def test_kube_version_constraints(
    constraint: str | None, version: tuple[int, int, int], ok: bool
) -> None:
    assert maintainer.admits(constraint, version) is ok


def test_minor_bound_chart_choice() -> None:
    packages = [
        maintainer.ChartPackage("openstack-cinder-csi", v, None)
        for v in ("2.33.0", "2.33.1", "2.36.0")
    ]
    assert maintainer.pick_chart("openstack-cinder-csi", packages, (1, 36), None) == (
        "2.36.0",
        None,
    )
    assert maintainer.pick_chart("openstack-cinder-csi", packages, (1, 37), None)[0] == "2.36.0"
    version, note = maintainer.pick_chart("openstack-cinder-csi", packages, (1, 35), None)
    assert version == "2.33.1" and note and "outside" in note  # never newer than the minor
    assert maintainer.pick_chart("openstack-cinder-csi", packages, (1, 32), None)[0] == "2.33.1"


def test_newest_patches_ignore_prereleases() -> None:
    tags = ["v1.37.2", "v1.38.0-beta.0", "v1.36.1", "v1.36.3", "v1.13.0"]
    assert maintainer.newest_patches(tags) == {(1, 37): 2, (1, 36): 3, (1, 13): 0}


# --------------------------------------------------------------------------- CLI and docs


def test_versions_command_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["versions"]) == 0
    out = capsys.readouterr().out
    capi = VERSIONS.cluster_api.release
    assert f"Cluster API {capi}" in out
    assert f"OpenStack provider (CAPO) {VERSIONS.providers['openstack'].release}" in out
    for release in VERSIONS.minors:
        row = next(line for line in out.splitlines() if line.startswith(release.name))
        assert release.patch_version in row and VERSIONS.status(release) in row
        assert release.kind_images[0].image in row
    assert f"{VERSIONS.default_minor.name} (default)" in out
    assert "Go module proxy: go list -m -versions k8s.io/kubernetes (read " in out
    assert "end of life 1.34: https://kubernetes.io/releases/1.34/" in out


def test_versions_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["versions", "--output", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["clusterAPI"]["release"] == VERSIONS.cluster_api.release
    assert data["kubernetes"]["1.37"]["patch"] == f"v1.37.{TESTED_PATCHES[(1, 37)]}"
    assert parse_table(data) == VERSIONS


def test_docs_versions_md_is_in_sync() -> None:
    doc = (REPO / "docs" / "versions.md").read_text(encoding="utf-8")
    assert BEGIN in doc and END in doc
    assert doc == render_doc(doc), (
        "docs/versions.md is stale: run `python -m scs_templates._cli.versions_report --write`"
    )
    assert markdown() in doc


def test_settings_reference_lists_the_table() -> None:
    doc = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    for release in VERSIONS.minors:
        assert f"| {release.name} | {release.patch_version} | {VERSIONS.status(release)}" in doc
