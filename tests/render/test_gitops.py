"""``scs-templates gitops``: the Flux repository layout.

Proven here offline: every written object is valid against the real Flux (flux2 2.18.3
chart) and Cluster API CRDs with unknown fields rejected; the cluster HelmRelease's values
make the real helm render exactly what ``scs-templates render`` renders (so Flux's
helm-controller installs the same objects); dependsOn is helmfile's needs; the output is
deterministic and a settings change rewrites only the files of the objects it changes; no
credential or placeholder reaches the repository; clusters not given are kept.
"""

from __future__ import annotations

import filecmp
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scs_templates import api
from scs_templates._cli.main import main
from scs_templates._core.errors import InputError
from scs_templates._core.labels import CLASS_LABEL
from scs_templates._gitops import GitopsOptions, parse_chart_source, write_gitops
from scs_templates._gitops.layout import HEADER
from scs_templates._services.releases import service_releases
from scs_templates._settings.validate import load_settings
from scs_templates._tools.helm import Helm
from tests.support import (
    EXAMPLES,
    REPO,
    crd_validation,
    pinned_helm,
    render_crds_from_real_charts,
    settings_from_text,
    skip_or_fail,
)

OCI = GitopsOptions(parse_chart_source("oci://registry.example.com/scs"))
GIT = GitopsOptions(parse_chart_source("https://git.example.com/scs/scs-templates.git", "v0.1.0"))


@pytest.fixture(autouse=True)
def _crds_from_real_charts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Gateway API CRD chart is rendered from ../shared/charts (no registry here)."""
    monkeypatch.setattr(
        "scs_templates._gitops.crds.render_server_side", render_crds_from_real_charts
    )


def _fleet() -> list[Any]:
    return [load_settings(path).settings for path in EXAMPLES]


def _objects(root: Path) -> dict[str, dict[str, Any]]:
    """Every Kubernetes object written (relative path -> object), index files excluded."""
    found = {}
    for path in sorted(root.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        if data.get("apiVersion", "").startswith("kustomize.config.k8s.io/"):
            continue
        found[str(path.relative_to(root))] = data
    return found


@pytest.fixture(scope="module")
def helm() -> Helm:
    return pinned_helm()


@pytest.mark.parametrize("options", [OCI, GIT], ids=["oci", "git"])
def test_every_object_is_valid_against_the_flux_and_capi_crds(
    tmp_path: Path, options: GitopsOptions
) -> None:
    reason = crd_validation.skip_or_fail_reason()
    if reason:
        skip_or_fail(reason)
    write_gitops(tmp_path, _fleet(), options)
    # the manifests under crds/ are the Gateway API chart's own objects (CRDs and their
    # ValidatingAdmissionPolicy; test_gitops_admission: the real API server admits them)
    objects = [
        o
        for path, o in _objects(tmp_path).items()
        if o["kind"] != "Namespace" and not path.startswith("crds/")
    ]
    kinds = {o["kind"] for o in objects}
    assert {"HelmRelease", "HelmRepository", "ClusterResourceSet", "Kustomization"} <= kinds
    assert crd_validation.validate_all(objects) == []


def test_kustomize_indexes_list_exactly_the_files_and_folders_present(tmp_path: Path) -> None:
    write_gitops(tmp_path, _fleet(), OCI)
    for index in tmp_path.rglob("kustomization.yaml"):
        listed = set(yaml.safe_load(index.read_text())["resources"])
        present = {
            p.name
            for p in index.parent.iterdir()
            if p.name != "kustomization.yaml" and (p.suffix == ".yaml" or p.is_dir())
        }
        if index.parent == tmp_path:  # the root lists clusters/NS; flux/ is applied once by hand
            present = {f"clusters/{p.name}" for p in (tmp_path / "clusters").iterdir()}
        assert listed == present, index


def test_the_cluster_release_renders_what_render_renders(tmp_path: Path, helm: Helm) -> None:
    """helm-controller renders the chart with the HelmRelease's values: same objects. A
    topology cluster's ClusterClass is rendered by the class's own HelmRelease, which the
    cluster's ``dependsOn``: the two together render what ``render`` prints."""
    topology = 0
    for settings in _fleet():
        write_gitops(tmp_path, [settings], OCI)
        namespace = tmp_path / "clusters" / settings.metadata.namespace
        name = settings.metadata.name
        release = yaml.safe_load((namespace / name / f"helmrelease-{name}.yaml").read_text())
        rendered = api.render(settings, helm=helm)

        def flux(release: dict[str, Any], rendered: Any = rendered) -> list[dict[str, Any]]:
            text = helm.template(
                release["spec"]["releaseName"],
                Path(rendered.chart.path),
                namespace=release["metadata"]["namespace"],
                values=release["spec"]["values"],
                kube_version=rendered.kube_version,
            )
            return [o for o in yaml.safe_load_all(text) if o]

        got = flux(release)
        if settings.spec.template == "clusterclass":
            topology += 1
            assert {o["kind"] for o in got} == {"Cluster"}  # the class is not the cluster's
            (depends,) = release["spec"]["dependsOn"]
            shared = namespace / "_classes" / f"helmrelease-{depends['name']}.yaml"
            classes = flux(yaml.safe_load(shared.read_text()))
            assert {o["metadata"]["labels"][CLASS_LABEL] for o in classes} == {
                got[0]["spec"]["topology"]["classRef"]["name"]
            }
            got = classes + got
        else:
            assert "dependsOn" not in release["spec"]
        expected = [o for o in rendered.objects if o["kind"] != "Secret"]
        assert sorted((o for o in got if o["kind"] != "Secret"), key=str) == sorted(
            expected, key=str
        )
        # the repository never makes the chart create the credentials Secret
        assert not [o for o in got if o and o["kind"] == "Secret"]
    assert topology == 2  # both providers' clusterclass examples


