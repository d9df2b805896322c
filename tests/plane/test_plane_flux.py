"""Clusters reconciled from a git repository by the REAL Flux controllers.

``scs-templates gitops`` writes the repository layout with a git chart source; the chart
repository is a local git repository served by the real ``git http-backend``
(tests/support/githttp.py). Flux's source-, helm- and kustomize-controller, built from their Go
modules (testenv/flux.py, built here when not cached), run against the session's real
management plane with the real flux2 chart's CRDs. Most tests apply the folder's objects
exactly as written (a plain server-side apply of the files, what kustomize-controller does
with them), so that each step is the test's; one leaves that to kustomize-controller from
a git repository of the written layout (below). source-controller clones the repository
and packages the chart with its library dependency, helm-controller installs it, and the
real Cluster API controllers provision the cluster on CAPD's in-memory backend.

The served repository holds the chart of the test-only provider ``inmemory``
(tests/support/inmemory.py, registered in the catalogue while the module runs, as in
tests/plane/test_plane_inmemory.py): the HelmRelease's values are that provider's, rendered from
the settings by the library.

- A classic cluster reaches Available; a settings change (a Kubernetes patch upgrade) is a
  re-run of ``gitops`` whose changed HelmRelease helm-controller rolls out.
- Two topology clusters (template ``clusterclass``) of one namespace share ONE ClusterClass
  HelmRelease that both cluster HelmReleases ``dependsOn``; both reach Available. A new
  release's ClusterClass is refused by ``gitops`` without ``rebase_class`` (nothing
  written); with it, for one cluster, its new class's HelmRelease is added and
  helm-controller moves that cluster onto the new class (the release's ``RetryOnFailure``
  upgrade strategy retries, without a rollback, while the Cluster webhook refuses a class
  Cluster API has not reconciled yet) without replacing a machine; the other cluster stays
  on the old class. Deleting a cluster leaves the class the other uses; a class's
  HelmRelease deleted after its last cluster removes the class.
- The service HelmReleases of a cluster (a re-run of ``gitops`` with services; their real
  upstream charts from ../shared/charts in a real helm repository, tests/support/chartrepo.py) are
  installed by helm-controller in their ``dependsOn`` order through the cluster's kubeconfig
  Secret into a REAL workload kube-apiserver (tests/support/workload_cluster.py: its own admission
  configuration as the cluster chart renders it, its own kube-controller-manager): every
  object of each release exists there, the release records too (none on the management
  cluster), and deleting a HelmRelease uninstalls it there. The in-memory backend's workload
  API cannot host helm (no ``/version``), so the Secret gets the real API server's
  kubeconfig, Cluster API paused meanwhile (it would rotate the Secret back). No kubelet
  can run here: :func:`kubelet_stand_in` (a DOUBLE, named so) reports the Pods the real
  controllers create Running and Ready so that helm's wait can end; no container runs.
- The whole loop from a git repository: the written layout committed to a served
  repository, only Flux's bootstrap objects applied by the test (the GitRepository
  ``flux-system`` and the written ``flux/scs-clusters.yaml``); kustomize-controller applies
  the rest, the cluster reaches Available, a commit of a settings change rolls it out, and a
  commit that drops the cluster's folder deletes nothing (the Namespace included).
- Cilium with the Gateway API by kustomize-controller: the CRD chart's files applied by the
  Kustomization ``mem-gateway-api-crds`` through the kubeconfig Secret into the real
  workload kube-apiserver, the staged Cilium HelmRelease by ``mem-after-crds`` after it,
  Cilium and the services installed there by helm-controller.
- An OCI chart source: the chart ``helm push``-ed to a real OCI registry built from its Go
  module (testenv/registry.py), pulled by source-controller through the written
  OCIRepository, installed by helm-controller, the cluster Available.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scs_templates._gitops import GitopsOptions, parse_chart_source, write_gitops
from scs_templates._render import encryption
from scs_templates._render.charts import LIBRARY_CHART, charts_dir
from scs_templates._tools.helm import Helm
from scs_templates._tools.kube import KubeClient
from tests.plane.test_gitops_admission import install_flux_crds
from tests.support import chartrepo, githttp, inmemory, settings_from_text, skip_or_fail
from tests.support.inmemory import KCP_API

if TYPE_CHECKING:
    from testenv import Plane
    from testenv.flux import Flux
    from testenv.kubeapi import KubeAPI

pytestmark = [pytest.mark.extra_builds]

CAPI = "cluster.x-k8s.io/v1beta2"
HELM = "helm.toolkit.fluxcd.io/v2"
FIRST, UPGRADED = "1.36.1", "1.36.4"
TAG = "v0.1.0"
TIMEOUT = inmemory.STEP_TIMEOUT

CLASS, NEXT_CLASS = "scs-inmemory-v0-1-0", "scs-inmemory-v9-0-0"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=test@example.invalid", "-c", "user.name=test", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=60,
    )


def chart_repository(root: Path) -> Path:
    """A bare repository ``scs-templates.git`` holding charts/ at the tag :data:`TAG`: the
    library chart and the test-only provider's chart (tests/charts/inmemory-cluster)."""
    work = root / "work"
    shutil.copytree(charts_dir() / LIBRARY_CHART, work / "charts" / LIBRARY_CHART)
    chart = work / "charts" / inmemory.CHART.name
    shutil.copytree(inmemory.CHART, chart)
    meta = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    for dependency in meta["dependencies"]:
        dependency["repository"] = f"file://../{LIBRARY_CHART}"
    (chart / "Chart.yaml").write_text(yaml.safe_dump(meta), encoding="utf-8")
    _git(root, "init", "-q", "--bare", "-b", "main", "scs-templates.git")
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "charts")
    _git(work, "tag", TAG)
    _git(work, "push", "-q", str(root / "scs-templates.git"), "main", TAG)
    return root


