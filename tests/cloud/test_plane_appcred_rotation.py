"""``openstack appcred rotate`` end to end: the REAL Keystone, REAL API servers, REAL charts.

- Keystone: the local test stack (tests/support/openstack_stack.py), a user with their own
  unrestricted application credential (the parent) as a real user has it.
- The management cluster: a real test plane (testenv/: etcd, kube-apiserver,
  kube-controller-manager) holding the credentials Secret, written by the library through
  the Kubernetes API as ``install`` writes it.
- The workload cluster: a second real kube-apiserver with its own real
  kube-controller-manager (tests/support/workload_cluster.py); ``apply`` installs the REAL upstream
  OCCM and Cinder CSI charts (../shared/charts) with their ``kube-system/cloud-config``, as it
  does for a real cluster. No kubelet runs here, so the test plays it in :class:`Kubelet`
  (tests/support/openstack_workload.py): every Pod the real controllers create is reported Ready, so
  that the real Deployment and DaemonSet controllers roll the restart through (an old Pod
  goes only once its successor is available).

The rotation must make a new restricted credential, switch the Secret on the management
cluster and in the workload cluster, restart every OCCM/CSI workload onto it (each Pod that
exists afterwards is of the new template), and only then delete the old credential; a dry
run changes nothing; a run interrupted after the switch or before it is finished by the next
run; no secret ever reaches stdout, stderr or a log record.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import _lifecycle as lifecycle
from scs_templates._cli.main import main
from scs_templates._settings.model import ClusterSettings
from scs_templates._tools.kube import KubeClient
from scs_templates.providers.openstack.appcred import (
    WORKLOAD_SUFFIX,
    cluster_credentials_in_keystone,
    create_app_credential,
    ensure_cluster_credentials,
)
from scs_templates.providers.openstack.connection import cloud_access
from scs_templates.providers.openstack.credentials_secret import (
    credentials_secret_data,
    parse_credentials_secret,
)
from scs_templates.providers.openstack.rotation import ROTATED_ANNOTATION, rotate_credentials
from tests.support.openstack_fixtures import (
    OCTAVIA_CINDER_NOVA_API,
    Tenant,
    make_tenant,
)
from tests.support.openstack_workload import (
    Kubelet,
    cluster_settings,
    install_credentials,
    installed,
    rotate_through_cli,
    settings_text,
    stored_credentials,
    write_settings,
)
from tests.support.workload_cluster import WorkloadCluster, apply, empty_workload, workload_cluster

if TYPE_CHECKING:
    from scs_templates._tools.helm import Helm
    from testenv import Plane
    from tests.support.openstack_stack import Stack


SECRET_NAME = "capi-rot-cloud-config"
SPLIT_SECRET = "capi-split-cloud-config"


#: Only Keystone is used: the stack of the CAPO rotation and Cinder CSI modules serves.
STACK = OCTAVIA_CINDER_NOVA_API


@pytest.fixture(scope="module")
def stack(shared_stack: Stack) -> Stack:
    """The session's stack of :data:`STACK` (tests/cloud/conftest.py)."""
    return shared_stack


