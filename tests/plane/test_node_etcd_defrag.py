"""etcd-defrag.sh against a real etcd (issue #40, item 7).

The rendered script (openstack-minimal: defragmentation and backups on by default) runs
against a throwaway three-member etcd of the plane's build (testenv/go/etcd) with TLS client
certificates as kubeadm lays them out, with the real etcdctl of the same release in the
"container" (``crictl``'s double runs the command it is asked to run on this machine) and
that release's etcdutl reading the snapshot (testenv/etcdctl.py). Its node constants
(:data:`NODE_CONSTANTS`) point at the test's etcd and directories; nothing else of it is
changed. ``extra_builds``: etcd comes from the plane's build, etcdctl and etcdutl from
``build --all`` right after it (the test builds them when missing).

The upload of ``etcd.backupS3`` (issue #40, item 5): openstack-all-features' script puts its
snapshot into a real OpenStack Swift through Swift's S3 API (module fixture ``s3_store``,
tests/support/swift_store.py; Swift from PyPI in its own venv, built on first use: skip
without PyPI, fail in CI).
"""

from __future__ import annotations

import contextlib
import datetime
import gzip
import json
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.render.test_node_tools import TOOL_TIMEOUT, node_files, rendered, run_tool
from tests.support import skip_or_fail
from tests.support.swift_store import SwiftStore

__all__ = ["rendered"]  # the module-scoped fixture of the render tier, shared

pytestmark = [pytest.mark.extra_builds]

#: them at its own etcd and directories (each must occur exactly once).
NODE_CONSTANTS = ("BACKUP_DIR", "LOCAL", "PKI", "SNAPSHOT_TMP")
#: The etcd container of crictl's double (one id, checked on exec).
CONTAINER = "0123456789ab"
CRICTL = f"""#!/bin/sh
# TEST DOUBLE of crictl: the etcd static pod's container is this machine, its etcdctl the one
# on PATH (the real etcdctl of the etcd release under test).
case "$1" in
  ps) echo {CONTAINER} ;;
  exec) [ "$2" = {CONTAINER} ] || exit 1; shift 2; exec "$@" ;;
  *) echo "crictl double: $*" >&2; exit 1 ;;
esac
"""
#: fstrim's double: records its arguments (the test must not trim this machine's disk).
FSTRIM = '#!/bin/sh\necho "$*" >> "$(dirname "$0")/fstrim.calls"\n'
MEMBERS = 3
ETCD_TIMEOUT = 60.0


def etcd_programs() -> tuple[Path, Path, Path]:
    """(etcd, etcdctl, etcdutl): the plane's etcd build and the tools of its release, built
    when missing (skip without Go, fail in CI)."""
    from testenv import PlaneError, build, etcdctl

    if build.go_binary() is None and not (
        (build.plane_dir() / "bin" / "etcd").is_file() and etcdctl.binary().is_file()
    ):
        skip_or_fail("etcd and etcdctl are built with Go (`go`): not installed")
    try:
        etcd = build.ensure_built(only=["etcd"]) / "bin" / "etcd"
        ctl = etcdctl.ensure_built()
    except PlaneError as error:
        pytest.fail(f"etcd or etcdctl did not build: {error}")
    return etcd, ctl, etcdctl.binary("etcdutl")


