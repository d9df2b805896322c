"""OpenStack integration against a REAL Keystone and Neutron (tests/support/openstack_stack.py).

No mocks: the services run locally from their own virtualenv; the client is the project's
openstacksdk. This session's stack has no compute or image service, so the flavor/image/keypair
checks are only seen skipping here; tests/cloud/test_openstack_preflight.py runs them against the
real Nova and Glance APIs on a stack of its own.
"""

from __future__ import annotations

import contextlib
import logging
import stat
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from scs_templates._cli.main import main
from scs_templates._core.errors import ToolError
from scs_templates._settings.validate import parse_settings_text
from scs_templates.providers.openstack.appcred import (
    create_app_credential,
    credential_authenticates,
    delete_app_credential,
    ensure_app_credential,
    ensure_cluster_credentials,
    find_app_credential,
)
from scs_templates.providers.openstack.capo_names import (
    CAPO_SECGROUP_DESCRIPTION,
    capo_description,
    capo_network_name,
    capo_security_group_names,
)
from scs_templates.providers.openstack.connection import Secret, cloud_access
from scs_templates.providers.openstack.credentials_secret import credentials_secret_data
from scs_templates.providers.openstack.leftovers import (
    CINDER_CSI_CLUSTER_PROPERTY,
    clean_project_leftovers,
)
from scs_templates.providers.openstack.preflight import run_preflight
from tests.support import openstack_settings, openstack_settings_text, skip_or_fail
from tests.support.openstack_fixtures import Tenant, external_network, make_tenant, running_stack
from tests.support.openstack_stack import REGION, Stack

# --------------------------------------------------------------------------- the real stack


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A running Keystone + Neutron (skips, or fails under CI=true, when it cannot start)."""
    yield from running_stack(tmp_path_factory, "openstack-stack")


@pytest.fixture(scope="session")
def demo(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    """The demo user: project, member role, unrestricted application credential, clouds.yaml."""
    return make_tenant(stack, tmp_path_factory.mktemp("demo-cloud"), "demo")


@pytest.fixture
def admin(stack: Stack) -> Iterator[Any]:
    conn = stack.admin_connection()
    yield conn
    conn.close()


@pytest.fixture
def conn(demo: Tenant) -> Iterator[Any]:
    connection = demo.connect()
    yield connection
    connection.close()


@pytest.fixture
def cli_env(demo: Tenant, monkeypatch: pytest.MonkeyPatch) -> Tenant:
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(demo.clouds_yaml))
    monkeypatch.delenv("OS_CLOUD", raising=False)
    return demo


@dataclass
class CliResult:
    code: int
    out: str
    err: str
    log: str

    @property
    def everything(self) -> str:
        return self.out + self.err + self.log


@pytest.fixture
def run_cli(
    cli_env: Tenant, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> Any:
    """Run the CLI in-process; capture stdout, stderr and every log record (DEBUG)."""
    caplog.set_level(logging.DEBUG)

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        caplog.clear()
        code = main(list(args))
        captured = capsys.readouterr()
        log = "\n".join(
            f"{record.name} {record.getMessage()} {record.args!r}" for record in caplog.records
        )
        return CliResult(code, captured.out, captured.err, log)

    return run


def _settings_without_server_groups(name: str, node_cidr: str, **kwargs: str) -> Any:
    """:func:`openstack_settings` without anti-affinity: no server groups, which need the compute
    API this session's stack does not run."""
    no_groups = "    antiAffinity: {controlPlane: none, workers: none}\n"
    text = openstack_settings_text(name, node_cidr, **kwargs)
    return parse_settings_text(
        text.replace("    cloud: demo\n", "    cloud: demo\n" + no_groups)
    ).settings


