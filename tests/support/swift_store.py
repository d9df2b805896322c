"""A REAL OpenStack Swift on 127.0.0.1 that speaks S3 (its s3api middleware), for the upload
of etcd snapshots (tests/plane/test_node_etcd_defrag.py; no mocks).

- Swift runs from its own virtualenv at
  ``${SCS_TEMPLATES_CACHE_DIR:-~/.cache/scs-templates}/swift-venv/<hash>``, built on first use
  from ``.ci/swift-requirements.txt`` (keyed by the hash of that file; a few seconds once), as
  the OpenStack test stack's (:func:`tests.support.openstack_stack.stack_venv`).
- One replica on one device: rings of one device each, built by Swift's own ring builder;
  the account, container and object servers (SQLite databases, object files with their
  metadata in user xattrs) and the proxy in one process each, ``workers = 0`` (no forks).
- The proxy serves HTTPS with a certificate of a throwaway CA (:attr:`SwiftStore.ca`, give
  it to curl as ``CURL_CA_BUNDLE``); its pipeline has s3api before tempauth: an S3 request
  signed with AWS Signature Version 4 by the access key ``test:tester`` and its secret is
  checked by Swift's own s3api code and lands in the account ``AUTH_test``, whose containers
  are the buckets. tempauth issues fernet tokens (no memcached) for the native Swift API,
  which the test reads the bucket with (:meth:`SwiftStore.objects`, :meth:`SwiftStore.get`):
  another path into the store than the one the upload took.
- Swift reads ``swift.conf`` from ``swift_dir`` of each server's configuration, never from
  /etc/swift; the servers log to their log files (``-v``) and, as Swift does without
  /dev/log, to syslog over UDP on 127.0.0.1.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import pwd
import secrets
import socket
import ssl
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import REPO

REQUIREMENTS = REPO / ".ci" / "swift-requirements.txt"
#: tempauth's account and user; S3 clients use "account:user" as the access key ID.
ACCOUNT, USER = "test", "tester"
#: The servers' environment (dnspython's import warns about DSA: noise in every log).
ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "PYTHONWARNINGS": "ignore"}
SERVERS = ("account", "container", "object")
START_TIMEOUT = 60.0
REQUEST_TIMEOUT = 30.0
#: The proxy's pipeline: s3api turns S3 requests into Swift ones, tempauth checks them.
PIPELINE = (
    "catch_errors gatekeeper healthcheck proxy-logging listing_formats s3api tempauth copy "
    "proxy-logging proxy-server"
)
FILTERS = {
    "catch_errors": "catch_errors",
    "gatekeeper": "gatekeeper",
    "healthcheck": "healthcheck",
    "proxy-logging": "proxy_logging",
    "listing_formats": "listing_formats",
    "copy": "copy",
}


@dataclass
class SwiftStore:
    """A running Swift with S3; :func:`swift_store` starts and stops it."""

    endpoint: str
    region: str
    ca: Path
    secret_key: str = field(repr=False)
    access_key: str = f"{ACCOUNT}:{USER}"

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def _request(
        self, method: str, path: str, token: str = "", body: bytes = b""
    ) -> tuple[bytes, dict[str, str]]:
        """A Swift API request with ``token``, or tempauth's token request without one."""
        headers = (
            {"X-Auth-Token": token}
            if token
            else {"X-Auth-User": self.access_key, "X-Auth-Key": self.secret_key}
        )
        request = urllib.request.Request(
            f"{self.endpoint}{path}",
            method=method,
            headers=headers,
            data=body if method == "PUT" else None,
        )
        with urllib.request.urlopen(
            request, context=self.context(), timeout=REQUEST_TIMEOUT
        ) as response:
            return response.read(), dict(response.headers)

    def _token(self) -> tuple[str, str]:
        """(token, storage path) from tempauth (native Swift API v1)."""
        _, headers = self._request("GET", "/auth/v1.0")
        storage = headers["X-Storage-Url"]
        return headers["X-Auth-Token"], "/" + storage.split("/", 3)[3]

    def create_bucket(self, bucket: str) -> None:
        """The bucket as a Swift container of the S3 user's account."""
        token, storage = self._token()
        self._request("PUT", f"{storage}/{bucket}", token)

    def put(self, bucket: str, name: str, body: bytes) -> None:
        """An object written with the Swift API."""
        token, storage = self._token()
        self._request("PUT", f"{storage}/{bucket}/{name}", token, body)

    def objects(self, bucket: str) -> list[dict[str, object]]:
        """The container's listing (name, bytes, hash, ...) read with the Swift API."""
        token, storage = self._token()
        body, _ = self._request("GET", f"{storage}/{bucket}?format=json", token)
        listing: list[dict[str, object]] = json.loads(body)
        return listing

    def get(self, bucket: str, name: str) -> bytes:
        """An object's content read with the Swift API."""
        token, storage = self._token()
        body, _ = self._request("GET", f"{storage}/{bucket}/{name}", token)
        return body


def swift_venv() -> Path:
    """Swift's virtualenv, built on first use (pinned: .ci/swift-requirements.txt)."""
    from tests.support.openstack_stack import stack_venv

    return stack_venv(requirements=REQUIREMENTS, name="swift-venv")


