"""etcd snapshots that outlive the machines: ``etcd.backupS3`` (issue #40, item 5, defect 9).

Render tier: the credentials reach the control-plane nodes only as files the bootstrap
controller copies from the Secret (``contentFrom``), never as content or helm values; the
bucket settings reach etcd-defrag.sh, which still passes shellcheck; what the script cannot
use is refused by ``validate``; the script's own HMAC-SHA256 (it signs the upload with
sha256sum, no openssl) is RFC 2104's. The upload itself, against a real OpenStack Swift
through its S3 API: tests/plane/test_node_etcd_defrag.py.
"""

from __future__ import annotations

import hashlib
import hmac
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scs_templates import api
from scs_templates._render.values import build_values
from scs_templates._settings.node_secrets import BACKUP_S3_KEYS, node_secrets
from tests.render.test_node_tools import TOOL_TIMEOUT, _shellcheck, bootstrap_specs, node_files
from tests.support import pinned_helm, settings_of

BACKUP_S3 = {
    "endpoint": "https://objects.example.org:8443",
    "bucket": "etcd-backups",
    "credentialsSecret": "etcd-s3",
}
CREDENTIALS_DIR = "/etc/kubernetes/etcd-backup-s3/"


def _objects(etcd: dict[str, Any], template: str = "simple", provider: str = "docker") -> Any:
    spec = {"provider": provider, "template": template, "etcd": etcd}
    settings = settings_of(spec, name="prod", namespace="team-a")
    return api.render(settings, helm=pinned_helm()).objects


def _script(objects: Any) -> str:
    (script,) = {f.content for f in node_files(objects) if f.path.endswith("etcd-defrag.sh")}
    return script


def _credential_files(objects: Any) -> list[dict[str, Any]]:
    """The bootstrap files under the credentials directory, of every bootstrap spec."""
    return [
        f
        for spec in bootstrap_specs(objects)
        for f in spec["files"]
        if f["path"].startswith(CREDENTIALS_DIR)
    ]


@pytest.mark.parametrize("template", ["simple", "clusterclass"])
def test_etcd_backup_s3_credentials_reach_the_nodes_only_from_the_secret(template: str) -> None:
    """Each key of the Secret is a root-only file (0600) of the control plane's bootstrap
    data, filled by the bootstrap controller from the Secret on the management cluster
    (contentFrom): no content, no worker gets it, and the helm values hold only the
    Secret's name."""
    objects = _objects({"backupS3": BACKUP_S3}, template)
    files = _credential_files(objects)
    expected = [
        {
            "path": f"{CREDENTIALS_DIR}{key}",
            "owner": "root:root",
            "permissions": "0600",
            "contentFrom": {"secret": {"name": "etcd-s3", "key": key}},
        }
        for key in BACKUP_S3_KEYS
    ]
    assert sorted(files, key=lambda f: f["path"]) == expected
    workers = [o for o in objects if o["kind"] == "KubeadmConfigTemplate"]
    assert workers and not _credential_files(workers), "the control plane's only"
    cluster = settings_of(
        {"provider": "docker", "template": template, "etcd": {"backupS3": BACKUP_S3}}
    )
    upload = build_values(cluster)["etcd"]["defrag"]["upload"]
    assert upload["credentialsSecret"] == "etcd-s3"
    assert set(upload) == {
        "endpoint",
        "bucket",
        "region",
        "prefix",
        "retention",
        "credentialsSecret",
    }


def test_etcd_backup_s3_uploads_through_the_nodes_proxy() -> None:
    """With network.proxy the job gets the proxy environment containerd and the kubelet get
    (curl reads HTTPS_PROXY and NO_PROXY): in a proxy-only network the store is reached."""
    proxy = {"httpsProxy": "http://proxy.example:3128", "noProxy": [".corp.example"]}
    spec = {"provider": "docker", "etcd": {"backupS3": BACKUP_S3}, "network": {"proxy": proxy}}
    objects = api.render(settings_of(spec), helm=pinned_helm()).objects
    dropins = {f.path: f.content for f in node_files(objects) if "http-proxy.conf" in f.path}
    unit = "/etc/systemd/system/etcd-defrag.service.d/http-proxy.conf"
    assert dropins[unit] == dropins["/etc/systemd/system/containerd.service.d/http-proxy.conf"]
    assert 'Environment="HTTPS_PROXY=http://proxy.example:3128"' in dropins[unit]
    without = {"provider": "docker", "network": {"proxy": proxy}}
    objects = api.render(settings_of(without), helm=pinned_helm()).objects
    assert unit not in {f.path for f in node_files(objects)}, "only with an upload"


def test_without_backup_s3_no_credentials_and_no_upload() -> None:
    objects = _objects({})
    assert _credential_files(objects) == []
    assert "S3_" not in _script(objects) and "curl" not in _script(objects)