@pytest.fixture(scope="module")
def tenant(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    return make_tenant(stack, tmp_path_factory.mktemp("rotation-cloud"), "rot")


def _consumers(cluster: WorkloadCluster) -> dict[str, dict[str, Any]]:
    """The workloads of kube-system that mount cloud-config, by kind/name."""
    found = {}
    for kind in ("Deployment", "DaemonSet", "StatefulSet"):
        for obj in cluster.server.list("apps/v1", kind, "kube-system"):
            volumes = obj["spec"]["template"]["spec"].get("volumes") or []
            if any((v.get("secret") or {}).get("secretName") == "cloud-config" for v in volumes):
                found[f"{kind}/{obj['metadata']['name']}"] = obj
    return found


def _pod_credential_ids(cluster: WorkloadCluster) -> dict[str, str]:
    """Every live Pod of the consumers -> the credential ID its template was annotated with
    ("" before any rotation)."""
    owners = set()
    for name in _consumers(cluster):
        kind, _, workload = name.partition("/")
        if kind == "Deployment":
            for rs in cluster.server.list("apps/v1", "ReplicaSet", "kube-system"):
                refs = rs["metadata"].get("ownerReferences") or []
                if any(r["kind"] == "Deployment" and r["name"] == workload for r in refs):
                    owners.add(("ReplicaSet", rs["metadata"]["name"]))
        else:
            owners.add((kind, workload))
    result = {}
    for pod in cluster.server.list("v1", "Pod", "kube-system"):
        meta = pod["metadata"]
        refs = {(r["kind"], r["name"]) for r in meta.get("ownerReferences") or []}
        if meta.get("deletionTimestamp") or not refs & owners:
            continue
        result[meta["name"]] = (meta.get("annotations") or {}).get(ROTATED_ANNOTATION, "")
    return result


def _family(conn: Any, settings: ClusterSettings) -> list[tuple[str, str]]:
    return [
        (member.name, member.id)
        for members in cluster_credentials_in_keystone(conn, settings).values()
        for member in members
    ]


def test_rotation_switches_restarts_then_deletes(
    api_plane: Plane,
    tenant: Tenant,
    helm: Helm,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tenant.clouds_yaml))
    namespace = api_plane.namespace("rotate")
    with installed(api_plane, tenant, namespace) as ready:
        settings, conn, kube = ready.settings, ready.conn, ready.kube
        first = ready.credentials["clouds.yaml"]
        with workload_cluster(api_plane, settings, helm, tmp_path / "workload") as cluster:
            apply(cluster, settings)  # the real OCCM + Cinder CSI charts, cloud-config synced
            consumers = _consumers(cluster)
            assert {name.split("/")[0] for name in consumers} == {"DaemonSet", "Deployment"}
            with Kubelet(cluster):
                # a dry run changes nothing
                before = kube.secret_data(namespace, SECRET_NAME)
                dry = rotate_credentials(conn, settings, kube, dry_run=True)
                assert kube.secret_data(namespace, SECRET_NAME) == before
                assert _family(conn, settings) == [(f"capi-rot-appcred.{namespace}", first.id)]
                assert sorted(dry.restarted) == sorted(
                    n.replace("/", " kube-system/") for n in consumers
                )
                assert [c.name for c in dry.created] == [f"capi-rot-appcred-2.{namespace}"]
                assert [c.id for c in dry.deleted] == [first.id]

                # the CLI: the rotation itself
                capsys.readouterr()
                caplog.clear()
                # only the new one authenticates (rotate_through_cli), and only it is left
                rotated = rotate_through_cli(ready, first, tmp_path, capsys, key="clouds.yaml")
                new, out, err = rotated.new, rotated.out, rotated.err
                assert rotated.credentials["cloud.conf"].id == new.id  # no separate workload one
                assert _family(conn, settings) == [(f"capi-rot-appcred-2.{namespace}", new.id)]
                # the workload cluster's cloud-config holds it; every OCCM/CSI Pod that
                # exists now was made from the restarted template
                workload_conf = cluster.server.get("v1", "Secret", "kube-system", "cloud-config")
                assert workload_conf is not None
                import base64

                conf = base64.b64decode(workload_conf["data"]["cloud.conf"]).decode()
                assert f'application-credential-id="{new.id}"' in conf
                for obj in _consumers(cluster).values():
                    annotations = obj["spec"]["template"]["metadata"].get("annotations") or {}
                    assert annotations.get(ROTATED_ANNOTATION) == new.id
                pods = _pod_credential_ids(cluster)
                assert pods and set(pods.values()) == {new.id}, pods
                assert (
                    f"deleted application credential capi-rot-appcred.{namespace} (ID {first.id})"
                    in out
                )
                assert f"created application credential capi-rot-appcred-2.{namespace}" in out
                log = "\n".join(r.getMessage() for r in caplog.records)
                for secret in (first.secret.reveal(), new.secret.reveal(), tenant.parent_secret):
                    assert secret not in out + err + log

                # interrupted after the switch: an older generation next to the Secret's one
                # (made here as the earlier run left it) is finished, no credential is made
                older = create_app_credential(
                    conn, f"capi-rot-appcred.{namespace}", description="left"
                )
                finished = rotate_credentials(conn, settings, kube, timeout=240, poll_interval=0.5)
                assert finished.created == []
                assert [c.id for c in finished.deleted] == [older.id]
                assert _family(conn, settings) == [(f"capi-rot-appcred-2.{namespace}", new.id)]

                # interrupted before the switch: a newer generation the Secret never held
                # (its secret is lost) goes first, then a real rotation
                orphan = create_app_credential(
                    conn, f"capi-rot-appcred-3.{namespace}", description="lost"
                )
                again = rotate_credentials(conn, settings, kube, timeout=240, poll_interval=0.5)
                assert any(orphan.id in note for note in again.notes)
                third = stored_credentials(kube, settings)["clouds.yaml"]
                assert third.id not in (new.id, orphan.id)
                assert _family(conn, settings) == [(f"capi-rot-appcred-3.{namespace}", third.id)]
                assert set(_pod_credential_ids(cluster).values()) == {third.id}