def test_depends_on_is_the_helmfile_order(tmp_path: Path) -> None:
    for settings in _fleet():
        write_gitops(tmp_path, [settings], OCI)
        folder = tmp_path / "clusters" / settings.metadata.namespace / settings.metadata.name
        releases = {r.key: r for r in service_releases(settings)}
        assert releases

        def name_of(release: Any, cluster: str = settings.metadata.name) -> str:
            if release.target == "management":  # already <cluster>-<release>
                return str(release.name)
            return f"{cluster}-{release.name}"

        staged = tmp_path / "staged" / settings.metadata.namespace / settings.metadata.name
        for release in releases.values():
            if release.info.server_side:  # a Kustomization of its CRDs: test_gateway_api_crds...
                assert (folder / f"kustomization-{name_of(release)}.yaml").is_file()
                continue
            crds_first = [
                name_of(releases[k]) for k in release.needs if releases[k].info.server_side
            ]
            # a release needing CRDs is applied by the Kustomization that waits for them
            home = staged if crds_first else folder
            obj = yaml.safe_load((home / f"helmrelease-{name_of(release)}.yaml").read_text())
            if crds_first:
                stage = yaml.safe_load(
                    (folder / f"kustomization-{settings.metadata.name}-after-crds.yaml").read_text()
                )
                assert {d["name"] for d in stage["spec"]["dependsOn"]} >= set(crds_first)
            depends = [d["name"] for d in obj["spec"]["dependsOn"]]
            assert depends == [settings.metadata.name] + [
                name_of(releases[k]) for k in release.needs if not releases[k].info.server_side
            ]
            if release.target == "workload":
                secret = obj["spec"]["kubeConfig"]["secretRef"]["name"]
                assert secret == f"{settings.name}-kubeconfig"
            else:  # the cluster-autoscaler runs next to the Cluster, where Flux runs
                assert "kubeConfig" not in obj["spec"]
                assert release.namespace == settings.metadata.namespace
            assert obj["spec"]["values"] == release.values
            assert obj["spec"]["targetNamespace"] == release.namespace
        if any(g.autoscaling for g in settings.spec.workers):
            assert any(r.target == "management" for r in releases.values())


