"""The test plane's own logic (testenv/), without starting it: wrapper modules, cache key,
the kustomization reading that labels CRDs and wires webhooks, the certificates."""

from __future__ import annotations

import base64
import os
import re
import shutil
import ssl
from pathlib import Path

import pytest
import yaml

from testenv import build, manifests
from testenv.certs import CertificateAuthority


def test_the_kubernetes_wrapper_pins_one_release_everywhere() -> None:
    gomod = (build.GO_DIR / "kubernetes" / "go.mod").read_text()
    assert f"k8s.io/kubernetes {build.KUBERNETES_VERSION}" in gomod
    staging = re.findall(r"^\s*(k8s\.io/\S+) => (\S+) (\S+)$", gomod, re.MULTILINE)
    assert len(staging) > 25
    minor_patch = build.KUBERNETES_VERSION.split(".", 1)[1]
    assert {(module == target, version) for module, target, version in staging} == {
        (True, f"v0.{minor_patch}")
    }
    assert build.KUBEADM_RELEASES[build.KUBERNETES_VERSION[1:5]] == build.KUBERNETES_VERSION


def test_every_program_comes_from_a_committed_wrapper_module() -> None:
    for program in build.PROGRAMS:
        module = build.GO_DIR / program.module
        assert (module / "go.sum").is_file(), program
        assert f'"{program.package}"' in (module / "tools.go").read_text(), program


def test_the_cache_key_follows_the_wrapper_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "go"
    shutil.copytree(build.GO_DIR, copy)
    monkeypatch.setattr(build, "GO_DIR", copy)
    before = build.cache_key()
    assert build.cache_key() == before
    (copy / "etcd" / "go.sum").write_text((copy / "etcd" / "go.sum").read_text() + "\n")
    assert build.cache_key() != before


def test_kubeadm_release_per_minor() -> None:
    assert build.kubeadm_release("1.35.1") == "v1.35.4"
    assert build.kubeadm_release("v1.37.0") == build.KUBERNETES_VERSION
    with pytest.raises(build.PlaneError, match=r"1\.29"):
        build.kubeadm_release("1.29.3")


def _tree(root: Path) -> Path:
    """A provider config tree shaped like upstream's (two CRDs, one conversion patch)."""
    config = root / "config"
    (config / "crd" / "bases").mkdir(parents=True)
    (config / "crd" / "patches").mkdir()
    (config / "default").mkdir()
    (config / "webhook").mkdir()
    for name in ("things", "others"):
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{name}.example.io", "annotations": {"x": "y"}},
            "spec": {"group": "example.io", "names": {"plural": name}},
        }
        (config / "crd" / "bases" / f"{name}.yaml").write_text(yaml.safe_dump(crd))
        patch = {
            "metadata": {"name": f"{name}.example.io"},
            "spec": {
                "conversion": {
                    "strategy": "Webhook",
                    "webhook": {
                        "conversionReviewVersions": ["v1"],
                        "clientConfig": {"service": {"name": "s", "path": "/convert"}},
                    },
                }
            },
        }
        (config / "crd" / "patches" / f"webhook_in_{name}.yaml").write_text(yaml.safe_dump(patch))
    (config / "crd" / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "labels": [{"pairs": {"cluster.x-k8s.io/v1beta2": "v1beta2"}}],
                "resources": ["bases/things.yaml", "bases/others.yaml"],
                "patches": [{"path": "patches/webhook_in_things.yaml"}],  # not 'others'
            }
        )
    )
    (config / "default" / "kustomization.yaml").write_text(
        yaml.safe_dump({"labels": [{"pairs": {"cluster.x-k8s.io/provider": "example"}}]})
    )
    webhooks = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "validating-webhook-configuration"},
        "webhooks": [{"name": "v.example.io", "clientConfig": {"service": {"path": "/validate"}}}],
    }
    (config / "webhook" / "manifests.yaml").write_text(yaml.safe_dump(webhooks))
    return config


