"""The API-server files of the cluster features are loaded by a REAL kube-apiserver.

The audit policy, the structured authentication configuration (OIDC) and the encryption
configuration travel in the KubeadmControlPlane (``files``, the encryption one from its
Secret) and are named by flags in ``clusterConfiguration.apiServer.extraArgs``. A second
kube-apiserver of the test plane (testenv, built from k8s.io/kubernetes) is started with
exactly those flags and files (paths moved into a temporary directory): it must become
ready, write the audit log as the policy says, and encrypt Secrets with the key. A broken
file must stop it, which shows that the check can fail. The encryption key rotation is
played through with the same server: add, promote, rewrite every Secret, remove.

Per minor of testenv.build.APISERVER_MINORS (each distinct configuration's oldest minor and
the newest): the all-features example rendered at that minor's tested patch is loaded by a
real kube-apiserver OF THAT MINOR (the plane's own for its minor; the others built from
k8s.io/kubernetes ahead by `python -m testenv build --all`, or on demand by
testenv.build.build_kube_apiserver, and cached like the per-minor kubeadm), and by the
newest minor's kube-apiserver (the plane's): so each configuration meets the oldest and the
newest kube-apiserver that can get it (docs/testing.md, "Every supported minor").
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from scs_templates import api
from scs_templates._render import encryption
from scs_templates._settings import certificates
from testenv import build
from tests.support import pinned_helm, skip_or_fail
from tests.support.minors import render_all_features, supported_minors

if TYPE_CHECKING:
    from testenv import KubeAPI, Plane

pytestmark = [pytest.mark.extra_builds]


@pytest.fixture(scope="module")
def plane(api_plane: Plane) -> Plane:
    """Without the Cluster API managers (conftest's api_plane): these tests only start API
    servers."""
    return api_plane


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


#: The API-server flags that name a file when every API-server feature is on.
FILE_FLAGS = {
    "--admission-control-config-file",
    "--audit-policy-file",
    "--authentication-config",
    "--encryption-provider-config",
}


def _feature_flags(
    bootstrap: dict[str, Any], directory: Path, resources: list[str]
) -> tuple[str, ...]:
    """:func:`_flags` with an encryption configuration of ``resources`` (what install puts
    into the key Secret); every file-naming flag must be there."""
    config = encryption.config_text([encryption.new_key()], resources)
    flags = _flags(bootstrap, directory, {encryption.SECRET_KEY: config})
    assert {f.split("=", 1)[0] for f in flags if f.endswith(".yaml")} == FILE_FLAGS, flags
    return flags


def _audited_at_metadata(log: str, name: str, value: str) -> list[dict[str, Any]]:
    """The audit events of creating Secret ``name``: at Metadata level only, and the
    Secret's ``value`` nowhere in the log."""
    assert value not in log, "audit must never log Secret bodies"
    events = [json.loads(line) for line in log.splitlines()]
    created = [
        e for e in events if e.get("objectRef", {}).get("name") == name and e["verb"] == "create"
    ]
    assert created and {e["level"] for e in created} == {"Metadata"}, created
    return events


def test_audit_oidc_and_encryption_files_are_loaded_and_work(plane: Plane, tmp_path: Path) -> None:
    from testenv.plane import extra_apiserver

    bootstrap = _bootstrap({"security": {"oidc": ISSUERS}})
    flags = _feature_flags(bootstrap, tmp_path, ["secrets"])
    with extra_apiserver(plane, "features-files", flags) as server:
        server.create(_secret("audited", "TOP-SECRET-VALUE"), namespace="default")
        assert server.get("v1", "Secret", "default", "audited") is not None
    assert "/features-files/secrets/default/audited" in _secrets_by_key(
        plane, "/features-files", ["TOP-SECRET-VALUE"]
    ), "stored as secretbox ciphertext in the real etcd"
    log = (tmp_path / "audit.log").read_text()
    events = _audited_at_metadata(log, "audited", "TOP-SECRET-VALUE")
    assert not [e for e in events if e.get("requestURI", "").startswith("/readyz")]


#: A user's own audit policy (security.audit.policy): ConfigMaps with their bodies, nothing
#: else; the opposite of the default policy's choices, so the log shows which one is in force.
USER_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Request", "resources": [{"group": "", "resources": ["configmaps"]}]},
        {"level": "None"},
    ],
}


