"""The standard services, installed by ``apply`` into a REAL workload cluster control plane.

The management cluster is a real test plane (testenv/: etcd, kube-apiserver,
kube-controller-manager). The workload cluster is a second real kube-apiserver started with
exactly the admission configuration the cluster chart renders for the settings (Pod Security
defaults and exemptions, EventRateLimit) and its own real kube-controller-manager
(tests/support/workload_cluster.py). ``apply`` installs the REAL charts (../shared/charts as a local
chart mirror) with the real helmfile and helm; the cluster-autoscaler goes to the plane.

Then, for each CNI and each Pod Security level: every Deployment, DaemonSet, StatefulSet,
Job and CronJob of every service gets its Pods created by the real controllers (a Pod that
admission refuses is never created; its controller reports ``FailedCreate``), every CRD is
Established. Hooks: helm waits for hook Jobs to finish, which needs a kubelet, so the sync
runs with ``--no-hooks`` and the test then creates every hook object of the rendered charts
itself (``services render`` is what ``apply`` installs), so hook Jobs are admitted too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates._services.releases import service_releases
from scs_templates._settings.model import ClusterSettings
from scs_templates._settings.validate import parse_settings_text
from scs_templates._tools.helm import Helm
from tests import support
from tests.support import REPO, real_charts
from tests.support.workload_cluster import WorkloadCluster, apply, workload_cluster

if TYPE_CHECKING:
    from testenv import Plane


PRIVILEGED_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "privileged", "namespace": "default"},
    "spec": {
        "selector": {"matchLabels": {"app": "privileged"}},
        "template": {
            "metadata": {"labels": {"app": "privileged"}},
            "spec": {
                "automountServiceAccountToken": False,
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.invalid/x:1",
                        "securityContext": {"privileged": True},
                    }
                ],
            },
        },
    },
}


def workload_settings(
    namespace: str, cni: str, enforce: str, *, exempt: Sequence[str] | None = None, **services: Any
) -> ClusterSettings:
    """An OpenStack cluster with every service on (autoscaling workers: the autoscaler)."""
    pod_security: dict[str, Any] = {"enforce": enforce}
    if exempt is not None:
        pod_security["exemptNamespaces"] = list(exempt)
    chosen: dict[str, Any] = {
        "certManager": {"enabled": True},
        "flux": {"enabled": True},
        "ingressNginx": {"enabled": True},
        "gatewayAPI": {"enabled": True},
    }
    chosen.update(services)
    return support.settings_of(
        {
            "provider": "openstack",
            "controlPlane": {"replicas": 1, "machineType": "SCS-2V-4"},
            "workers": [
                {"name": "w", "machineType": "SCS-2V-4", "autoscaling": {"min": 0, "max": 3}}
            ],
            "security": {"podSecurity": pod_security},
            "services": {
                "chartMirror": str(real_charts()),
                "cni": {"type": cni},
                **chosen,
            },
        },
        name="work",
        namespace=namespace,
    )


def hook_objects(settings: ClusterSettings) -> list[dict[str, Any]]:
    """Every non-test hook object of the workload releases, in its release's namespace."""
    from scs_templates._services.preview import render_services

    rendered = render_services(settings)
    namespaces = {r.chart_name: r.namespace for r in rendered.releases if r.target == "workload"}
    hooks = []
    for text, obj in zip(rendered.documents, rendered.objects, strict=True):
        hook = ((obj.get("metadata") or {}).get("annotations") or {}).get("helm.sh/hook", "")
        if not hook or "test" in hook:
            continue
        [source] = [line for line in text.splitlines() if line.startswith("# Source: ")]
        chart = source.removeprefix("# Source: ").split("/", 1)[0]
        if chart in namespaces:
            meta = obj["metadata"]
            obj["metadata"] = {"namespace": namespaces[chart], **meta}
            if obj["kind"].startswith("Cluster"):
                obj["metadata"].pop("namespace")
            hooks.append(obj)
    return hooks


@pytest.fixture(scope="module")
def plane(api_plane: Plane) -> Plane:
    """Without the Cluster API managers (conftest's api_plane): the services need none."""
    return api_plane