@dataclass
class EtcdCluster:
    """A throwaway etcd cluster with TLS client authentication, as kubeadm sets it up."""

    urls: list[str]
    pki: Path
    etcdctl: Path

    def ctl(self, *args: str, endpoints: str = "", stdin: str = "") -> str:
        done = subprocess.run(
            [
                str(self.etcdctl),
                f"--endpoints={endpoints or self.urls[0]}",
                f"--cacert={self.pki / 'ca.crt'}",
                f"--cert={self.pki / 'healthcheck-client.crt'}",
                f"--key={self.pki / 'healthcheck-client.key'}",
                *args,
            ],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TOOL_TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, f"etcdctl {args}: {done.stderr}"
        return done.stdout

    def status(self) -> dict[str, dict[str, Any]]:
        """client URL -> its member's endpoint status (dbSize, dbSizeInUse, leader, ...)."""
        rows = json.loads(self.ctl("endpoint", "status", "--cluster", "-w", "json"))
        return {row["Endpoint"]: row["Status"] for row in rows}

    def leader(self) -> str:
        """The client URL of the current leader."""
        (url,) = [u for u, s in self.status().items() if s["leader"] == s["header"]["member_id"]]
        return url


@contextlib.contextmanager
def etcd_cluster(etcd: Path, etcdctl: Path, directory: Path) -> Iterator[EtcdCluster]:
    """Three real etcd members on loopback: clients over TLS with client certificates (the
    certificate files where kubeadm puts them, ``pki/``), peers over plain HTTP."""
    from testenv.certs import CertificateAuthority
    from testenv.ports import free_port
    from testenv.process import Daemon, PlaneError, wait_for

    pki = directory / "pki"
    ca = CertificateAuthority(pki)
    ca.issue("healthcheck-client", "kube-etcd-healthcheck-client", client=True)
    server = ca.issue(
        "server", "etcd", hosts=("127.0.0.1",), server=True, client=True, directory=directory
    )
    ports = [(free_port(), free_port()) for _ in range(MEMBERS)]
    peers = ",".join(f"m{i}=http://127.0.0.1:{peer}" for i, (_, peer) in enumerate(ports))
    daemons: list[Daemon] = []
    try:
        for i, (client, peer) in enumerate(ports):
            argv = [
                str(etcd),
                f"--name=m{i}",
                f"--data-dir={directory / f'm{i}'}",
                f"--listen-client-urls=https://127.0.0.1:{client}",
                f"--advertise-client-urls=https://127.0.0.1:{client}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster={peers}",
                "--initial-cluster-state=new",
                f"--cert-file={server.cert}",
                f"--key-file={server.key}",
                f"--trusted-ca-file={ca.cert}",
                "--client-cert-auth",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ]
            env = {"PATH": "/usr/bin:/bin"}
            daemons.append(Daemon(f"etcd m{i}", argv, env=env, log=directory / f"m{i}.log"))
        cluster = EtcdCluster([f"https://127.0.0.1:{c}" for c, _ in ports], pki, etcdctl)

        def healthy() -> bool:
            cluster.ctl("endpoint", "health", "--cluster")
            return len(cluster.status()) == MEMBERS

        try:
            wait_for("a three-member etcd", healthy, ETCD_TIMEOUT, daemons)
        except PlaneError as error:
            pytest.fail(str(error))
        yield cluster
    finally:
        for daemon in daemons:
            daemon.stop()


def defrag_script(content: str, values: dict[str, str]) -> str:
    """etcd-defrag.sh as rendered, its node constants (and the upload's, when given) set to
    ``values``."""
    for name in dict.fromkeys([*NODE_CONSTANTS, *values]):
        pattern = re.compile(rf"^{name}=.*$", re.MULTILINE)
        assert len(pattern.findall(content)) == 1, f"{name}= is not one line of the script"
        content = pattern.sub(f"{name}={values[name]}".replace("\\", "\\\\"), content)
    return content


def _fragment(cluster: EtcdCluster) -> dict[str, dict[str, Any]]:
    """~3 MB of values written, deleted and compacted away: space etcd's bolt database
    keeps (dbSize) but no longer uses (dbSizeInUse) until it is defragmented. Returns the
    members' status then."""
    value = "x" * 8192
    for batch in range(4):
        puts = "".join(f"put big/{batch}/{i} {value}\n" for i in range(90))
        cluster.ctl("txn", stdin=f"\n{puts}\n\n")
    cluster.ctl("del", "--prefix", "big/")
    # a revision after the deletion: compacting to it drops the tombstones with the values
    cluster.ctl("put", "kept", "after-defrag")
    revision = json.loads(cluster.ctl("get", "kept", "-w", "json"))["header"]["revision"]
    cluster.ctl("compact", str(revision), "--physical")
    # each member frees the pages when it applies the compaction; its dbSizeInUse follows
    # at a later commit of its backend: writes make them
    deadline = time.monotonic() + ETCD_TIMEOUT
    while True:
        cluster.ctl("put", "tick", str(time.monotonic()))
        status = cluster.status()
        if all(s["dbSize"] - s["dbSizeInUse"] > 2_000_000 for s in status.values()):
            return status
        assert time.monotonic() < deadline, f"no member freed the deleted values: {status}"
        time.sleep(0.5)


def _run_script(
    script: Path, shims: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/bash", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PATH": f"{shims}:/usr/bin:/bin", "LC_ALL": "C", **(env or {})},
        start_new_session=True,
    )