def test_deterministic_and_a_change_rewrites_only_what_changed(tmp_path: Path) -> None:
    fleet = _fleet()
    first, second = tmp_path / "a" / "repo", tmp_path / "b" / "repo"
    write_gitops(first, fleet, OCI)
    write_gitops(second, fleet, OCI)
    assert not filecmp.dircmp(first, second).diff_files
    assert _tree(first) == _tree(second)

    before = _tree(first)
    data = yaml.safe_load(EXAMPLES[0].read_text())
    data["spec"]["workers"][0]["replicas"] = 5
    changed = api.validate_data(data, file="changed.yaml").settings
    write_gitops(first, [changed, *fleet[1:]], OCI)
    after = _tree(first)
    key = f"clusters/{changed.metadata.namespace}/{changed.metadata.name}"
    differing = {path for path in before if before[path] != after.get(path)}
    assert differing == {f"{key}/helmrelease-{changed.metadata.name}.yaml"}


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.yaml"))}


def test_no_credentials_or_placeholders_in_the_repository(tmp_path: Path) -> None:
    write_gitops(tmp_path, _fleet(), OCI)
    for path, text in _tree(tmp_path).items():
        assert text.startswith(HEADER), path
        assert "redacted" not in text, path
        assert "cloudsYaml" not in text and "cloudConf" not in text, path
        assert "password" not in text.lower(), path


def test_clusters_not_given_are_kept_unless_pruned(tmp_path: Path) -> None:
    fleet = _fleet()
    write_gitops(tmp_path, fleet, OCI)
    first = fleet[0]
    key = f"{first.metadata.namespace}/{first.metadata.name}"
    result = write_gitops(tmp_path, fleet[1:], OCI)
    assert key in result.kept
    assert (tmp_path / "clusters" / key / "kustomization.yaml").is_file()
    result = write_gitops(tmp_path, fleet[1:], OCI, prune=True)
    assert result.pruned == (key,)
    assert not (tmp_path / "clusters" / key).exists()
    namespace_index = yaml.safe_load(
        (tmp_path / "clusters" / first.metadata.namespace / "kustomization.yaml").read_text()
    )
    assert first.metadata.name not in namespace_index["resources"]


def test_every_object_the_flux_kustomization_applies_is_protected_from_pruning(
    tmp_path: Path,
) -> None:
    """Everything ``scs-clusters`` applies, the namespaces and chart sources included: a
    namespace whose last cluster folder is pruned leaves the index, and kustomize-controller
    deleting the Namespace deletes the HelmReleases in it and so the clusters (the real
    kustomize-controller: tests/plane/test_plane_flux.py)."""
    write_gitops(tmp_path, _fleet(), OCI)
    kinds = set()
    for path, obj in _objects(tmp_path).items():
        # CRD folders: the chart's objects as rendered, under a Kustomization with prune:
        # false; flux/: the Kustomization applied once at bootstrap, not by itself
        if path.startswith(("crds/", "flux/")):
            continue
        if obj["apiVersion"].startswith("kustomize.config.k8s.io/"):
            continue  # the kustomize indexes are no objects
        kinds.add(obj["kind"])
        assert obj["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/prune"] == "disabled"
    assert {"Namespace", "OCIRepository", "HelmRepository", "HelmRelease"} <= kinds


def test_a_foreign_index_file_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: [mine.yaml]\n")
    with pytest.raises(InputError, match="not written by scs-templates gitops"):
        write_gitops(tmp_path, _fleet(), OCI)
    assert (tmp_path / "kustomization.yaml").read_text() == "resources: [mine.yaml]\n"