#: Every example (its own services, provider and Pod Security settings), and
#: both CNIs with every service on under the strictest level with no namespace exempt
#: (apply labels each service namespace) and under the default (baseline, kube-system
#: exempt). ``privileged`` admits every Pod by definition.
CASES = [
    pytest.param(("docker-dev.yaml",), id="example-docker-dev"),
    # its services are openstack-minimal's plus the autoscaler (test_examples_...); its
    # admission configuration is rendered from openstack-minimal (a ClusterClass patches it
    # in at topology time), whose security settings are the same
    pytest.param(
        ("openstack-clusterclass.yaml", "openstack-minimal.yaml"),
        id="example-openstack-clusterclass",
    ),
    pytest.param(("openstack-production.yaml",), id="example-openstack-production"),
    pytest.param(("openstack-all-features.yaml",), id="example-openstack-all-features"),
    pytest.param(("cilium", "restricted", ()), id="cilium-restricted-no-exemptions"),
    pytest.param(("calico", "restricted", ()), id="calico-restricted-no-exemptions"),
    pytest.param(("calico", "baseline", None), id="calico-baseline-default"),
]


def example_settings(name: str, namespace: str) -> ClusterSettings:
    """The example ``name`` in ``namespace``, its charts from the real chart mirror."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load((REPO / "examples" / name).read_text())
    data["metadata"]["namespace"] = namespace
    services = data["spec"].setdefault("services", {})
    services["chartMirror"] = str(real_charts())
    return parse_settings_text(json.dumps(data)).settings


def test_the_cases_cover_every_example() -> None:
    """docker-clusterclass asks for docker-dev's services, openstack-minimal for a subset of
    openstack-clusterclass's; each pair has the same security settings."""

    def services(name: str) -> list[tuple[str, str]]:
        return [(r.catalogue, r.version) for r in service_releases(example_settings(name, "ns-a"))]

    assert services("docker-clusterclass.yaml") == services("docker-dev.yaml")
    minimal = services("openstack-minimal.yaml")
    assert [s for s in services("openstack-clusterclass.yaml") if s not in minimal] == [
        ("cluster-autoscaler", "9.59.0")
    ]
    for first, second in [
        ("docker-clusterclass.yaml", "docker-dev.yaml"),
        ("openstack-clusterclass.yaml", "openstack-minimal.yaml"),
    ]:
        security = [example_settings(name, "ns-a").spec.security for name in (first, second)]
        assert security[0] == security[1]
    covered = {case.values[0][0] for case in CASES if len(case.values[0]) < 3}
    assert covered | {"docker-clusterclass.yaml", "openstack-minimal.yaml"} == {
        path.name for path in (REPO / "examples").glob("*.yaml")
    }


@pytest.fixture(scope="module", params=CASES)
def installed(
    request: pytest.FixtureRequest,
    plane: Plane,
    helm: Helm,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[WorkloadCluster, Any]]:
    """A workload cluster per case with every service applied (shared by the module's tests
    of that case; pytest orders them so that one runs at a time)."""
    namespace = plane.namespace("svc")
    admission = None
    if len(request.param) < 3:
        settings = example_settings(request.param[0], namespace)
        if len(request.param) == 2:
            admission = example_settings(request.param[1], namespace)
    else:
        cni, enforce, exempt = request.param
        settings = workload_settings(namespace, cni, enforce, exempt=exempt)
    directory = tmp_path_factory.mktemp("workload")
    with workload_cluster(plane, settings, helm, directory, admission=admission) as cluster:
        result = apply(cluster, settings)
        yield cluster, result


def test_every_service_pod_is_admitted_and_every_crd_established(
    installed: tuple[WorkloadCluster, Any],
) -> None:
    cluster, result = installed
    settings = cluster.settings
    assert sorted(result.synced) == sorted(r.name for r in service_releases(settings))
    assert {"metrics-server", "kubelet-csr-approver"} <= set(result.synced)
    hooks = hook_objects(settings)
    made = cluster.create_hooks(hooks)
    assert len(made) == len(hooks)
    if settings.spec.services.cert_manager.enabled:
        assert any(m.endswith("/Job/cert-manager-startupapicheck") for m in made), made
    cluster.start_cron_jobs()
    missing = cluster.wait_for_pods()
    assert cluster.failed_creates() == {}
    assert missing == {}
    kinds = {w["kind"] for w in cluster.workloads()}
    assert {"Deployment", "DaemonSet"} <= kinds
    assert len(cluster.workloads()) >= 4
    assert cluster.crds_not_established() == []
    if settings.spec.services.gateway_api.enabled:
        assert "httproutes.gateway.networking.k8s.io" in _gateway_crds(cluster.server)