def test_crds_get_the_kustomization_labels_and_only_the_listed_conversions(
    tmp_path: Path,
) -> None:
    config = _tree(tmp_path)
    crds = {c["metadata"]["name"]: c for c in manifests.crds(config, port=4242, ca_pem=b"CA")}
    assert set(crds) == {"things.example.io", "others.example.io"}
    for crd in crds.values():
        assert crd["metadata"]["labels"] == {
            "cluster.x-k8s.io/provider": "example",
            "cluster.x-k8s.io/v1beta2": "v1beta2",
        }
        assert "annotations" not in crd["metadata"]
    conversion = crds["things.example.io"]["spec"]["conversion"]
    assert conversion["webhook"]["clientConfig"] == {
        "url": "https://127.0.0.1:4242/convert",
        "caBundle": base64.b64encode(b"CA").decode(),
    }
    assert "conversion" not in crds["others.example.io"]["spec"]
    only = manifests.crds(config, port=None, ca_pem=b"CA", only=frozenset({"others.yaml"}))
    assert [c["metadata"]["name"] for c in only] == ["others.example.io"]


def test_webhook_configurations_are_renamed_and_pointed_at_the_local_manager(
    tmp_path: Path,
) -> None:
    config = _tree(tmp_path)
    [hook] = manifests.webhook_configurations(config, "example", port=9999, ca_pem=b"CA")
    assert hook["metadata"]["name"] == "testenv-example-validating-webhook-configuration"
    assert hook["webhooks"][0]["clientConfig"]["url"] == "https://127.0.0.1:9999/validate"


def test_certificates_chain_to_the_ca(tmp_path: Path) -> None:
    ca = CertificateAuthority(tmp_path)
    pair = ca.issue("srv", "srv", hosts=("127.0.0.1", "localhost"), server=True)
    assert pair.key.stat().st_mode & 0o077 == 0
    context = ssl.create_default_context(cafile=str(ca.cert))
    context.load_cert_chain(str(pair.cert), str(pair.key))  # key matches the certificate
    from cryptography import x509

    cert = x509.load_pem_x509_certificate(pair.cert.read_bytes())
    assert cert.issuer == x509.load_pem_x509_certificate(ca.pem).subject
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in sans.get_values_for_type(x509.DNSName)


def test_webhooks_only_keeps_each_manager_and_adds_the_watch_filter() -> None:
    """The managers of ``webhook_plane`` are the plane's own, with their flags, plus a
    ``--watch-filter`` that no object matches; a name that is no manager is refused (else
    the plane would silently start without its webhooks)."""
    from testenv.plane import MANAGERS, RECONCILE_NOTHING, webhooks_only

    picked = webhooks_only(("capo", "capi-core"))
    own = {m.name: m for m in MANAGERS}
    assert [m.name for m in picked] == ["capi-core", "capo"]  # the plane's start order
    for manager in picked:
        assert manager.args == (*own[manager.name].args, f"--watch-filter={RECONCILE_NOTHING}")
        assert manager.env == own[manager.name].env
    with pytest.raises(ValueError, match="no such manager: capx"):
        webhooks_only(("capo", "capx"))