_inmemory_provider = inmemory.registered_for_module()


def flux_binaries() -> None:
    """Build the Flux controllers when they are not cached, as the plane builds its own
    (cost: docs/testing.md "Builds"); without a Go toolchain skip, in CI fail."""
    from testenv import PlaneError, build, flux

    if flux.missing() and build.go_binary() is None:
        skip_or_fail(
            "the Flux controllers need the Go toolchain (`go`) to build "
            f"{', '.join(flux.missing())} (or run `python -m testenv build --flux`)"
        )
    try:
        flux.ensure_built()
    except PlaneError as error:
        pytest.fail(f"the Flux controllers could not be built: {error}")


@pytest.fixture(scope="module")
def controllers(
    plane: Plane, helm: Helm, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Flux]:
    from testenv.flux import start_flux

    flux_binaries()
    install_flux_crds(plane, helm)
    running = start_flux(plane, tmp_path_factory.mktemp("flux"))
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def git_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving ``scs-templates.git`` (:func:`chart_repository`)."""
    with githttp.serving(chart_repository(tmp_path_factory.mktemp("git"))) as server:
        yield server


def apply_folder(plane: Plane, repo: Path) -> list[dict[str, Any]]:
    """Server-side apply every object file under clusters/ (what kustomize-controller does
    with these plain resources); the objects applied."""
    applied = []
    for path in sorted((repo / "clusters").rglob("*.yaml")):
        obj = yaml.safe_load(path.read_text(encoding="utf-8"))
        if obj["apiVersion"].startswith("kustomize.config.k8s.io/"):
            continue
        plane.api.apply(obj)
        applied.append(obj)
    return applied


def condition(obj: dict[str, Any] | None, kind: str) -> str:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return f"{cond.get('status')}: {cond.get('reason')}: {cond.get('message')}"
    return "no condition yet"


class Reconciled:
    """One cluster ``mem`` of a namespace, reconciled by Flux from a repository folder."""

    def __init__(self, plane: Plane, flux: Flux, namespace: str, repo: Path) -> None:
        self.plane, self.flux, self.namespace, self.repo = plane, flux, namespace, repo

    def release(self, name: str = "mem") -> dict[str, Any] | None:
        return self.plane.api.get(HELM, "HelmRelease", self.namespace, name)

    def cluster(self, name: str = "mem") -> dict[str, Any] | None:
        return self.plane.api.get(CAPI, "Cluster", self.namespace, name)

    def state(self) -> str:
        ready, up = condition(self.release(), "Ready"), condition(self.cluster(), "Available")
        return f"HelmRelease {ready}; Cluster {up}; machines {self.machines()}"

    def machines(self) -> dict[str, str]:
        return {
            m["metadata"][
                "name"
            ]: f"{(m.get('status') or {}).get('phase')}/{m['spec'].get('version')}"
            for m in self.plane.api.list(CAPI, "Machine", self.namespace)
        }

    def running(self, version: str, machines: int = 3) -> bool:
        found = self.machines()
        return len(found) == machines and all(v == f"Running/v{version}" for v in found.values())

    def released(self, name: str = "mem") -> bool:
        """The HelmRelease ``name`` is Ready for its current generation."""
        obj = self.release(name) or {}
        observed = (obj.get("status") or {}).get("observedGeneration")
        ready = condition(obj, "Ready").startswith("True")
        return ready and observed == (obj.get("metadata") or {}).get("generation")

    def wait(
        self, what: str, done: Callable[[], bool], state: Callable[[], str] | None = None
    ) -> None:
        """Poll ``done``; on timeout fail with ``state()`` (default: the cluster's state)."""
        deadline = time.monotonic() + TIMEOUT
        while not done():
            self.flux.check()
            self.plane.check()
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}: {(state or self.state)()}")
            time.sleep(1.0)

    def write(self, settings: Any, options: GitopsOptions) -> list[str]:
        """Run ``gitops`` into the repository; the files it changed."""
        before = {p: p.read_text() for p in self.repo.rglob("*.yaml")}
        write_gitops(self.repo, [settings], options)
        return sorted(
            str(p.relative_to(self.repo))
            for p in self.repo.rglob("*.yaml")
            if before.get(p) != p.read_text()
        )

    def provision(self, settings: Any, options: GitopsOptions, version: str) -> None:
        result = write_gitops(self.repo, [settings], options)
        # the Secrets gitops lists are the operator's: the encryption key, as
        # `scs-templates encryption-key create` makes it (without it no bootstrap data)
        assert [s.split()[0] for s in result.required_secrets[f"{self.namespace}/mem"]] == [
            encryption.secret_name(settings)
        ]
        encryption.ensure_secret(KubeClient(str(self.plane.kubeconfig)), settings)
        kinds = sorted(o["kind"] for o in apply_folder(self.plane, self.repo))
        assert kinds == ["GitRepository", "HelmRelease", "Namespace"]
        self.wait(
            "the Cluster Available",
            lambda: condition(self.cluster(), "Available").startswith("True"),
        )
        self.wait("the HelmRelease Ready", self.released)
        self.wait("3 machines Running", lambda: self.running(version))

    def delete(self, name: str = "mem") -> None:
        """Clean up as `scs-templates delete` would: the Cluster first, then its release."""
        self.plane.api.delete(CAPI, "Cluster", self.namespace, name)
        self.wait(f"the Cluster {name} deleted", lambda: self.cluster(name) is None)
        self.delete_release(name)

    def delete_release(self, name: str) -> None:
        """Delete the HelmRelease ``name``; helm-controller uninstalls it."""
        self.plane.api.delete(HELM, "HelmRelease", self.namespace, name)
        self.wait(f"the HelmRelease {name} uninstalled", lambda: self.release(name) is None)