@pytest.mark.parametrize(
    ("url", "ref", "message"),
    [
        ("https://user:token@git.example.com/x.git", "main", "credentials in the URL"),
        ("https://git.example.com/x.git", None, "needs a tag or branch"),
        ("oci://registry.example.com/scs", "main", "pinned by the chart version"),
        ("file:///srv/charts", None, "neither oci://"),
        ("oci://", None, "names no registry"),
    ],
)
def test_bad_chart_sources_are_refused(url: str, ref: str | None, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_chart_source(url, ref)


def test_cli_writes_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["gitops", str(tmp_path / "repo"), *map(str, EXAMPLES)]
    assert main([*args, "--chart-source", "oci://registry.example.com/scs"]) == 0
    out = capsys.readouterr().out
    assert "wrote default/demo" in out
    assert "needs Secret default/capi-demo-cloud-config" in out
    assert "needs Secret default/capi-demo-encryption" in out
    assert "needs Secret team-b/harbor-pull (credentials of the docker.io mirror" in out
    assert main([*args, "--chart-source", "oci://r/scs", "--interval", "soon"]) == 2
    assert "--interval" in capsys.readouterr().err


def test_a_plain_http_registry_is_an_insecure_oci_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--plain-http``: the OCIRepository says ``insecure: true`` (Flux speaks HTTP to the
    registry, as ``helm push --plain-http``), under the same name; a git source refuses it
    (its URL names the scheme). Pulled for real: tests/plane/test_plane_flux.py."""
    args = ["gitops", str(tmp_path / "repo"), str(EXAMPLES[0]), "--no-services"]
    assert main([*args, "--chart-source", "oci://registry.example.com/scs"]) == 0
    (tls,) = (o for o in _objects(tmp_path / "repo").values() if o["kind"] == "OCIRepository")
    assert "insecure" not in tls["spec"]
    assert main([*args, "--chart-source", "oci://registry.example.com/scs", "--plain-http"]) == 0
    (plain,) = (o for o in _objects(tmp_path / "repo").values() if o["kind"] == "OCIRepository")
    assert plain["spec"] == {**tls["spec"], "insecure": True}
    assert plain["metadata"] == tls["metadata"]
    capsys.readouterr()
    git = ["--chart-source", "https://git.example.com/x.git", "--chart-ref", "v0.1.0"]
    assert main([*args, *git, "--plain-http"]) == 2
    assert "--plain-http: only for an oci://" in capsys.readouterr().err


def test_a_local_chart_mirror_cannot_serve_flux(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLES[0].read_text())
    data["spec"].setdefault("services", {})["chartMirror"] = "file:///srv/charts"
    settings = api.validate_data(data, file="mirror.yaml").settings
    with pytest.raises(InputError, match=r"spec\.services\.chartMirror"):
        write_gitops(tmp_path, [settings], OCI)


def _topology_fleet() -> list[Any]:
    fleet = [s for s in _fleet() if s.spec.template == "clusterclass"]
    assert {s.spec.provider for s in fleet} == {"docker", "openstack"}
    return fleet


def _next_release(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a new scs-templates release changes: the chart version and so the class name."""
    monkeypatch.setattr("scs_templates._gitops.objects._chart_version", lambda chart: "9.9.9")
    monkeypatch.setattr(
        "scs_templates._render.values.cluster_class_name", lambda provider: f"scs-{provider}-v9-9-9"
    )


@pytest.mark.parametrize("options", [OCI, GIT], ids=["oci", "git"])
def test_a_new_class_moves_no_cluster_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: GitopsOptions
) -> None:
    """As ``install``: a run with a release whose ClusterClass has another name is refused
    (nothing written) unless ``rebase_class``; clusters not given keep their chart source."""
    from dataclasses import replace

    topology = _topology_fleet()
    classic = [s for s in _fleet() if s.spec.template != "clusterclass"]
    write_gitops(tmp_path, [*topology, *classic], options)
    before = _tree(tmp_path)
    _next_release(monkeypatch)
    with pytest.raises(InputError, match=r"from ClusterClass .* pass --rebase-class") as refused:
        write_gitops(tmp_path, topology, options)
    assert "run gitops with the scs-templates release of" in str(refused.value)
    assert _tree(tmp_path) == before

    # classic clusters take the new release; a cluster not given keeps the source it uses
    kept = topology[0]
    write_gitops(tmp_path, classic, options)
    rebased = topology[1]
    write_gitops(tmp_path, [rebased], replace(options, rebase_class=True))
    after = _tree(tmp_path)

    def release(settings: Any) -> dict[str, Any]:
        name = settings.metadata.name
        path = f"clusters/{settings.metadata.namespace}/{name}/helmrelease-{name}.yaml"
        return dict(yaml.safe_load(after[path]))

    def source_of(obj: dict[str, Any]) -> str:
        spec = obj["spec"]
        return str((spec.get("chartRef") or spec["chart"]["spec"]["sourceRef"])["name"])

    assert release(kept) == yaml.safe_load(before[_release_path(kept)])
    assert release(rebased)["spec"]["values"]["cluster"]["className"].endswith("-v9-9-9")
    sources = {
        path.rsplit("/", 1)[1]: yaml.safe_load(text)
        for path, text in after.items()
        if "/_sources/" in path and not path.endswith("kustomization.yaml")
    }
    names = {obj["metadata"]["name"] for obj in sources.values()}
    assert source_of(release(kept)) in names  # the old source stays
    # each topology cluster depends on the class release of the class it runs on: the kept
    # one's stays, the rebased one's is added, each from its cluster's chart source
    classes = {
        obj["metadata"]["name"]: obj
        for path, text in after.items()
        if "/_classes/helmrelease-" in path
        for obj in [yaml.safe_load(text)]
    }
    for settings in (kept, rebased):
        (depends,) = release(settings)["spec"]["dependsOn"]
        assert (
            classes[depends["name"]]["spec"]["values"]["clusterClass"]["name"]
            == (release(settings)["spec"]["values"]["cluster"]["className"])
        )
        assert source_of(classes[depends["name"]]) == source_of(release(settings))
    if options is OCI:
        assert source_of(release(rebased)) != source_of(release(kept))
        by_name = {obj["metadata"]["name"]: obj for obj in sources.values()}
        assert by_name[source_of(release(rebased))]["spec"]["ref"] == {"tag": "9.9.9"}
    for settings in classic:
        assert release(settings)["spec"]["values"]["cluster"]["className"].endswith("-v9-9-9")


