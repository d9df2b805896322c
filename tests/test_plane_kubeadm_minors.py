"""The REAL kubeadm bootstrap controller turns our KubeadmConfigSpec into a kubeadm
configuration that the REAL kubeadm accepts, on every supported minor.

For each supported minor the all-features example (OIDC, audit, encryption, proxy, trusted
CAs, registry credentials, etcd volume, ...) is rendered at the minor's tested patch. Its
control plane's ``kubeadmConfigSpec`` becomes a KubeadmConfig of a standalone control-plane
Machine of that version in a Cluster without infrastructure reference (Cluster API treats
such infrastructure as provisioned) whose control plane is the rendered KubeadmControlPlane,
paused (there is no infrastructure it could clone machines from); the cluster
certificates it would have made are made by the test. The bootstrap
controller of the test plane (CABPK v1.14, testenv)
then writes the bootstrap data exactly as for a real node: cloud-init whose
``/run/kubeadm/kubeadm.yaml`` (ClusterConfiguration + InitConfiguration of the kubeadm API
version that minor gets) goes through ``kubeadm config validate``.

Which kubeadm: one per two minors, because kubeadm N accepts control planes of N-1 and N
(older ones it refuses: "this version of kubeadm only supports deploying clusters with the
control plane version >= ...") - the kubeadm an upgrade from N-1 runs. So four kubeadm
builds cover the seven supported minors: 1.32 (1.31, 1.32), 1.34 (1.33, 1.34), 1.36 (1.35,
1.36) and the plane's 1.37. The cost and the reasoning: docs/testing.md ("Every supported
minor"). The workers' join configuration needs a running workload API (a bootstrap token);
the in-memory provider walk (tests/test_plane_inmemory.py) validates the init and join
configurations of its cluster (1.36) the same way.

Only the Cluster API core, kubeadm bootstrap and control-plane managers run here (a plane of
its own, without CAPD's fixed ports: no wait for the machine-wide CAPD lock).
"""

from __future__ import annotations

import base64
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scs_templates import encryption
from tests.support import skip_or_fail
from tests.test_apiserver_minors import render_all_features, supported_minors

if TYPE_CHECKING:
    from testenv import Plane

pytestmark = [pytest.mark.helm, pytest.mark.plane]

#: kubeadm release minor that validates a workload minor (kubeadm N accepts N-1 and N).
VALIDATOR_MINOR = {31: 32, 32: 32, 33: 34, 34: 34, 35: 36, 36: 36, 37: 37}

BOOTSTRAP_TIMEOUT = 180.0
CLUSTER = "cluster.x-k8s.io/v1beta2"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta2"


@pytest.fixture(scope="module")
def bootstrap_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    """etcd, kube-apiserver, kube-controller-manager, CAPI core and the kubeadm bootstrap and
    control-plane managers (with their CRDs and webhooks)."""
    from testenv import PlaneError, build, running
    from testenv.plane import MANAGERS

    needed = {"etcd", "kube-apiserver", "kube-controller-manager", "capi-core"}
    needed |= {"capi-bootstrap-kubeadm", "capi-controlplane-kubeadm"}
    missing = [name for name in build.missing() if name in needed]
    if missing and build.go_binary() is None:
        skip_or_fail(f"the test plane needs the Go toolchain (`go`) to build {', '.join(missing)}")
    managers = tuple(m for m in MANAGERS if m.name in needed)
    try:
        with running(tmp_path_factory.mktemp("kubeadm-plane"), managers=managers) as started:
            yield started
    except PlaneError as error:
        pytest.fail(f"the test plane did not start: {error}")


def kubeadm_for(minor: tuple[int, int]) -> Path:
    from testenv import PlaneError, build

    release = build.kubeadm_release(f"1.{VALIDATOR_MINOR[minor[1]]}")
    if not build.kubeadm_path(release).is_file() and build.go_binary() is None:
        skip_or_fail(f"kubeadm {release} is not built and there is no Go toolchain")
    try:
        return build.build_kubeadm(release)
    except PlaneError as error:
        pytest.fail(f"kubeadm {release} could not be built: {error}")
        raise  # unreachable


def _secret(name: str, namespace: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "stringData": data,
    }


def _cluster_certificates(cluster: str, namespace: str) -> list[dict[str, Any]]:
    """The Secrets a KubeadmControlPlane makes before the first machine (Cluster API's
    util/secret names and keys): the cluster, etcd and front-proxy CAs, the service-account
    key pair."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import NameOID

    def private(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> str:
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        return pem.decode()

    now = datetime.datetime.now(datetime.UTC)
    secrets = []
    for purpose in ("ca", "etcd", "proxy"):
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{cluster}-{purpose}")])
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )
        pem = cert.public_bytes(serialization.Encoding.PEM).decode()
        secrets.append((purpose, {"tls.crt": pem, "tls.key": private(key)}))
    sa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = sa.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    secrets.append(("sa", {"tls.crt": public.decode(), "tls.key": private(sa)}))
    labels = {"cluster.x-k8s.io/cluster-name": cluster}
    made = []
    for purpose, data in secrets:
        secret = _secret(f"{cluster}-{purpose}", namespace, data)
        secret["metadata"]["labels"] = labels
        secret["type"] = "cluster.x-k8s.io/secret"
        made.append(secret)
    return made


def _referenced_secrets(spec: dict[str, Any], resources: list[str]) -> dict[str, dict[str, str]]:
    """The Secrets the files' contentFrom name, with made-up content of the right shape."""
    secrets: dict[str, dict[str, str]] = {}
    config = encryption.config_text([encryption.new_key()], resources)
    for entry in spec["files"]:
        source = entry.get("contentFrom", {}).get("secret")
        if source is None:
            continue
        value = config if source["key"] == encryption.SECRET_KEY else f"made-up-{source['key']}"
        secrets.setdefault(source["name"], {})[source["key"]] = value
    return secrets


