"""A REAL workload cluster's control plane for the service tests (no nodes' kubelets).

:class:`WorkloadCluster` is a second real kube-apiserver next to the test plane (testenv/,
sharing its etcd under its own prefix), started with the admission flags and the admission
configuration file the cluster chart renders for the settings (Pod Security defaults and
exemptions, EventRateLimit), plus its own real kube-controller-manager running the
controllers that turn workloads into Pods (Deployment, ReplicaSet, DaemonSet, StatefulSet,
Job, CronJob) and the ServiceAccount, namespace and garbage-collector controllers. Two Node
objects (a control-plane node with its taint and a worker) give the DaemonSet controller
somewhere to put Pods.

What cannot run here: kubelets and a container runtime (no Docker engine, no images), so no
Pod ever starts; and a scheduler is not needed for the question asked. The question is
admission: a Pod that Pod Security (or any other admission plugin) refuses is never created
and its controller records ``FailedCreate``; a Pod that is admitted exists, Pending. So
:meth:`WorkloadCluster.pods_missing` demands every Pod the controllers should have made, and
:meth:`WorkloadCluster.failed_creates` collects every refusal the controllers reported.
"""

from __future__ import annotations

import base64
import contextlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scs_templates import api
from scs_templates._services.runner import ServicesHelmfile
from scs_templates._settings.model import ClusterSettings
from scs_templates._tools.helm import Helm

if TYPE_CHECKING:
    from scs_templates._tools.kube import KubeClient
    from testenv import Plane
    from testenv.kubeapi import KubeAPI

#: The controllers of the workload cluster's kube-controller-manager that this test needs.
WORKLOAD_CONTROLLERS = (
    "garbage-collector-controller",
    "namespace-controller",
    "deployment-controller",
    "replicaset-controller",
    "daemonset-controller",
    "statefulset-controller",
    "job-controller",
    "cronjob-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    # claims and volumes (tests/cloud/test_plane_openstack_cinder_csi.py): binding, and the
    # protection finalizers the StorageObjectInUseProtection admission plugin adds
    "persistentvolume-binder-controller",
    "persistentvolume-protection-controller",
    "persistentvolumeclaim-protection-controller",
)

#: Kinds whose controllers create Pods, and where their Pod template is.
POD_TEMPLATES: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps/v1", "Deployment"): ("spec", "template"),
    ("apps/v1", "DaemonSet"): ("spec", "template"),
    ("apps/v1", "StatefulSet"): ("spec", "template"),
    ("batch/v1", "Job"): ("spec", "template"),
    ("batch/v1", "CronJob"): ("spec", "jobTemplate", "spec", "template"),
}

NODES: tuple[dict[str, Any], ...] = (
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "work-control-plane-0",
            "labels": {
                "kubernetes.io/hostname": "work-control-plane-0",
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "node-role.kubernetes.io/control-plane": "",
            },
        },
        "spec": {
            "taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "work-w-0",
            "labels": {
                "kubernetes.io/hostname": "work-w-0",
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
            },
        },
    },
)


#: Where the rendered admission configuration lives on a node.
ADMISSION_PATH = "/etc/kubernetes/admission/admission-config.yaml"


def apiserver_flags(spec: dict[str, Any], directory: Path) -> tuple[str, ...]:
    """The rendered admission flags of a KubeadmControlPlane ``spec``, with the file written
    where the flag points (locally; tests/plane/test_plane_apiserver_files.py)."""
    [entry] = [f for f in spec["files"] if f["path"] == ADMISSION_PATH]
    local = directory / "admission-config.yaml"
    local.write_text(entry["content"])
    flags = []
    for arg in spec["clusterConfiguration"]["apiServer"]["extraArgs"]:
        if arg["name"] == "admission-control-config-file":
            assert arg["value"] == ADMISSION_PATH
            flags.append(f"--admission-control-config-file={local}")
        elif arg["name"] == "enable-admission-plugins":
            flags.append(f"--enable-admission-plugins={arg['value']}")
    assert len(flags) == 2, spec["clusterConfiguration"]["apiServer"]["extraArgs"]
    return tuple(flags)