def _options(server: str, *, services: bool = False, **extra: Any) -> GitopsOptions:
    source = parse_chart_source(f"{server}/scs-templates.git", TAG)
    return GitopsOptions(source, interval="1m", services=services, **extra)


def test_a_cluster_reconciled_from_git_to_available(
    plane: Plane, controllers: Flux, git_server: str, tmp_path: Path
) -> None:
    namespace = plane.namespace("flux")
    walk = Reconciled(plane, controllers, namespace, tmp_path / "fleet")
    options = _options(git_server)
    walk.provision(
        settings_from_text(inmemory.settings_text(namespace, version=FIRST)), options, FIRST
    )
    first = set(walk.machines())

    # a settings change is a re-run of gitops: only the HelmRelease file changes
    upgraded = settings_from_text(inmemory.settings_text(namespace, version=UPGRADED))
    assert walk.write(upgraded, options) == [f"clusters/{namespace}/mem/helmrelease-mem.yaml"]
    apply_folder(plane, walk.repo)
    walk.wait(
        "the rollout to the new patch",
        lambda: walk.running(UPGRADED) and not first & set(walk.machines()),
    )
    walk.wait("the HelmRelease Ready", walk.released)
    walk.delete()


def test_topology_clusters_share_a_class_release_and_move_only_when_asked(
    plane: Plane,
    controllers: Flux,
    git_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two topology clusters of one class in one namespace: ONE class HelmRelease that both
    cluster HelmReleases ``dependsOn``, installed by helm-controller, both clusters
    Available. A new class only with --rebase-class, for the cluster given: ``mem`` moves
    onto it (its class HelmRelease added), ``mem2`` stays on the old class. Deleting a
    cluster leaves the class the other uses; a class's HelmRelease deleted after its last
    cluster removes the class."""
    from dataclasses import replace

    from scs_templates._core.errors import InputError

    namespace = plane.namespace("flux-topology")
    walk = Reconciled(plane, controllers, namespace, tmp_path / "fleet")
    options = _options(git_server)
    texts = {
        name: inmemory.settings_text(namespace, version=FIRST, template="clusterclass", name=name)
        for name in ("mem", "mem2")
    }
    fleet = [settings_from_text(text) for text in texts.values()]
    write_gitops(walk.repo, fleet, options)
    classes_folder = walk.repo / "clusters" / namespace / "_classes"
    assert sorted(p.name for p in classes_folder.iterdir()) == [
        f"helmrelease-{CLASS}.yaml",
        "kustomization.yaml",
        "scs-templates.sha256",  # what gitops wrote there: --prune removes only that
    ]
    for settings in fleet:
        encryption.ensure_secret(KubeClient(str(plane.kubeconfig)), settings)
    kinds = sorted(o["kind"] for o in apply_folder(plane, walk.repo))
    assert kinds == ["GitRepository", "HelmRelease", "HelmRelease", "HelmRelease", "Namespace"]

    def class_of(name: str = "mem") -> str:
        return str(((walk.cluster(name) or {}).get("spec") or {})["topology"]["classRef"]["name"])

    def classes() -> set[str]:
        return {c["metadata"]["name"] for c in plane.api.list(CAPI, "ClusterClass", namespace)}

    def available(name: str) -> bool:
        return condition(walk.cluster(name), "Available").startswith("True")

    for name in ("mem", "mem2"):
        walk.wait(f"the Cluster {name} Available", lambda name=name: available(name))
    for name in (CLASS, "mem", "mem2"):
        walk.wait(f"the HelmRelease {name} Ready", lambda name=name: walk.released(name))
    walk.wait("6 machines Running", lambda: walk.running(FIRST, machines=6))
    assert class_of("mem") == class_of("mem2") == CLASS and classes() == {CLASS}
    owner = (plane.api.get(CAPI, "ClusterClass", namespace, CLASS) or {})["metadata"]
    assert owner["annotations"]["meta.helm.sh/release-name"] == CLASS  # not a cluster's
    machines = walk.machines()

    # a new scs-templates release ships a new class: gitops refuses to move the cluster
    monkeypatch.setattr(
        "scs_templates._render.values.cluster_class_name", lambda provider: NEXT_CLASS
    )
    with pytest.raises(InputError, match="--rebase-class"):
        walk.write(settings_from_text(texts["mem"]), options)
    # asked, for mem only: its HelmRelease and the new class's (helm-controller moves it)
    rebase = replace(options, rebase_class=True)
    changed = walk.write(settings_from_text(texts["mem"]), rebase)
    assert changed == [
        f"clusters/{namespace}/_classes/helmrelease-{NEXT_CLASS}.yaml",
        f"clusters/{namespace}/_classes/kustomization.yaml",
        f"clusters/{namespace}/mem/helmrelease-mem.yaml",
    ]
    apply_folder(plane, walk.repo)
    walk.wait(f"the Cluster on {NEXT_CLASS}", lambda: class_of() == NEXT_CLASS)
    walk.wait("the HelmRelease Ready", walk.released)
    walk.wait(f"the HelmRelease {NEXT_CLASS} Ready", lambda: walk.released(NEXT_CLASS))
    history = [h.get("status") for h in (walk.release() or {})["status"].get("history", [])]
    print(f"helm-controller's release history (newest first): {history}")
    walk.wait("6 machines Running", lambda: walk.running(FIRST, machines=6))
    # the new class renders the same templates: the rebase replaces no machine; mem2 stays
    assert walk.machines() == machines
    assert class_of("mem2") == CLASS and classes() == {CLASS, NEXT_CLASS}
    assert available("mem2")

    walk.delete("mem")
    assert classes() == {CLASS, NEXT_CLASS} and available("mem2")
    walk.delete_release(NEXT_CLASS)  # its last cluster is gone
    walk.wait(f"{NEXT_CLASS} removed", lambda: classes() == {CLASS})
    walk.delete("mem2")
    walk.delete_release(CLASS)
    walk.wait("every class removed", lambda: not classes())


# ------------------------------------------------- service releases into a workload cluster

#: The services of the test below (the others off): Cilium without the Gateway API (its CRDs
#: are a Kustomization, and kustomize-controller is not built), kubelet-csr-approver and
#: metrics-server, which need it: a dependsOn chain of three.
SERVICES = """  services:
    ingressNginx:
      enabled: false
    gatewayAPI:
      enabled: false
"""


@contextmanager
def kubelet_stand_in(server: KubeAPI) -> Iterator[None]:
    """DOUBLE of the kubelets, because none can run here (no container runtime, no images):
    every Pod the workload cluster's real controllers create is reported Running and Ready,
    a Job's Pod Succeeded (its container ran to the end), so that helm's wait
    (helm-controller waits as ``helm --wait --wait-for-jobs``: Deployments and DaemonSets
    ready, Jobs complete) can end. Nothing else is played: the objects, their admission and
    the controllers that turn them into Pods are real; no container ever runs, so what a
    container would have done (a Job's certificates, say) is not there."""
    from testenv.kubeapi import APIError

    def conditions(ready: bool) -> list[dict[str, str]]:
        return [
            {"type": kind, "status": str(ready)}
            for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
        ]

    running = {"phase": "Running", "conditions": conditions(True)}
    finished = {"phase": "Succeeded", "conditions": conditions(False)}
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(1.0):
            try:
                for pod in server.list("v1", "Pod"):
                    meta = pod["metadata"]
                    of_job = any(r.get("kind") == "Job" for r in meta.get("ownerReferences") or [])
                    status = finished if of_job else running
                    if (
                        meta.get("deletionTimestamp")
                        or pod["status"].get("phase") == (status["phase"])
                    ):
                        continue
                    server.patch_status("v1", "Pod", meta["namespace"], meta["name"], status)
            except (APIError, OSError):
                continue  # a Pod deleted meanwhile; the next round sees the rest

    thread = threading.Thread(target=report, name="kubelet-stand-in", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)


def release_objects(server: KubeAPI, namespace: str, release: str) -> list[dict[str, Any]]:
    """The objects of helm's release record ``sh.helm.release.v1.RELEASE.v1`` in ``namespace``
    of ``server`` (helm's Secret storage: the record is base64 of gzipped JSON)."""
    import base64
    import gzip
    import json

    secret = server.get("v1", "Secret", namespace, f"sh.helm.release.v1.{release}.v1")
    assert secret is not None, f"no release record of {release} in {namespace}"
    record = json.loads(
        gzip.decompress(base64.b64decode(base64.b64decode(secret["data"]["release"])))
    )
    return [doc for doc in yaml.safe_load_all(record["manifest"]) if doc]


def set_paused(plane: Plane, namespace: str, paused: bool) -> None:
    """``spec.paused`` of the Cluster ``mem``; returns once its control plane says so."""
    plane.api.request(
        "PATCH",
        plane.api.path(CAPI, "Cluster", namespace, "mem"),
        {"spec": {"paused": paused}},
        content_type="application/merge-patch+json",
    )

    def seen() -> bool:
        kcps = plane.api.list(KCP_API, "KubeadmControlPlane", namespace)
        return bool(kcps) and all(condition(kcp, "Paused").startswith(str(paused)) for kcp in kcps)

    deadline = time.monotonic() + TIMEOUT
    while not seen():
        plane.check()
        if time.monotonic() > deadline:
            pytest.fail(f"the control plane of {namespace}/mem never reported paused={paused}")
        time.sleep(1.0)


def replace_kubeconfig(plane: Plane, namespace: str, text: str) -> str:
    """Put ``text`` into Cluster API's Secret ``mem-kubeconfig`` (key ``value``); the text
    it held."""
    import base64

    secret = plane.api.get("v1", "Secret", namespace, "mem-kubeconfig")
    assert secret is not None, "Cluster API wrote no kubeconfig Secret"
    before = base64.b64decode(secret["data"]["value"]).decode()
    secret["data"]["value"] = base64.b64encode(text.encode()).decode()
    plane.api.request("PUT", plane.api.path("v1", "Secret", namespace, "mem-kubeconfig"), secret)
    return before


def test_service_releases_installed_by_helm_controller_into_a_real_workload_api_server(
    plane: Plane, controllers: Flux, git_server: str, helm: Helm, tmp_path: Path
) -> None:
    from scs_templates._services.releases import service_releases
    from tests.support.workload_cluster import workload_cluster

    namespace = plane.namespace("flux-services")
    text = inmemory.settings_text(namespace, version=FIRST) + SERVICES
    releases = service_releases(settings_from_text(text))
    assert [r.name for r in releases] == ["cilium", "kubelet-csr-approver", "metrics-server"]
    packages = [f"{r.chart_name}-{r.version}.tgz" for r in releases]
    with chartrepo.serving(tmp_path / "charts", packages) as mirror:
        settings = settings_from_text(f"{text}    chartMirror: {mirror}\n")
        walk = Reconciled(plane, controllers, namespace, tmp_path / "fleet")
        walk.provision(settings, _options(git_server), FIRST)
        with (
            workload_cluster(plane, settings, helm, tmp_path / "workload") as workload,
            kubelet_stand_in(workload.server),
        ):
            # The in-memory workload API cannot host helm (no /version, docs/gitops.md): the
            # cluster's kubeconfig Secret gets the real workload API server's kubeconfig,
            # Cluster API paused meanwhile so that it does not rotate the Secret back.
            set_paused(plane, namespace, True)
            original = replace_kubeconfig(plane, namespace, workload.kubeconfig.read_text())
            # adding the services is a re-run of gitops: the cluster's release is untouched
            changed = walk.write(settings, _options(git_server, services=True))
            names = [f"mem-{r.name}" for r in releases]
            assert [c for c in changed if "helmrelease-" in c] == sorted(
                f"clusters/{namespace}/mem/helmrelease-{n}.yaml" for n in names
            )
            apply_folder(plane, walk.repo)
            for name in names:
                walk.wait(
                    f"the HelmRelease {name} Ready",
                    lambda name=name: walk.released(name),
                    lambda name=name: (
                        f"{condition(walk.release(name), 'Ready')}; Pods "
                        f"refused: {workload.failed_creates()}, missing: {workload.pods_missing()}"
                    ),
                )
            for release in releases:
                # helm's record is in the workload cluster, never on the management cluster
                objects = release_objects(workload.server, release.namespace, release.name)
                assert (
                    plane.api.get(
                        "v1", "Secret", release.namespace, f"sh.helm.release.v1.{release.name}.v1"
                    )
                    is None
                )
                missing = [
                    f"{o['kind']} {o['metadata']['name']}"
                    for o in objects
                    if workload.server.get(
                        o["apiVersion"],
                        o["kind"],
                        o["metadata"].get("namespace", release.namespace),
                        o["metadata"]["name"],
                    )
                    is None
                ]
                assert objects and not missing, f"{release.name}: not in the workload: {missing}"
            # deleting a service's HelmRelease uninstalls it from the workload cluster
            for name, release in reversed(list(zip(names, releases, strict=True))):
                plane.api.delete(HELM, "HelmRelease", namespace, name)
                walk.wait(f"{name} uninstalled", lambda name=name: walk.release(name) is None)
                assert (
                    workload.server.get(
                        "v1", "Secret", release.namespace, f"sh.helm.release.v1.{release.name}.v1"
                    )
                    is None
                )
            replace_kubeconfig(plane, namespace, original)
            set_paused(plane, namespace, False)
        walk.delete()


# ------------------------------------------ the fleet repository applied by kustomize-controller

KUSTOMIZE = "kustomize.toolkit.fluxcd.io/v1"
SOURCE = "source.toolkit.fluxcd.io/v1"


class FleetRepository:
    """The git repository Flux watches: a work tree whose ``fleet/`` folder ``gitops``
    writes, pushed to a bare repository ``fleet.git`` that the real ``git http-backend``
    serves (tests/support/githttp.py)."""

    def __init__(self, root: Path) -> None:
        self.root, self.work = root, root / "work"
        self.work.mkdir(parents=True)
        _git(root, "init", "-q", "--bare", "-b", "main", "fleet.git")
        _git(self.work, "init", "-q", "-b", "main")

    @property
    def fleet(self) -> Path:
        return self.work / "fleet"

    def commit(self, message: str) -> str:
        """Commit every change of the work tree and push it; the commit's id."""
        _git(self.work, "add", "-A")
        _git(self.work, "commit", "-q", "--allow-empty", "-m", message)
        _git(self.work, "push", "-q", str(self.root / "fleet.git"), "main")
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=self.work,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return done.stdout.strip()


def bootstrap(plane: Plane, fleet: FleetRepository, url: str) -> None:
    """What Flux's bootstrap leaves on the management cluster (docs/gitops.md, steps 1-2):
    the GitRepository ``flux-system/flux-system`` of the repository, then the written
    ``fleet/flux/scs-clusters.yaml`` applied once."""
    plane.api.ensure_namespace("flux-system")
    plane.api.apply(
        {
            "apiVersion": SOURCE,
            "kind": "GitRepository",
            "metadata": {"name": "flux-system", "namespace": "flux-system"},
            "spec": {"interval": "10s", "url": url, "ref": {"branch": "main"}},
        }
    )
    plane.api.apply(yaml.safe_load((fleet.fleet / "flux" / "scs-clusters.yaml").read_text()))


def pushed(plane: Plane, fleet: FleetRepository, message: str) -> str:
    """Commit and push (:meth:`FleetRepository.commit`), then ask source-controller to fetch
    now, as ``flux reconcile source git flux-system`` does (the annotation
    ``reconcile.fluxcd.io/requestedAt``), instead of waiting up to the GitRepository's
    interval; kustomize-controller follows the new revision as it would after a poll. The
    commit's id."""
    commit = fleet.commit(message)
    plane.api.request(
        "PATCH",
        plane.api.path(SOURCE, "GitRepository", "flux-system", "flux-system"),
        {"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": commit}}},
        content_type="application/merge-patch+json",
    )
    return commit