def test_the_capd_port_lock_is_the_machines_whatever_the_cache_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two planes with CAPD and different cache roots (a cold CI run with its own
    XDG_CACHE_HOME beside a warm session's plane) exclude each other: CAPD's fixed ports are
    the machine's. The second waits (here: times out) on the machine-wide lock, and gets
    both locks once the first plane let go."""
    from types import SimpleNamespace

    from testenv import plane as testenv_plane
    from testenv.process import PlaneError

    machine = tmp_path / "machine.lock"
    monkeypatch.setattr(testenv_plane, "CAPD_PORTS_LOCK", machine)
    monkeypatch.setattr(testenv_plane, "CAPD_LOCK_TIMEOUT", 0.3)
    planes = {}
    for root in ("warm", "cold"):
        monkeypatch.setenv("SCS_TEMPLATES_TESTENV_CACHE", str(tmp_path / root))
        assert testenv_plane.capd_lock_paths() == (machine, tmp_path / root / "capd-ports.lock")
        planes[root] = SimpleNamespace(locks=[])
    monkeypatch.setenv("SCS_TEMPLATES_TESTENV_CACHE", str(tmp_path / "warm"))
    testenv_plane._lock_capd_ports(planes["warm"], log=lambda _: None)  # type: ignore[arg-type]
    monkeypatch.setenv("SCS_TEMPLATES_TESTENV_CACHE", str(tmp_path / "cold"))
    with pytest.raises(PlaneError, match=f"lock {machine}"):
        testenv_plane._lock_capd_ports(planes["cold"], log=lambda _: None)  # type: ignore[arg-type]
    assert planes["cold"].locks == []  # nothing left open after the timeout
    for fd in planes["warm"].locks:
        os.close(fd)
    testenv_plane._lock_capd_ports(planes["cold"], log=lambda _: None)  # type: ignore[arg-type]
    assert len(planes["cold"].locks) == 2
    for fd in planes["cold"].locks:
        os.close(fd)


def _no_such_pid() -> int:
    """A process id above the kernel's limit: no process has it."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def test_a_shared_plane_is_attached_once_ready_and_watched_not_owned(tmp_path: Path) -> None:
    """attach(): the plane another process runs, from the plane.json its start() writes last;
    check() raises once that process (or a component) has ended; stop() leaves it running."""
    import json

    from testenv.plane import PLANE_JSON, attach
    from testenv.process import PlaneError

    ca = CertificateAuthority(tmp_path / "pki")  # as start() writes them
    admin = ca.issue("admin", "testenv-admin", client=True)
    assert (ca.cert, admin.cert, admin.key) == tuple(
        tmp_path / "pki" / name for name in ("ca.crt", "admin.crt", "admin.key")
    )
    state = {"server": "https://127.0.0.1:6443", "ports": {"apiserver": 6443}, "pids": {}}
    (tmp_path / PLANE_JSON).write_text(json.dumps(state))
    plane = attach(tmp_path, os.getpid(), log=lambda _: None)
    assert (plane.server, plane.api.port, plane.kubeconfig) == (
        "https://127.0.0.1:6443",
        6443,
        tmp_path / "kubeconfig",
    )
    plane.check()  # the owner (this process) lives
    plane.stop()
    assert plane.watched == {"the plane's owner": os.getpid()}
    plane.watched["etcd"] = _no_such_pid()
    with pytest.raises(PlaneError, match=r"etcd .* of the shared plane .* ended"):
        plane.check()


def test_attaching_fails_when_the_planes_process_ends_before_it_is_ready(tmp_path: Path) -> None:
    from testenv.plane import attach
    from testenv.process import PlaneError

    said: list[str] = []
    with pytest.raises(PlaneError, match=r"ended before .*plane\.json existed"):
        attach(tmp_path, _no_such_pid(), log=said.append, poll=0.01)


def test_attaching_fails_at_once_when_the_planes_parent_says_it_ended(tmp_path: Path) -> None:
    """The owner's process id still answers (a zombie not yet reaped, or the next process
    given the id): the marker its parent writes ends the wait, and an attached plane's
    check() fails on it, with the reason."""
    import json

    from testenv.plane import PLANE_JSON, attach, mark_ended
    from testenv.process import PlaneError

    def waited(line: str) -> None:
        raise AssertionError(f"attach waited on a plane said to have ended: {line}")

    mark_ended(tmp_path, "its process exited with 1; its log: shared-plane.log")
    with pytest.raises(PlaneError, match=r"has ended: its process exited with 1; its log: "):
        attach(tmp_path, os.getpid(), log=waited, poll=0.01)

    (tmp_path / "ended").unlink()
    CertificateAuthority(tmp_path / "pki").issue("admin", "testenv-admin", client=True)
    state = {"server": "https://127.0.0.1:6443", "ports": {"apiserver": 6443}, "pids": {}}
    (tmp_path / PLANE_JSON).write_text(json.dumps(state))
    plane = attach(tmp_path, os.getpid(), log=waited)
    plane.check()
    mark_ended(tmp_path, "its process exited with -9; its log: shared-plane.log")
    with pytest.raises(PlaneError, match=r"has ended: its process exited with -9"):
        plane.check()