def _shims(directory: Path, etcdctl: Path) -> Path:
    """crictl's and fstrim's doubles and the real etcdctl, first on the script's PATH."""
    shims = directory / "shims"
    shims.mkdir()
    for name, body in (("crictl", CRICTL), ("fstrim", FSTRIM)):
        (shims / name).write_text(body)
        (shims / name).chmod(0o755)
    (shims / "etcdctl").symlink_to(etcdctl)
    return shims


def _script_of(objects: Any) -> str:
    (content,) = {f.content for f in node_files(objects) if f.path.endswith("etcd-defrag.sh")}
    return content


def test_etcd_defrag_script_defragments_moves_the_leader_and_saves_a_valid_snapshot(
    rendered: dict[str, Any], tmp_path: Path
) -> None:
    """The rendered etcd-defrag.sh (openstack-minimal: defragmentation and backups on by
    default) on a real three-member etcd: run on a follower it does nothing; on the leader
    it defragments every member (each member's database shrinks to what it uses), hands
    leadership to a defragmented follower, saves a snapshot that etcdutl of the same
    release reads, keeps only the newest ``backupRetention`` snapshots, and trims."""
    etcd, etcdctl, etcdutl = etcd_programs()
    content = _script_of(rendered["openstack-minimal"])
    retention = int(_constant(content, "RETENTION"))
    assert retention > 0, "backups are on by default"
    shims = _shims(tmp_path, etcdctl)
    backups = tmp_path / "backups"
    backups.mkdir()
    old = [backups / f"etcd-snapshot-2020010{day}T020000Z.db.gz" for day in range(1, retention + 2)]
    for path in old:
        path.write_bytes(gzip.compress(b"an older snapshot"))
    (backups / "notes.txt").write_text("not a snapshot: kept")
    with etcd_cluster(etcd, etcdctl, tmp_path / "etcd") as cluster:
        before = _fragment(cluster)
        leader = cluster.leader()
        follower = next(u for u in cluster.urls if u != leader)
        values = {
            "BACKUP_DIR": str(backups),
            "PKI": str(cluster.pki),
            "SNAPSHOT_TMP": str(tmp_path / "etcd" / "scs-snapshot.db"),
        }
        script = tmp_path / "etcd-defrag.sh"

        script.write_text(defrag_script(content, values | {"LOCAL": follower}))
        done = _run_script(script, shims)
        assert done.returncode == 0, done.stderr
        assert "is not the leader; the leader does the work" in done.stdout, done.stdout
        assert sorted(backups.iterdir()) == sorted([*old, backups / "notes.txt"])

        script.write_text(defrag_script(content, values | {"LOCAL": leader}))
        started = time.monotonic()
        done = _run_script(script, shims)
        took = time.monotonic() - started
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        assert done.stdout.count("defragmenting follower") == MEMBERS - 1, done.stdout
        after = cluster.status()
        for url, status in after.items():
            assert status["dbSize"] < before[url]["dbSize"] / 2, (url, before[url], status)
        assert cluster.leader() != leader, "leadership moved to a defragmented follower"
        assert json.loads(cluster.ctl("get", "kept", "-w", "json"))["kvs"], "data kept"
    assert (shims / "fstrim.calls").read_text() == "--verbose /\n"
    assert backups.stat().st_mode & 0o777 == 0o700
    snapshots = sorted(backups.glob("etcd-snapshot-*.db.gz"))
    assert len(snapshots) == retention, snapshots
    assert (backups / "notes.txt").exists()
    newest = snapshots[-1]
    stamp = datetime.datetime.strptime(newest.name[14:30], "%Y%m%dT%H%M%SZ").replace(
        tzinfo=datetime.UTC
    )
    assert abs(datetime.datetime.now(datetime.UTC) - stamp).total_seconds() < took + 60
    assert snapshots[:-1] == old[len(old) - (retention - 1) :], "the newest kept"
    assert not (tmp_path / "etcd" / "scs-snapshot.db").exists(), "the uncompressed copy removed"
    _assert_restorable(etcdutl, newest.read_bytes(), tmp_path / "snapshot.db")