def _docker_topology(name: str) -> Any:
    """The docker clusterclass example as cluster ``name`` (namespace default)."""
    text = (REPO / "examples" / "docker-clusterclass.yaml").read_text()
    return settings_from_text(text.replace("name: dev-topology", f"name: {name}", 1))


def test_a_class_is_one_helmrelease_per_namespace_however_many_clusters_use_it(
    tmp_path: Path,
) -> None:
    """Two topology clusters of one class in one namespace: ONE class HelmRelease in
    ``_classes`` that both cluster HelmReleases ``dependsOn``, the same bytes as with one
    cluster, protected from pruning, listed by the namespace's index; a cluster not given
    keeps it."""
    first, second = _docker_topology("alpha"), _docker_topology("beta")
    write_gitops(tmp_path / "one", [first], OCI)
    write_gitops(tmp_path / "two", [first, second], OCI)
    one, two = _tree(tmp_path / "one"), _tree(tmp_path / "two")
    classes = {p: t for p, t in two.items() if "/_classes/" in p}
    assert sorted(classes) == [
        "clusters/default/_classes/helmrelease-scs-docker-v0-1-0.yaml",
        "clusters/default/_classes/kustomization.yaml",
    ]
    assert {p: t for p, t in one.items() if "/_classes/" in p} == classes
    shared = yaml.safe_load(classes["clusters/default/_classes/helmrelease-scs-docker-v0-1-0.yaml"])
    assert shared["spec"]["values"] == {
        "clusterClass": {"name": "scs-docker-v0-1-0", "namespace": "default"}
    }
    assert shared["metadata"]["annotations"] == {"kustomize.toolkit.fluxcd.io/prune": "disabled"}
    for settings in (first, second):
        release = yaml.safe_load(two[_release_path(settings)])
        assert release["spec"]["dependsOn"] == [{"name": "scs-docker-v0-1-0"}]
        assert release["spec"]["values"]["cluster"]["classObjects"] is False
        # the class and its cluster come from the same chart source
        assert release["spec"]["chartRef"] == shared["spec"]["chartRef"]
    index = yaml.safe_load(two["clusters/default/kustomization.yaml"])
    assert index["resources"] == ["namespace.yaml", "_sources", "_classes", "alpha", "beta"]
    # a run without the clusters of the class keeps it; with --prune it goes
    write_gitops(tmp_path / "two", [s for s in _fleet() if s.spec.template != "clusterclass"], OCI)
    assert (
        tmp_path / "two" / "clusters/default/_classes/helmrelease-scs-docker-v0-1-0.yaml"
    ).is_file()
    write_gitops(tmp_path / "two", [first], OCI, prune=True)
    assert {p: t for p, t in _tree(tmp_path / "two").items() if "/_classes/" in p} == classes
    write_gitops(
        tmp_path / "two",
        [s for s in _fleet() if s.spec.template != "clusterclass"],
        OCI,
        prune=True,
    )
    assert not (tmp_path / "two" / "clusters/default/_classes").exists()
    listed = yaml.safe_load((tmp_path / "two" / "clusters/default/kustomization.yaml").read_text())
    assert "_classes" not in listed["resources"]


