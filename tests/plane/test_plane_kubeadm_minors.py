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

Which kubeadm: the one of the SAME minor (its newest patch on the Go module proxy,
testenv.build.KUBEADM_RELEASES; the plane's own for 1.37), the kubeadm that node runs:
seven builds for the seven supported minors, made ahead by `python -m testenv build --all`
(testenv.build.suite_builds). The test asks each binary its version, so a kubeadm of another
minor fails it. The cost: docs/testing.md ("Every supported minor").

Then the join configurations of the same cluster: the test marks the control plane
initialized (the KubeadmControlPlane's and the Cluster's status, as their paused or
infrastructure-less controllers would) and adds a second control-plane machine (the
KubeadmControlPlane's spec) and one machine per worker group (each rendered
KubeadmConfigTemplate); the bootstrap controller writes their
``/run/kubeadm/kubeadm-join-config.yaml`` (discovery: the cluster CA's hash, the endpoint)
and the same kubeadm validates it. One thing the controller would take from the workload
cluster is given instead: the bootstrap token (it creates one in the workload API unless the
configuration names one; there is no workload API here), a well-formed made-up one.

And every example's bootstrap data as cloud-init reads it: the same machines (first
control-plane machine, a second joining, one of every worker group) for each example, a
``clusterclass`` one as the topology controller would make its KubeadmControlPlane and
KubeadmConfigTemplates (:func:`machine_specs`), and the cloud-config the real controller
writes into each bootstrap Secret through Debian's ``cloud-init schema`` (after cloud-init's
own Jinja step, :func:`cloud_config_as_cloud_init_reads_it`).