def test_a_second_apply_changes_nothing(installed: tuple[WorkloadCluster, Any]) -> None:
    """Every case, both CNIs: after ``apply`` a second one plans ``unchanged`` everywhere,
    the server-side CRD releases included (Calico v3.32's ``calico-crds`` is compared by the
    live CRDs' ``spec.versions``, which the real API server must hand back as applied)."""
    cluster, first = installed
    again = apply(cluster, cluster.settings)
    assert again.synced == ()
    assert {p.name: p.action for p in again.plan} == {p.name: "unchanged" for p in first.plan}
    if cluster.settings.spec.services.cni.type == "calico":
        assert "calico-crds" in first.synced  # applied server-side, before the operator
        crds = cluster.server.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        names = {c["metadata"]["name"] for c in crds}
        assert {"ippools.crd.projectcalico.org", "installations.operator.tigera.io"} <= names


def test_a_refused_pod_is_seen(installed: tuple[WorkloadCluster, Any]) -> None:
    """The check can fail: the same controllers report a privileged Pod refused in a plain
    namespace (unless the level is privileged, which no case uses)."""
    cluster, _ = installed
    cluster.server.create(PRIVILEGED_DEPLOYMENT)
    try:
        cluster.wait_for_pods(timeout=60)
        failed = cluster.failed_creates()
        assert any(key.startswith("default/") for key in failed), failed
        assert any("violates PodSecurity" in message for message in failed.values()), failed
        assert "default/Deployment/privileged" in cluster.pods_missing()
    finally:
        cluster.server.delete("apps/v1", "Deployment", "default", "privileged")


def _allowed(plane: Plane, user: str, namespace: str, verb: str, resource: str) -> bool:
    """The plane's real RBAC authorizer: may ``user`` do ``verb`` on ``resource``
    (``group/plural[/subresource]``) in ``namespace``?"""
    group, _, rest = resource.partition("/")
    plural, _, subresource = rest.partition("/")
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": user,
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"],
            "resourceAttributes": {
                "namespace": namespace,
                "verb": verb,
                "group": group,
                "resource": plural,
                "subresource": subresource,
            },
        },
    }
    answer = plane.api.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    return bool(answer["status"].get("allowed"))


def test_the_autoscaler_runs_next_to_the_cluster_with_namespace_rbac(
    installed: tuple[WorkloadCluster, Any],
) -> None:
    """Deliverable 5 on the real plane: the chart's Deployment gets its Pod from the plane's
    real controllers, mounting the cluster's kubeconfig Secret, and the real RBAC authorizer
    lets its ServiceAccount scale this cluster's groups and nothing elsewhere."""
    from scs_templates._services.releases import autoscaler_enabled

    cluster, result = installed
    plane, settings = cluster.plane, cluster.settings
    namespace, name = settings.metadata.namespace, settings.name
    deployments = plane.api.list("apps/v1", "Deployment", namespace)
    if not autoscaler_enabled(settings):  # no group autoscales: no autoscaler
        assert deployments == []
        assert not [s for s in result.synced if s.endswith("cluster-autoscaler")]
        return
    assert f"{name}-cluster-autoscaler" in result.synced
    [deployment] = deployments
    assert deployment["metadata"]["name"] == f"{name}-autoscaler"
    pod_spec = deployment["spec"]["template"]["spec"]
    [container] = pod_spec["containers"]
    args = container.get("command", []) + container.get("args", [])
    assert "--cloud-provider=clusterapi" in args
    discovery = f"--node-group-auto-discovery=clusterapi:clusterName={name},namespace={namespace}"
    assert discovery in args
    kubeconfig_arg = next(a for a in args if a.startswith("--kubeconfig="))
    [volume] = [v for v in pod_spec["volumes"] if v.get("secret")]
    assert volume["secret"]["secretName"] == f"{name}-kubeconfig"
    [mount] = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    assert kubeconfig_arg == f"--kubeconfig={mount['mountPath']}/value"  # the Secret's key

    def pods() -> list[dict[str, Any]]:
        return [
            p
            for p in plane.api.list("v1", "Pod", namespace)
            if p["metadata"]["name"].startswith(f"{name}-autoscaler-")
        ]

    deadline = time.monotonic() + 120
    while not pods() and time.monotonic() < deadline:
        time.sleep(1.0)
    assert pods(), "the plane's controllers created no autoscaler Pod"

    account = f"system:serviceaccount:{namespace}:{pod_spec['serviceAccountName']}"
    here = [
        ("list", "cluster.x-k8s.io/machinedeployments"),
        ("watch", "cluster.x-k8s.io/machines"),
        ("patch", "cluster.x-k8s.io/machinedeployments/scale"),
        ("update", "cluster.x-k8s.io/machinepools/scale"),
        ("list", f"infrastructure.cluster.x-k8s.io/{settings.spec.provider}machinetemplates"),
    ]
    assert [v for v, r in here if not _allowed(plane, account, namespace, v, r)] == []
    other = plane.namespace("other")
    assert [v for v, r in here if _allowed(plane, account, other, v, r)] == []
    assert not _allowed(plane, account, namespace, "get", "/secrets")  # mounted, not read
    assert not [
        r
        for r in plane.api.list("rbac.authorization.k8s.io/v1", "ClusterRole")
        if r["metadata"]["name"].startswith(f"{name}-autoscaler")
    ]