def _server_conf(kind: str, port: int, state: Path, user: str) -> str:
    return (
        f"[DEFAULT]\nbind_ip = 127.0.0.1\nbind_port = {port}\nworkers = 0\n"
        f"devices = {state / 'devices'}\nmount_check = false\nswift_dir = {state}\n"
        f"user = {user}\nlog_name = {kind}-server\n\n"
        f"[pipeline:main]\npipeline = {kind}-server\n\n"
        f"[app:{kind}-server]\nuse = egg:swift#{kind}\n"
    )


def _proxy_conf(port: int, state: Path, user: str, secret_key: str, region: str) -> str:
    fernet = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
    filters = "".join(
        f"[filter:{name}]\nuse = egg:swift#{egg}\n\n" for name, egg in FILTERS.items()
    )
    return (
        f"[DEFAULT]\nbind_ip = 127.0.0.1\nbind_port = {port}\nworkers = 0\n"
        f"swift_dir = {state}\nuser = {user}\nlog_name = proxy-server\n"
        f"cert_file = {state / 'proxy.crt'}\nkey_file = {state / 'proxy.key'}\n\n"
        f"[pipeline:main]\npipeline = {PIPELINE}\n\n"
        "[app:proxy-server]\nuse = egg:swift#proxy\naccount_autocreate = true\n\n"
        f"[filter:s3api]\nuse = egg:swift#s3api\nlocation = {region}\n\n"
        f"[filter:tempauth]\nuse = egg:swift#tempauth\n"
        f"user_{ACCOUNT}_{USER} = {secret_key} .admin\n"
        f"fernet_key_1 = {fernet}\nactive_fernet_key_id = 1\n\n" + filters
    )


def _ring(python: Path, state: Path, kind: str, port: int) -> None:
    """One ring of one device (part power 6, one replica), built by swift-ring-builder."""
    from testenv.process import PlaneError

    builder = str(state / f"{kind}.builder")
    run = (
        "import sys; from swift.cli.ringbuilder import main; "
        "sys.argv[0] = 'swift-ring-builder'; sys.exit(main())"
    )
    for args, accepted in (
        (["create", "6", "1", "0"], (0,)),
        (["add", f"r1z1-127.0.0.1:{port}/d1", "1"], (0,)),
        (["rebalance"], (0, 1)),  # 1: a warning (one device cannot be "balanced")
    ):
        done = subprocess.run(
            [str(python), "-c", run, builder, *args],
            capture_output=True,
            text=True,
            timeout=REQUEST_TIMEOUT,
            check=False,
            env=ENV,
        )
        if done.returncode not in accepted:
            raise PlaneError(f"swift-ring-builder {kind} {args[0]}: {done.stdout}{done.stderr}")


@contextlib.contextmanager
def swift_store(state: Path, region: str = "us-east-1") -> Iterator[SwiftStore]:
    """Swift with S3 on 127.0.0.1 (state, configuration and logs under ``state``)."""
    from testenv.certs import CertificateAuthority
    from testenv.plane import _die_with_parent
    from testenv.ports import free_port
    from testenv.process import Daemon, wait_for

    python = swift_venv() / "bin" / "python"
    user = pwd.getpwuid(os.getuid()).pw_name
    (state / "devices" / "d1").mkdir(parents=True)
    (state / "swift.conf").write_text(
        f"[swift-hash]\nswift_hash_path_suffix = {secrets.token_hex(8)}\n"
        f"swift_hash_path_prefix = {secrets.token_hex(8)}\n\n"
        "[storage-policy:0]\nname = gold\ndefault = yes\n"
    )
    ca = CertificateAuthority(state / "ca")
    ca.issue("proxy", "swift-proxy", hosts=("127.0.0.1",), server=True, directory=state)
    secret_key = secrets.token_urlsafe(24)
    ports = {kind: free_port() for kind in (*SERVERS, "proxy")}
    confs = {kind: _server_conf(kind, ports[kind], state, user) for kind in SERVERS}
    confs["proxy"] = _proxy_conf(ports["proxy"], state, user, secret_key, region)
    for kind in SERVERS:
        _ring(python, state, kind, ports[kind])
    daemons: list[Daemon] = []
    try:
        for kind, conf in confs.items():
            path = state / f"{kind}-server.conf"
            path.write_text(conf)
            module = "swift.obj.server" if kind == "object" else f"swift.{kind}.server"
            run = f"import sys; from {module} import main; sys.exit(main())"
            daemons.append(
                Daemon(
                    f"swift {kind}-server",
                    [str(python), "-c", run, str(path), "-v"],
                    env=ENV,
                    log=state / f"{kind}-server.log",
                    preexec=_die_with_parent,  # a killed pytest leaves no server behind
                )
            )
        store = SwiftStore(f"https://127.0.0.1:{ports['proxy']}", region, ca.cert, secret_key)

        def healthy() -> bool:
            """Every server accepts connections and the proxy answers its health check."""
            for port in ports.values():
                socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT).close()
            with urllib.request.urlopen(
                f"{store.endpoint}/healthcheck", context=store.context(), timeout=REQUEST_TIMEOUT
            ) as response:
                return bool(response.read() == b"OK")

        wait_for("Swift's proxy", healthy, START_TIMEOUT, daemons)
        yield store
    finally:
        for daemon in daemons:
            daemon.stop()