def _release_path(settings: Any) -> str:
    name = settings.metadata.name
    return f"clusters/{settings.metadata.namespace}/{name}/helmrelease-{name}.yaml"


def test_a_switch_between_classic_and_topology_is_refused(tmp_path: Path) -> None:
    topology = _topology_fleet()[0]
    write_gitops(tmp_path, [topology], OCI)
    data = yaml.safe_load(
        next(p for p in EXAMPLES if load_settings(p).settings.name == topology.name).read_text()
    )
    data["spec"]["template"] = "multi-md"
    switched = api.validate_data(data, file="switched.yaml").settings
    with pytest.raises(InputError, match="cannot move between the clusterclass template"):
        write_gitops(tmp_path, [switched], OCI)


def test_a_class_inside_an_old_cluster_release_is_refused(tmp_path: Path) -> None:
    """A topology cluster's HelmRelease written before ClusterClass releases holds its class:
    helm-controller could not give it to the class's HelmRelease (helm: invalid ownership
    metadata) and the cluster's, which dependsOn it, would wait forever; refused, nothing
    written. The same repository written now is rewritten without a word."""
    topology = _topology_fleet()[0]
    write_gitops(tmp_path, [topology], OCI)
    path = tmp_path / _release_path(topology)
    written = yaml.safe_load(path.read_text())
    assert written["spec"]["values"]["cluster"]["classObjects"] is False
    write_gitops(tmp_path, [topology], OCI)  # current layout: fine
    del written["spec"]["values"]["cluster"]["classObjects"]  # what an earlier build wrote
    path.write_text(HEADER + yaml.safe_dump(written))
    before = _tree(tmp_path)
    with pytest.raises(InputError, match="holds its ClusterClass") as refused:
        write_gitops(tmp_path, [topology], OCI)
    assert str(path) in str(refused.value) and "docs/upgrades.md" in str(refused.value)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda text: text + "bad: [\n", r":\d+: not valid YAML \(did not find expected node"),
        (
            lambda text: re.sub(r"(?m)^  interval: .*$", "  interval: !!int x", text, count=1),
            r": not valid YAML \(a value cannot be read as the type its explicit tag",
        ),
    ],
    ids=["syntax", "tag"],
)
def test_an_unreadable_edit_of_a_written_release_is_one_line_naming_the_file(
    tmp_path: Path, edit: Any, problem: str
) -> None:
    """gitops reads the cluster's HelmRelease it wrote before rewriting it; a hand edit that
    left it unreadable (ours by its first line still) was an internal error (exit 1)."""
    settings = _fleet()[0]
    write_gitops(tmp_path, [settings], OCI)
    path = tmp_path / _release_path(settings)
    edited = edit(path.read_text())
    assert edited != path.read_text()
    path.write_text(edited)
    before = _tree(tmp_path)
    with pytest.raises(InputError) as refused:
        write_gitops(tmp_path, [settings], OCI)
    message = str(refused.value)
    assert re.match(re.escape(str(path)) + problem, message), message
    assert "\n" not in message and message.endswith("fix or remove the file")
    assert _tree(tmp_path) == before