def test_the_users_own_audit_policy_is_the_one_in_force(plane: Plane, tmp_path: Path) -> None:
    """security.audit.policy replaces the default: the real kube-apiserver logs a ConfigMap's
    creation with its body (Request) and nothing of a Secret (None), where the default
    policy logs the Secret at Metadata and no ConfigMap body."""
    from testenv.plane import extra_apiserver

    bootstrap = _bootstrap({"security": {"oidc": ISSUERS, "audit": {"policy": USER_POLICY}}})
    flags = _feature_flags(bootstrap, tmp_path, ["secrets"])
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "users-policy", "namespace": "default"},
        "data": {"body": "LOGGED-BY-THE-USERS-POLICY"},
    }
    with extra_apiserver(plane, "features-user-policy", flags) as server:
        server.create(configmap, namespace="default")
        server.create(_secret("not-audited", "NEVER-IN-THE-LOG"), namespace="default")
    events = [json.loads(line) for line in (tmp_path / "audit.log").read_text().splitlines()]
    ours = [e for e in events if e.get("objectRef", {}).get("namespace") == "default"]
    assert [(e["verb"], e["objectRef"]["resource"], e["level"]) for e in ours] == [
        ("create", "configmaps", "Request")
    ], ours
    assert ours[0]["requestObject"]["data"] == configmap["data"]
    assert not [e for e in events if e.get("objectRef", {}).get("resource") != "configmaps"]