class NoHooksHelmfile(ServicesHelmfile):
    """The real services helmfile, syncing with ``helm --no-hooks``: helm waits for a hook
    Job to finish (Cilium's ``hubble-generate-certs``, cert-manager's ``startupapicheck``),
    which needs a kubelet; where the hooks matter the test creates them itself
    (:meth:`WorkloadCluster.create_hooks`)."""

    def run(
        self, state: Mapping[str, Any], command: Sequence[str], *, cluster: bool = False
    ) -> Any:
        if "sync" in command:
            command = [*command, "--args", "--no-hooks"]
        return super().run(state, command, cluster=cluster)


def control_plane_spec(settings: ClusterSettings, helm: Helm) -> dict[str, Any]:
    """The KubeadmControlPlane's ``kubeadmConfigSpec`` the cluster chart renders."""
    result = api.render(settings, helm=helm)
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    spec: dict[str, Any] = kcp["spec"]["kubeadmConfigSpec"]
    return spec


@dataclass
class WorkloadCluster:
    """A running workload API server (+ controllers) registered on the plane for one cluster."""

    plane: Plane
    settings: ClusterSettings
    server: KubeAPI
    kubeconfig: Path

    def register(self) -> None:
        """The ``<cluster>-kubeconfig`` Secret on the management plane, as CAPI writes it."""
        from testenv.kubeapi import APIError

        text = self.kubeconfig.read_text()
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{self.settings.name}-kubeconfig"},
            "data": {"value": base64.b64encode(text.encode()).decode()},
        }
        try:
            self.plane.api.create(secret, namespace=self.settings.metadata.namespace)
        except APIError as error:
            if error.status != 409:
                raise

    # ------------------------------------------------------------------ what exists

    def workloads(self) -> list[dict[str, Any]]:
        """Every Pod-creating object in the workload cluster (apiVersion/kind filled in)."""
        found = []
        for api_version, kind in POD_TEMPLATES:
            for obj in self.server.list(api_version, kind):
                found.append({**obj, "apiVersion": api_version, "kind": kind})
        return found

    def crds_not_established(self) -> list[str]:
        missing = []
        for crd in self.server.list("apiextensions.k8s.io/v1", "CustomResourceDefinition"):
            conditions = {
                c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions", [])
            }
            if conditions.get("Established") != "True":
                missing.append(crd["metadata"]["name"])
        return sorted(missing)

    def failed_creates(self) -> dict[str, str]:
        """``namespace/Kind/name`` -> message of every ``FailedCreate`` the controllers
        reported (Events, and a ReplicaSet's ``ReplicaFailure`` condition, which is kept even
        when EventRateLimit drops an event)."""
        failed: dict[str, str] = {}
        for event in self.server.list("v1", "Event"):
            if event.get("reason") == "FailedCreate":
                obj = event.get("involvedObject") or {}
                key = f"{obj.get('namespace')}/{obj.get('kind')}/{obj.get('name')}"
                failed[key] = str(event.get("message", ""))
        for rs in self.server.list("apps/v1", "ReplicaSet"):
            for condition in (rs.get("status") or {}).get("conditions") or []:
                if condition.get("type") == "ReplicaFailure" and condition.get("status") == "True":
                    meta = rs["metadata"]
                    key = f"{meta['namespace']}/ReplicaSet/{meta['name']}"
                    failed[key] = str(condition.get("message", ""))
        return failed

    def pods_missing(self) -> dict[str, str]:
        """``namespace/Kind/name`` -> what is missing, for every workload whose controller
        has not created the Pods it should have (a refused Pod is never created)."""
        pods = self.server.list("v1", "Pod")
        replica_sets = self.server.list("apps/v1", "ReplicaSet")
        jobs = self.server.list("batch/v1", "Job")

        def owned(items: list[dict[str, Any]], kind: str, namespace: str, name: str) -> list[Any]:
            return [
                item
                for item in items
                if item["metadata"]["namespace"] == namespace
                and any(
                    ref.get("kind") == kind and ref.get("name") == name
                    for ref in item["metadata"].get("ownerReferences") or []
                )
            ]

        missing: dict[str, str] = {}
        for obj in self.workloads():
            meta, kind = obj["metadata"], obj["kind"]
            namespace, name = meta["namespace"], meta["name"]
            key = f"{namespace}/{kind}/{name}"
            spec = obj.get("spec") or {}
            if kind == "Deployment":
                want = int(spec.get("replicas", 1))
                have = sum(
                    len(owned(pods, "ReplicaSet", namespace, rs["metadata"]["name"]))
                    for rs in owned(replica_sets, "Deployment", namespace, name)
                )
            elif kind == "DaemonSet":
                want = int((obj.get("status") or {}).get("desiredNumberScheduled", 0))
                if want == 0:
                    missing[key] = "no node to run on (desiredNumberScheduled 0)"
                    continue
                have = len(owned(pods, "DaemonSet", namespace, name))
            elif kind == "StatefulSet":  # OrderedReady: Pod 0 first, the rest once it is Ready
                want = 1 if int(spec.get("replicas", 1)) else 0
                have = len(owned(pods, "StatefulSet", namespace, name))
            elif kind == "Job":
                want = 1
                have = len(owned(pods, "Job", namespace, name))
            else:  # CronJob: its Jobs, started by the test (see start_cron_jobs)
                want = 1
                have = sum(
                    len(owned(pods, "Job", namespace, job["metadata"]["name"]))
                    for job in owned(jobs, "CronJob", namespace, name)
                )
            if have < want:
                missing[key] = f"{have} of {want} Pods created"
        return missing

    # ------------------------------------------------------------------ acting like others

    def start_cron_jobs(self) -> None:
        """One Job from every CronJob's template, owned by it (``kubectl create job --from``)."""
        from testenv.kubeapi import APIError

        for cron in self.server.list("batch/v1", "CronJob"):
            meta = cron["metadata"]
            job = {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": f"{meta['name']}-manual"[:63],
                    "namespace": meta["namespace"],
                    "ownerReferences": [
                        {
                            "apiVersion": "batch/v1",
                            "kind": "CronJob",
                            "name": meta["name"],
                            "uid": meta["uid"],
                        }
                    ],
                },
                "spec": cron["spec"]["jobTemplate"]["spec"],
            }
            try:
                self.server.create(job)
            except APIError as error:
                if error.status != 409:
                    raise

    def create_hooks(self, objects: list[dict[str, Any]]) -> list[str]:
        """Create the charts' hook objects (``helm.sh/hook``, tests excepted) as helm would:
        the test syncs with ``--no-hooks`` because helm waits for hook Jobs to finish, which
        needs a kubelet. Jobs last, so their ServiceAccounts exist. Returns what was made."""
        from testenv.kubeapi import APIError

        def is_job(obj: Mapping[str, Any]) -> bool:
            return obj["kind"] == "Job"

        made = []
        for obj in sorted(objects, key=is_job):
            try:
                self.server.create(obj)
            except APIError as error:
                if error.status != 409:
                    raise
            made.append(
                f"{obj['metadata'].get('namespace')}/{obj['kind']}/{obj['metadata']['name']}"
            )
        return made

    def wait_for_pods(self, timeout: float = 240.0) -> dict[str, str]:
        """Wait until every workload has its Pods or a refusal shows up; return what is
        missing then (empty: all admitted)."""
        deadline = time.monotonic() + timeout
        while True:
            missing = self.pods_missing()
            if not missing or self.failed_creates() or time.monotonic() > deadline:
                return missing
            time.sleep(2.0)


