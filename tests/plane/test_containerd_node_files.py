"""The registry mirror, CA, credentials and proxy files the nodes get, read by the code that
reads them on a node (issue #16, items 4 and 5).

No node boots here (no Nova compute, no Docker), so the files the real bootstrap controller
writes were proven only as rendered. These tests hand the rendered files, after the rendered
scs-node-setup.sh ran on them (tests/support/__init__.py ``run_node_setup``), to containerd's OWN
registry code, built from its Go module (testenv/containerd.py: containerd v2.4.2's
``core/remotes/docker/config.ConfigureHosts``, the hosts.toml loader of its CRI plugin, so
of kubeadm's and the kubelet's image pulls, and its resolver), chrooted into the node's file
tree so that hosts.toml's absolute ``ca`` paths and the trust store are the node's; every
connection goes to a loopback TLS registry whose certificate the settings' CA signed. And
the proxy drop-in's environment to Go's ``http.ProxyFromEnvironment``, which containerd's
HTTP transport uses (``docker.DefaultHTTPTransport``).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scs_templates import api
from scs_templates._tools.helm import Helm
from tests import support

pytestmark = [pytest.mark.extra_builds]

#: What containerd asks a registry host for (core/remotes/docker: HostCapabilities).
MIRROR = ["pull", "resolve"]
UPSTREAM = ["pull", "resolve", "push", "referrers"]


@pytest.fixture(scope="module")
def checker() -> Path:
    """containerd-check (testenv/containerd/main.go), built when missing."""
    from testenv import PlaneError, build, containerd

    if not containerd.binary().is_file() and build.go_binary() is None:
        support.skip_or_fail("containerd's registry code is built with Go (`go`): not installed")
    try:
        return containerd.ensure_built()
    except PlaneError as error:
        pytest.fail(f"containerd-check did not build: {error}")


def _run(command: list[str], env: dict[str, str] | None = None) -> Any:
    if os.geteuid() != 0:  # the hosts check chroots: as root of a user namespace
        if shutil.which("unshare") is None:
            support.skip_or_fail("containerd-check chroots: needs root or unshare")
        command = ["unshare", "--user", "--map-root-user", *command]
    ran = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def _node(helm: Helm, spec: dict[str, Any], root: Path, scratch: Path) -> list[Any]:
    """A worker node's files for the Docker settings ``spec``, laid out under ``root`` with
    the registry credentials as the bootstrap controller copies them from the Secret and the
    join configuration Cluster API writes; scs-node-setup.sh run on them when rendered."""
    body = {"provider": "docker", "workers": [{"name": "w"}], **spec}
    result = api.render(support.settings_of(body, name="node", file="f.yaml"), helm=helm)
    (template,) = [o for o in result.objects if o["kind"] == "KubeadmConfigTemplate"]
    files: list[Any] = template["spec"]["template"]["spec"]["files"]
    given = {
        "/run/kubeadm/kubeadm-join-config.yaml": (
            "discovery:\n  bootstrapToken:\n    apiServerEndpoint: 203.0.113.7:6443\n"
        ),
    }
    for mirror in spec.get("registryMirrors", []):
        if mirror.get("credentialsSecret"):
            given[f"/etc/containerd/scs-credentials/{mirror['registry']}/username"] = "robot"
            given[f"/etc/containerd/scs-credentials/{mirror['registry']}/password"] = "s3cr3t"
    tools = {}
    if spec.get("security", {}).get("trustedCAs"):
        tools["update-ca-certificates"] = _trust_store(root)
    if any(f["path"] == "/usr/local/sbin/scs-node-setup.sh" for f in files):
        support.run_node_setup(files, root, scratch, given, tools)
    return files


#: Debian's update-ca-certificates (package ca-certificates), what Ubuntu node images run
UPDATE_CA_CERTIFICATES = Path("/usr/sbin/update-ca-certificates")


def _trust_store(root: Path) -> str:
    """The REAL update-ca-certificates on the node's trust store under ``root`` (its
    directories moved there by its own options; the store empty but for what the node
    script installs), as the program the script runs."""
    if not UPDATE_CA_CERTIFICATES.is_file() or shutil.which("openssl") is None:
        support.skip_or_fail("the trusted-CA check runs Debian's update-ca-certificates")
    dirs = {
        "--certsdir": "usr/share/ca-certificates",
        "--localcertsdir": "usr/local/share/ca-certificates",
        "--etccertsdir": "etc/ssl/certs",
        "--hooksdir": "etc/ca-certificates/update.d",
    }
    for path in dirs.values():
        (root / path).mkdir(parents=True, exist_ok=True)
    (root / "etc/ca-certificates.conf").touch()
    options = " ".join(f"{flag} {root / path}" for flag, path in dirs.items())
    return (
        f"#!/bin/sh\nexec {UPDATE_CA_CERTIFICATES} --certsconf {root}/etc/ca-certificates.conf "
        f'{options} "$@"\n'
    )


def test_containerd_pulls_through_the_rendered_mirrors(
    checker: Path, helm: Helm, tmp_path: Path
) -> None:
    """containerd's loader reads every rendered hosts.toml as meant and its resolver pulls
    through it: the mirror first (pull and resolve only), the registry itself last; a
    mirror's own CA (and only it) makes its TLS certificate trusted; the credentials the
    node script put into the Authorization header reach the mirror; ``overridePath`` keeps
    the endpoint's path, without it containerd appends /v2; and ``_default`` mirrors every
    other registry while the registry itself stays the fallback."""
    from testenv.certs import CertificateAuthority

    ca = CertificateAuthority(tmp_path / "ca")
    served = ca.issue(
        "registry", "registry", hosts=("harbor.example", "mirror.example"), server=True
    )
    spec = {
        "registryMirrors": [
            {
                "registry": "docker.io",
                "endpoints": ["https://harbor.example/v2/hub"],
                "overridePath": True,
                "caCertificate": ca.pem.decode(),
                "credentialsSecret": "pull-creds",
            },
            # no CA for it: the registry's certificate is not trusted (nothing else is)
            {"registry": "registry.k8s.io", "endpoints": ["https://mirror.example"]},
            {
                "registry": "quay.io",
                "endpoints": ["https://mirror.example/quay"],
                "skipVerify": True,
            },
            {"registry": "_default", "endpoints": ["https://mirror.example"], "skipVerify": True},
        ]
    }
    root = tmp_path / "root"
    _node(helm, spec, root, tmp_path)
    refs = [
        "docker.io/library/pause:3.10",
        "registry.k8s.io/pause:3.10",
        "quay.io/team/app:1",
        "ghcr.io/team/app:1",
    ]
    found = _run([str(checker), "hosts", "-root", str(root), "-cert", str(served.cert),
                  "-key", str(served.key), *refs])  # fmt: skip

    def hosts(ref: str) -> list[tuple[str, str, str, list[str]]]:
        return [(h["scheme"], h["host"], h["path"], h["capabilities"]) for h in found[ref]["hosts"]]

    hub = found["docker.io/library/pause:3.10"]
    assert hosts("docker.io/library/pause:3.10") == [
        ("https", "harbor.example", "/v2/hub", MIRROR),
        ("https", "registry-1.docker.io", "/v2", UPSTREAM),
    ]
    assert hub["error"] == "" and hub["digest"].startswith("sha256:"), hub
    first = hub["requests"][0]
    assert first["host"] == "harbor.example" and first["method"] == "HEAD"
    assert first["path"] == "/v2/hub/library/pause/manifests/3.10?ns=docker.io"
    assert first["authorization"] == "Basic " + base64.b64encode(b"robot:s3cr3t").decode()

    k8s = found["registry.k8s.io/pause:3.10"]
    assert hosts("registry.k8s.io/pause:3.10") == [
        ("https", "mirror.example", "/v2", MIRROR),
        ("https", "registry.k8s.io", "/v2", UPSTREAM),
    ]
    assert "certificate signed by unknown authority" in k8s["error"], k8s
    assert k8s["requests"] == [], "a request got through without a trusted certificate"

    quay = found["quay.io/team/app:1"]
    assert hosts("quay.io/team/app:1")[0] == ("https", "mirror.example", "/quay/v2", MIRROR)
    assert quay["error"] == "" and quay["requests"][0]["path"].startswith(
        "/quay/v2/team/app/manifests/1?ns=quay.io"
    ), quay

    assert hosts("ghcr.io/team/app:1") == [
        ("https", "mirror.example", "/v2", MIRROR),
        ("https", "ghcr.io", "/v2", UPSTREAM),
    ]
    assert found["ghcr.io/team/app:1"]["error"] == ""


def test_the_trusted_cas_the_node_installs_are_what_containerd_trusts(
    checker: Path, helm: Helm, tmp_path: Path
) -> None:
    """``security.trustedCAs`` as a node gets them: scs-node-setup.sh runs the real
    update-ca-certificates (the node's store: empty but for them), and containerd, chrooted
    into that node, trusts a mirror signed by that CA though its hosts.toml names no CA of
    its own (Go's system pool is the bundle the tool wrote). The same mirror without the
    trusted CA is refused (test_containerd_pulls_through_the_rendered_mirrors)."""
    from testenv.certs import CertificateAuthority

    ca = CertificateAuthority(tmp_path / "ca")
    served = ca.issue("registry", "registry", hosts=("mirror.example",), server=True)
    spec = {
        "security": {"trustedCAs": [ca.pem.decode()]},
        "registryMirrors": [
            {"registry": "registry.k8s.io", "endpoints": ["https://mirror.example"]}
        ],
    }
    root = tmp_path / "root"
    _node(helm, spec, root, tmp_path)
    bundle = (root / "etc/ssl/certs/ca-certificates.crt").read_text()
    assert bundle.strip() == ca.pem.decode().strip()
    ref = "registry.k8s.io/pause:3.10"
    found = _run([str(checker), "hosts", "-root", str(root), "-cert", str(served.cert),
                  "-key", str(served.key), ref])[ref]  # fmt: skip
    assert found["error"] == "" and found["digest"].startswith("sha256:"), found
    assert found["requests"][0]["host"] == "mirror.example"


#: systemd's Environment= line as the chart writes it: one quoted KEY=VALUE
ENVIRONMENT = re.compile(r'^Environment="([A-Z_]+)=([^"]*)"$')


def test_containerd_and_kubelet_reach_the_cluster_directly_and_the_rest_by_proxy(
    checker: Path, helm: Helm, tmp_path: Path
) -> None:
    """The proxy drop-ins of containerd and the kubelet, after scs-node-setup.sh added the
    API endpoint from the join configuration, as Go's http.ProxyFromEnvironment reads them
    (containerd's registry transport; the kubelet's clients): the API endpoint, the pod,
    service and node networks, the service domain, ``.svc``, loopback and the user's own
    entries (a domain, a CIDR) go direct; registries and everything else through the proxy
    of their scheme."""
    spec = {
        "network": {
            "proxy": {
                "httpProxy": "http://proxy.example:3128",
                "httpsProxy": "http://proxy.example:3129",
                "noProxy": [".corp", "10.1.0.0/16"],
            }
        }
    }
    root = tmp_path / "root"
    _node(helm, spec, root, tmp_path)
    environments = []
    for unit in ("containerd", "kubelet"):
        dropin = root / f"etc/systemd/system/{unit}.service.d/http-proxy.conf"
        lines = dropin.read_text().splitlines()
        assert lines[0] == "[Service]"
        environments.append(dict(ENVIRONMENT.fullmatch(line).groups() for line in lines[1:]))  # type: ignore[union-attr]
    assert environments[0] == environments[1]
    assert set(environments[0]) == {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}
    chosen = {
        "https://203.0.113.7:6443/healthz": "",  # the API endpoint, added at boot
        "https://10.96.0.1/": "",  # a Service
        "https://192.168.3.4:10250/": "",  # a Pod
        "https://10.8.0.12:10250/": "",  # a node
        "https://kubernetes.default.svc/": "",
        "https://kubernetes.default.svc.cluster.local/": "",
        "https://cluster.local/": "",
        "https://git.corp/": "",
        "https://10.1.2.3/": "",
        "https://localhost:10250/": "",
        "https://registry-1.docker.io/v2/": "http://proxy.example:3129",
        "https://registry.k8s.io/v2/": "http://proxy.example:3129",
        "https://corp.example/": "http://proxy.example:3129",
        "https://10.2.0.1/": "http://proxy.example:3129",
        "http://example.org/": "http://proxy.example:3128",
    }
    assert _run([str(checker), "proxy", *chosen], environments[0]) == chosen
