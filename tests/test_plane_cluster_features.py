"""The API-server files of the cluster features are loaded by a REAL kube-apiserver.

The audit policy, the structured authentication configuration (OIDC) and the encryption
configuration travel in the KubeadmControlPlane (``files``, the encryption one from its
Secret) and are named by flags in ``clusterConfiguration.apiServer.extraArgs``. A second
kube-apiserver of the test plane (testenv, built from k8s.io/kubernetes) is started with
exactly those flags and files (paths moved into a temporary directory): it must become
ready, write the audit log as the policy says, and encrypt Secrets with the key. A broken
file must stop it, which shows that the check can fail. The encryption key rotation is
played through with the same server: add, promote, rewrite every Secret, remove.

Only the plane's kube-apiserver minor runs here (see docs/testing.md); the flags and file
versions of the other supported minors are read from k8s.io/apiserver of each minor (the
values builder's docstrings name them), not executed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import api, encryption
from tests.support import pinned_helm, skip_or_fail

if TYPE_CHECKING:
    from testenv import KubeAPI, Plane

pytestmark = [pytest.mark.helm, pytest.mark.plane]


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    """etcd and kube-apiserver of the test plane, without the Cluster API managers: these
    tests only start API servers (cheaper, and no manager's fixed ports)."""
    from testenv import PlaneError, build, running

    missing = [name for name in build.missing() if name in ("etcd", "kube-apiserver")]
    if missing and build.go_binary() is None:
        skip_or_fail(f"the test plane needs the Go toolchain (`go`) to build {', '.join(missing)}")
    try:
        with running(tmp_path_factory.mktemp("features-plane"), managers=()) as started:
            yield started
    except PlaneError as error:
        pytest.fail(f"the test plane did not start: {error}")


ISSUERS = [
    {"issuerURL": "https://keycloak.example.com/realms/k8s", "clientID": "kubernetes"},
    {"issuerURL": "https://dex.example.org", "clientID": "k8s", "extraAudiences": ["kubectl"]},
]


def _bootstrap(spec: dict[str, Any]) -> dict[str, Any]:
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "plane", "namespace": "default"},
        "spec": {"provider": "docker", **spec},
    }
    result = api.render(api.validate_data(data).settings, helm=pinned_helm())
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    bootstrap: dict[str, Any] = kcp["spec"]["kubeadmConfigSpec"]
    return bootstrap


def _flags(
    bootstrap: dict[str, Any], directory: Path, secret_files: dict[str, str]
) -> tuple[str, ...]:
    """EVERY rendered API server flag, with the files it names written under ``directory``.

    So the real binary checks every flag we render for its minor (an unknown flag or value
    stops it). A file with ``contentFrom`` gets its content from ``secret_files`` (what the
    bootstrap controller copies from the Secret); the audit log goes to ``directory``."""
    files = {f["path"]: f for f in bootstrap["files"]}
    flags = []
    for arg in bootstrap["clusterConfiguration"]["apiServer"]["extraArgs"]:
        name, value = arg["name"], arg["value"]
        if name == "audit-log-path":
            value = str(directory / "audit.log")
        elif value in files:
            entry = files[value]
            local = directory / f"{name}.yaml"
            if "contentFrom" in entry:
                assert entry["permissions"] == "0600"
                local.write_text(secret_files[entry["contentFrom"]["secret"]["key"]])
            else:
                local.write_text(entry["content"])
            value = str(local)
        flags.append(f"--{name}={value}")
    return tuple(flags)


def _secret(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "default"},
        "stringData": {"token": value},
    }