@contextlib.contextmanager
def workload_cluster(
    plane: Plane,
    settings: ClusterSettings,
    helm: Helm,
    directory: Path,
    *,
    admission: ClusterSettings | None = None,
) -> Iterator[WorkloadCluster]:
    """Start the workload cluster of ``settings``: API server with the admission
    configuration the cluster chart renders for ``admission`` (default: ``settings``), its
    kube-controller-manager, two Nodes; registered on the plane."""
    from testenv.plane import _die_with_parent, _kubeconfig, _write_private, extra_apiserver
    from testenv.process import Daemon, wait_for

    directory.mkdir(parents=True, exist_ok=True)
    flags = apiserver_flags(control_plane_spec(admission or settings, helm), directory)
    name = f"workload-{settings.metadata.namespace}"
    with extra_apiserver(plane, name, flags) as server:
        pki = plane.directory / "pki"
        kubeconfig = directory / "kubeconfig"
        _write_private(
            kubeconfig,
            _kubeconfig(
                f"https://{server.host}:{server.port}",
                pki / "ca.crt",
                pki / "admin.crt",
                pki / "admin.key",
            ),
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBECONFIG")}
        controllers = Daemon(
            f"{name}-controller-manager",
            [
                str(plane.bin / "kube-controller-manager"),
                f"--kubeconfig={kubeconfig}",
                f"--controllers={','.join(WORKLOAD_CONTROLLERS)}",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}",
                "--leader-elect=false",
                "--secure-port=0",
                "--use-service-account-credentials=false",
                "--concurrent-daemonset-syncs=5",
            ],
            env=env,
            log=plane.directory / "logs" / f"{name}-controller-manager.log",
            preexec=_die_with_parent,
        )
        try:
            for node in NODES:
                server.create(node)
                node_name = node["metadata"]["name"]
                server.patch_status(
                    "v1",
                    "Node",
                    "",
                    node_name,
                    {"conditions": [{"type": "Ready", "status": "True", "reason": "Test"}]},
                )
                # The API server taints a new Node node.kubernetes.io/not-ready (it has no
                # Ready condition yet); the node lifecycle controller lifts it once the
                # kubelet reports Ready (after the CNI runs). No kubelet reports here, so
                # the test lifts it, as it would be once the cluster is up.
                server.request(
                    "PATCH",
                    server.path("v1", "Node", "", node_name),
                    {"spec": {"taints": (node.get("spec") or {}).get("taints")}},
                    content_type="application/merge-patch+json",
                )

            def default_account() -> bool:  # the serviceaccount controller runs
                return server.get("v1", "ServiceAccount", "default", "default") is not None

            wait_for("the workload controllers", default_account, 120.0, [controllers])
            _operator_crds(server, settings)
            cluster = WorkloadCluster(plane, settings, server, kubeconfig)
            cluster.register()
            yield cluster
        finally:
            controllers.stop()