def _settings_file(tmp_path: Path, name: str, node_cidr: str, **kwargs: str) -> Path:
    path = tmp_path / f"{name}-{uuid.uuid4().hex[:4]}.yaml"
    path.write_text(openstack_settings_text(name, node_cidr, **kwargs))
    return path


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _assert_no_secrets(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret, "empty secret in the check list"
        assert secret not in text


# --------------------------------------------------------------------------- credentials


def test_restricted_credential_cannot_create_or_delete_credentials(conn: Any, demo: Tenant) -> None:
    name = _unique("capi-restricted") + "-appcred"
    ensured = ensure_app_credential(conn, name, None)
    assert ensured.created
    assert ensured.credential.restricted
    assert ensured.credential.secret.reveal() not in repr(ensured)
    restricted = demo.connect_with_appcred(
        ensured.credential.id, ensured.credential.secret.reveal()
    )
    try:
        with pytest.raises(ToolError, match="403") as raised:
            create_app_credential(restricted, _unique("nested"), description="must fail")
        assert "unrestricted" in str(raised.value)
        # It cannot delete itself either: the parent must do it.
        with pytest.raises(ToolError, match="403"):
            delete_app_credential(restricted, name)
    finally:
        restricted.close()
    assert delete_app_credential(conn, name) is True
    assert find_app_credential(conn, name) is None


def test_create_then_reuse_via_cli(run_cli: Any, tmp_path: Path, conn: Any, demo: Tenant) -> None:
    cluster = _unique("reuse")
    settings_file = _settings_file(tmp_path, cluster, "10.61.0.0/20")
    secret_file = tmp_path / "out" / "secret.yaml"
    secret_file.parent.mkdir()

    first = run_cli(
        "openstack", "appcred", "create", str(settings_file), "--write-secret", str(secret_file)
    )
    assert first.code == 0, first.err
    assert f"created application credential capi-{cluster}-appcred.default (ID " in first.out
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert not list(secret_file.parent.glob(".secret.yaml.*")), "temporary file left behind"
    manifest = YAML(typ="safe").load(secret_file.read_text())
    assert manifest["kind"] == "Secret"
    assert manifest["metadata"]["name"] == f"capi-{cluster}-cloud-config"
    clouds = YAML(typ="safe").load(manifest["stringData"]["clouds.yaml"])
    auth = clouds["clouds"]["demo"]["auth"]
    credential_id, secret = auth["application_credential_id"], auth["application_credential_secret"]
    assert f"ID {credential_id}" in first.out
    assert f'application-credential-id="{credential_id}"' in manifest["stringData"]["cloud.conf"]

    # The written credential really works, and is restricted.
    restricted = demo.connect_with_appcred(credential_id, secret)
    assert list(restricted.network.networks()) is not None
    restricted.close()

    second = run_cli(
        "openstack", "appcred", "create", str(settings_file), "--write-secret", str(secret_file)
    )
    assert second.code == 0, second.err
    assert (
        f"reused application credential capi-{cluster}-appcred.default (ID {credential_id})"
        in second.out
    )
    found = [
        c
        for c in conn.identity.application_credentials(user=conn.current_user_id)
        if c.name == f"capi-{cluster}-appcred.default"
    ]
    assert [c.id for c in found] == [credential_id]

    deleted = run_cli("openstack", "appcred", "delete", str(settings_file))
    assert deleted.code == 0
    assert f"deleted: application credential capi-{cluster}-appcred.default" in deleted.out
    again = run_cli("openstack", "appcred", "delete", str(settings_file))
    assert again.code == 0
    assert (
        f"not found (nothing to delete): application credential capi-{cluster}-appcred.default"
        in again.out
    )
    assert find_app_credential(conn, f"capi-{cluster}-appcred.default") is None

    for result in (first, second, deleted, again):
        _assert_no_secrets(result.everything, secret, demo.parent_secret, demo.password)
        assert result.log, "expected DEBUG log records to check"


def test_recreated_when_stored_secret_no_longer_authenticates(conn: Any) -> None:
    name = _unique("capi-stale") + "-appcred"
    first = ensure_app_credential(conn, name, None)
    assert first.created
    reused = ensure_app_credential(
        conn, name, first.credential.secret, existing_id=first.credential.id
    )
    assert not reused.created
    assert reused.credential.id == first.credential.id

    stale = ensure_app_credential(conn, name, Secret("not-the-secret-anymore"))
    assert stale.created
    assert "no longer authenticates" in stale.reason
    assert stale.credential.id != first.credential.id
    assert find_app_credential(conn, name).id == stale.credential.id

    unknown = ensure_app_credential(conn, name, None)
    assert unknown.created and "not known" in unknown.reason
    assert unknown.credential.id != stale.credential.id
    assert delete_app_credential(conn, name)
    assert not delete_app_credential(conn, name)


def test_separate_workload_credential(conn: Any) -> None:
    cluster = _unique("split")
    settings = openstack_settings(cluster, "10.62.0.0/20", extra="      separateWorkload: true\n")
    credentials = ensure_cluster_credentials(conn, settings)
    assert credentials.workload is not None
    assert credentials.workload.credential.name == f"capi-{cluster}-appcred-workload.default"
    data = {k: v.reveal() for k, v in credentials_secret_data(credentials, settings).items()}
    assert credentials.cluster.credential.id in data["clouds.yaml"]
    assert credentials.workload.credential.id in data["cloud.conf"]
    assert credentials.cluster.credential.id not in data["cloud.conf"]
    again = ensure_cluster_credentials(conn, settings, existing=data)
    assert not again.cluster.created and not again.workload.created  # type: ignore[union-attr]
    from scs_templates.providers.openstack.appcred import delete_cluster_credentials

    assert delete_cluster_credentials(conn, settings) == {
        f"capi-{cluster}-appcred.default": True,
        f"capi-{cluster}-appcred-workload.default": True,
    }


def _secret_of(credentials: Any, settings: Any) -> dict[str, str]:
    return {k: v.reveal() for k, v in credentials_secret_data(credentials, settings).items()}


def test_clusters_of_one_name_in_two_namespaces_have_their_own_credentials(conn: Any) -> None:
    """One OpenStack user, two clusters called alike in two namespaces: each gets its own
    credential (the namespace is in the name); re-ensuring reuses each one's own, and
    deleting one cluster's never touches the other's. Before, both were
    ``capi-$CLUSTER-appcred``: the second install replaced the first cluster's credential."""
    from scs_templates.providers.openstack.appcred import delete_cluster_credentials

    cluster = _unique("twin")
    a = openstack_settings(cluster, "10.63.0.0/20", namespace="team-a")
    b = openstack_settings(cluster, "10.63.0.0/20", namespace="team-b")
    first_a = ensure_cluster_credentials(conn, a)
    first_b = ensure_cluster_credentials(conn, b)
    assert first_a.cluster.credential.name == f"capi-{cluster}-appcred.team-a"
    assert first_b.cluster.credential.name == f"capi-{cluster}-appcred.team-b"
    assert first_a.cluster.created and first_b.cluster.created
    again_a = ensure_cluster_credentials(conn, a, existing=_secret_of(first_a, a))
    again_b = ensure_cluster_credentials(conn, b, existing=_secret_of(first_b, b))
    assert not again_a.cluster.created and not again_b.cluster.created
    assert again_a.cluster.credential.id == first_a.cluster.credential.id
    assert again_b.cluster.credential.id == first_b.cluster.credential.id
    assert delete_cluster_credentials(conn, a)[f"capi-{cluster}-appcred.team-a"] is True
    access = cloud_access(conn)
    b_credential = first_b.cluster.credential
    assert credential_authenticates(access, b_credential.id, b_credential.secret)
    assert delete_cluster_credentials(conn, b)[f"capi-{cluster}-appcred.team-b"] is True


def test_credentials_named_by_earlier_versions_are_still_found(conn: Any) -> None:
    """A credential an earlier version named ``capi-$CLUSTER-appcred`` (no namespace) and
    described as its cluster's is still that cluster's: reused while the Secret's secret
    works, deleted with the cluster, and replaced under the new name when it no longer
    works. The same name described as another namespace's cluster is left alone."""
    from scs_templates.providers.openstack.appcred import (
        AppCredential,
        ClusterCredentials,
        EnsuredCredential,
        cluster_credentials_in_keystone,
        delete_cluster_credentials,
        legacy_generation_name,
    )

    cluster = _unique("legacy")
    a = openstack_settings(cluster, "10.64.0.0/20", namespace="team-a")
    b = openstack_settings(cluster, "10.64.0.0/20", namespace="team-b")
    legacy = legacy_generation_name(a, "appcred", 1)
    assert legacy == f"capi-{cluster}-appcred"
    # as the earlier version made it for team-a (its description names the cluster)
    old = create_app_credential(
        conn,
        legacy,
        description=f"scs-templates: Cluster API credential of cluster team-a/{cluster} "
        "(restricted)",
    )
    access = cloud_access(conn)
    held = ClusterCredentials("demo", access, EnsuredCredential(old, True, "earlier version"))
    secret = _secret_of(held, a)
    assert [m.id for m in cluster_credentials_in_keystone(conn, a)["appcred"]] == [old.id]
    assert cluster_credentials_in_keystone(conn, b)["appcred"] == []  # not team-b's
    reused = ensure_cluster_credentials(conn, a, existing=secret)
    assert not reused.cluster.created and reused.cluster.credential.id == old.id
    # team-b's cluster of the same name gets its own and leaves team-a's alone
    theirs = ensure_cluster_credentials(conn, b)
    assert theirs.cluster.credential.name == f"capi-{cluster}-appcred.team-b"
    assert credential_authenticates(access, old.id, old.secret)
    assert delete_cluster_credentials(conn, b) == {
        f"capi-{cluster}-appcred-workload.team-b": False,
        f"capi-{cluster}-appcred.team-b": True,
    }
    assert credential_authenticates(access, old.id, old.secret)
    # the Secret's secret no longer works: replaced under the new name, the legacy one goes
    wrong = AppCredential(old.id, legacy, Secret("not-the-secret"), old.project_id)
    broken = ClusterCredentials("demo", access, EnsuredCredential(wrong, True, "damaged"))
    replaced = ensure_cluster_credentials(conn, a, existing=_secret_of(broken, a))
    assert replaced.cluster.created
    assert replaced.cluster.credential.name == f"capi-{cluster}-appcred.team-a"
    assert find_app_credential(conn, legacy) is None
    # delete finds a legacy one by its description (no Secret needed)
    create_app_credential(
        conn, legacy, description=f"scs-templates: ... of cluster team-a/{cluster} (restricted)"
    )
    deleted = delete_cluster_credentials(conn, a)
    assert deleted[legacy] is True and deleted[f"capi-{cluster}-appcred.team-a"] is True
    assert find_app_credential(conn, legacy) is None


def test_legacy_names_that_are_not_the_clusters_are_kept_and_said(
    run_cli: Any, tmp_path: Path, conn: Any
) -> None:
    """A credential with the cluster's name of earlier versions (``capi-$CLUSTER-appcred``,
    as KaaS v1 also named it) that the cluster does not hold and whose description does not
    name it is never reused, replaced or deleted, and install, ``appcred create``,
    ``appcred delete`` and delete's step (c) (dry run too) each say it is kept: KaaS v1's
    (not made by scs-templates: with how to delete it) and another namespace's twin's (its
    owner). Without the report KaaS v1's credential of a migrated cluster would outlive it
    unnoticed (before the namespaced names, install deleted it by its name)."""
    from scs_templates.providers.openstack import provision
    from scs_templates.providers.openstack.appcred import legacy_generation_name

    cluster = _unique("kept")
    settings_file = _settings_file(tmp_path, cluster, "10.65.0.0/20", namespace="team-a")
    a = openstack_settings(cluster, "10.65.0.0/20", namespace="team-a")
    legacy = legacy_generation_name(a, "appcred", 1)
    workload_legacy = legacy_generation_name(a, "appcred-workload", 1)
    kaas_v1 = create_app_credential(conn, legacy, description="created by KaaS v1")
    twin = create_app_credential(
        conn,
        workload_legacy,
        description=f"scs-templates: in-cluster OCCM/CSI credential of cluster team-b/{cluster} "
        "(restricted)",
    )
    said_v1 = (
        f"kept application credential {legacy} (ID {kaas_v1.id}): named as this cluster's by "
        "KaaS v1 or by hand, not made by scs-templates; delete it once nothing uses it "
        f"(openstack application credential delete {kaas_v1.id})"
    )
    said_twin = (
        f"kept application credential {workload_legacy} (ID {twin.id}): the credential of "
        f"cluster team-b/{cluster} (its description)"
    )
    access = cloud_access(conn)

    ensured = ensure_cluster_credentials(conn, a)
    assert ensured.cluster.created
    assert ensured.cluster.credential.name == f"capi-{cluster}-appcred.team-a"
    assert [k.line() for k in ensured.kept] == [said_v1, said_twin]

    created = run_cli("openstack", "appcred", "create", str(settings_file))
    assert created.code == 0, created.err
    assert said_v1 in created.out.splitlines() and said_twin in created.out.splitlines()

    lines: list[str] = []
    assert (
        provision.release_cluster_resources(a, conn=conn, progress=lines.append, dry_run=True) == []
    )
    assert f"would delete application credential capi-{cluster}-appcred.team-a" in lines
    assert f"would delete application credential {legacy}" not in lines
    assert said_v1 in lines and said_twin in lines
    lines.clear()
    assert provision.release_cluster_resources(a, conn=conn, progress=lines.append) == []
    assert f"application credential capi-{cluster}-appcred.team-a: deleted" in lines
    assert said_v1 in lines and said_twin in lines
    assert credential_authenticates(access, kaas_v1.id, kaas_v1.secret)
    assert credential_authenticates(access, twin.id, twin.secret)

    deleted = run_cli("openstack", "appcred", "delete", str(settings_file))
    assert deleted.code == 0, deleted.err
    assert said_v1 in deleted.out.splitlines() and said_twin in deleted.out.splitlines()
    assert credential_authenticates(access, kaas_v1.id, kaas_v1.secret)
    for credential in (kaas_v1, twin):
        assert delete_app_credential(conn, credential.name)


def test_delete_removes_the_credential_its_secret_held_and_names_what_it_cannot_attribute(
    conn: Any, demo: Tenant, webhook_plane: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A credential with the cluster's legacy name (``capi-$CLUSTER-appcred``, no namespace)
    whose description does not name the cluster (made by hand, or KaaS v1's) is the
    cluster's when its credentials Secret holds it: install and rotate take it so, and
    ``delete`` now deletes it. Before, delete removed the Secret with the templates and
    looked the credentials up in step (c) without it: the credential the cluster used was
    left behind as "kept", unattributed. ``delete`` reads the Secret's IDs before it removes
    the Secret (dry run too). Once the Secret is gone (a delete run again after it was
    interrupted, a Secret removed by hand) nothing tells such a credential from KaaS v1's or
    another's: delete keeps it and prints one line naming it, its ID and the command that
    deletes it. Against the REAL Keystone and a REAL management plane holding the Secret
    (conftest ``webhook_plane``; no release is installed: steps (a) and (b) have nothing to
    do)."""
    from scs_templates import _lifecycle as lifecycle
    from scs_templates._tools.kube import KubeClient
    from scs_templates.providers.openstack.appcred import (
        ClusterCredentials,
        EnsuredCredential,
        legacy_generation_name,
    )

    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(demo.clouds_yaml))
    cluster = _unique("held")
    namespace = webhook_plane.namespace("held")
    settings = _settings_without_server_groups(cluster, "10.69.0.0/20", namespace=namespace)
    legacy = legacy_generation_name(settings, "appcred", 1)
    secret_name = f"capi-{cluster}-cloud-config"
    adopted = create_app_credential(conn, legacy, description="made by hand for the cluster")
    access = cloud_access(conn)
    held = ClusterCredentials("demo", access, EnsuredCredential(adopted, True, "by hand"))
    kube = KubeClient(str(webhook_plane.kubeconfig))
    try:
        assert lifecycle.store_credentials(kube, settings, _secret_of(held, settings))
        lines: list[str] = []

        def delete(**options: Any) -> None:
            lines.clear()
            lifecycle.delete(
                settings,
                kube=kube,
                kubeconfig=str(webhook_plane.kubeconfig),
                poll_interval=0.1,
                cloud_progress=lines.append,
                **options,
            )

        delete(dry_run=True)
        assert f"would delete application credential {legacy}" in lines, lines
        assert kube.secret_data(namespace, secret_name) is not None  # a dry run keeps it

        delete()
        assert f"application credential {legacy}: deleted" in lines, lines
        assert not [line for line in lines if line.startswith("kept application credential")]
        assert find_app_credential(conn, legacy) is None
        assert kube.secret_data(namespace, secret_name) is None

        # the Secret is gone: the same kind of credential cannot be attributed any more
        again = create_app_credential(conn, legacy, description="made by hand for the cluster")
        delete()
        said = (
            f"kept application credential {legacy} (ID {again.id}): named as this cluster's by "
            "KaaS v1 or by hand, not made by scs-templates; delete it once nothing uses it "
            f"(openstack application credential delete {again.id})"
        )
        assert said in lines, lines
        assert f"application credential {legacy}: deleted" not in lines
        assert credential_authenticates(access, again.id, again.secret)
    finally:
        kube.close()
        delete_app_credential(conn, legacy)


def test_wrong_own_credential_fails_without_leaking(
    run_cli: Any, tmp_path: Path, demo: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad_secret = "definitely-wrong-" + uuid.uuid4().hex
    clouds = YAML(typ="safe").load(demo.clouds_yaml.read_text())
    clouds["clouds"]["demo"]["auth"]["application_credential_secret"] = bad_secret
    path = tmp_path / "clouds.yaml"
    YAML(typ="safe").dump(clouds, path)
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(path))
    settings_file = _settings_file(tmp_path, _unique("badlogin"), "10.63.0.0/20")
    result = run_cli("openstack", "appcred", "create", str(settings_file))
    assert result.code == 1
    assert f"login at {demo.auth_url} failed" in result.err
    _assert_no_secrets(result.everything, bad_secret, demo.parent_secret)
    missing = run_cli("openstack", "preflight", str(settings_file), "--os-cloud", "nope")
    assert missing.code == 2
    assert "'nope'" in missing.err


# --------------------------------------------------------------------------- cleanup


def _capo_network(conn: Any, settings: Any, cidr: str) -> tuple[Any, Any, list[Any]]:
    """What CAPO would have made: network + subnet (with its description) + security groups."""
    name = capo_network_name(settings)
    network = conn.network.create_network(name=name, description=capo_description(settings))
    subnet = conn.network.create_subnet(
        name=name,
        network_id=network.id,
        ip_version=4,
        cidr=cidr,
        description=capo_description(settings),
    )
    groups = [
        conn.network.create_security_group(name=n, description=CAPO_SECGROUP_DESCRIPTION)
        for n in capo_security_group_names(settings)[:2]
    ]
    return network, subnet, groups


def test_cleanup_leftover_port(run_cli: Any, tmp_path: Path, conn: Any) -> None:
    from openstack import exceptions

    cluster = _unique("leftover")
    settings_file = _settings_file(tmp_path, cluster, "10.64.0.0/20")
    settings = openstack_settings(cluster, "10.64.0.0/20")
    network, subnet, groups = _capo_network(conn, settings, "10.64.0.0/20")
    port = conn.network.create_port(
        network_id=network.id,
        name=f"{cluster}-control-plane-abcde",
        security_group_ids=[groups[0].id],
        fixed_ips=[{"subnet_id": subnet.id}],
    )
    assert port.status == "DOWN"

    # The situation: the leftover port blocks the security group, the subnet and the network.
    with pytest.raises(exceptions.ConflictException, match="in use"):
        conn.network.delete_security_group(groups[0].id)
    with pytest.raises(exceptions.ConflictException):
        conn.network.delete_subnet(subnet.id)
    with pytest.raises(exceptions.ConflictException):
        conn.network.delete_network(network.id)

    dry = run_cli("openstack", "cleanup", str(settings_file), "--dry-run")
    assert dry.code == 0, dry.err
    assert f"would delete port {port.name} {port.id}" in dry.out
    for group in groups:
        assert f"would delete security group {group.name} {group.id}" in dry.out
    assert f"would delete subnet {subnet.name} {subnet.id}" in dry.out
    assert f"would delete network {network.name} {network.id}" in dry.out
    assert conn.network.get_port(port.id).id == port.id  # nothing changed

    real = run_cli("openstack", "cleanup", str(settings_file))
    assert real.code == 0, real.out + real.err
    assert f"deleted port {port.name} {port.id}" in real.out
    assert f"deleted network {network.name} {network.id}" in real.out
    assert conn.network.find_port(port.id, ignore_missing=True) is None
    assert conn.network.find_network(network.id, ignore_missing=True) is None
    assert conn.network.find_subnet(subnet.id, ignore_missing=True) is None
    for group in groups:
        assert conn.network.find_security_group(group.id, ignore_missing=True) is None

    second = run_cli("openstack", "cleanup", str(settings_file))
    assert second.code == 0
    assert "nothing to do" in second.out


def test_cleanup_reports_compute_owned_port_403(
    run_cli: Any, tmp_path: Path, conn: Any, admin: Any, demo: Tenant
) -> None:
    cluster = _unique("computeport")
    settings_file = _settings_file(tmp_path, cluster, "10.65.0.0/20")
    settings = openstack_settings(cluster, "10.65.0.0/20")
    network, subnet, groups = _capo_network(conn, settings, "10.65.0.0/20")
    device = str(uuid.uuid4())
    # A port as Nova would leave it: created by an admin in the member's project.
    port = admin.network.create_port(
        project_id=demo.project_id,
        network_id=network.id,
        device_owner="compute:nova",
        device_id=device,
        security_group_ids=[groups[1].id],
        fixed_ips=[{"subnet_id": subnet.id}],
    )
    plain = conn.network.create_port(network_id=network.id, security_group_ids=[groups[0].id])

    result = run_cli("openstack", "cleanup", str(settings_file))
    assert result.code == 1
    assert f"deleted port {plain.id}" in result.out.replace(f" {plain.name} ", " ")
    failure = [line for line in result.out.splitlines() if line.startswith("FAILED port")]
    assert len(failure) == 1 and port.id in failure[0]
    assert "HTTP 403" in failure[0] and "compute:nova" in failure[0]
    assert "administrators" in failure[0] and device in failure[0]
    assert "cloud operator" in failure[0]
    assert f"security group {groups[0].name} {groups[0].id}" in result.out  # freed: deleted
    assert f"FAILED security group {groups[1].name} {groups[1].id}" in result.out
    assert f"still in use by port(s) {port.id}" in result.out
    assert conn.network.find_network(network.id, ignore_missing=True) is not None

    # What the message tells the user to do, then the cleanup finishes.
    admin.network.delete_port(port.id)
    finish = run_cli("openstack", "cleanup", str(settings_file))
    assert finish.code == 0, finish.out
    assert conn.network.find_network(network.id, ignore_missing=True) is None
    assert "nothing to do" in run_cli("openstack", "cleanup", str(settings_file)).out


def test_cleanup_says_what_it_leaves_alone_and_touches_none_of_it(
    run_cli: Any, tmp_path: Path, conn: Any
) -> None:
    """What cleanup must not touch, against the real Neutron (router plugin, no agents): a
    network and a security group with the cluster's CAPO names but another description, a
    router interface on the cluster's subnet, a port with a fixed IP outside the node CIDR.
    Each is named on a ``note:`` line, and what they hold up on a ``FAILED`` line (exit 1);
    the leftover port next to them is deleted; all of them are still there afterwards, and
    once the router interface and the foreign port are gone the cleanup finishes."""
    cluster = _unique("alone")
    cidr = "10.67.0.0/20"
    settings_file = _settings_file(tmp_path, cluster, cidr)
    settings = openstack_settings(cluster, cidr)
    own = capo_network_name(settings)
    network, subnet, groups = _capo_network(conn, settings, cidr)
    foreign_net = conn.network.create_network(name=own, description="made by hand")
    bastion = capo_security_group_names(settings)[2]
    foreign_group = conn.network.create_security_group(name=bastion, description="by hand")
    outside = conn.network.create_subnet(
        network_id=network.id, ip_version=4, cidr="10.99.0.0/24", name=f"{cluster}-outside"
    )
    router = conn.network.create_router(name=f"{cluster}-router")
    conn.network.add_interface_to_router(router, subnet=subnet.id)
    (interface,) = conn.network.ports(device_id=router.id)
    stranger = conn.network.create_port(
        network_id=network.id, name="stranger", fixed_ips=[{"subnet_id": outside.id}]
    )
    leftover = conn.network.create_port(
        network_id=network.id,
        name=f"{cluster}-md-0-x",
        security_group_ids=[groups[0].id],
        fixed_ips=[{"subnet_id": subnet.id}],
    )
    (stranger_ip,) = [ip["ip_address"] for ip in stranger.fixed_ips]
    try:
        notes = [
            f"note: network {own} {foreign_net.id} left alone: not created by CAPO for this "
            "cluster (description 'made by hand')",
            f"note: security group {bastion} {foreign_group.id} left alone: not created by "
            "CAPO (description 'by hand')",
            *sorted(
                [
                    f"note: port {interface.id} kept: router interface "
                    f"(network:router_interface, router {router.id}); remove it with "
                    f"`openstack router remove subnet {router.id} {subnet.id}`",
                    f"note: port {stranger.id} kept: fixed IPs {stranger_ip} not all inside "
                    "the node CIDR",
                ],
                key=lambda line: line.split()[2],
            ),
        ]
        dry = run_cli("openstack", "cleanup", str(settings_file), "--dry-run")
        assert dry.code == 0, dry.out
        assert [line for line in dry.out.splitlines() if line.startswith("note:")] == notes
        real = run_cli("openstack", "cleanup", str(settings_file))
        assert real.code == 1, real.out
        out = real.out.splitlines()
        assert [line for line in out if line.startswith("note:")] == notes
        assert f"deleted port {leftover.name} {leftover.id} (DOWN, no owner" in real.out
        for group in groups:
            assert f"deleted security group {group.name} {group.id}" in out
        assert sorted(line for line in out if line.startswith("FAILED")) == sorted(
            [
                f"FAILED subnet {subnet.name} {subnet.id} ({cidr}): not deleted: still in use "
                f"by port(s) {interface.id}",
                f"FAILED subnet {outside.name} {outside.id} (10.99.0.0/24): not deleted: still "
                f"in use by port(s) {stranger.id}",
                f"FAILED network {own} {network.id}: not deleted: still in use by port(s) "
                + ", ".join(sorted((interface.id, stranger.id))),
            ]
        )
        for kept in (foreign_net, network):
            assert conn.network.find_network(kept.id, ignore_missing=True) is not None
        assert conn.network.find_security_group(foreign_group.id, ignore_missing=True)
        for port in (interface, stranger):
            assert conn.network.find_port(port.id, ignore_missing=True) is not None
        assert conn.network.find_port(leftover.id, ignore_missing=True) is None

        # Remove what the notes name; the cleanup finishes and still leaves the foreign ones.
        conn.network.remove_interface_from_router(router, subnet=subnet.id)
        conn.network.delete_port(stranger.id)
        finish = run_cli("openstack", "cleanup", str(settings_file))
        assert finish.code == 0, finish.out
        assert f"deleted network {own} {network.id}" in finish.out
        assert [line for line in finish.out.splitlines() if line.startswith("note:")] == notes[:2]
        assert conn.network.find_network(foreign_net.id, ignore_missing=True) is not None
        assert conn.network.find_security_group(foreign_group.id, ignore_missing=True)
    finally:
        with contextlib.suppress(Exception):
            conn.network.remove_interface_from_router(router, subnet=subnet.id)
        conn.network.delete_router(router.id, ignore_missing=True)
        for port in (stranger, leftover):
            conn.network.delete_port(port.id, ignore_missing=True)
        for net in (network, foreign_net):
            conn.network.delete_network(net.id, ignore_missing=True)
        for group in (*groups, foreign_group):
            conn.network.delete_security_group(group.id, ignore_missing=True)


# --------------------------------------------------------------------------- preflight


def _lines(result: CliResult) -> dict[str, str]:
    return {line.split()[1].rstrip(":"): line for line in result.out.splitlines() if line.strip()}


def test_preflight(run_cli: Any, tmp_path: Path, conn: Any, admin: Any) -> None:
    cluster = _unique("pre")
    cidr = "10.66.0.0/20"
    settings_file = _settings_file(tmp_path, cluster, cidr)
    created: list[Any] = []
    try:
        # No external network at all.
        none = run_cli("openstack", "preflight", str(settings_file))
        assert none.code == 1, none.out
        assert _lines(none)["external-network"].startswith("failed")
        assert "no external network" in _lines(none)["external-network"]

        # Two: both named, no guess.
        for name in ("public-a", "public-b"):
            created.append(admin.network.create_network(name=name, is_router_external=True))
        two = run_cli("openstack", "preflight", str(settings_file))
        assert two.code == 1
        line = _lines(two)["external-network"]
        assert "2 external networks" in line and "public-a" in line and "public-b" in line

        # A given ID that does not exist: the settings are wrong (exit 2).
        missing_id = str(uuid.uuid4())
        given = _settings_file(
            tmp_path, cluster, cidr, external=f"    externalNetworkID: {missing_id}\n"
        )
        bad = run_cli("openstack", "preflight", str(given))
        assert bad.code == 2
        assert missing_id in _lines(bad)["external-network"]

        # Exactly one: success; compute/image checks say plainly they were not checked.
        admin.network.delete_network(created.pop().id)
        good = run_cli("openstack", "preflight", str(settings_file))
        assert good.code == 0, good.out
        lines = _lines(good)
        assert (
            lines["external-network"].startswith("ok") and "public-a" in lines["external-network"]
        )
        assert lines["node-cidr"].startswith("ok")
        assert lines["names"].startswith("ok")
        for check, service in (
            ("flavors", "compute"),
            ("images", "image"),
            ("image-fit", "compute"),
        ):
            assert lines[check] == (
                f"skipped {check}: not checked: no {service} endpoint in the service catalog"
            )

        # The cluster's own network (CAPO's name) may use the node CIDR.
        settings = openstack_settings(cluster, cidr)
        network, _subnet, _groups = _capo_network(conn, settings, cidr)
        own = run_cli("openstack", "preflight", str(settings_file))
        assert own.code == 0, own.out

        # Another subnet of the project overlapping the node CIDR: settings problem.
        other = conn.network.create_network(name=f"{cluster}-other")
        conn.network.create_subnet(
            network_id=other.id, ip_version=4, cidr="10.66.8.0/24", name="other-subnet"
        )
        overlap = run_cli("openstack", "preflight", str(settings_file))
        assert overlap.code == 2
        assert "overlaps" in _lines(overlap)["node-cidr"]
        assert "other-subnet 10.66.8.0/24" in _lines(overlap)["node-cidr"]
        conn.network.delete_network(other.id)

        # A network with CAPO's name that CAPO did not create: name collision (cloud, exit 1).
        conn.network.update_network(network, description="made by hand")
        foreign = run_cli("openstack", "preflight", str(settings_file))
        assert foreign.code == 1
        assert "was not created by CAPO" in _lines(foreign)["names"]

        report = run_preflight(conn, settings)
        assert report.external_network_id == created[0].id
        assert [r.name for r in report.failed] == ["names"]
    finally:
        for network in created:
            admin.network.delete_network(network.id, ignore_missing=True)
        settings = openstack_settings(cluster, cidr)
        for net in conn.network.networks(name=capo_network_name(settings)):
            conn.network.delete_network(net.id)
        for group in conn.network.security_groups(project_id=conn.current_project_id):
            if group.name in capo_security_group_names(settings):
                conn.network.delete_security_group(group.id)


def test_cloud_access_reads_the_cloud_entry(conn: Any, demo: Tenant) -> None:
    access = cloud_access(conn)
    assert access.auth_url == demo.auth_url
    assert access.region_name == "RegionOne"
    assert access.interface == "public"
    assert access.project_id == demo.project_id


# --------------------------------------------------------------------------- server groups


def test_server_groups_need_a_compute_endpoint(conn: Any) -> None:
    """The local stack has no Nova: creation refuses clearly, deletion reports absence."""
    from scs_templates._core.errors import ToolError
    from scs_templates.providers.openstack.servergroups import (
        delete_server_groups,
        ensure_server_groups,
    )

    settings = openstack_settings("sg", "10.77.0.0/24")
    with pytest.raises(ToolError, match="no compute endpoint in the service catalog"):
        ensure_server_groups(conn, settings)
    actions = delete_server_groups(conn, settings)
    assert [a.action for a in actions] == ["absent"] * len(actions)
    assert actions


# --------------------------------------------------------------------------- install path


def test_install_path_preflight_then_credentials(
    conn: Any, admin: Any, demo: Tenant, monkeypatch: pytest.MonkeyPatch, webhook_plane: Any
) -> None:
    """What `install` does on OpenStack, against the REAL Keystone and Neutron and a REAL
    management plane (testenv/; conftest ``webhook_plane``) holding the cluster's credentials
    Secret: a credential that still authenticates is reused from the Secret there."""
    plane = webhook_plane
    from scs_templates import _lifecycle as lifecycle
    from scs_templates._core.errors import ToolError
    from scs_templates._tools.kube import KubeClient
    from scs_templates.providers.openstack import provision

    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(demo.clouds_yaml))
    cluster = _unique("inst")
    namespace = plane.namespace("openstack")
    settings = _settings_without_server_groups(cluster, "10.67.0.0/20", namespace=namespace)
    assert settings.metadata.namespace == namespace
    external = None
    try:
        kube = KubeClient(str(plane.kubeconfig))
        lines: list[str] = []
        # No external network: the preflight stops the install before anything is created.
        if not any(n.is_router_external for n in admin.network.networks()):
            with pytest.raises(ToolError, match="preflight check external-network failed"):
                provision.cluster_secrets(settings, kube=kube, progress=lines.append)
            assert (
                conn.identity.find_application_credential(
                    conn.current_user_id, f"capi-{cluster}-appcred.{namespace}"
                )
                is None
            )
            external = admin.network.create_network(
                name=f"{cluster}-public", is_router_external=True
            )
        secrets = provision.cluster_secrets(settings, kube=kube, progress=lines.append)
        assert sorted(secrets) == ["cloud.conf", "clouds.yaml"]
        assert any(line.startswith("preflight ok") for line in lines)
        assert any("application credential" in line and "created" in line for line in lines)
        stored = conn.identity.find_application_credential(
            conn.current_user_id, f"capi-{cluster}-appcred.{namespace}"
        )
        assert stored is not None and stored.unrestricted is False
        assert f'application-credential-id="{stored.id}"' in secrets["cloud.conf"]
        secret = secrets["clouds.yaml"].split("application_credential_secret:", 1)[1].split()[0]
        assert len(secret) > 20
        assert secret in secrets["cloud.conf"]
        assert all(secret not in line for line in lines)  # progress lines never show it

        # the next install reads the Secret from the management cluster and reuses the
        # credential that still authenticates (no new one, the same secret)
        assert lifecycle.store_credentials(kube, settings, secrets)
        lines.clear()
        again = provision.cluster_secrets(settings, kube=kube, progress=lines.append)
        assert again == secrets
        assert not any("created" in line for line in lines), lines
        assert any(
            line.startswith("application credential") and line.endswith(": reused")
            for line in lines
        ), lines
    finally:
        provision.release_cluster_resources(settings)
        if external is not None:
            admin.network.delete_network(external.id)


def test_unwritable_write_secret_creates_no_credential(
    run_cli: Any, tmp_path: Path, conn: Any
) -> None:
    """Checked BEFORE creating: a secret OpenStack shows only once must never be lost."""
    cluster = _unique("unwritable")
    settings_file = _settings_file(tmp_path, cluster, "10.62.0.0/20")
    (tmp_path / "file").write_text("x")
    target = tmp_path / "file" / "secret.yaml"
    done = run_cli(
        "openstack", "appcred", "create", str(settings_file), "--write-secret", str(target)
    )
    assert done.code == 2
    assert done.err.strip().splitlines() == [
        line for line in done.err.strip().splitlines() if "--write-secret" in line
    ]
    assert f"{tmp_path}/file is not a directory" in done.err
    assert find_app_credential(conn, f"capi-{cluster}-appcred.default") is None


# --------------------------------------------------------------------------- library API


INFRA_API = "infrastructure.cluster.x-k8s.io/v1beta1"
#: The kinds of the chart whose controllers would add a finalizer.
CLUSTER_KINDS = (
    ("cluster.x-k8s.io/v1beta2", "Cluster"),
    ("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"),
    (INFRA_API, "OpenStackCluster"),
)


def test_library_install_and_delete_do_what_the_commands_do(
    conn: Any,
    admin: Any,
    demo: Tenant,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    webhook_plane: Any,
) -> None:
    """``api.install`` / ``api.delete`` create and remove the per-cluster application
    credential like ``scs-templates install``/``delete``: against the REAL Keystone and
    Neutron, the REAL helm and a REAL management plane whose Cluster API and CAPO webhooks
    admit the chart and whose controllers reconcile nothing (conftest ``webhook_plane``: no
    server could boot on this cloud, and CAPO would build the cluster's network there)."""
    from scs_templates import api
    from scs_templates._tools.helm import Helm
    from scs_templates._tools.kube import KubeClient
    from tests.support import helm_tool

    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(demo.clouds_yaml))
    cluster = _unique("lib")
    namespace = webhook_plane.namespace("library")
    settings = _settings_without_server_groups(cluster, "10.68.0.0/20", namespace=namespace)
    credential = f"capi-{cluster}-appcred.{namespace}"
    secret_name = f"capi-{cluster}-cloud-config"
    external = None
    if not any(n.is_router_external for n in admin.network.networks()):
        external = admin.network.create_network(name=f"{cluster}-public", is_router_external=True)
    try:
        kubeconfig = str(webhook_plane.kubeconfig)
        helm = Helm(helm_tool(), kubeconfig=kubeconfig, home=tmp_path / "helm")
        with KubeClient(kubeconfig) as kube:
            lines: list[str] = []
            api.install(settings, helm=helm, kube=kube, cloud_progress=lines.append)
            stored = find_app_credential(conn, credential)
            assert stored is not None
            data = kube.secret_data(namespace, secret_name)
            assert data is not None
            assert f'application-credential-id="{stored.id}"' in data["cloud.conf"]
            assert any(line.startswith("preflight ok") for line in lines)
            # the chart's objects are on the real API server, admitted by the real webhooks,
            # and no controller reconciled them (none added its finalizer)
            (infra,) = webhook_plane.api.list(INFRA_API, "OpenStackCluster", namespace)
            assert infra["spec"]["identityRef"]["name"] == secret_name
            for api_version, kind in CLUSTER_KINDS:
                (obj,) = webhook_plane.api.list(api_version, kind, namespace)
                assert not obj["metadata"].get("finalizers"), obj["metadata"]

            api.delete(
                settings, helm=helm, kube=kube, poll_interval=0.5, cloud_progress=lines.append
            )
            assert kube.secret_data(namespace, secret_name) is None
            for api_version, kind in CLUSTER_KINDS:
                assert webhook_plane.api.list(api_version, kind, namespace) == []
            assert helm.status(cluster, namespace=namespace) is None  # the release is gone
        assert find_app_credential(conn, credential) is None
        assert any(f"application credential {credential}: deleted" in line for line in lines)
    finally:
        if external is not None:
            admin.network.delete_network(external.id)


# --------------------------------------------------------------------------- delete, step (c)


@pytest.fixture(scope="session")
def octavia_cinder(stack: Stack) -> Stack:
    """The stack with the REAL Octavia (noop amphora/compute/network drivers) and the REAL
    Cinder (test volume backend) added (tests/support/openstack_stack.py); from here on the catalog
    has load-balancer and block-storage endpoints."""
    try:
        stack.start_octavia_cinder()
    except Exception as error:
        skip_or_fail(f"Octavia and Cinder could not start in the test stack: {error}")
        raise
    return stack


def _id(resource: Any) -> str:
    return str(resource.id)


def _wait_for(what: str, done: Any, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.5)


def _octavia_and_cinder_leftovers(conn: Any, subnet_id: str, cluster: str) -> dict[str, Any]:
    """What OCCM and Cinder CSI create for a cluster, through the REAL Octavia and Cinder:
    a load balancer per LoadBalancer Service (OCCM's name), volumes with Cinder CSI's
    cluster property (one with a snapshot: Cinder refuses to delete it before the
    snapshot), and the same of another cluster plus a volume made by hand, which stay."""
    lbs, storage = conn.load_balancer, conn.block_storage
    csi = {CINDER_CSI_CLUSTER_PROPERTY: cluster}
    made = {
        "lb": lbs.create_load_balancer(
            name=f"kube_service_{cluster}_shop_web", vip_subnet_id=subnet_id
        ),
        "other_lb": lbs.create_load_balancer(
            name=f"kube_service_{cluster}x_shop_web", vip_subnet_id=subnet_id
        ),
        "pvc1": storage.create_volume(size=1, name="pvc-1", metadata=csi),
        "pvc2": storage.create_volume(size=1, name="pvc-2", metadata={**csi, "x": "y"}),
        "other_pvc": storage.create_volume(
            size=1, name="other", metadata={CINDER_CSI_CLUSTER_PROPERTY: f"{cluster}x"}
        ),
        "by_hand": storage.create_volume(size=1, name="by-hand"),
    }
    for key in ("lb", "other_lb"):
        lb_id = made[key].id
        _wait_for(
            f"load balancer {key} ACTIVE",
            lambda lb_id=lb_id: lbs.get_load_balancer(lb_id).provisioning_status == "ACTIVE",
        )
    for key in ("pvc1", "pvc2", "other_pvc", "by_hand"):
        volume_id = made[key].id
        _wait_for(
            f"volume {key} available",
            lambda volume_id=volume_id: storage.get_volume(volume_id).status == "available",
        )
    made["snap"] = storage.create_snapshot(volume_id=made["pvc1"].id, name="snapshot-1")
    snap_id = made["snap"].id
    _wait_for("snapshot available", lambda: storage.get_snapshot(snap_id).status == "available")
    return made


def _occm_and_capo_leftovers(conn: Any, external: Any, cluster: str, capo: str) -> dict[str, Any]:
    """What OCCM and CAPO leave in the project when the cluster died before its services:
    their floating IPs (CAPO's for the API load balancer, OCCM's per LoadBalancer Service)
    and OCCM's security group; the same of another cluster, which must stay."""
    network = conn.network
    lb = "Floating IP for Kubernetes external service shop/web from cluster"
    made = {
        "occm_fip": network.create_ip(
            floating_network_id=external.id,
            description=f"{lb} {cluster}",
        ),
        "capo_fip": network.create_ip(floating_network_id=external.id, description=capo),
        "occm_group": network.create_security_group(
            name=f"lb-sg-{uuid.uuid4()}-shop-web",
            description=f"Security Group for shop/web Service LoadBalancer in cluster {cluster}",
        ),
        "other_fip": network.create_ip(
            floating_network_id=external.id,
            description=f"{lb} {cluster}x",
        ),
        "other_group": network.create_security_group(
            name=f"lb-sg-{uuid.uuid4()}-shop-web",
            description=f"Security Group for shop/web Service LoadBalancer in cluster {cluster}x",
        ),
    }
    return made


def test_delete_removes_the_clusters_cloud_leftovers(
    conn: Any, admin: Any, cli_env: Tenant, octavia_cinder: Stack
) -> None:
    """Step (c) against the REAL Keystone, Neutron, Octavia and Cinder: OCCM's load
    balancers, floating IPs and security group, CAPO's floating IP, network and leftover
    port, Cinder CSI's volumes and snapshot, the per-cluster credential; --keep-volumes,
    dry run, real run, second run."""
    from scs_templates.providers.openstack import provision
    from scs_templates.providers.openstack.appcred import ensure_cluster_credentials
    from scs_templates.providers.openstack.leftovers import block_storage_api, load_balancer_api
    from scs_templates.providers.openstack.values import cloud_cluster_name

    cluster = _unique("gone")
    settings = openstack_settings(cluster, "10.65.0.0/20")
    external = external_network(admin)
    occm = cloud_cluster_name(settings)  # a new cluster's: "<name>.<namespace>"
    assert occm == f"{cluster}.default"
    made = _occm_and_capo_leftovers(conn, external, occm, capo_description(settings))
    network, subnet, groups = _capo_network(conn, settings, "10.65.0.0/20")
    port = conn.network.create_port(network_id=network.id, fixed_ips=[{"subnet_id": subnet.id}])
    ensure_cluster_credentials(conn, settings, existing=None)
    cloud = _octavia_and_cinder_leftovers(conn, subnet.id, occm)
    lbs, storage = load_balancer_api(conn), block_storage_api(conn)
    assert lbs is not None and storage is not None  # the endpoints are in the catalog

    pvc1, pvc2, snap = cloud["pvc1"], cloud["pvc2"], cloud["snap"]
    kept = clean_project_leftovers(
        conn, settings, load_balancers=lbs, block_storage=storage, keep_volumes=True, dry_run=True
    )
    assert [line for line in kept.lines() if line.startswith("kept")] == [
        f"kept volume snapshot snapshot-1 {snap.id} (available, of volume {pvc1.id})",
        *(f"kept volume {v.name} {v.id} (available)" for v in sorted((pvc1, pvc2), key=_id)),
    ]
    dry = clean_project_leftovers(
        conn, settings, load_balancers=lbs, block_storage=storage, dry_run=True
    )
    described = "\n".join(dry.lines())
    for resource in ("occm_fip", "capo_fip", "occm_group"):
        assert made[resource].id in described
    for resource in ("other_fip", "other_group"):
        assert made[resource].id not in described
    lb = cloud["lb"]
    assert f"would delete load balancer kube_service_{occm}_shop_web {lb.id}" in described
    # a dry run deletes nothing
    assert conn.load_balancer.get_load_balancer(lb.id).provisioning_status == "ACTIVE"
    assert conn.block_storage.get_snapshot(snap.id).status == "available"

    real = clean_project_leftovers(conn, settings, load_balancers=lbs, block_storage=storage)
    assert real.problems == []
    deleted = {(item.kind, item.id) for item in real.deleted}
    assert {
        ("load balancer", lb.id),
        ("volume snapshot", snap.id),
        ("volume", pvc1.id),
        ("volume", pvc2.id),
    } <= deleted
    remaining_lbs = {x.id for x in conn.load_balancer.load_balancers()}
    assert lb.id not in remaining_lbs  # waited for: PENDING_DELETE until Octavia's flow ended
    assert cloud["other_lb"].id in remaining_lbs

    def volumes_left() -> set[str]:
        return {v.id for v in conn.block_storage.volumes()}

    _wait_for(
        "Cinder deleted the cluster's volumes", lambda: not {pvc1.id, pvc2.id} & volumes_left()
    )
    assert {cloud["other_pvc"].id, cloud["by_hand"].id} <= volumes_left()
    for resource in ("occm_fip", "capo_fip"):
        assert conn.network.find_ip(made[resource].id, ignore_missing=True) is None
    assert conn.network.find_security_group(made["occm_group"].id, ignore_missing=True) is None
    assert conn.network.find_ip(made["other_fip"].id, ignore_missing=True) is not None
    assert conn.network.find_security_group(made["other_group"].id, ignore_missing=True)

    # The whole step (c) as delete runs it: the port, network, groups and credential too.
    lines: list[str] = []
    problems = provision.release_cluster_resources(
        settings, conn=conn, progress=lines.append, dry_run=True
    )
    assert problems == []
    assert any(port.id in line and line.startswith("would delete port") for line in lines)
    assert any(line.startswith("would delete application credential") for line in lines)
    problems = provision.release_cluster_resources(settings, conn=conn, progress=lines.append)
    assert problems == []
    assert conn.network.find_network(network.id, ignore_missing=True) is None
    for group in groups:
        assert conn.network.find_security_group(group.id, ignore_missing=True) is None
    after: list[str] = []
    assert provision.release_cluster_resources(settings, conn=conn, progress=after.append) == []
    assert not any(line.startswith(("deleted", "would")) for line in after)  # idempotent
    conn.load_balancer.delete_load_balancer(cloud["other_lb"].id, cascade=True)


def _connect_without(base: Any, **services: bool) -> Any:
    """The demo user's cloud entry, saying the catalog lacks ``services``
    (``has_load_balancer``/``has_block_storage: false``, as openstacksdk reads a clouds.yaml)."""
    import openstack

    return openstack.connect(
        auth=base.config.config["auth"],
        auth_type="v3applicationcredential",
        region_name=REGION,
        **services,
    )


def test_a_cloud_without_octavia_or_cinder_is_said_not_failed(
    demo: Tenant, octavia_cinder: Stack
) -> None:
    """A cloud whose catalog offers no load-balancer or block-storage service (here: the
    user's cloud entry says so, ``has_load_balancer``/``has_block_storage: false``, as
    openstacksdk reads it): step (c) notes it and cleans what Neutron has."""
    from scs_templates.providers.openstack.leftovers import block_storage_api, load_balancer_api

    base = demo.connect()
    conn = _connect_without(base, has_load_balancer=False, has_block_storage=False)
    try:
        assert load_balancer_api(conn) is None and block_storage_api(conn) is None
        settings = openstack_settings(_unique("bare"), "10.66.0.0/20")
        report = clean_project_leftovers(
            conn, settings, load_balancers=None, block_storage=None, dry_run=True
        )
        assert report.notes == [
            "no load-balancer (Octavia) endpoint in the catalog: none to delete",
            "no block-storage (Cinder) endpoint in the catalog: none to delete",
        ]
    finally:
        conn.close()
        base.close()


def test_preflight_refuses_a_load_balancer_provider_octavia_does_not_offer(
    run_cli: Any, tmp_path: Path, demo: Tenant, octavia_cinder: Stack
) -> None:
    """The real Octavia here offers only ``amphora``: ``loadBalancerProvider: ovn`` fails the
    preflight (exit 2, the field named, what is offered, and that a restricted apiAccess would
    not hold: CAPO v0.14.7 would make an amphora load balancer without allowed CIDRs), amphora
    passes; without a load-balancer endpoint the
    check says it did not check."""
    cluster = _unique("lbp")
    ovn = "    loadBalancerProvider: ovn\n"
    restricted = _settings_file(tmp_path, cluster, "10.68.0.0/20", external=ovn)
    text = restricted.read_text().replace(
        "  network:\n", "  network:\n    apiAccess: {mode: internal}\n", 1
    )
    restricted.write_text(text)
    assert "apiAccess: {mode: internal}" in text
    refused = run_cli("openstack", "preflight", str(restricted))
    assert refused.code == 2, refused.out
    assert _lines(refused)["load-balancer-provider"] == (
        "failed  load-balancer-provider: spec.openstack.loadBalancerProvider ovn is not offered "
        "by this cloud's Octavia (offered: amphora): CAPO would make the API load balancer "
        "with the default provider instead, saying so only in an event; apiAccess internal "
        "would not hold"
    )
    amphora = _settings_file(tmp_path, cluster, "10.68.0.0/20")
    offered = run_cli("openstack", "preflight", str(amphora))
    assert _lines(offered)["load-balancer-provider"] == (
        "ok      load-balancer-provider: amphora is offered (offered: amphora)"
    )

    base = demo.connect()
    conn = _connect_without(base, has_load_balancer=False)
    try:
        (check,) = [
            r
            for r in run_preflight(
                conn, openstack_settings(cluster, "10.68.0.0/20", external=ovn)
            ).results
            if r.name == "load-balancer-provider"
        ]
        assert check.status == "skipped", check
    finally:
        conn.close()
        base.close()