def _constant(script: str, name: str) -> str:
    """The value of a node constant (NAME=value) of the rendered script."""
    found = re.search(rf"^{name}=(\S+)$", script, re.MULTILINE)
    assert found, f"no {name}= in the script"
    return found.group(1)


def _assert_restorable(etcdutl: Path, compressed: bytes, db: Path) -> None:
    """The gzipped snapshot is one that etcdutl of the etcd release reads: keys, a revision."""
    db.write_bytes(gzip.decompress(compressed))
    read_back = run_tool([str(etcdutl), "snapshot", "status", str(db), "-w", "json"])
    assert read_back.returncode == 0, read_back.stderr
    read = json.loads(read_back.stdout)
    assert read["totalKey"] >= 1 and read["revision"] > 0, read


@pytest.fixture(scope="module")
def s3_store(
    rendered: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SwiftStore]:
    """A real OpenStack Swift with its S3 API (tests/support/swift_store.py) in the region of
    openstack-all-features' backupS3, with its bucket created."""
    from tests.support import swift_store
    from tests.support.openstack_stack import StackError

    script = _script_of(rendered["openstack-all-features"])
    try:
        swift_store.swift_venv()
    except StackError as error:
        skip_or_fail(f"OpenStack Swift (PyPI) did not install: {error}")
    with swift_store.swift_store(
        tmp_path_factory.mktemp("swift"), region=_constant(script, "S3_REGION")
    ) as store:
        store.create_bucket(_constant(script, "S3_BUCKET"))
        yield store