def applied(plane: Plane, commit: str) -> Callable[[], bool]:
    """The Kustomization ``scs-clusters`` is Ready with ``commit`` applied."""

    def done() -> bool:
        obj = plane.api.get(KUSTOMIZE, "Kustomization", "flux-system", "scs-clusters") or {}
        revision = str((obj.get("status") or {}).get("lastAppliedRevision") or "")
        return condition(obj, "Ready").startswith("True") and revision.endswith(commit)

    return done


def kustomization_state(plane: Plane) -> str:
    obj = plane.api.get(KUSTOMIZE, "Kustomization", "flux-system", "scs-clusters") or {}
    status = obj.get("status") or {}
    return f"Kustomization {condition(obj, 'Ready')}; applied {status.get('lastAppliedRevision')}"


def test_kustomize_controller_reconciles_the_fleet_from_its_git_repository(
    plane: Plane, controllers: Flux, git_server: str, tmp_path: Path
) -> None:
    """The whole GitOps loop with no object applied by the test but the bootstrap: the real
    kustomize-controller applies the repository ``gitops`` wrote (its kustomize indexes,
    the Flux Kustomization ``scs-clusters`` it writes) from a real git server; source- and
    helm-controller install the cluster chart; the cluster reaches Available. A commit of a
    re-run after a settings change (a patch upgrade) is applied and rolled out. A commit
    that drops the cluster's folder (``--prune``) deletes nothing: every cluster object
    carries ``kustomize.toolkit.fluxcd.io/prune: disabled`` while ``scs-clusters`` prunes."""
    namespace = plane.namespace("flux-kustomize")
    fleet = FleetRepository(tmp_path / "git")
    walk = Reconciled(plane, controllers, namespace, fleet.fleet)
    options = _options(git_server)
    settings = settings_from_text(inmemory.settings_text(namespace, version=FIRST))
    write_gitops(fleet.fleet, [settings], options)
    encryption.ensure_secret(KubeClient(str(plane.kubeconfig)), settings)
    first_commit = fleet.commit("clusters: mem")
    with githttp.serving(fleet.root) as server:
        bootstrap(plane, fleet, f"{server}/fleet.git")
        walk.wait(
            "scs-clusters applied", applied(plane, first_commit), lambda: kustomization_state(plane)
        )
        sources = plane.api.list(SOURCE, "GitRepository", namespace)
        assert [s["metadata"]["name"] for s in sources] == ["scs-templates-v0-1-0"]
        walk.wait(
            "the Cluster Available",
            lambda: condition(walk.cluster(), "Available").startswith("True"),
        )
        walk.wait("the HelmRelease Ready", walk.released)
        walk.wait("3 machines Running", lambda: walk.running(FIRST))
        first = set(walk.machines())

        # a settings change is a commit of a re-run of gitops
        upgraded = settings_from_text(inmemory.settings_text(namespace, version=UPGRADED))
        assert walk.write(upgraded, options) == [f"clusters/{namespace}/mem/helmrelease-mem.yaml"]
        walk.wait(
            "scs-clusters applied",
            applied(plane, pushed(plane, fleet, "mem: patch upgrade")),
            lambda: kustomization_state(plane),
        )
        walk.wait(
            "the rollout to the new patch",
            lambda: walk.running(UPGRADED) and not first & set(walk.machines()),
        )
        walk.wait("the HelmRelease Ready", walk.released)

        # a folder removed from the repository deletes nothing on the management cluster
        result = write_gitops(fleet.fleet, [], options, prune=True)
        assert result.pruned == (f"{namespace}/mem",)
        assert not (fleet.fleet / "clusters" / namespace / "mem").exists()
        walk.wait(
            "scs-clusters applied",
            applied(plane, pushed(plane, fleet, "mem: folder removed")),
            lambda: kustomization_state(plane),
        )
        time.sleep(5)  # a deletion kustomize-controller started would show by now
        ns = plane.api.get("v1", "Namespace", "", namespace) or {}
        assert "deletionTimestamp" not in ns["metadata"], "the namespace is being deleted"
        assert walk.released() and walk.cluster() is not None
        assert walk.running(UPGRADED)
        plane.api.delete(KUSTOMIZE, "Kustomization", "flux-system", "scs-clusters")
        walk.wait(
            "scs-clusters deleted",
            lambda: (
                plane.api.get(KUSTOMIZE, "Kustomization", "flux-system", "scs-clusters") is None
            ),
        )
    walk.delete()