@pytest.mark.parametrize(
    ("extra", "prefix"),
    [
        ({}, "team-a/prod"),
        ({"prefix": "backups/etcd_prod-1", "region": "RegionOne", "retention": 30}, None),
    ],
)
def test_etcd_backup_s3_settings_reach_the_script_which_passes_shellcheck(
    extra: dict[str, Any], prefix: str | None, tmp_path: Path
) -> None:
    """Endpoint, bucket, region and prefix (by default <namespace>/<cluster>, so clusters
    sharing a bucket keep apart) are the script's constants; the bucket is pruned only with
    a retention (0, the default: never delete); it still passes shellcheck."""
    script = _script(_objects({"backupS3": BACKUP_S3 | extra}))
    lines = set(script.splitlines())
    assert {
        "S3_ENDPOINT=https://objects.example.org:8443",
        "S3_BUCKET=etcd-backups",
        f"S3_REGION={extra.get('region', 'us-east-1')}",
        f"S3_PREFIX={prefix or extra['prefix']}",
        f"S3_CREDENTIALS={CREDENTIALS_DIR.rstrip('/')}",
    } <= lines
    if "retention" in extra:
        assert "S3_RETENTION=30" in lines and "    prune_bucket || S3_FAILED=1" in lines
    else:
        assert "prune_bucket" not in script and "S3_RETENTION" not in script
    path = tmp_path / "etcd-defrag.sh"
    path.write_text(script)
    done = _shellcheck(path)
    assert done.returncode == 0 and not done.stdout, done.stdout


@pytest.mark.parametrize(
    ("etcd", "field", "said"),
    [
        ({"backupS3": BACKUP_S3 | {"endpoint": "http://objects.example.org"}}, "endpoint", ""),
        ({"backupS3": BACKUP_S3 | {"endpoint": "https://objects.example.org/s3"}}, "endpoint", ""),
        ({"backupS3": BACKUP_S3 | {"bucket": "Etcd_Backups"}}, "bucket", ""),
        ({"backupS3": BACKUP_S3 | {"prefix": "a/../b"}}, "prefix", ""),
        ({"backupS3": BACKUP_S3 | {"prefix": "a//b"}}, "prefix", ""),
        ({"backupS3": BACKUP_S3 | {"prefix": "/a"}}, "prefix", ""),
        ({"backupS3": BACKUP_S3 | {"region": "eu west"}}, "region", ""),
        ({"backupS3": BACKUP_S3 | {"retention": -1}}, "retention", ""),
        ({"backupS3": {k: v for k, v in BACKUP_S3.items() if k != "credentialsSecret"}}, "", ""),
        ({"backupS3": BACKUP_S3, "backupRetention": 0}, "", "backupRetention of at least 1"),
        ({"backupS3": BACKUP_S3, "defrag": {"enabled": False}}, "", "etcd.defrag.enabled"),
    ],
)
def test_etcd_backup_s3_refuses_what_the_script_cannot_use(
    etcd: dict[str, Any], field: str, said: str
) -> None:
    """Plain HTTP (a snapshot holds every Secret of the cluster), a path in the endpoint,
    keys that a client would encode or normalise ('..', '//'), a bad bucket or region, no
    Secret, and an upload without the local snapshot it uploads: refused, naming the field."""
    from scs_templates._settings.problems import SettingsError

    with pytest.raises(SettingsError) as refused:
        settings_of({"provider": "docker", "etcd": etcd})
    message = str(refused.value)
    assert f"spec.etcd.backupS3{'.' + field if field else ''}" in message, message
    assert said in message


def test_install_and_gitops_know_the_backup_secret() -> None:
    """The Secret is one of those the nodes' bootstrap data reads: install refuses to start
    without it, gitops names it with its keys."""
    settings = settings_of({"provider": "docker", "etcd": {"backupS3": BACKUP_S3}})
    (secret,) = node_secrets(settings)
    assert (secret.field, secret.name, secret.keys) == (
        "spec.etcd.backupS3.credentialsSecret",
        "etcd-s3",
        ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
    )


def _hmac_function() -> str:
    """The script's hex_escapes and hmac_sha256 functions, as rendered."""
    script = _script(_objects({"backupS3": BACKUP_S3}))
    start, end = script.index("hex_escapes() {"), script.index("sha256_hex() {")
    return script[start:end]


@pytest.fixture(scope="module")
def hmac_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hmac") / "hmac.sh"
    path.write_text(_hmac_function() + 'hmac_sha256 "$1" "$2"\n')
    return path


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    key=st.one_of(st.binary(min_size=1, max_size=64), st.binary(min_size=65, max_size=200)),
    message=st.text(st.characters(min_codepoint=1, max_codepoint=0x2FF), max_size=300),
)
def test_the_scripts_hmac_sha256_is_rfc_2104(hmac_script: Path, key: bytes, message: str) -> None:
    """The script signs with its own HMAC-SHA256 over sha256sum (keys with NUL bytes, keys
    longer than the 64-byte block, any message): the same as Python's hmac."""
    done = subprocess.run(
        ["/bin/bash", str(hmac_script), key.hex(), message],
        capture_output=True,
        text=True,
        timeout=TOOL_TIMEOUT,
        check=False,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == hmac.new(key, message.encode(), hashlib.sha256).hexdigest()