def test_a_failed_cluster_upgrade_is_retried_never_rolled_back(tmp_path: Path) -> None:
    write_gitops(tmp_path, _fleet()[:1], OCI)
    settings = _fleet()[0]
    spec = yaml.safe_load((tmp_path / _release_path(settings)).read_text())["spec"]
    assert spec["upgrade"] == {"strategy": {"name": "RetryOnFailure", "retryInterval": "1m"}}


def test_gateway_api_crds_are_a_kustomization_of_the_rendered_chart(tmp_path: Path) -> None:
    """The Gateway API CRD chart makes a helm release record over the 1 MiB of a Secret
    (services/serverside.py): never a HelmRelease. Its objects, rendered as ``services
    render`` renders them, are plain files that a Flux Kustomization applies into the
    workload cluster; Cilium (which needs them at start) is applied after them."""
    from scs_templates._services.catalogue import service_info

    fleet = [s for s in _fleet() if s.spec.services.gateway_api.enabled]
    assert fleet and service_info("gateway-api-crds").server_side
    repo = tmp_path / "repo"
    write_gitops(repo, fleet, OCI)
    objects = _objects(repo)
    assert not [
        p for p, o in objects.items() if o["kind"] == "HelmRelease" and "gateway-api-crds" in p
    ]
    for settings in fleet:
        name, namespace = settings.metadata.name, settings.metadata.namespace
        crds = objects[f"clusters/{namespace}/{name}/kustomization-{name}-gateway-api-crds.yaml"]
        spec = crds["spec"]
        assert spec["kubeConfig"] == {"secretRef": {"name": f"{name}-kubeconfig", "key": "value"}}
        assert spec["prune"] is False and spec["wait"] is True
        assert spec["sourceRef"] == {
            "kind": "GitRepository",
            "name": "flux-system",
            "namespace": "flux-system",
        }
        folder = spec["path"].removeprefix("./repo/")
        assert spec["path"] == f"./repo/{folder}" and folder.startswith("crds/gateway-api-crds-")
        release = next(r for r in service_releases(settings) if r.name == "gateway-api-crds")
        expected = render_crds_from_real_charts(settings, release)
        assert "CustomResourceDefinition" in {o["kind"] for o in expected}
        written = [o for p, o in sorted(objects.items()) if p.startswith(f"{folder}/")]
        key = lambda o: o["metadata"]["name"]  # noqa: E731
        assert sorted(written, key=key) == sorted(expected, key=key)
        index = yaml.safe_load((repo / folder / "kustomization.yaml").read_text())
        assert len(index["resources"]) == len(expected)
        # Cilium waits for them: staged, applied by a Kustomization that depends on them
        stage = objects[f"clusters/{namespace}/{name}/kustomization-{name}-after-crds.yaml"]
        assert stage["spec"]["dependsOn"] == [{"name": f"{name}-gateway-api-crds"}]
        assert stage["spec"]["path"] == f"./repo/staged/{namespace}/{name}"
        assert "kubeConfig" not in stage["spec"]
        cilium = objects[f"staged/{namespace}/{name}/helmrelease-{name}-cilium.yaml"]
        assert cilium["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/prune"] == "disabled"
        cluster_index = yaml.safe_load(
            (repo / "clusters" / namespace / name / "kustomization.yaml").read_text()
        )
        assert f"helmrelease-{name}-cilium.yaml" not in cluster_index["resources"]
    # one folder per distinct rendering, shared; a re-run rewrites nothing
    before = _tree(repo)
    write_gitops(repo, fleet, OCI)
    assert _tree(repo) == before