#: The services of the test below: Cilium WITH the Gateway API (its CRDs a Kustomization
#: into the workload cluster, Cilium staged behind it), kubelet-csr-approver, metrics-server.
GATEWAY_SERVICES = """  services:
    ingressNginx:
      enabled: false
    gatewayAPI:
      enabled: true
"""


def test_kustomize_controller_applies_the_gateway_api_crds_before_cilium(
    plane: Plane, controllers: Flux, git_server: str, helm: Helm, tmp_path: Path
) -> None:
    """Cilium with the Gateway API from the repository, by kustomize-controller: the CRD
    chart's objects (files under ``crds/``, rendered at ``gitops`` time from the real chart
    in a served helm repository) applied by the Kustomization ``mem-gateway-api-crds``
    through the kubeconfig Secret into a REAL workload kube-apiserver, then the staged Cilium
    HelmRelease applied by ``mem-after-crds`` (dependsOn the CRD one) and installed there by
    helm-controller, with the other services after it. No object is applied by the test but
    Flux's bootstrap."""
    from scs_templates._services.releases import service_releases
    from tests.support.workload_cluster import workload_cluster

    namespace = plane.namespace("flux-gateway")
    text = inmemory.settings_text(namespace, version=FIRST) + GATEWAY_SERVICES
    releases = service_releases(settings_from_text(text))
    names = [r.name for r in releases]
    assert names[0] == "gateway-api-crds" and "cilium" in names, names
    packages = [f"{r.chart_name}-{r.version}.tgz" for r in releases]
    fleet = FleetRepository(tmp_path / "git")
    walk = Reconciled(plane, controllers, namespace, fleet.fleet)
    with (
        chartrepo.serving(tmp_path / "charts", packages) as mirror,
        githttp.serving(fleet.root) as server,
    ):
        settings = settings_from_text(f"{text}    chartMirror: {mirror}\n")
        write_gitops(fleet.fleet, [settings], _options(git_server))
        encryption.ensure_secret(KubeClient(str(plane.kubeconfig)), settings)
        bootstrap(plane, fleet, f"{server}/fleet.git")
        walk.wait(
            "scs-clusters applied",
            applied(plane, pushed(plane, fleet, "clusters: mem")),
            lambda: kustomization_state(plane),
        )
        walk.wait(
            "the Cluster Available",
            lambda: condition(walk.cluster(), "Available").startswith("True"),
        )
        with (
            workload_cluster(plane, settings, helm, tmp_path / "workload") as workload,
            kubelet_stand_in(workload.server),
        ):
            # as in the services test above: the real workload API server behind the Secret
            set_paused(plane, namespace, True)
            original = replace_kubeconfig(plane, namespace, workload.kubeconfig.read_text())
            write_gitops(fleet.fleet, [settings], _options(git_server, services=True))
            crd_files = sorted((fleet.fleet / "crds").rglob("*.yaml"))
            crds = [yaml.safe_load(p.read_text()) for p in crd_files]
            crds = [o for o in crds if o.get("kind") == "CustomResourceDefinition"]
            assert crds, "no Gateway API CRD written"
            walk.wait(
                "scs-clusters applied",
                applied(plane, pushed(plane, fleet, "mem: services")),
                lambda: kustomization_state(plane),
            )
            for kustomization in ("mem-gateway-api-crds", "mem-after-crds"):
                walk.wait(
                    f"the Kustomization {kustomization} Ready",
                    lambda k=kustomization: condition(
                        plane.api.get(KUSTOMIZE, "Kustomization", namespace, k), "Ready"
                    ).startswith("True"),
                    lambda k=kustomization: condition(
                        plane.api.get(KUSTOMIZE, "Kustomization", namespace, k), "Ready"
                    ),
                )
            # the CRDs are in the workload cluster, not on the management cluster
            for crd in crds:
                name = crd["metadata"]["name"]
                assert workload.server.get(
                    "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name
                ), name
                assert (
                    plane.api.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name)
                    is None
                ), name
            for name in [f"mem-{n}" for n in names if n != "gateway-api-crds"]:
                walk.wait(
                    f"the HelmRelease {name} Ready",
                    lambda name=name: walk.released(name),
                    lambda name=name: (
                        f"{condition(walk.release(name), 'Ready')}; Pods "
                        f"refused: {workload.failed_creates()}, missing: {workload.pods_missing()}"
                    ),
                )
            cilium = next(r for r in releases if r.name == "cilium")
            assert release_objects(workload.server, cilium.namespace, cilium.name)
            plane.api.delete(KUSTOMIZE, "Kustomization", "flux-system", "scs-clusters")
            for name in [f"mem-{n}" for n in reversed(names) if n != "gateway-api-crds"]:
                plane.api.delete(HELM, "HelmRelease", namespace, name)
                walk.wait(f"{name} uninstalled", lambda name=name: walk.release(name) is None)
            replace_kubeconfig(plane, namespace, original)
            set_paused(plane, namespace, False)
        walk.delete()


