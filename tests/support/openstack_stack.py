"""Launch a REAL Keystone and Neutron (and, on demand, Octavia, Cinder, Nova, Placement and
Glance) on 127.0.0.1 for the OpenStack tests (no mocks).

- The services run from their own virtualenv at
  ``${SCS_TEMPLATES_CACHE_DIR:-~/.cache/scs-templates}/openstack-stack-venv/<hash>``, built on
  first use from ``.ci/openstack-stack-requirements.txt`` (keyed by the hash of that file, so a
  changed pin builds a new venv; about 20 s once) and reused afterwards. uv installs it (the
  ``test`` extra): from empty caches 6 CPU s where pip took 59, most of it pip's own Python.
  Then ``compileall`` writes the bytecode of every module (:func:`compile_bytecode`, ~40 CPU s
  once): with ``PYTHONDONTWRITEBYTECODE`` set, as on the CI machines, no service writes what
  it compiles, so without it every service process compiled its imports from source again,
  2.5-5 CPU s of its start (Neutron 7.5 -> 2.6 CPU s for ``import neutron.plugins.ml2.plugin``).
- State (SQLite databases, fernet keys, configuration, logs) lives in a temporary directory.
- Each WSGI app is served by ``tests/support/openstack_wsgi.py`` (stdlib wsgiref, one request at a
  time: SQLite does not like concurrent writers) in its own subprocess, on a free port.
- Keystone: SQLite, fernet tokens, in-process cache, cheap password hashing. Neutron: ML2 with
  no mechanism drivers and no agents (ports stay DOWN, like leftovers of deleted servers), no
  agents for the router plugin (routers, gateways and floating IPs exist in its database
  only), schema created like Neutron's own unit tests do (``neutron-db-manage``
  fails on SQLite).

- Octavia and Cinder (:meth:`Stack.start_octavia_cinder`, only for the tests that need
  them): the REAL Octavia API with its REAL controller worker (taskflow flows; amphora,
  compute, network, image and volume drivers are Octavia's own noop drivers, so a load
  balancer goes PENDING_CREATE -> ACTIVE -> PENDING_DELETE -> gone as on a cloud, without
  servers), and the REAL Cinder API with its REAL scheduler and volume manager on Cinder's
  test backend (``cinder.tests.fake_driver.FakeLoggingVolumeDriver``: logs instead of
  creating LVM volumes). Each runs in ONE process (``tests/support/openstack_wsgi.py``) because
  their RPC runs over oslo.messaging's in-process ``fake://`` transport (no message broker
  here). Octavia's schema is created like its own functional tests do (create_all + the
  seeded lookup tables: ``octavia-db-manage upgrade head`` fails on SQLite, "No support for
  ALTER of constraints in SQLite dialect"); Cinder's by ``cinder-manage db sync``.
  ``neutron_vips=True`` (the OCCM test): the API side of Octavia uses its REAL Neutron
  driver (``allowed_address_pairs_driver``) against the REAL Neutron, so a load balancer's
  VIP is a real Neutron port in the user's project, and a floating IP can be put on it;
  the worker's flows keep the noop network driver (there is no server to plug the VIP
  into: the noop compute driver's attach returns nothing). On a cloud the two are separate
  processes with their own configuration; here they share one (``fake://``), so
  ``tests/support/openstack_wsgi.py`` gives the worker's network tasks the noop driver
  (``OCTAVIA_WORKER_NETWORK_DRIVER``). What that leaves behind: the worker's noop
  ``deallocate_vip`` does not delete the VIP port (a real worker does).
- Nova (:meth:`Stack.start_nova`: the API only; ``compute=True``: also Placement and Nova's
  REAL conductor, scheduler and compute services, the compute service on Nova's own
  ``fake.FakeDriver``, so servers go ACTIVE without a VM; Neutron then binds their ports with
  its REAL ``openvswitch`` mechanism driver on an agent record, :meth:`Stack._bind_ports`)
  and Glance (:meth:`Stack.start_glance`: the REAL Glance API on one file store under the
  state directory, schema by ``glance-manage db sync``), on demand.

The client side (openstacksdk) is the project venv's: the admin setup below uses it too.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uv import find_uv_bin

from scs_templates._tools.toolchain.resolve import cache_root
from testenv.ports import free_port
from tests.support import REPO

REQUIREMENTS = REPO / ".ci" / "openstack-stack-requirements.txt"
WSGI_SCRIPT = Path(__file__).resolve().parent / "openstack_wsgi.py"
REGION = "RegionOne"
#: Written in a stack venv once :func:`compile_bytecode` has compiled all of it.
BYTECODE_MARKER = ".bytecode"


class StackError(RuntimeError):
    """The stack could not be built or started (the message says which step and where logs are)."""


def requirements_hash(requirements: Path = REQUIREMENTS) -> str:
    return hashlib.sha256(requirements.read_bytes()).hexdigest()[:16]


def stack_venv(
    log: Any = None, requirements: Path = REQUIREMENTS, name: str = "openstack-stack-venv"
) -> Path:
    """Return the stack virtualenv (or another one of pinned ``requirements``, in the cache
    folder ``name``), building it on first use (locked, atomic)."""
    base = cache_root() / name
    final = base / requirements_hash(requirements)
    marker = final / ".complete"
    compiled = final / BYTECODE_MARKER
    if marker.exists() and compiled.exists():
        return final
    base.mkdir(parents=True, exist_ok=True)
    with (base / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():
            if not compiled.exists():  # a venv of a tree before its bytecode was compiled
                compile_bytecode(final, log)
            return final
        staging = base / f".staging-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        uv = find_uv_bin()
        _run([uv, "venv", "--quiet", "--python", sys.executable, str(staging)], "create the venv")
        started = time.monotonic()
        _run(
            [
                uv,
                "pip",
                "install",
                "--quiet",
                "--native-tls",
                "--python",
                str(staging / "bin" / "python"),
                "-r",
                str(requirements),
            ],
            f"uv pip install -r {requirements.name} (needs PyPI)",
            timeout=900,
        )
        if log:
            log(f"stack venv built in {time.monotonic() - started:.0f}s")
        # Console scripts keep the staging path in their shebangs; we never use them (tools
        # run as `python -c`/`python <script>` with the venv's interpreter), so renaming is fine.
        shutil.rmtree(final, ignore_errors=True)
        staging.rename(final)
        compile_bytecode(final, log)  # after the rename: the bytecode names the final paths
        marker.write_text(requirements.read_text())
    return final


def compile_bytecode(venv: Path, log: Any = None) -> None:
    """Write the bytecode of every module of ``venv`` (``compileall`` on all cores), then
    :data:`BYTECODE_MARKER`. ``compileall`` writes even where ``PYTHONDONTWRITEBYTECODE`` is
    set; a module that does not compile fails the build."""
    started = time.monotonic()
    _run(
        [str(venv / "bin" / "python"), "-m", "compileall", "-q", "-j", "0", str(venv / "lib")],
        f"compile the bytecode of {venv}",
        timeout=900,
    )
    (venv / BYTECODE_MARKER).write_text("")
    if log:
        log(f"stack venv bytecode compiled in {time.monotonic() - started:.0f}s")


def _run(
    command: list[str], what: str, *, env: dict[str, str] | None = None, timeout: float = 300
) -> str:
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise StackError(f"{what}: {error}") from error
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-15:]
        raise StackError(f"{what} failed (exit {result.returncode}):\n" + "\n".join(tail))
    return result.stdout


def spawn_service(
    argv: list[str], log: Path, env: dict[str, str], cwd: Path
) -> subprocess.Popen[bytes]:
    """One service process of the stack, in a session of its own (its output to ``log``),
    that gets SIGTERM when the process that started it dies: a pytest killed mid-run (a
    CI timeout, ^C twice) leaves no Keystone, Neutron or Nova serving on behind it
    (:func:`testenv.plane._die_with_parent`, as the plane's processes)."""
    from testenv.plane import _die_with_parent

    with log.open("wb") as out:
        return subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )


@dataclass
class Stack:
    """A running Keystone + Neutron. Use :func:`start_stack` and :meth:`stop`."""

    state_dir: Path
    venv: Path
    keystone_port: int = 0
    neutron_port: int = 0
    octavia_port: int = 0
    cinder_port: int = 0
    nova_port: int = 0
    placement_port: int = 0
    glance_port: int = 0
    admin_password: str = field(default_factory=lambda: secrets.token_urlsafe(16), repr=False)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False)

    @property
    def auth_url(self) -> str:
        return f"http://127.0.0.1:{self.keystone_port}/v3"

    @property
    def neutron_url(self) -> str:
        return f"http://127.0.0.1:{self.neutron_port}"

    def admin_auth(self) -> dict[str, str]:
        return {
            "auth_url": self.auth_url,
            "username": "admin",
            "password": self.admin_password,
            "project_name": "admin",
            "user_domain_name": "Default",
            "project_domain_name": "Default",
        }

    def admin_connection(self) -> Any:
        import openstack

        return openstack.connect(
            auth=self.admin_auth(), auth_type="password", region_name=REGION, interface="public"
        )

    # ------------------------------------------------------------------ lifecycle

    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def _schema(self, service: str, database: Path, migrate: Callable[[], object]) -> None:
        """The service's database as its schema migrations leave it: copied from a snapshot
        taken after the first migration with this venv (so keyed by the services' versions,
        ``requirements_hash``), else migrated and then snapshot. A stack start then costs no
        migration: each ran in a fresh Python importing the service (seconds to minutes on a
        loaded machine). Only schemas that hold nothing of one stack (no paths, no
        passwords, no ports) are snapshot; what a start writes after (Keystone's bootstrap,
        endpoints, users) is written into the copy by the real tools as before."""
        snapshot = self.venv / ".schemas" / f"{service}.db"
        if snapshot.is_file():
            shutil.copyfile(snapshot, database)
            return
        migrate()
        snapshot.parent.mkdir(exist_ok=True)
        staging = snapshot.with_name(f".{service}-{os.getpid()}.db")
        shutil.copyfile(database, staging)
        staging.replace(snapshot)  # atomic: a concurrent start sees the old state or this

    def start(self) -> None:
        started = time.monotonic()
        self.keystone_port = free_port()
        self.neutron_port = free_port()
        self._setup_keystone()
        self._serve(
            "keystone",
            self.keystone_port,
            {"OS_KEYSTONE_CONFIG_DIR": str(self.kdir), "KEYSTONE_AUDIT_FILE": str(self.audit_file)},
        )
        self._wait("keystone", f"{self.auth_url}")
        self._register_neutron()
        self._setup_neutron()
        self._serve_neutron()
        self.startup_seconds = time.monotonic() - started

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self.processes.clear()

    # ------------------------------------------------------------------ keystone

    @property
    def audit_file(self) -> Path:
        return self.state_dir / "keystone-audit.jsonl"

    def keystone_events(self) -> list[dict[str, Any]]:
        """What Keystone answered so far, in order (tests/support/openstack_wsgi.py
        ``audited``): each
        token issued (``credential``: the application credential's ID or name, ``agent``,
        ``status``) and each application credential deleted (``credential``: its ID)."""
        import json

        with contextlib.suppress(FileNotFoundError):
            text = self.audit_file.read_text()
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return []

    @property
    def kdir(self) -> Path:
        return self.state_dir / "keystone"

    @property
    def ndir(self) -> Path:
        return self.state_dir / "neutron"

    def _setup_keystone(self) -> None:
        d = self.kdir
        (d / "fernet-keys").mkdir(parents=True)
        (d / "credential-keys").mkdir()
        conf = d / "keystone.conf"
        conf.write_text(
            f"""[DEFAULT]
use_stderr = true
[database]
connection = sqlite:///{d}/keystone.db
[token]
provider = fernet
[fernet_tokens]
key_repository = {d}/fernet-keys
[fernet_receipts]
key_repository = {d}/fernet-keys
[credential]
key_repository = {d}/credential-keys
[identity]
password_hash_rounds = 4
[cache]
enabled = true
backend = oslo_cache.dict
"""
        )
        manage = [self.python(), "-c", "from keystone.cmd.manage import main; main()"]
        base = [*manage, "--config-file", str(conf)]
        import grp
        import pwd

        user = pwd.getpwuid(os.getuid()).pw_name
        group = grp.getgrgid(os.getgid()).gr_name
        owner = ["--keystone-user", user, "--keystone-group", group]
        self._schema(
            "keystone",
            d / "keystone.db",
            lambda: _run([*base, "db_sync"], "keystone-manage db_sync"),
        )
        _run([*base, "fernet_setup", *owner], "keystone-manage fernet_setup")
        _run([*base, "credential_setup", *owner], "keystone-manage credential_setup")
        url = self.auth_url
        _run(
            [
                *base,
                "bootstrap",
                # one argument with "=": a random password may start with "-", which
                # argparse would take for an option ("expected one argument"; 1 run in ~64)
                f"--bootstrap-password={self.admin_password}",
                "--bootstrap-username",
                "admin",
                "--bootstrap-project-name",
                "admin",
                "--bootstrap-role-name",
                "admin",
                "--bootstrap-service-name",
                "keystone",
                "--bootstrap-region-id",
                REGION,
                "--bootstrap-admin-url",
                url,
                "--bootstrap-public-url",
                url,
                "--bootstrap-internal-url",
                url,
            ],
            "keystone-manage bootstrap",
        )

    def _register_neutron(self) -> None:
        conn = self.admin_connection()
        identity = conn.identity
        identity.create_project(name="service", domain_id="default")
        for role_name in ("member", "reader", "manager"):
            if identity.find_role(role_name) is None:
                identity.create_role(name=role_name)
        conn.close()
        self.neutron_password = self._register_service("neutron", "network", self.neutron_url)

    def _register_service(self, name: str, service_type: str, url: str) -> str:
        """A service user (admin + service in the ``service`` project), the service and its
        endpoints; returns the user's password."""
        conn = self.admin_connection()
        identity = conn.identity
        password = secrets.token_urlsafe(16)
        service_project = identity.find_project("service", domain_id="default")
        user = identity.create_user(name=name, password=password, domain_id="default")
        for role_name in ("admin", "service"):
            role = identity.find_role(role_name) or identity.create_role(name=role_name)
            identity.assign_project_role_to_user(service_project, user, role)
        service = identity.create_service(name=name, type=service_type)
        for interface in ("public", "internal", "admin"):
            identity.create_endpoint(
                service_id=service.id, interface=interface, url=url, region_id=REGION
            )
        conn.close()
        return password

    def _authtoken(self, user: str, password: str, section: str = "keystone_authtoken") -> str:
        return f"""[{section}]
www_authenticate_uri = {self.auth_url}
auth_url = {self.auth_url}
auth_type = password
username = {user}
password = {password}
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = {REGION}
"""

    # ------------------------------------------------------------------ neutron

    def _serve_neutron(self) -> None:
        """Neutron's process on :attr:`neutron_port`, with the configuration in
        :attr:`ndir`; returns once it answers."""
        self._serve(
            "neutron",
            self.neutron_port,
            {
                "OS_NEUTRON_CONFIG_DIR": str(self.ndir),
                "OS_NEUTRON_CONFIG_FILES": "neutron.conf;ml2_conf.ini",
            },
        )
        self._wait("neutron", f"{self.neutron_url}/")

    def _setup_neutron(self) -> None:
        d = self.ndir
        d.mkdir(parents=True)
        (d / "lock").mkdir()
        paste = self.venv / "etc" / "neutron" / "api-paste.ini"
        (d / "neutron.conf").write_text(
            f"""[DEFAULT]
core_plugin = ml2
service_plugins = router
auth_strategy = keystone
transport_url = fake://
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
dhcp_agent_notification = false
api_paste_config = {paste}
use_stderr = true
[database]
connection = sqlite:///{d}/neutron.db
[keystone_authtoken]
www_authenticate_uri = {self.auth_url}
auth_url = {self.auth_url}
auth_type = password
username = neutron
password = {self.neutron_password}
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = {REGION}
[oslo_messaging_notifications]
driver = noop
[oslo_concurrency]
lock_path = {d}/lock
"""
        )
        (d / "ml2_conf.ini").write_text(
            """[ml2]
type_drivers = flat,vlan,vxlan
tenant_network_types = vxlan
mechanism_drivers =
extension_drivers = port_security
[ml2_type_vxlan]
vni_ranges = 1:1000
"""
        )
        code = (
            "import sqlalchemy\n"
            "from neutron.db.migration.models import head\n"
            f"engine = sqlalchemy.create_engine('sqlite:///{d}/neutron.db')\n"
            "head.get_metadata().create_all(engine)\n"
        )
        self._schema(
            "neutron",
            d / "neutron.db",
            lambda: _run([self.python(), "-c", code], "create the Neutron schema"),
        )

    # ------------------------------------------------------------------ octavia + cinder

    @property
    def octavia_url(self) -> str:
        return f"http://127.0.0.1:{self.octavia_port}"

    @property
    def cinder_url(self) -> str:
        return f"http://127.0.0.1:{self.cinder_port}"

    def start_octavia_cinder(self, *, cinder: bool = True, neutron_vips: bool = False) -> None:
        """Add Octavia (load-balancer) and Cinder (block-storage; ``cinder=False``: Octavia
        only) to the running stack: their service users and endpoints in Keystone,
        configuration, schema, one process each. ``neutron_vips``: VIP ports in the real
        Neutron (the module docstring). Idempotent."""
        if self.octavia_port:
            return
        self.octavia_port = free_port()
        octavia_password = self._register_service("octavia", "load-balancer", self.octavia_url)
        octavia_conf = self._setup_octavia(octavia_password, neutron_vips=neutron_vips)
        env = {"OCTAVIA_CONFIG_FILE": str(octavia_conf)}
        if neutron_vips:
            env["OCTAVIA_WORKER_NETWORK_DRIVER"] = "network_noop_driver"
        self._serve("octavia", self.octavia_port, env)
        octavia = self.processes[-1]
        if cinder:
            self._serve_cinder()
        # Octavia and Cinder answer once their workers run (the scripts serve after that).
        self._wait("octavia", f"{self.octavia_url}/", process=octavia, timeout=300)
        if cinder:
            self._wait("cinder", f"{self.cinder_url}/", process=self.processes[-1], timeout=300)

    def start_cinder(self) -> None:
        """Add Cinder alone (block-storage, as :meth:`start_octavia_cinder` does). Idempotent."""
        if self.cinder_port:
            return
        self._serve_cinder()
        self._wait("cinder", f"{self.cinder_url}/", process=self.processes[-1], timeout=300)

    def _serve_cinder(self) -> None:
        self.cinder_port = free_port()
        cinder_password = self._register_service(
            "cinder", "block-storage", f"{self.cinder_url}/v3/%(project_id)s"
        )
        cinder_conf = self._setup_cinder(cinder_password)
        self._serve("cinder", self.cinder_port, {"CINDER_CONFIG_FILE": str(cinder_conf)})

    def _setup_octavia(self, password: str, *, neutron_vips: bool) -> Path:
        d = self.state_dir / "octavia"
        (d / "lock").mkdir(parents=True)
        # engine = serial: the default parallel engine runs a cascade delete's pool and
        # listener tasks in threads of their own, and two SQLite writers of one process fail
        # at once with "database is locked" (a load balancer with listeners, deleted by
        # OCCM, stayed PENDING_DELETE; tests/cloud/test_plane_occm.py).
        # The amphora flows sign a (never used) amphora certificate with a CA: a throwaway
        # one, its key encrypted (Octavia refuses an unencrypted CA key with a passphrase).
        passphrase = secrets.token_urlsafe(16)
        conf = d / "octavia.conf"
        conf.write_text(
            f"""[DEFAULT]
transport_url = fake://
use_stderr = true
host = octavia-local
[api_settings]
auth_strategy = keystone
bind_host = 127.0.0.1
enabled_provider_drivers = amphora:Amphora driver on noop compute network and amphora drivers
default_provider_driver = amphora
[database]
connection = sqlite:///{d}/octavia.db
[controller_worker]
amphora_driver = amphora_noop_driver
compute_driver = compute_noop_driver
network_driver = {"allowed_address_pairs_driver" if neutron_vips else "network_noop_driver"}
volume_driver = volume_noop_driver
image_driver = image_noop_driver
loadbalancer_topology = SINGLE
amp_image_tag = amphora
amp_flavor_id = 1
amp_boot_network_list = 00000000-0000-0000-0000-000000000001
amp_secgroup_list = 00000000-0000-0000-0000-000000000002
client_ca = {d}/ca.pem
[task_flow]
jobboard_enabled = false
engine = serial
[certificates]
cert_manager = noop_cert_manager
ca_certificate = {d}/ca.pem
ca_private_key = {d}/ca.key
ca_private_key_passphrase = {passphrase}
server_certs_key_passphrase = {secrets.token_hex(16)}
[health_manager]
heartbeat_key = {secrets.token_hex(16)}
[oslo_messaging_notifications]
driver = noop
[oslo_concurrency]
lock_path = {d}/lock
{self._authtoken("octavia", password)}{self._octavia_neutron(password) if neutron_vips else ""}"""
        )
        _run(
            [self.python(), str(WSGI_SCRIPT), "octavia-prepare", str(conf)],
            "create the Octavia schema and CA",
            env={**self._env(), "OCTAVIA_CA_PASSPHRASE": passphrase},
        )
        return conf

    def _octavia_neutron(self, password: str) -> str:
        """How Octavia's Neutron driver reaches Neutron: as the octavia service user
        ([service_auth], admin in ``service``: it creates the VIP port in the user's project),
        Neutron's URL given (its catalog entry says the same)."""
        return f"""{self._authtoken("octavia", password, "service_auth")}[neutron]
endpoint_override = {self.neutron_url}
region_name = {REGION}
"""

    def _setup_cinder(self, password: str) -> Path:
        d = self.state_dir / "cinder"
        (d / "lock").mkdir(parents=True)
        paste = self.venv / "etc" / "cinder" / "api-paste.ini"
        # the filters a deployment ships in /etc/cinder: without the file Cinder refuses
        # every list filter, and Cinder CSI's CreateVolume looks its volume up by name
        # (400 "Invalid filters name are found in query options"; test_plane_openstack_cinder_csi)
        filters = self.venv / "etc" / "cinder" / "resource_filters.json"
        conf = d / "cinder.conf"
        conf.write_text(
            f"""[DEFAULT]
transport_url = fake://
resource_query_filters_file = {filters}
use_stderr = true
auth_strategy = keystone
api_paste_config = {paste}
state_path = {d}
enabled_backends = test
default_volume_type = __DEFAULT__
host = cinder-local
[database]
connection = sqlite:///{d}/cinder.db
[oslo_concurrency]
lock_path = {d}/lock
[oslo_messaging_notifications]
driver = noop
[coordination]
backend_url = file://{d}/coordination
[test]
volume_driver = cinder.tests.fake_driver.FakeLoggingVolumeDriver
volume_backend_name = test
{self._authtoken("cinder", password)}"""
        )
        manage = [self.python(), "-c", "from cinder.cmd.manage import main; main()"]
        self._schema(
            "cinder",
            d / "cinder.db",
            lambda: _run(
                [*manage, "--config-file", str(conf), "db", "sync"],
                "cinder-manage db sync",
                env=self._env(),
            ),
        )
        return conf

    # ------------------------------------------------------------------ nova

    @property
    def nova_url(self) -> str:
        return f"http://127.0.0.1:{self.nova_port}"

    def start_nova(self, *, compute: bool = False) -> None:
        """Add Nova (compute) to the running stack: its service user and endpoint,
        configuration, the API, cell0 and cell1 databases as a deployment makes them
        (``nova-manage api_db sync``, ``cell_v2 map_cell0``, ``db sync``, ``cell_v2
        create_cell``), one process.

        Without ``compute`` only the API runs: it answers what CAPO's OpenStackCluster
        reconcile asks of it (the API version document, the availability zones) and accepts
        a server that then never leaves BUILD (nothing takes the RPC cast).

        ``compute=True``: servers boot. Placement runs (:meth:`start_placement`), and the
        Nova process also runs the REAL conductor, scheduler and compute services over
        ``fake://`` RPC (tests/support/openstack_wsgi.py). The compute service runs Nova's own
        ``fake.FakeDriver`` virt driver: a server goes BUILD -> ACTIVE -> deleted through
        the real API, scheduler (filters, placement allocations, server groups), conductor
        and compute manager (Neutron port binding, Glance image metadata), but no VM starts.
        Neutron gets a mechanism driver that binds ports (:meth:`_bind_ports`). Idempotent."""
        if self.nova_port:
            if compute and not self.placement_port:
                raise StackError("Nova already runs without compute: start it with compute first")
            return
        if compute:
            self.start_placement()
            self._bind_ports()
        self.nova_port = free_port()
        password = self._register_service("nova", "compute", f"{self.nova_url}/v2.1")
        d = self.state_dir / "nova"
        (d / "lock").mkdir(parents=True)
        shutil.copy(self.venv / "etc" / "nova" / "api-paste.ini", d / "api-paste.ini")
        conf = d / "nova.conf"
        if compute:
            # host: the compute host's name, which Neutron's port binding sees (binding:host_id,
            # :meth:`_bind_ports`).
            services = f"""compute_driver = fake.FakeDriver
host = {self.COMPUTE_HOST}
{self._authtoken("nova", password, "placement")}
{self._authtoken("nova", password, "neutron")}
"""
        else:
            services = "host = nova-local\n"
        conf.write_text(
            f"""[DEFAULT]
transport_url = fake://
use_stderr = true
state_path = {d}
enabled_apis = osapi_compute
{services}[api]
auth_strategy = keystone
[api_database]
connection = sqlite:///{d}/nova_api.db
[database]
connection = sqlite:///{d}/nova.db
[oslo_concurrency]
lock_path = {d}/lock
[oslo_messaging_notifications]
driver = noop
{self._authtoken("nova", password)}"""
        )
        manage = [self.python(), "-c", "from nova.cmd.manage import main; main()"]
        base = [*manage, "--config-file", str(conf)]
        for args, what in (
            (["api_db", "sync"], "nova-manage api_db sync"),
            (
                ["cell_v2", "map_cell0", f"--database_connection=sqlite:///{d}/nova_cell0.db"],
                "nova-manage cell_v2 map_cell0",
            ),
            (["db", "sync"], "nova-manage db sync"),
            (["cell_v2", "create_cell", "--name", "cell1"], "nova-manage cell_v2 create_cell"),
        ):
            _run([*base, *args], what, env=self._env())
        env = {"OS_NOVA_CONFIG_DIR": str(d), "OS_NOVA_CONFIG_FILES": "api-paste.ini;nova.conf"}
        if compute:
            env["NOVA_SERVICES"] = "conductor,scheduler,compute"
        self._serve("nova", self.nova_port, env)
        self._wait("nova", f"{self.nova_url}/", timeout=300)
        if compute:
            self._discover_compute_host(base)

    def _discover_compute_host(self, manage: list[str], timeout: float = 120) -> None:
        """Map the compute host into cell1 once its service record exists, as a deployment
        does after adding a host (``nova-manage cell_v2 discover_hosts``); until then the
        scheduler finds the host in Placement and the conductor refuses it ("Host ... is not
        mapped to any cell")."""
        deadline = time.monotonic() + timeout
        while True:
            out = _run(
                [*manage, "cell_v2", "discover_hosts", "--verbose"],
                "nova-manage cell_v2 discover_hosts",
                env=self._env(),
            )
            if f"Creating host mapping for compute host '{self.COMPUTE_HOST}'" in out:
                return
            if time.monotonic() > deadline:
                raise StackError(
                    f"the compute host was not discovered within {timeout:.0f}s: {out}"
                )
            time.sleep(1)

    #: The compute host's name (Neutron's agent record of :meth:`_bind_ports` is on it).
    COMPUTE_HOST = "compute-local"

    def _bind_ports(self) -> None:
        """Neutron binds ports on the compute host, so Nova's compute manager can plug a
        server's port (it refuses a port whose binding failed): Neutron restarts with its
        REAL ``openvswitch`` mechanism driver, and the compute host gets the agent record an
        Open vSwitch agent registers on a cloud (a row in Neutron's ``agents`` table, with a
        heartbeat that never goes stale). No agent process runs: nothing here could run Open
        vSwitch, and the record is the only thing the driver asks of an agent when it binds.
        The database stays."""
        neutron = self._process("neutron")
        neutron.terminate()
        neutron.wait(timeout=30)
        self.processes.remove(neutron)
        ml2 = self.ndir / "ml2_conf.ini"
        ml2.write_text(
            ml2.read_text().replace("mechanism_drivers =\n", "mechanism_drivers = openvswitch\n")
        )
        self._register_agent(
            "Open vSwitch agent",
            "neutron-openvswitch-agent",
            {"tunnel_types": ["vxlan"], "bridge_mappings": {}, "integration_bridge": "br-int"},
        )
        self._serve_neutron()

    def _register_agent(self, agent_type: str, binary: str, configurations: dict[str, Any]) -> None:
        """The row an agent's first state report writes (neutron/db/agents_db.py), on
        :attr:`COMPUTE_HOST`; its heartbeat lies in 2100, so Neutron counts it alive."""
        import json
        import sqlite3
        import uuid

        now = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        with contextlib.closing(sqlite3.connect(self.ndir / "neutron.db")) as db, db:
            db.execute(
                "INSERT INTO agents (id, agent_type, binary, topic, host, admin_state_up,"
                " created_at, started_at, heartbeat_timestamp, configurations, load)"
                " VALUES (?, ?, ?, 'N/A', ?, 1, ?, ?, '2100-01-01 00:00:00', ?, 0)",
                (
                    str(uuid.uuid4()),
                    agent_type,
                    binary,
                    self.COMPUTE_HOST,
                    now,
                    now,
                    json.dumps(configurations),
                ),
            )

    # ------------------------------------------------------------------ placement

    @property
    def placement_url(self) -> str:
        return f"http://127.0.0.1:{self.placement_port}"

    def start_placement(self) -> None:
        """Add the REAL Placement API (placement) to the running stack: its service user and
        endpoint, configuration, schema by ``placement-manage db sync``, one process
        (Placement's own WSGI entry point, ``placement.wsgi.api``). Idempotent."""
        if self.placement_port:
            return
        self.placement_port = free_port()
        password = self._register_service("placement", "placement", self.placement_url)
        d = self.state_dir / "placement"
        (d / "lock").mkdir(parents=True)
        (d / "placement.conf").write_text(
            f"""[DEFAULT]
use_stderr = true
[api]
auth_strategy = keystone
[placement_database]
connection = sqlite:///{d}/placement.db
[oslo_concurrency]
lock_path = {d}/lock
{self._authtoken("placement", password)}"""
        )
        manage = [self.python(), "-c", "from placement.cmd.manage import main; main()"]
        self._schema(
            "placement",
            d / "placement.db",
            lambda: _run(
                [*manage, "--config-file", str(d / "placement.conf"), "db", "sync"],
                "placement-manage db sync",
                env=self._env(),
            ),
        )
        self._serve("placement", self.placement_port, {"OS_PLACEMENT_CONFIG_DIR": str(d)})
        self._wait("placement", f"{self.placement_url}/", timeout=120)

    # ------------------------------------------------------------------ glance

    @property
    def glance_url(self) -> str:
        return f"http://127.0.0.1:{self.glance_port}"

    def start_glance(self) -> None:
        """Add the REAL Glance API (image) to the running stack: its service user and
        endpoint, configuration, schema by ``glance-manage db sync`` (Glance's alembic
        migrations run on SQLite), one file store under the state directory, one process
        (Glance's own WSGI entry point, ``glance.common.wsgi_app.init_app``). Uploads
        (``PUT /v2/images/<id>/file``) are stored in the file store; the interoperable
        import methods would need a staging directory, which is configured but not used
        by the tests. Idempotent."""
        if self.glance_port:
            return
        self.glance_port = free_port()
        password = self._register_service("glance", "image", self.glance_url)
        d = self.state_dir / "glance"
        for sub in ("lock", "images", "staging", "tasks"):
            (d / sub).mkdir(parents=True)
        paste = self.venv / "etc" / "glance" / "glance-api-paste.ini"
        (d / "glance-api.conf").write_text(
            f"""[DEFAULT]
use_stderr = true
enabled_backends = local:file
[glance_store]
default_backend = local
[local]
filesystem_store_datadir = {d}/images
[os_glance_staging_store]
filesystem_store_datadir = {d}/staging
[os_glance_tasks_store]
filesystem_store_datadir = {d}/tasks
[database]
connection = sqlite:///{d}/glance.db
[paste_deploy]
flavor = keystone
config_file = {paste}
[oslo_concurrency]
lock_path = {d}/lock
[oslo_messaging_notifications]
driver = noop
{self._authtoken("glance", password)}"""
        )
        manage = [self.python(), "-c", "from glance.cmd.manage import main; main()"]
        self._schema(
            "glance",
            d / "glance.db",
            lambda: _run(
                [*manage, "--config-file", str(d / "glance-api.conf"), "db", "sync"],
                "glance-manage db sync",
                env=self._env(),
            ),
        )
        self._serve("glance", self.glance_port, {"OS_GLANCE_CONFIG_DIR": str(d)})
        self._wait("glance", f"{self.glance_url}/", timeout=300)

    # ------------------------------------------------------------------ processes

    @staticmethod
    def _env() -> dict[str, str]:
        env = dict(os.environ)
        for name in ("OS_CLOUD", "OS_CLIENT_CONFIG_FILE", "PYTHONPATH", "VIRTUAL_ENV"):
            env.pop(name, None)
        return env

    def _serve(self, service: str, port: int, extra_env: dict[str, str]) -> None:
        env = {**self._env(), **extra_env}
        argv = [self.python(), str(WSGI_SCRIPT), service, str(port)]
        process = spawn_service(argv, self.state_dir / f"{service}.log", env, self.state_dir)
        self.processes.append(process)

    def pid(self, service: str) -> int:
        """The process ID of ``service`` (``keystone``, ``neutron``, ...): also its process
        group's, each service runs in a session of its own (:func:`spawn_service`)."""
        return self._process(service).pid

    @contextlib.contextmanager
    def paused(self, service: str, *, now: bool = True) -> Iterator[int]:
        """``service`` frozen for the block (SIGSTOP to its process group; ``now=False``: the
        block stops it itself, e.g. a CLI run through tests/support/stop_during.py at a chosen
        moment) and resumed after it (SIGCONT) whatever happens, so the stack lives on for the
        modules sharing it. Yields the process group. A frozen service still accepts
        connections (the kernel's listen queue) and answers nothing: a hung server."""
        group = self.pid(service)
        try:
            if now:
                os.killpg(group, signal.SIGSTOP)
            yield group
        finally:
            os.killpg(group, signal.SIGCONT)

    def _process(self, service: str) -> subprocess.Popen[bytes]:
        """The running process of ``service`` (its command line names it, :meth:`_serve`)."""
        for process in self.processes:
            if process.poll() is None and list(process.args)[2] == service:  # type: ignore[arg-type]
                return process
        raise StackError(f"{service} is not running")

    def _wait(
        self,
        service: str,
        url: str,
        timeout: float = 120,
        process: subprocess.Popen[bytes] | None = None,
    ) -> None:
        process = process or self.processes[-1]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise StackError(
                    f"{service} exited with {process.returncode}: {self.log_tail(service)}"
                )
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status < 500:
                        return
            except urllib.error.HTTPError as error:
                if error.code < 500:
                    return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.3)
        raise StackError(
            f"{service} did not answer within {timeout:.0f}s: {self.log_tail(service)}"
        )

    def log_tail(self, service: str, lines: int = 20) -> str:
        path = self.state_dir / f"{service}.log"
        with contextlib.suppress(OSError):
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        return "(no log)"


def start_stack(state_dir: Path, log: Any = None) -> Stack:
    """Build (or reuse) the stack venv and start Keystone + Neutron with state in ``state_dir``."""
    venv = stack_venv(log)
    stack = Stack(state_dir=state_dir, venv=venv)
    atexit.register(stack.stop)  # also when the session ends without fixture teardown
    try:
        stack.start()
    except BaseException:
        stack.stop()
        raise
    return stack