def _user(plane: Plane, server: KubeAPI, token: str) -> tuple[str, list[str]] | None:
    """(username, groups) the API server makes of bearer ``token`` (a SelfSubjectReview), or
    None when it refuses the token (401)."""
    import http.client
    import ssl

    context = ssl.create_default_context(cafile=str(plane.directory / "pki" / "ca.crt"))
    conn = http.client.HTTPSConnection(server.host, server.port, context=context, timeout=30)
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    try:
        conn.request(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            body=json.dumps(body),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        answer = conn.getresponse()
        raw = answer.read()
    finally:
        conn.close()
    if answer.status == 401:
        return None
    assert answer.status == 201, (answer.status, raw[:300])
    info = json.loads(raw)["status"]["userInfo"]
    return info["username"], sorted(info.get("groups", []))


def test_oidc_logins_through_the_rendered_authentication_configuration(
    plane: Plane, tmp_path: Path
) -> None:
    """Two issuers as the settings describe them, served over HTTPS by a stand-in issuer
    (tests/support/oidc_issuer.py) with a certificate of its own CA: the real kube-apiserver,
    started with the rendered AuthenticationConfiguration, trusts the issuers only through
    the rendered ``certificateAuthority``, and maps each token as the settings say: the
    username claim and prefix (``sub`` with ``oidc:``; ``email`` without), the groups claim
    and prefix (``roles`` with ``keycloak:``; the default ``groups`` with ``oidc:``), the
    client id and the extra audiences. A wrong audience, a foreign signing key and an issuer
    not in the settings are refused."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    from testenv.plane import extra_apiserver
    from tests.support import oidc_issuer

    with oidc_issuer.serving(tmp_path / "issuer") as issuers:
        oidc = [
            {
                "issuerURL": issuers.url("keycloak"),
                "clientID": "kubernetes",
                "groupsClaim": "roles",
                "groupsPrefix": "keycloak:",
                "certificateAuthority": issuers.ca_pem,
            },
            {
                "issuerURL": issuers.url("dex"),
                "clientID": "k8s",
                "extraAudiences": ["kubectl"],
                "usernameClaim": "email",
                "usernamePrefix": "",
                "certificateAuthority": issuers.ca_pem,
            },
        ]
        bootstrap = _bootstrap({"security": {"oidc": oidc}})
        flags = _feature_flags(bootstrap, tmp_path, ["secrets"])
        alice = issuers.token(
            "keycloak", {"aud": "kubernetes", "sub": "alice", "roles": ["admins"]}
        )
        bob = issuers.token(
            "dex",
            {
                "aud": "kubectl",
                "sub": "CgNib2I",
                "email": "bob@corp.example",
                "email_verified": True,
                "groups": ["dev"],
            },
        )
        with extra_apiserver(plane, "features-oidc", flags) as server:
            # the JWT authenticators fetch discovery and keys after start: poll
            deadline = time.monotonic() + 120
            while (user := _user(plane, server, alice)) is None and time.monotonic() < deadline:
                time.sleep(1)
            assert user == ("oidc:alice", ["keycloak:admins", "system:authenticated"]), user
            assert _user(plane, server, bob) == (
                "bob@corp.example",
                ["oidc:dev", "system:authenticated"],
            )
            other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            refused = {
                "wrong audience": issuers.token("keycloak", {"aud": "other", "sub": "eve"}),
                "foreign key": issuers.token(
                    "keycloak", {"aud": "kubernetes", "sub": "eve"}, key=other_key
                ),
                "unknown issuer": issuers.token("other", {"aud": "kubernetes", "sub": "eve"}),
            }
            for what, token in refused.items():
                assert _user(plane, server, token) is None, what


@pytest.mark.parametrize("broken", ["authentication-config", "audit-policy-file", "oidc-ca"])
def test_a_broken_feature_file_stops_the_api_server(
    plane: Plane, tmp_path: Path, broken: str
) -> None:
    """A broken file stops the real kube-apiserver. ``oidc-ca``: an issuer CA that only
    looks like a certificate (what the settings accepted before settings/certificates.py,
    and the all-features example carried) stops it as well, which is why validate refuses
    it; the same file with the real certificate starts (test_a_minor_loads_every_...)."""
    from testenv import PlaneError
    from testenv.plane import extra_apiserver
    from tests.render.test_cluster_features import PEM

    issuers = [{**ISSUERS[0], "certificateAuthority": PEM}, ISSUERS[1]]
    bootstrap = _bootstrap({"security": {"oidc": issuers}})
    flags = _feature_flags(bootstrap, tmp_path, ["secrets"])
    flag_name = "authentication-config" if broken == "oidc-ca" else broken
    (flag,) = [f for f in flags if f.startswith(f"--{flag_name}=")]
    path = Path(flag.split("=", 1)[1])
    text = path.read_text()
    if broken == "oidc-ca":
        assert PEM.splitlines()[1] in text, "the rendered file carries the issuer's CA"
        # still valid base64 of the same length per line: only the certificate is gone
        line = PEM.splitlines()[2]
        made_up = PEM.replace(line, "A" * len(line))
        assert certificates.problem(made_up), "validate refuses it too"
        path.write_text(text.replace(line, "A" * len(line)))
    else:
        path.write_text(
            text.replace("url: https://", "url: http://").replace(
                "level: Metadata", "level: Everything"
            )
        )
    with (
        pytest.raises(PlaneError, match="exited"),
        extra_apiserver(plane, f"broken-{broken}", flags),
    ):
        pass


def _stored(plane: Plane, prefix: str) -> dict[str, bytes]:
    """etcd key -> the bytes etcd holds under ``prefix``, read from the plane's REAL etcd
    (its v3 JSON gateway, with the plane's etcd client certificate): what encryption at
    rest is about, below every API server."""
    import base64
    import ssl
    import urllib.request

    pki = plane.directory / "pki"
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    context.load_cert_chain(str(pki / "etcd-client.crt"), str(pki / "etcd-client.key"))
    start = prefix.encode()
    end = start[:-1] + bytes([start[-1] + 1])
    body = {"key": base64.b64encode(start).decode(), "range_end": base64.b64encode(end).decode()}
    request = urllib.request.Request(
        f"https://127.0.0.1:{plane.ports['etcd']}/v3/kv/range",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, context=context, timeout=30) as response:
        kvs = json.load(response).get("kvs", [])
    return {base64.b64decode(kv["key"]).decode(): base64.b64decode(kv["value"]) for kv in kvs}


def _secrets_by_key(plane: Plane, prefix: str, plain: list[str]) -> dict[str, str]:
    """Secret etcd key -> the name of the secretbox key it is stored with; none holds any of
    the ``plain`` values readable."""
    stored = _stored(plane, f"{prefix}/secrets/")
    assert stored, f"no Secrets under {prefix}/secrets/"
    written = {}
    for key, value in sorted(stored.items()):
        assert not [p for p in plain if p.encode() in value], f"{key} is stored readable"
        assert value.startswith(b"k8s:enc:secretbox:v1:"), (key, value[:40])
        written[key] = value.split(b":")[4].decode()
    return written


def test_key_rotation_with_a_real_api_server(plane: Plane, tmp_path: Path) -> None:
    """add -> promote -> rewrite every Secret -> remove keeps every Secret readable, and in
    the end no Secret depends on the old key: the bytes in the real etcd are secretbox
    ciphertext of the expected key at every step (never the plain value). (Skipping the
    rewrite is not survivable: a kube-apiserver that cannot decrypt a stored Secret never
    becomes ready, seen while writing this test; it would cost this test its startup
    timeout to show.)"""
    import datetime

    from testenv.plane import extra_apiserver

    def key_at(hour: int) -> encryption.Key:
        return encryption.new_key(datetime.datetime(2026, 12, 1, hour, tzinfo=datetime.UTC))

    first, second = key_at(8), key_at(9)
    keys = [first]
    path = tmp_path / "encryption.yaml"
    prefix = "/features-rotation"
    values = {
        "first": "written-with-the-first-key",
        "after-add": "written-after-the-add-step",
        "after-promote": "written-after-the-promote-step",
    }

    def serve() -> Any:
        path.write_text(encryption.config_text(keys, ["secrets"]))
        # one name: every server of this test shares the same etcd prefix (the same data)
        return extra_apiserver(plane, prefix[1:], (f"--encryption-provider-config={path}",))

    def stored_with() -> dict[str, str]:
        by_key = _secrets_by_key(plane, prefix, list(values.values()))
        return {k.rsplit("/", 1)[1]: v for k, v in by_key.items() if "/default/" in k}

    with serve() as server:
        server.create(_secret("first", values["first"]), namespace="default")
    assert stored_with() == {"first": first[0]}
    for step in ("add", "promote"):
        keys = encryption.next_keys(keys, step, new=second)  # type: ignore[arg-type]
        with serve() as server:
            assert _value(server, "first") == values["first"]
            server.create(_secret(f"after-{step}", values[f"after-{step}"]), namespace="default")
    # added: decrypts, does not encrypt yet; promoted: encrypts what is written from then on
    assert stored_with() == {"first": first[0], "after-add": first[0], "after-promote": second[0]}
    with serve() as server:
        # docs/cluster-features.md: kubectl get secrets -A -o json | kubectl replace -f -
        for item in server.list("v1", "Secret"):
            secret = {"apiVersion": "v1", "kind": "Secret", **item}
            server.request("PUT", server.object_path(secret), secret)
    assert set(_secrets_by_key(plane, prefix, list(values.values())).values()) == {second[0]}
    keys = encryption.next_keys(keys, "remove")
    assert keys == [second]
    with serve() as server:
        for name, value in values.items():
            assert _value(server, name) == value


def _value(server: KubeAPI, name: str) -> str:
    import base64

    found = server.get("v1", "Secret", "default", name)
    assert found is not None
    return base64.b64decode(found["data"]["token"]).decode()


def kube_apiserver_for(minor: tuple[int, int]) -> Path:
    """The directory of a real kube-apiserver of ``minor`` (the newest patch the Go module
    proxy serves, testenv.build.KUBEADM_RELEASES; the plane's own for its minor), built from
    k8s.io/kubernetes when missing and cached under ~/.cache like the per-minor kubeadm."""
    from testenv import PlaneError, build

    release = build.kubeadm_release(f"{minor[0]}.{minor[1]}")
    target = build.release_program_path("kube-apiserver", release)
    if not target.is_file() and build.go_binary() is None:
        skip_or_fail(f"kube-apiserver {release} is not built and there is no Go toolchain")
    try:
        return build.build_kube_apiserver(release).parent
    except PlaneError as error:
        pytest.fail(f"kube-apiserver {release} could not be built: {error}")
        raise  # unreachable


#: The supported minors whose REAL kube-apiserver loads the rendered files here
#: (testenv.build.APISERVER_MINORS: the oldest minor of each distinct configuration and the
#: newest minor; tests/render/test_apiserver_configurations.py proves the others render the
#: configuration of the nearest older one; `python -m testenv build --all` builds them ahead).
#: Each one not the plane's is a build of k8s.io/kubernetes at that minor's newest patch
#: (~150 CPU seconds after that release's kubeadm, docs/testing.md "Builds").
APISERVER_MINORS = build.APISERVER_MINORS

#: (the minor whose configuration is rendered, the minor of the kube-apiserver that loads
#: it): each minor's own, then every older configuration in the newest kube-apiserver, which
#: shows no part of it was removed since (a configuration loaded at both ends is loaded
#: between: Kubernetes does not remove an API version and bring it back).
LOADS = [(minor, minor) for minor in APISERVER_MINORS] + [
    (minor, max(APISERVER_MINORS)) for minor in APISERVER_MINORS[:-1]
]


def test_the_apiserver_minors_are_supported_ones() -> None:
    assert set(APISERVER_MINORS) <= set(supported_minors()), "a minor no longer supported"
    assert max(supported_minors()) in APISERVER_MINORS, "the newest minor runs for real"
    assert tuple(sorted(APISERVER_MINORS)) == APISERVER_MINORS, "oldest first"


@pytest.mark.parametrize(("minor", "server_minor"), LOADS, ids=lambda m: f"{m[0]}.{m[1]}")
def test_a_minor_loads_every_rendered_flag_and_file(
    plane: Plane, tmp_path: Path, minor: tuple[int, int], server_minor: tuple[int, int]
) -> None:
    """The all-features example at the minor's tested patch: a kube-apiserver of
    ``server_minor`` (that minor itself, or the newest) starts with EVERY rendered flag and
    file (admission configuration, audit policy, AuthenticationConfiguration of the version
    that minor gets, encryption configuration of the resources the example encrypts) and
    becomes ready; the audit policy is in force."""
    from testenv.plane import extra_apiserver

    settings, result = render_all_features(minor)
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    resources = list(settings.spec.security.encryption_at_rest.resources)
    flags = _feature_flags(kcp["spec"]["kubeadmConfigSpec"], tmp_path, resources)
    bindir = kube_apiserver_for(server_minor)
    name = f"minor-{minor[0]}-{minor[1]}-on-{server_minor[0]}-{server_minor[1]}"
    with extra_apiserver(plane, name, flags, bindir=bindir) as server:
        version = server.request("GET", "/version")
        want = (str(server_minor[0]), str(server_minor[1]))
        assert (version["major"], version["minor"]) == want, version
        server.create(_secret("audited", "TOP-SECRET-VALUE"), namespace="default")
    _audited_at_metadata((tmp_path / "audit.log").read_text(), "audited", "TOP-SECRET-VALUE")