def test_rotation_refuses_what_it_does_not_own(
    api_plane: Plane,
    tenant: Tenant,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Exit 2, one line, nothing changed: no Secret yet, and a credential the user brings."""
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(tenant.clouds_yaml))
    namespace = api_plane.namespace("rotate-refused")
    settings = cluster_settings(namespace, tenant.cloud, separate=True)
    path = write_settings(tmp_path, settings_text(namespace, tenant.cloud, separate=True))
    args = ["openstack", "appcred", "rotate", str(path), "--kubeconfig", str(api_plane.kubeconfig)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"the credentials Secret {namespace}/{SECRET_NAME} does not exist" in err
    assert "Traceback" not in err
    conn = tenant.connect()
    try:
        assert cluster_credentials_in_keystone(conn, settings)[WORKLOAD_SUFFIX] == []
    finally:
        conn.close()


def test_split_credentials_rotate_together_and_an_unreachable_workload_keeps_the_old(
    api_plane: Plane, tenant: Tenant, tmp_path: Path
) -> None:
    """separateWorkload: both kinds rotate together. While the workload cluster cannot be
    reached the Secret is switched but the old credentials are kept (exit 1: OCCM and CSI
    still use them); the next run, with the cluster reachable, finishes without making
    another credential. The workload cluster here is an empty real kube-apiserver."""
    from scs_templates._core.errors import ToolError

    namespace = api_plane.namespace("rotate-split")
    settings = cluster_settings(namespace, tenant.cloud, separate=True, name="split")
    conn = tenant.connect()
    kube = KubeClient(str(api_plane.kubeconfig))
    try:
        before = install_credentials(conn, kube, settings)
        with pytest.raises(ToolError, match=r"cannot be reached.*kept"):
            rotate_credentials(conn, settings, kube)
        after = parse_credentials_secret(
            kube.secret_data(namespace, SPLIT_SECRET) or {}, tenant.cloud
        )
        assert after["clouds.yaml"].id != after["cloud.conf"].id
        assert {after["clouds.yaml"].id, after["cloud.conf"].id}.isdisjoint(
            {before["clouds.yaml"].id, before["cloud.conf"].id}
        )
        assert _family(conn, settings) == [
            (f"capi-split-appcred.{namespace}", before["clouds.yaml"].id),
            (f"capi-split-appcred-2.{namespace}", after["clouds.yaml"].id),
            (f"capi-split-appcred-workload.{namespace}", before["cloud.conf"].id),
            (f"capi-split-appcred-workload-2.{namespace}", after["cloud.conf"].id),
        ]
        with empty_workload(api_plane, "rotation-workload", tmp_path) as workload:
            finished = rotate_credentials(conn, settings, kube, workload=workload)
            conf = workload.secret_data("kube-system", "cloud-config") or {}
        assert finished.created == [] and finished.restarted == []
        assert sorted(c.id for c in finished.deleted) == sorted(
            [before["clouds.yaml"].id, before["cloud.conf"].id]
        )
        assert f'application-credential-id="{after["cloud.conf"].id}"' in conf["cloud.conf"]
        assert _family(conn, settings) == [
            (f"capi-split-appcred-2.{namespace}", after["clouds.yaml"].id),
            (f"capi-split-appcred-workload-2.{namespace}", after["cloud.conf"].id),
        ]
        # install afterwards reuses the rotated generation (it authenticates): no churn
        again = ensure_cluster_credentials(
            conn, settings, existing=kube.secret_data(namespace, SPLIT_SECRET)
        )
        assert (
            not again.cluster.created
            and again.cluster.credential.name == f"capi-split-appcred-2.{namespace}"
        )
    finally:
        kube.close()
        conn.close()


def test_a_credential_named_by_an_earlier_version_is_rotated_to_the_namespaced_name(
    api_plane: Plane, tenant: Tenant, tmp_path: Path
) -> None:
    """A credential an earlier version made (``capi-$CLUSTER-appcred``, no namespace), held
    by the Secret: rotate finds it, makes the next generation under the namespaced name
    and deletes it; a same-named cluster of another namespace is not touched."""
    from scs_templates.providers.openstack.appcred import (
        ClusterCredentials,
        EnsuredCredential,
        legacy_generation_name,
    )

    namespace = api_plane.namespace("rotate-legacy")
    settings = cluster_settings(namespace, tenant.cloud, name="legacy")
    other = cluster_settings(
        api_plane.namespace("rotate-legacy-other"), tenant.cloud, name="legacy"
    )
    conn = tenant.connect()
    kube = KubeClient(str(api_plane.kubeconfig))
    try:
        legacy = legacy_generation_name(settings, "appcred", 1)
        old = create_app_credential(
            conn,
            legacy,
            description=f"scs-templates: Cluster API credential of cluster {namespace}/legacy "
            "(restricted)",
        )
        held = ClusterCredentials(
            tenant.cloud, cloud_access(conn), EnsuredCredential(old, True, "earlier version")
        )
        content = credentials_secret_data(held, settings)
        lifecycle.store_credentials(kube, settings, {k: v.reveal() for k, v in content.items()})
        assert _family(conn, other) == []  # another namespace's cluster of the same name
        with empty_workload(api_plane, "rotation-legacy-workload", tmp_path) as workload:
            report = rotate_credentials(conn, settings, kube, workload=workload)
        new = parse_credentials_secret(
            kube.secret_data(namespace, "capi-legacy-cloud-config") or {}, tenant.cloud
        )["clouds.yaml"]
        assert [c.name for c in report.created] == [f"capi-legacy-appcred-2.{namespace}"]
        assert [(c.name, c.id) for c in report.deleted] == [(legacy, old.id)]
        assert _family(conn, settings) == [(f"capi-legacy-appcred-2.{namespace}", new.id)]
    finally:
        kube.close()
        conn.close()