def test_etcd_backup_s3_uploads_each_snapshot_to_a_real_object_store_and_it_restores(
    rendered: dict[str, Any], s3_store: SwiftStore, tmp_path: Path
) -> None:
    """etcd.backupS3 (openstack-all-features): the rendered script, its credentials in
    root-only files as the bootstrap data writes them from the Secret, puts the snapshot it
    just saved into the bucket of a real Swift through its S3 API (Signature Version 4,
    checked by Swift's s3api) under <prefix>/<its name>; the object read back through the
    Swift API is the local file, and etcdutl restores from it. Then it lists the prefix and
    deletes all but the ``retention`` newest snapshots there (other objects, other prefixes
    kept). With a wrong secret key the store refuses it: the defragmentation and the local
    snapshot are done all the same, the unit fails (exit 1) with the store's reason, and the
    secret is in no output."""
    etcd, etcdctl, etcdutl = etcd_programs()
    content = _script_of(rendered["openstack-all-features"])
    bucket, prefix = _constant(content, "S3_BUCKET"), _constant(content, "S3_PREFIX")
    assert prefix == "team-b/corp1", "the default prefix: <namespace>/<cluster>"
    retention = int(_constant(content, "S3_RETENTION"))
    old = [f"{prefix}/etcd-snapshot-202001{day:02}T020000Z.db.gz" for day in range(1, 17)]
    kept = [f"{prefix}/notes.txt", "other/etcd-snapshot-20200101T020000Z.db.gz"]
    for name in [*old, *kept]:
        s3_store.put(bucket, name, b"an older object")
    shims = _shims(tmp_path, etcdctl)
    credentials = tmp_path / "etcd-backup-s3"
    credentials.mkdir(mode=0o700)
    for key, value in (
        ("AWS_ACCESS_KEY_ID", s3_store.access_key),
        ("AWS_SECRET_ACCESS_KEY", s3_store.secret_key),
    ):
        (credentials / key).write_text(value)
        (credentials / key).chmod(0o600)
    backups = tmp_path / "backups"
    env = {"CURL_CA_BUNDLE": str(s3_store.ca)}
    with etcd_cluster(etcd, etcdctl, tmp_path / "etcd") as cluster:
        cluster.ctl("put", "kept", "in-the-bucket")
        values = {
            "BACKUP_DIR": str(backups),
            "PKI": str(cluster.pki),
            "SNAPSHOT_TMP": str(tmp_path / "etcd" / "scs-snapshot.db"),
            "S3_ENDPOINT": s3_store.endpoint,
            "S3_CREDENTIALS": str(credentials),
        }
        script = tmp_path / "etcd-defrag.sh"
        script.write_text(defrag_script(content, values | {"LOCAL": cluster.leader()}))
        done = _run_script(script, shims, env)
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        (snapshot,) = backups.glob("etcd-snapshot-*.db.gz")
        assert f"uploaded {snapshot} to {s3_store.endpoint}/{bucket}/{prefix}/" in done.stdout
        sizes = {str(o["name"]): o["bytes"] for o in s3_store.objects(bucket)}
        name = f"{prefix}/{snapshot.name}"
        assert sizes.pop(name) == snapshot.stat().st_size
        assert sorted(sizes) == sorted([*old[len(old) - (retention - 1) :], *kept])
        assert done.stdout.count("from the bucket") == len(old) - (retention - 1)
        uploaded = s3_store.get(bucket, name)
        assert uploaded == snapshot.read_bytes()
        _assert_restorable(etcdutl, uploaded, tmp_path / "from-the-bucket.db")

        (credentials / "AWS_SECRET_ACCESS_KEY").write_text("not-the-secret-key")
        time.sleep(1)  # the next snapshot's name is a second later
        script.write_text(defrag_script(content, values | {"LOCAL": cluster.leader()}))
        failed = _run_script(script, shims, env)
    assert failed.returncode == 1, f"{failed.stdout}\n{failed.stderr}"
    assert "defragmenting this member" in failed.stdout
    assert "failed: HTTP 403 SignatureDoesNotMatch" in failed.stderr, failed.stderr
    assert f"the S3 upload failed (above); the snapshot is kept in {backups}" in failed.stderr
    assert len(list(backups.glob("etcd-snapshot-*.db.gz"))) == 2, "the local snapshot kept"
    assert len(s3_store.objects(bucket)) == retention + len(kept), "nothing more in the bucket"
    assert (shims / "fstrim.calls").read_text() == "--verbose /\n" * 2, "trimmed all the same"
    for output in (done.stdout, done.stderr, failed.stdout, failed.stderr):
        assert s3_store.secret_key not in output


def test_etcdctl_is_of_the_plane_etcd_release() -> None:
    """The etcdctl and etcdutl the test runs are of the release of the etcd it runs (on a
    node, the etcd image's own etcdctl talks to its etcd)."""
    from testenv import build, etcdctl

    server = build.required(build.GO_DIR / "etcd" / "go.mod", "go.etcd.io/etcd/server/v3")
    wrapper = etcdctl.MODULE_DIR / "go.mod"
    assert etcdctl.version() == build.required(wrapper, etcdctl.ETCDUTL) == server