# ---------------------------------------------------------------- an OCI registry chart source


def push_chart(helm: Helm, registry: str, root: Path) -> str:
    """Package the test-only provider's chart with its library dependency and ``helm push``
    it to ``oci://REGISTRY/scs`` as docs/gitops.md says (plain HTTP: the loopback registry
    has no TLS); the pushed manifest's digest."""
    chart = root / "charts" / inmemory.CHART.name
    shutil.copytree(charts_dir() / LIBRARY_CHART, root / "charts" / LIBRARY_CHART)
    shutil.copytree(inmemory.CHART, chart)
    meta = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    for dependency in meta["dependencies"]:
        dependency["repository"] = f"file://../{LIBRARY_CHART}"
    (chart / "Chart.yaml").write_text(yaml.safe_dump(meta), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root)}
    env |= {f"HELM_{kind}_HOME": str(root / kind.lower()) for kind in ("CACHE", "CONFIG", "DATA")}
    pushed = ""
    for args in (
        ["dependency", "build", str(chart)],
        ["package", str(chart), "-d", str(root)],
        ["push", str(root / f"{meta['name']}-{meta['version']}.tgz"), f"oci://{registry}/scs"],
    ):
        plain = ["--plain-http"] if args[0] == "push" else []
        done = subprocess.run(
            [str(helm.tool.path), *args, *plain],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"helm {args[0]}: {done.stderr}"
        pushed = done.stdout + done.stderr
    digest = re.search(r"Digest: (sha256:[0-9a-f]{64})", pushed)
    assert digest, pushed
    return digest.group(1)


def test_a_cluster_reconciled_from_an_oci_chart_source(
    plane: Plane, controllers: Flux, helm: Helm, tmp_path: Path
) -> None:
    """The chart source ``oci://REGISTRY/PATH``: the provider chart pushed with ``helm push``
    to a real OCI registry (testenv/registry.py, built from its Go module); ``gitops
    --chart-source oci://... --plain-http`` writes an OCIRepository per chart and version;
    source-controller pulls the pushed artifact (the same digest), helm-controller installs
    it through ``chartRef``, the cluster reaches Available and is deleted."""
    from testenv import PlaneError, registry

    try:
        registry.ensure_built()
    except PlaneError as error:
        pytest.fail(f"the OCI registry could not be built: {error}")
    running = registry.start_registry(tmp_path / "registry")
    try:
        digest = push_chart(helm, running.host, tmp_path / "push")
        namespace = plane.namespace("flux-oci")
        walk = Reconciled(plane, controllers, namespace, tmp_path / "fleet")
        source = parse_chart_source(f"oci://{running.host}/scs", plain_http=True)
        options = GitopsOptions(source, interval="1m", services=False)
        settings = settings_from_text(inmemory.settings_text(namespace, version=FIRST))
        write_gitops(walk.repo, [settings], options)
        encryption.ensure_secret(KubeClient(str(plane.kubeconfig)), settings)
        kinds = sorted(o["kind"] for o in apply_folder(plane, walk.repo))
        assert kinds == ["HelmRelease", "Namespace", "OCIRepository"]
        name = source.source_name(inmemory.CHART.name, "0.1.0")

        def pulled() -> bool:
            obj = plane.api.get(SOURCE, "OCIRepository", namespace, name) or {}
            artifact = (obj.get("status") or {}).get("artifact") or {}
            return str(artifact.get("revision", "")).endswith(digest)

        walk.wait(
            f"the OCIRepository {name} pulled {digest}",
            pulled,
            lambda: condition(plane.api.get(SOURCE, "OCIRepository", namespace, name), "Ready"),
        )
        walk.wait(
            "the Cluster Available",
            lambda: condition(walk.cluster(), "Available").startswith("True"),
        )
        walk.wait("the HelmRelease Ready", walk.released)
        walk.wait("3 machines Running", lambda: walk.running(FIRST))
        walk.delete()
    finally:
        running.stop()