def test_calico_3_32_crds_are_a_kustomization_before_the_operator(tmp_path: Path) -> None:
    """Issue 40, defect 4: Calico v3.32's CRDs (their own chart, server-side as ``apply``
    does) are plain files applied by a Kustomization; the operator is staged after them."""
    settings = settings_from_text(
        "apiVersion: scs-templates.scs.community/v1alpha1\nkind: ClusterSettings\n"
        "metadata: {name: calico}\nspec:\n  provider: docker\n  controlPlane: {replicas: 1}\n"
        "  services: {cni: {type: calico}}\n"
    )
    repo = tmp_path / "repo"
    write_gitops(repo, [settings], OCI)
    objects = _objects(repo)
    crds = objects["clusters/default/calico/kustomization-calico-calico-crds.yaml"]["spec"]
    folder = crds["path"].removeprefix("./repo/")
    assert folder.startswith("crds/calico-crds-v3.32.1-")
    written = {o["metadata"]["name"] for p, o in objects.items() if p.startswith(f"{folder}/")}
    assert {"ippools.crd.projectcalico.org", "installations.operator.tigera.io"} <= written
    stage = objects["clusters/default/calico/kustomization-calico-after-crds.yaml"]["spec"]
    assert stage["dependsOn"] == [{"name": "calico-calico-crds"}]
    assert "staged/default/calico/helmrelease-calico-tigera-operator.yaml" in objects


def test_cli_rebases_only_with_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    example = next(p for p in EXAMPLES if p.name == "docker-clusterclass.yaml")
    args = ["gitops", str(tmp_path / "repo"), str(example), "--chart-source", "oci://r/scs"]
    assert main(args) == 0
    _next_release(monkeypatch)
    capsys.readouterr()
    assert main(args) == 2
    assert "--rebase-class" in capsys.readouterr().err
    assert main([*args, "--rebase-class"]) == 0


def _names_in(obj: Any) -> Iterator[str]:
    """Every object name ``obj`` holds or refers to (metadata, dependsOn, resources)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in ("metadata", "secretRef") and isinstance(value, dict) and "name" in value:
                yield value["name"]
            elif key in ("dependsOn", "resources") and isinstance(value, list):
                yield from (
                    item["name"] for item in value if isinstance(item, dict) and "name" in item
                )
            yield from _names_in(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _names_in(item)


def test_names_derived_from_a_long_cluster_name_are_fitted_to_63() -> None:
    """``<cluster>-cloud-config``, ``<cluster>-workload-cloud-config``, the service releases
    and Kustomizations: every name built from the cluster's name goes through the naming
    module, so even a name longer than the rules allow gives DNS-1123 names of <= 63."""
    from scs_templates._core import naming
    from scs_templates._gitops.objects import cluster_objects

    example = load_settings(next(p for p in EXAMPLES if p.stem == "openstack-all-features"))
    example = example.settings
    long = "c" * naming.MAX_NAME
    settings = example.model_copy(
        update={"metadata": example.metadata.model_copy(update={"name": long})}
    )
    made = cluster_objects(settings, OCI)
    kinds = {obj["kind"] for obj in made.objects.values()}
    assert "ClusterResourceSet" in kinds  # the cloud-config names are among those checked
    names = [
        name
        for group in (made.objects, made.staged, made.sources)
        for obj in group.values()
        for name in _names_in(obj)
    ]
    names += [secret.split(" ", 1)[0] for secret in made.required_secrets]
    derived = [name for name in names if name.startswith("c" * 20)]
    assert len(derived) > 5
    # Cluster API names the kubeconfig Secret itself, unfitted (a Secret name may be longer)
    too_long = [
        name
        for name in names
        if len(name) > naming.MAX_NAME and name != naming.kubeconfig_secret(long)
    ]
    assert too_long == []
    assert all(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name) for name in derived)