Only the Cluster API core, kubeadm bootstrap and control-plane managers run here (a plane of
its own, without CAPD's fixed ports: no wait for the machine-wide CAPD lock).
"""

from __future__ import annotations

import base64
import copy
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from scs_templates._render import encryption
from testenv import build
from tests.support import EXAMPLES, pinned_helm, plane_with_managers, skip_or_fail
from tests.support.minors import render_all_features, supported_minors

if TYPE_CHECKING:
    from testenv import Plane

pytestmark = [pytest.mark.extra_builds]

BOOTSTRAP_TIMEOUT = 180.0
CLUSTER = "cluster.x-k8s.io/v1beta2"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta2"


@pytest.fixture(scope="module")
def bootstrap_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    """etcd, kube-apiserver, kube-controller-manager, CAPI core and the kubeadm bootstrap and
    control-plane managers (with their CRDs and webhooks)."""
    managers = ("capi-core", "capi-bootstrap-kubeadm", "capi-controlplane-kubeadm")
    yield from plane_with_managers(tmp_path_factory, "kubeadm-plane", managers)


def kubeadm_release_of(minor: tuple[int, int]) -> str:
    """The release whose kubeadm validates a cluster of ``minor``: that minor's own."""
    return build.kubeadm_release(f"{minor[0]}.{minor[1]}")


def kubeadm_for(minor: tuple[int, int]) -> Path:
    from testenv import PlaneError

    release = kubeadm_release_of(minor)
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


def _referenced_secrets(
    specs: list[dict[str, Any]], resources: list[str]
) -> dict[str, dict[str, str]]:
    """The Secrets the files' contentFrom name, with made-up content of the right shape."""
    secrets: dict[str, dict[str, str]] = {}
    config = encryption.config_text([encryption.new_key()], resources)
    for entry in (f for spec in specs for f in spec.get("files", [])):
        source = entry.get("contentFrom", {}).get("secret")
        if source is None:
            continue
        value = config if source["key"] == encryption.SECRET_KEY else f"made-up-{source['key']}"
        secrets.setdefault(source["name"], {})[source["key"]] = value
    return secrets


@dataclass
class Bootstrapped:
    """A cluster of one minor on the bootstrap plane: its rendered objects and where."""

    namespace: str
    cluster: str
    version: str
    kcp: dict[str, Any]  # the KubeadmControlPlane on the plane
    workers: list[tuple[str, dict[str, Any]]]  # (KubeadmConfigTemplate name, its spec)
    init: str  # the kubeadm.yaml of the first control-plane machine
    cloud: dict[str, Any]  # the first control-plane machine's whole cloud-config
    raw: str  # that cloud-config as the bootstrap Secret holds it

    @property
    def kcp_name(self) -> str:
        return str(self.kcp["metadata"]["name"])


def _create_machine(
    plane: Plane,
    ns: str,
    cluster: str,
    machine: str,
    version: str,
    spec: dict[str, Any],
    *,
    control_plane: bool,
) -> None:
    """A new Machine of ``version`` with its KubeadmConfig ``spec`` (no infrastructure)."""
    labels = {"cluster.x-k8s.io/cluster-name": cluster}
    if control_plane:
        labels["cluster.x-k8s.io/control-plane"] = ""
    plane.api.create(
        {
            "apiVersion": BOOTSTRAP,
            "kind": "KubeadmConfig",
            "metadata": {"name": machine, "labels": labels},
            "spec": spec,
        },
        namespace=ns,
    )
    plane.api.create(
        {
            "apiVersion": CLUSTER,
            "kind": "Machine",
            "metadata": {"name": machine, "labels": labels},
            "spec": {
                "clusterName": cluster,
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


def _bootstrap_data_of(plane: Plane, ns: str, machine: str, spec: dict[str, Any]) -> str:
    """The bootstrap data the real controller writes for the Machine ``machine`` of
    :func:`_create_machine` (polled every 0.5 s), the files it copies from Secrets
    checked (:func:`_check_secret_files`)."""
    deadline = time.monotonic() + BOOTSTRAP_TIMEOUT
    while True:
        config = plane.api.get(BOOTSTRAP, "KubeadmConfig", ns, machine) or {}
        secret_name = config.get("status", {}).get("dataSecretName")
        if secret_name:
            break
        if time.monotonic() > deadline:
            pytest.fail(
                f"no bootstrap data for {machine} after {BOOTSTRAP_TIMEOUT:.0f}s: "
                f"{config.get('status')}"
            )
        time.sleep(0.5)
    secret = plane.api.get("v1", "Secret", ns, secret_name)
    assert secret is not None
    raw = base64.b64decode(secret["data"]["value"]).decode()
    _check_secret_files(plane, ns, spec, yaml.safe_load(raw))
    return raw


def _check_secret_files(plane: Plane, ns: str, spec: dict[str, Any], cloud: dict[str, Any]) -> None:
    """Every file the spec takes from a Secret (the encryption configuration, the registry
    credentials) is in the machine's cloud-init with the Secret's content, root-only: the
    rendered manifests only name the Secrets, the real controller copies them."""
    written = {f["path"]: f for f in cloud["write_files"]}
    taken = [f for f in spec.get("files", []) if "contentFrom" in f]
    for entry in taken:
        source = entry["contentFrom"]["secret"]
        stored = plane.api.get("v1", "Secret", ns, source["name"])
        assert stored is not None, source
        value = base64.b64decode(stored["data"][source["key"]]).decode()
        got = written[entry["path"]]
        # its cloud-config writes every file as a YAML block, ending in a newline (which the
        # node script's $(cat ...) of the credentials drops)
        want = value if value.endswith("\n") else f"{value}\n"
        assert (got["content"], got["permissions"]) == (want, "0600"), entry["path"]
        assert got.get("owner", "root:root") == "root:root", got


def _files(cloud: dict[str, Any]) -> dict[str, str]:
    """path -> content of the cloud-config's files; cloud-init renders its Jinja (CAPO's node
    name '{{ local_hostname }}') before kubeadm runs."""
    return {
        f["path"]: f["content"].replace("{{ local_hostname }}", "node-0")
        for f in cloud["write_files"]
    }


def bootstrap_data(plane: Plane, minor: tuple[int, int]) -> Bootstrapped:
    """The all-features example at ``minor`` on the plane, with the kubeadm.yaml the real
    bootstrap controller writes for its first control-plane machine."""
    settings, result = render_all_features(minor)
    return bootstrap_rendered(plane, settings, result.objects, f"kubeadm-{minor[0]}-{minor[1]}")


def machine_specs(
    objects: tuple[dict[str, Any], ...],
) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """(the KubeadmControlPlane, [(worker group, its KubeadmConfig spec)]) of a rendered
    cluster. For a topology cluster, what Cluster API's topology controller makes of the
    ClusterClass: its patches put the Cluster's ``controlPlane`` variable at the
    KubeadmControlPlane's spec and each machine deployment's ``workerBootstrap`` override
    at its KubeadmConfigTemplate's spec (the class's templates hold only the format)."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for o in objects:
        kinds.setdefault(o["kind"], []).append(o)
    if "KubeadmControlPlane" in kinds:
        (kcp,) = kinds["KubeadmControlPlane"]
        workers = [
            (t["metadata"]["name"], t["spec"]["template"]["spec"])
            for t in kinds["KubeadmConfigTemplate"]
        ]
        return kcp, workers
    (cluster,) = kinds["Cluster"]
    (clusterclass,) = kinds["ClusterClass"]
    topology = cluster["spec"]["topology"]
    variables = {v["name"]: v["value"] for v in topology.get("variables", [])}
    infrastructure = clusterclass["spec"]["controlPlane"]["machineInfrastructure"]["templateRef"]
    kcp = {
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
        "kind": "KubeadmControlPlane",
        "metadata": {"name": f"{cluster['metadata']['name']}-control-plane"},
        "spec": {
            **copy.deepcopy(variables["controlPlane"]),
            "replicas": topology["controlPlane"].get("replicas", 1),
            "version": topology["version"],
            "machineTemplate": {
                "spec": {
                    "infrastructureRef": {
                        "apiGroup": infrastructure["apiVersion"].split("/")[0],
                        "kind": infrastructure["kind"],
                        "name": infrastructure["name"],
                    }
                }
            },
        },
    }
    workers = []
    for deployment in topology["workers"]["machineDeployments"]:
        overrides = deployment.get("variables", {}).get("overrides", [])
        values = {v["name"]: v["value"] for v in overrides}
        workers.append(
            (deployment["name"], values.get("workerBootstrap", variables.get("workerBootstrap")))
        )
    return kcp, workers


def bootstrap_rendered(
    plane: Plane, settings: Any, objects: tuple[dict[str, Any], ...], namespace: str
) -> Bootstrapped:
    """A rendered cluster on the plane in a fresh namespace (its Cluster, the referenced
    Secrets, the cluster certificates, the KubeadmControlPlane paused), with the bootstrap
    data the real controller writes for its first control-plane machine."""
    kcp, workers = machine_specs(objects)
    kcp = copy.deepcopy(kcp)
    rendered_cluster = next(o for o in objects if o["kind"] == "Cluster")
    spec = kcp["spec"]["kubeadmConfigSpec"]
    version = kcp["spec"]["version"]
    name = settings.metadata.name
    ns = plane.namespace(namespace)
    resources = list(settings.spec.security.encryption_at_rest.resources)
    specs = [spec, *(s for _, s in workers)]
    for secret, data in sorted(_referenced_secrets(specs, resources).items()):
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
    _create_machine(plane, ns, name, machine, version, spec, control_plane=True)
    raw = _bootstrap_data_of(plane, ns, machine, spec)
    cloud = yaml.safe_load(raw)
    return Bootstrapped(
        ns,
        name,
        version,
        kcp,
        workers,
        _files(cloud)["/run/kubeadm/kubeadm.yaml"],
        cloud,
        raw,
    )


#: The bootstrap token a joining machine's configuration carries. The real controller makes
#: one in the workload cluster (there is none here) unless the configuration names one, so
#: the test names one; everything else of the join configuration is the controller's.
TOKEN = "abcdef.0123456789abcdef"


def joined(plane: Plane, cluster: Bootstrapped) -> dict[str, str]:
    """machine -> the bootstrap data (cloud-config text) the real bootstrap controller
    writes for a second control-plane machine and for a machine of every worker group, once
    the control plane counts as initialized (the test plays the paused control-plane
    controller and the Cluster controller's copy of it: it sets both statuses as they
    would)."""
    ns = cluster.namespace
    plane.api.patch_status(
        "controlplane.cluster.x-k8s.io/v1beta2",
        "KubeadmControlPlane",
        ns,
        cluster.kcp_name,
        {"initialization": {"controlPlaneInitialized": True}},
    )
    # what the Cluster controller writes once it sees that (it keeps both once true)
    plane.api.patch_status(
        CLUSTER,
        "Cluster",
        ns,
        cluster.cluster,
        {
            "initialization": {"infrastructureProvisioned": True, "controlPlaneInitialized": True},
            "conditions": [
                {
                    "type": "ControlPlaneInitialized",
                    "status": "True",
                    "reason": "Initialized",
                    "message": "",
                    "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            ],
        },
    )
    specs = {f"{cluster.cluster}-control-plane-1": (cluster.kcp["spec"]["kubeadmConfigSpec"], True)}
    for group, worker in cluster.workers:
        specs[f"{group}-0"] = (worker, False)
    assert len(specs) >= 2, "a control-plane join and every worker group"
    # every joining machine at once: the controller writes their data side by side
    joining = {}
    for machine, (spec, control_plane) in sorted(specs.items()):
        spec = copy.deepcopy(spec)
        spec.pop("initConfiguration", None)
        join = spec.setdefault("joinConfiguration", {})
        join.setdefault("discovery", {}).setdefault("bootstrapToken", {})["token"] = TOKEN
        _create_machine(
            plane,
            ns,
            cluster.cluster,
            machine,
            cluster.version,
            spec,
            control_plane=control_plane,
        )
        joining[machine] = spec
    return {
        machine: _bootstrap_data_of(plane, ns, machine, spec) for machine, spec in joining.items()
    }


def join_data(plane: Plane, cluster: Bootstrapped) -> dict[str, str]:
    """machine -> the kubeadm join configuration the real bootstrap controller writes for a
    second control-plane machine and for a machine of every worker group (:func:`joined`)."""
    joins = joined(plane, cluster)
    return {
        machine: _files(yaml.safe_load(raw))["/run/kubeadm/kubeadm-join-config.yaml"]
        for machine, raw in joins.items()
    }


def _check_node_preparation(cloud: dict[str, Any]) -> None:
    """What the real bootstrap controller made of the node features of the all-features
    example for a control-plane machine: etcd's volume found by its size, formatted and
    mounted at /var/lib/etcd by scs-etcd-disk.sh before kubeadm (no device name guessed by
    cloud-init's disk_setup: /dev/vdb or /dev/sdb depend on the image's disk bus), the node
    preparation script before kubeadm, the trusted CA, the registry's CA and the proxy
    drop-ins on disk."""
    assert "fs_setup" not in cloud and "disk_setup" not in cloud, cloud.keys()
    commands = [str(c) for c in cloud["runcmd"]]
    disk = commands.index("/usr/local/sbin/scs-etcd-disk.sh")
    setup = commands.index("/usr/local/sbin/scs-node-setup.sh")
    kubeadm = next(i for i, c in enumerate(commands) if c.startswith("kubeadm init"))
    assert disk < kubeadm and setup < kubeadm, commands
    files = _files(cloud)
    assert "/var/lib/etcd" in files["/usr/local/sbin/scs-etcd-disk.sh"]
    assert "BEGIN CERTIFICATE" in files["/usr/local/share/ca-certificates/scs-trusted-0.crt"]
    assert "BEGIN CERTIFICATE" in files["/etc/containerd/certs.d/docker.io/ca.crt"]
    for unit in ("containerd", "kubelet"):
        dropin = files[f"/etc/systemd/system/{unit}.service.d/http-proxy.conf"]
        assert "HTTPS_PROXY=http://proxy.corp.example:3128" in dropin, dropin


def _validate(kubeadm: Path, path: Path, content: str) -> subprocess.CompletedProcess[str]:
    path.write_text(content)
    return subprocess.run(
        [str(kubeadm), "config", "validate", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("minor", supported_minors(), ids=lambda m: f"{m[0]}.{m[1]}")
def test_kubeadm_accepts_what_the_bootstrap_controller_generates(
    bootstrap_plane: Plane, tmp_path: Path, minor: tuple[int, int]
) -> None:
    """The init configuration of the first control-plane machine, then the join
    configurations of a second one and of every worker group."""
    kubeadm = kubeadm_for(minor)
    cluster = bootstrap_data(bootstrap_plane, minor)
    reported = subprocess.run(
        [str(kubeadm), "version", "-o", "short"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert reported == kubeadm_release_of(minor), "the kubeadm of the cluster's own release"
    assert reported.split(".")[:2] == f"v{cluster.version.lstrip('v')}".split(".")[:2], (
        f"kubeadm {reported} validates a {cluster.version} cluster: not its own minor"
    )
    _check_node_preparation(cluster.cloud)
    files = cluster.kcp["spec"]["kubeadmConfigSpec"]["files"]
    assert any("contentFrom" in f for f in files), "all-features takes files from Secrets"
    content = cluster.init
    documents = {d["kind"]: d for d in yaml.safe_load_all(content)}
    assert set(documents) == {"ClusterConfiguration", "InitConfiguration"}, content
    config = documents["ClusterConfiguration"]
    assert config["kubernetesVersion"] == cluster.version
    args = {a["name"] for a in config["apiServer"]["extraArgs"]}
    assert {"authentication-config", "encryption-provider-config", "audit-policy-file"} <= args
    done = _validate(kubeadm, tmp_path / "kubeadm.yaml", content)
    assert done.returncode == 0, (
        f"kubeadm refuses the init configuration:\n{done.stderr}\n{content}"
    )
    joins = join_data(bootstrap_plane, cluster)
    assert len(joins) >= 3, "a control-plane join and every worker group"
    for machine, join in sorted(joins.items()):
        (document,) = yaml.safe_load_all(join)
        assert document["kind"] == "JoinConfiguration", join
        assert document["discovery"]["bootstrapToken"]["caCertHashes"], "the controller's"
        kubelet = {a["name"]: a["value"] for a in document["nodeRegistration"]["kubeletExtraArgs"]}
        assert kubelet["cloud-provider"] == "external", join  # ours, carried into the join
        if machine.endswith("-control-plane-1"):
            assert "controlPlane" in document, join
        done = _validate(kubeadm, tmp_path / f"{machine}.yaml", join)
        assert done.returncode == 0, f"kubeadm refuses {machine}'s join:\n{done.stderr}\n{join}"


def test_kubeadm_validation_can_fail(bootstrap_plane: Plane, tmp_path: Path) -> None:
    """The same generated init and join configurations with an unknown field are refused."""
    minor = supported_minors()[-1]
    kubeadm = kubeadm_for(minor)
    cluster = bootstrap_data(bootstrap_plane, minor)
    broken = {
        "init": cluster.init.replace(
            "kind: ClusterConfiguration", "kind: ClusterConfiguration\nnoSuchField: 1", 1
        )
    }
    for machine, join in join_data(bootstrap_plane, cluster).items():
        broken[machine] = join.replace(
            "kind: JoinConfiguration", "kind: JoinConfiguration\nnoSuchField: 1", 1
        )
    for name, content in sorted(broken.items()):
        assert "noSuchField" in content, name
        done = _validate(kubeadm, tmp_path / f"{name}.yaml", content)
        assert done.returncode != 0 and "noSuchField" in done.stderr, (name, done.stderr)


#: cloud-init's Jinja step, as far as Cluster API's data needs it: the header that asks for
#: it and the instance-data variables our KubeadmConfigSpecs use (CAPO's node name and
#: provider ID), with made-up values of their form.
JINJA_HEADER = "## template: jinja\n"
INSTANCE_DATA = {
    "local_hostname": "node-0",
    "instance_id": "6f1d2c3b-0a4e-4c5d-9e8f-7a6b5c4d3e2f",
}


def cloud_config_as_cloud_init_reads_it(raw: str) -> str:
    """The cloud-config after cloud-init's own template step: a ``## template: jinja`` part
    is rendered with the instance's data before its modules see it (cloud-init's
    ``cloudinit/handlers/jinja_template.py``); ``cloud-init schema -c`` checks the result
    (it refuses the header itself). Nothing but :data:`INSTANCE_DATA` may be templated."""
    text = raw.removeprefix(JINJA_HEADER)
    for name, value in INSTANCE_DATA.items():
        text = text.replace(f"{{{{ {name} }}}}", value)
    assert "{{" not in text and "{%" not in text, (
        f"a template expression the test does not render: {text}"
    )
    assert text.startswith("#cloud-config\n"), text[:40]
    return text


def cloud_init_schema(path: Path) -> subprocess.CompletedProcess[str]:
    """Debian's cloud-init (22.4) validates ``path`` offline against its JSON schema."""
    import shutil

    tool = shutil.which("cloud-init")
    if tool is None:
        skip_or_fail("cloud-init is not installed: `make node-tools` (apt-get install cloud-init)")
        raise AssertionError  # unreachable
    return subprocess.run(
        [tool, "schema", "-c", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("example", [e.stem for e in EXAMPLES])
def test_cloud_init_accepts_the_bootstrap_data_of_every_example(
    bootstrap_plane: Plane, tmp_path: Path, example: str
) -> None:
    """The cloud-config the real bootstrap controller writes for every machine of each
    example (the first control-plane machine, a second one joining, one of every worker
    group) passes ``cloud-init schema``: the disk setup, mounts, files and commands of our
    KubeadmConfigSpecs as cloud-init reads them, not only as Cluster API's schema admits
    them."""
    from scs_templates import api

    path = next(e for e in EXAMPLES if e.stem == example)
    settings = api.load_settings(path).settings
    objects = api.render(settings, helm=pinned_helm()).objects
    cluster = bootstrap_rendered(bootstrap_plane, settings, objects, f"cloud-init-{example}")
    machines = {
        f"{cluster.cluster}-control-plane-0": cluster.raw,
        **joined(bootstrap_plane, cluster),
    }
    assert len(machines) >= 3, machines.keys()
    for machine, raw in sorted(machines.items()):
        target = tmp_path / f"{machine}.yaml"
        target.write_text(cloud_config_as_cloud_init_reads_it(raw))
        done = cloud_init_schema(target)
        said = f"{machine}: {done.stdout}{done.stderr}"
        assert done.returncode == 0, said
        assert "Valid cloud-config" in done.stdout, said


def test_cloud_init_schema_can_fail(tmp_path: Path) -> None:
    """The check can fail: a misspelt key of write_files is refused."""
    target = tmp_path / "bad.yaml"
    target.write_text("#cloud-config\nwrite_files:\n- path: /x\n  permisions: '0644'\n")
    done = cloud_init_schema(target)
    assert done.returncode != 0 and "permisions" in done.stdout + done.stderr, done