def test_keep_on_disable_force_remove_and_the_cni_guard(
    plane: Plane, helm: Helm, tmp_path: Path
) -> None:
    """On a real workload API server: a second apply changes nothing (the server-side
    Gateway API CRDs included); a disabled service is kept, removed with --force-remove;
    the Gateway API CRDs survive both; a CNI switch is refused before anything changes."""
    from scs_templates._services.deploy import CniSwitchError

    namespace = plane.namespace("svc")
    small = {"certManager": {"enabled": False}, "flux": {"enabled": False}}
    small["ingressNginx"] = {"enabled": False}
    settings = workload_settings(namespace, "cilium", "baseline", **small)
    with workload_cluster(plane, settings, helm, tmp_path / "workload") as cluster:
        server = cluster.server
        first = apply(cluster, settings)
        actions = {p.name: p.action for p in first.plan}
        assert actions["gateway-api-crds"] == "install"
        assert actions["cilium"] == "install"
        assert "gateway-api-crds" in first.synced
        assert server.get("v1", "Secret", "kube-system", "sh.helm.release.v1.cilium.v1")
        # no helm release holds the Gateway API CRDs (its record would not fit a Secret)
        assert not server.list("v1", "Secret", "kube-system", "name=gateway-api-crds")
        gateway_crds = _gateway_crds(server)
        assert "httproutes.gateway.networking.k8s.io" in gateway_crds

        again = apply(cluster, settings)
        assert again.synced == ()
        assert {p.action for p in again.plan} == {"unchanged"}

        off = workload_settings(
            namespace,
            "cilium",
            "baseline",
            **small,
            metricsServer={"enabled": False},
            gatewayAPI={"enabled": False},
        )
        kept = apply(cluster, off)
        actions = {p.name: p.action for p in kept.plan}
        assert actions["metrics-server"] == "keep"
        assert actions["gateway-api-crds"] == "keep"
        assert server.get("apps/v1", "Deployment", "kube-system", "metrics-server")
        removed = apply(cluster, off, force_remove=True)
        actions = {p.name: p.action for p in removed.plan}
        assert actions["metrics-server"] == "remove"
        assert actions["gateway-api-crds"] == "keep"
        assert server.get("apps/v1", "Deployment", "kube-system", "metrics-server") is None
        assert _gateway_crds(server) == gateway_crds

        with pytest.raises(CniSwitchError):
            apply(cluster, workload_settings(namespace, "calico", "baseline", **small))
        assert server.get("apps/v1", "Deployment", "tigera-operator", "tigera-operator") is None
        assert server.get("apps/v1", "DaemonSet", "kube-system", "cilium") is not None


def _gateway_crds(server: Any) -> list[str]:
    return sorted(
        c["metadata"]["name"]
        for c in server.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        if c["metadata"]["name"].endswith(".gateway.networking.k8s.io")
    )