def bootstrap_data(plane: Plane, minor: tuple[int, int]) -> tuple[str, str]:
    """(version, kubeadm.yaml) the real bootstrap controller writes for the first
    control-plane machine of the all-features example at ``minor``."""
    settings, result = render_all_features(minor)
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    rendered_cluster = next(o for o in result.objects if o["kind"] == "Cluster")
    spec = kcp["spec"]["kubeadmConfigSpec"]
    version = kcp["spec"]["version"]
    name = settings.metadata.name
    ns = plane.namespace(f"kubeadm-{minor[0]}-{minor[1]}")
    resources = list(settings.spec.security.encryption_at_rest.resources)
    for secret, data in sorted(_referenced_secrets(spec, resources).items()):
        plane.api.create(_secret(secret, ns, data), namespace=ns)
    for certificate in _cluster_certificates(name, ns):
        plane.api.create(certificate, namespace=ns)
    plane.api.create(
        {
            "apiVersion": CLUSTER,
            "kind": "Cluster",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "clusterNetwork": rendered_cluster["spec"]["clusterNetwork"],
                "controlPlaneEndpoint": {"host": "10.40.0.10", "port": 6443},
                "controlPlaneRef": {
                    "apiGroup": "controlplane.cluster.x-k8s.io",
                    "kind": "KubeadmControlPlane",
                    "name": kcp["metadata"]["name"],
                },
            },
        },
        namespace=ns,
    )
    # the rendered KubeadmControlPlane itself, paused: the bootstrap controller reads its
    # version; its own controller must not act (there is no infrastructure to clone)
    kcp["metadata"].setdefault("annotations", {})["cluster.x-k8s.io/paused"] = "true"
    kcp["metadata"]["namespace"] = ns
    plane.api.create(kcp, namespace=ns)
    machine = f"{name}-control-plane-0"
    plane.api.create(
        {
            "apiVersion": BOOTSTRAP,
            "kind": "KubeadmConfig",
            "metadata": {"name": machine},
            "spec": spec,
        },
        namespace=ns,
    )
    plane.api.create(
        {
            "apiVersion": CLUSTER,
            "kind": "Machine",
            "metadata": {
                "name": machine,
                "labels": {
                    "cluster.x-k8s.io/cluster-name": name,
                    "cluster.x-k8s.io/control-plane": "",
                },
            },
            "spec": {
                "clusterName": name,
                "version": version,
                "bootstrap": {
                    "configRef": {
                        "apiGroup": "bootstrap.cluster.x-k8s.io",
                        "kind": "KubeadmConfig",
                        "name": machine,
                    }
                },
                # never created: the bootstrap data does not wait for the infrastructure
                "infrastructureRef": {
                    "apiGroup": "infrastructure.cluster.x-k8s.io",
                    "kind": "DockerMachine",
                    "name": machine,
                },
            },
        },
        namespace=ns,
    )
    deadline = time.monotonic() + BOOTSTRAP_TIMEOUT
    while True:
        config = plane.api.get(BOOTSTRAP, "KubeadmConfig", ns, machine) or {}
        secret_name = config.get("status", {}).get("dataSecretName")
        if secret_name:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"no bootstrap data after {BOOTSTRAP_TIMEOUT:.0f}s: {config.get('status')}")
        time.sleep(2)
    secret = plane.api.get("v1", "Secret", ns, secret_name)
    assert secret is not None
    cloud_config = base64.b64decode(secret["data"]["value"]).decode()
    files = {f["path"]: f for f in yaml.safe_load(cloud_config)["write_files"]}
    # cloud-init renders its Jinja (CAPO's node name '{{ local_hostname }}') before kubeadm runs
    content = files["/run/kubeadm/kubeadm.yaml"]["content"]
    content = content.replace("{{ local_hostname }}", "node-0")
    return version, content


@pytest.mark.parametrize("minor", supported_minors(), ids=lambda m: f"{m[0]}.{m[1]}")
def test_kubeadm_accepts_what_the_bootstrap_controller_generates(
    bootstrap_plane: Plane, tmp_path: Path, minor: tuple[int, int]
) -> None:
    kubeadm = kubeadm_for(minor)
    version, content = bootstrap_data(bootstrap_plane, minor)
    documents = {d["kind"]: d for d in yaml.safe_load_all(content)}
    assert set(documents) == {"ClusterConfiguration", "InitConfiguration"}, content
    cluster = documents["ClusterConfiguration"]
    assert cluster["kubernetesVersion"] == version
    args = {a["name"] for a in cluster["apiServer"]["extraArgs"]}
    assert {"authentication-config", "encryption-provider-config", "audit-policy-file"} <= args
    path = tmp_path / "kubeadm.yaml"
    path.write_text(content)
    done = subprocess.run(
        [str(kubeadm), "config", "validate", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"kubeadm refuses it:\n{done.stderr}\n{content}"


def test_kubeadm_validation_can_fail(bootstrap_plane: Plane, tmp_path: Path) -> None:
    """The same generated configuration with an unknown field is refused."""
    minor = supported_minors()[-1]
    _, content = bootstrap_data(bootstrap_plane, minor)
    path = tmp_path / "kubeadm.yaml"
    path.write_text(
        content.replace(
            "kind: ClusterConfiguration", "kind: ClusterConfiguration\nnoSuchField: 1", 1
        )
    )
    done = subprocess.run(
        [str(kubeadm_for(minor)), "config", "validate", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0 and "noSuchField" in done.stderr, done.stderr