def test_audit_oidc_and_encryption_files_are_loaded_and_work(plane: Plane, tmp_path: Path) -> None:
    from testenv.plane import extra_apiserver

    bootstrap = _bootstrap({"security": {"oidc": ISSUERS}})
    config = encryption.config_text([encryption.new_key()], ["secrets"])
    flags = _flags(bootstrap, tmp_path, {encryption.SECRET_KEY: config})
    named = {f.split("=", 1)[0] for f in flags if f.endswith(".yaml")}
    assert named == {
        "--admission-control-config-file",
        "--audit-policy-file",
        "--authentication-config",
        "--encryption-provider-config",
    }, flags
    with extra_apiserver(plane, "features-files", flags) as server:
        server.create(_secret("audited", "TOP-SECRET-VALUE"), namespace="default")
        assert server.get("v1", "Secret", "default", "audited") is not None
    log = (tmp_path / "audit.log").read_text()
    events = [json.loads(line) for line in log.splitlines()]
    created = [
        e
        for e in events
        if e.get("objectRef", {}).get("name") == "audited" and e["verb"] == "create"
    ]
    assert created and {e["level"] for e in created} == {"Metadata"}
    assert "TOP-SECRET-VALUE" not in log, "audit must never log Secret bodies"
    assert not [e for e in events if e.get("requestURI", "").startswith("/readyz")]


@pytest.mark.parametrize("broken", ["authentication-config", "audit-policy-file"])
def test_a_broken_feature_file_stops_the_api_server(
    plane: Plane, tmp_path: Path, broken: str
) -> None:
    from testenv import PlaneError
    from testenv.plane import extra_apiserver

    bootstrap = _bootstrap({"security": {"oidc": ISSUERS}})
    config = encryption.config_text([encryption.new_key()], ["secrets"])
    flags = _flags(bootstrap, tmp_path, {encryption.SECRET_KEY: config})
    (flag,) = [f for f in flags if f.startswith(f"--{broken}=")]
    path = Path(flag.split("=", 1)[1])
    path.write_text(
        path.read_text()
        .replace("url: https://", "url: http://")
        .replace("level: Metadata", "level: Everything")
    )
    with (
        pytest.raises(PlaneError, match="exited"),
        extra_apiserver(plane, f"broken-{broken}", flags),
    ):
        pass


def test_key_rotation_with_a_real_api_server(plane: Plane, tmp_path: Path) -> None:
    """add -> promote -> rewrite every Secret -> remove keeps every Secret readable, and in
    the end no Secret depends on the old key. (Skipping the rewrite is not survivable: a
    kube-apiserver that cannot decrypt a stored Secret never becomes ready, seen while
    writing this test; it would cost this test its startup timeout to show.)"""
    from testenv.plane import extra_apiserver

    keys = [encryption.new_key()]
    path = tmp_path / "encryption.yaml"

    def serve() -> Any:
        path.write_text(encryption.config_text(keys, ["secrets"]))
        # one name: every server of this test shares the same etcd prefix (the same data)
        return extra_apiserver(
            plane, "features-rotation", (f"--encryption-provider-config={path}",)
        )

    with serve() as server:
        server.create(_secret("first", "written-with-the-first-key"), namespace="default")
    for step in ("add", "promote"):
        keys = encryption.next_keys(keys, step)  # type: ignore[arg-type]
        with serve() as server:
            assert _value(server, "first") == "written-with-the-first-key"
            server.create(_secret(f"after-{step}", step), namespace="default")
    with serve() as server:
        # docs/cluster-features.md: kubectl get secrets -A -o json | kubectl replace -f -
        for item in server.list("v1", "Secret", "default"):
            secret = {"apiVersion": "v1", "kind": "Secret", **item}
            server.request("PUT", server.object_path(secret), secret)
    keys = encryption.next_keys(keys, "remove")
    assert len(keys) == 1
    with serve() as server:
        assert _value(server, "first") == "written-with-the-first-key"
        assert _value(server, "after-add") == "add"
        assert _value(server, "after-promote") == "promote"


def _value(server: KubeAPI, name: str) -> str:
    import base64

    found = server.get("v1", "Secret", "default", name)
    assert found is not None
    return base64.b64decode(found["data"]["token"]).decode()