def _operator_crds(server: KubeAPI, settings: ClusterSettings) -> None:
    """The CRDs a CNI's operator would create at start, where a release needs them: Cilium's
    CiliumClusterwideNetworkPolicy for the metadata policy (no Cilium operator runs here)."""
    from scs_templates._services.releases import service_releases
    from tests.support.cni_crds import cilium_policy_crd, install_crds

    releases = {r.name: r for r in service_releases(settings)}
    if "metadata-policy" in releases and "cilium" in releases:
        install_crds(server, [cilium_policy_crd(releases["cilium"].version)])


@contextlib.contextmanager
def empty_workload(plane: Plane, name: str, directory: Path) -> Iterator[KubeClient]:
    """An empty real kube-apiserver next to the plane as a workload cluster nothing runs on
    (for what only needs its API: a rotation's cloud-config Secret), and a client for it
    through a kubeconfig (0600 in ``directory``) with the plane's credentials."""
    import json

    from scs_templates._tools.kube import KubeClient
    from testenv.plane import extra_apiserver

    with extra_apiserver(plane, name, ()) as server:
        config = json.loads(plane.kubeconfig.read_text())
        config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{server.port}"
        path = directory / f"{name}.kubeconfig"
        path.write_text(json.dumps(config))
        path.chmod(0o600)
        with KubeClient(str(path)) as client:
            yield client


def apply(cluster: WorkloadCluster, settings: ClusterSettings, **options: Any) -> Any:
    """``services apply`` of ``settings`` onto ``cluster`` as the CLI runs it, without waiting
    and without helm hooks (no kubelet here: :class:`NoHooksHelmfile`)."""
    from scs_templates._services.deploy import apply as apply_services

    return apply_services(
        settings,
        kubeconfig=str(cluster.plane.kubeconfig),
        install_cluster=False,
        wait=False,
        poll_interval=0.5,
        kubeconfig_timeout=30,
        api_timeout=60,
        helmfile=NoHooksHelmfile(),
        **options,
    )
