"""Serve Keystone, Neutron, Octavia, Cinder, Nova, Placement or the Glance API with the stdlib
wsgiref server (ONE request at a time).

Run by tests/support/openstack_stack.py with the python of the separate test-stack virtualenv:

    python openstack_wsgi.py keystone|neutron|octavia|cinder|nova|placement|glance PORT
    python openstack_wsgi.py octavia-prepare OCTAVIA_CONF    (CA passphrase: OCTAVIA_CA_PASSPHRASE)

The configuration comes from the environment (OS_KEYSTONE_CONFIG_DIR, OS_NEUTRON_CONFIG_DIR,
OS_NEUTRON_CONFIG_FILES, OCTAVIA_CONFIG_FILE, CINDER_CONFIG_FILE, OS_GLANCE_CONFIG_DIR).
Single-threaded on purpose: SQLite answers concurrent writers with "database is locked".

Octavia, Cinder and (with ``NOVA_SERVICES``) Nova also run their workers IN this process:
Octavia's controller worker (the v2 RPC consumer), Cinder's scheduler and volume manager,
Nova's conductor, scheduler and compute (:func:`_nova_services`). Their RPC goes over
oslo.messaging's ``fake://`` transport, which only connects one process (there is no
message broker here); the services themselves are the real ones. With
``OCTAVIA_WORKER_NETWORK_DRIVER`` set, the worker's network tasks use that driver while the
API uses the configured one (:func:`_worker_network_driver`; tests/support/openstack_stack.py says
why).
Keystone is served behind :func:`audited`, an observer (not a double: every request goes to
the real Keystone unchanged) that appends one JSON line per token issued and per application
credential deleted to ``$KEYSTONE_AUDIT_FILE``: which credential authenticated, with which
User-Agent, and the answer's status. That is how a test sees that CAPO authenticates with a
rotated credential, and that the old one was deleted only afterwards. Never a secret.

This file must not import anything from the project.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def load_app(service: str) -> Any:
    # The apps parse sys.argv through oslo.config: leave only the program name (+ config).
    sys.argv = [sys.argv[0]]
    if service == "keystone":
        from keystone.server import wsgi

        app = wsgi.initialize_public_application()
        audit = os.environ.get("KEYSTONE_AUDIT_FILE")
        return audited(app, audit) if audit else app
    if service == "neutron":
        from neutron.wsgi import api

        return api.application
    if service == "octavia":
        return _octavia()
    if service == "cinder":
        return _cinder()
    if service == "nova":
        # as nova's own WSGI entry point (OS_NOVA_CONFIG_DIR, OS_NOVA_CONFIG_FILES): it
        # monkey-patches first, sets up the service record, loads the paste pipeline
        services = os.environ.get("NOVA_SERVICES")
        if services:
            _sqlite_immediate_transactions()
        from nova.wsgi import osapi_compute

        if services:
            _nova_services(services.split(","))
        return osapi_compute.application
    if service == "placement":
        # Placement's own WSGI entry point: placement.conf in OS_PLACEMENT_CONFIG_DIR
        from placement.wsgi import api as placement_api

        return placement_api.application
    if service == "glance":
        # Glance's own WSGI entry point: reads glance-api.conf in OS_GLANCE_CONFIG_DIR,
        # creates the stores, loads the paste pipeline ([paste_deploy] flavor keystone)
        from glance.common import wsgi_app

        return wsgi_app.init_app()
    raise SystemExit(f"unknown service {service!r}")


def audited(app: Any, path: str) -> Any:
    """Keystone, with a JSON line per ``POST /v3/auth/tokens`` (the application credential's
    ID or name, or the method) and per application credential ``DELETE`` in ``path``."""
    import io
    import json
    import re
    import time

    deleted = re.compile(r"^/v3/users/[^/]+/application_credentials/([^/]+)$")
    sequence = [0]

    def record(entry: dict[str, Any]) -> None:
        sequence[0] += 1
        entry = {"seq": sequence[0], "time": time.time(), **entry}
        with open(path, "a") as out:
            out.write(json.dumps(entry, sort_keys=True) + "\n")

    def observed(environ: dict[str, Any], start_response: Any) -> Any:
        method, route = environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", "")
        entry: dict[str, Any] | None = None
        if method == "POST" and route.rstrip("/") == "/v3/auth/tokens":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            entry = {"event": "token", "agent": environ.get("HTTP_USER_AGENT", "")}
            try:
                identity = json.loads(body)["auth"]["identity"]
                entry["methods"] = list(identity.get("methods") or [])
                credential = identity.get("application_credential") or {}
                entry["credential"] = credential.get("id") or credential.get("name") or ""
            except (ValueError, KeyError, TypeError, AttributeError):
                entry["methods"] = []
        elif method == "DELETE" and (match := deleted.match(route)):
            entry = {"event": "delete-credential", "credential": match.group(1)}
        if entry is None:
            return app(environ, start_response)

        def respond(status: str, headers: Any, *args: Any) -> Any:
            assert entry is not None
            entry["status"] = int(status.split()[0])
            record(entry)
            return start_response(status, headers, *args)

        return app(environ, respond)

    return observed


def _octavia() -> Any:
    from octavia.api import app as api_app
    from octavia.controller.queue.v2 import consumer
    from oslo_config import cfg

    sys.argv += ["--config-file", os.environ["OCTAVIA_CONFIG_FILE"]]
    app = api_app.setup_app(argv=sys.argv)
    # SQLite/NullPool refuses pool_timeout (Octavia's own functional tests unset it too).
    cfg.CONF.set_override("pool_timeout", None, group="database")
    worker_network = os.environ.get("OCTAVIA_WORKER_NETWORK_DRIVER")
    if worker_network:
        _worker_network_driver(worker_network)
    worker = consumer.ConsumerService(0, cfg.CONF)
    worker.run()  # starts the RPC server's thread and returns
    return app


def _worker_network_driver(name: str) -> None:
    """The controller worker's network driver where it differs from the API's (a separate
    worker process with its own ``[controller_worker] network_driver`` on a cloud; one
    process here, see the module docstring). The worker reaches its network driver only
    through ``BaseNetworkTask.network_driver`` (Octavia 19.0.0's controller/worker/v2; the
    API's provider driver and validation call ``utils.get_network_driver()``)."""
    from octavia.controller.worker.v2.tasks import network_tasks
    from stevedore import driver

    loaded = driver.DriverManager(
        namespace="octavia.network.drivers", name=name, invoke_on_load=True
    ).driver
    network_tasks.BaseNetworkTask.network_driver = property(lambda _task: loaded)


def _sqlite_immediate_transactions() -> None:
    """Every SQLite transaction of this process takes the write lock when it begins
    (``BEGIN IMMEDIATE``; SQLAlchemy's documented recipe for pysqlite). Nova's services
    run as threads of one process here, and Nova reads before it writes in one transaction
    (``update_on_match``: SELECT, then UPDATE). Two such deferred transactions deadlock on
    SQLite's lock upgrade, and SQLite fails one of them at once with "database is locked"
    (a server build failed so); with the lock taken at BEGIN the second one waits."""
    import sqlite3

    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    @event.listens_for(Engine, "connect")
    def _no_implicit_begin(connection: Any, _record: Any) -> None:
        if isinstance(connection, sqlite3.Connection):
            connection.isolation_level = None

    # oslo.db emits its own (deferred) BEGIN unless the connection is marked as in a
    # transaction (oslo_db/sqlalchemy/engines.py); this class-level listener runs before
    # oslo.db's engine-level one, begins first and sets that mark.
    @event.listens_for(Engine, "begin")
    def _begin_immediate(connection: Any) -> None:
        if connection.dialect.name == "sqlite" and "in_transaction" not in connection.info:
            connection.exec_driver_sql("BEGIN IMMEDIATE")
            connection.info["in_transaction"] = True


def _nova_services(names: list[str]) -> None:
    """Nova's conductor, scheduler and compute services, started in this process after the
    API has parsed the configuration, as nova/cmd/{conductor,scheduler,compute}.py create
    them. Unlike nova-compute on a cloud, the compute service keeps direct database access
    (nova/cmd/compute.py turns it off and sends object calls to the conductor over RPC; in
    one process that would turn it off for the API too)."""
    import os_vif
    from nova import objects, service
    from nova.compute import rpcapi as compute_rpcapi
    from nova.scheduler import rpcapi as scheduler_rpcapi

    objects.register_all()
    os_vif.initialize()
    topics = {
        "conductor": {"topic": "conductor"},
        "scheduler": {"topic": scheduler_rpcapi.RPC_TOPIC},
        "compute": {"topic": compute_rpcapi.RPC_TOPIC, "topic_alt": compute_rpcapi.RPC_TOPIC_ALT},
    }
    for name in names:
        server = service.Service.create(binary=f"nova-{name}", **topics[name])
        server.start()


def _cinder() -> Any:
    from cinder import monkey_patch

    monkey_patch.patch()  # as cinder's own commands do, before anything else of cinder
    from cinder import service
    from cinder.wsgi import wsgi as cinder_wsgi

    sys.argv += ["--config-file", os.environ["CINDER_CONFIG_FILE"]]
    app = cinder_wsgi.initialize_application()
    scheduler = service.Service.create(host="cinder-local", binary="cinder-scheduler")
    scheduler.start()
    volume = service.Service.create(
        host="cinder-local@test", binary="cinder-volume", service_name="test", coordination=True
    )
    volume.start()
    return app


def prepare_octavia(conf: str, passphrase: str) -> None:
    """Octavia's schema as its functional tests create it (octavia-db-manage fails on
    SQLite) and a throwaway CA for the amphora certificates the noop flows still sign."""
    import datetime
    import re

    import sqlalchemy
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
    from octavia.common import constants
    from octavia.db import base_models, models
    from sqlalchemy import orm

    with open(conf) as config:
        text = config.read()
    url = re.search(r"^connection = (.+)$", text, re.M).group(1)  # type: ignore[union-attr]
    engine = sqlalchemy.create_engine(url)
    base_models.BASE.metadata.create_all(engine)
    seeds = [
        (constants.SUPPORTED_PROVISIONING_STATUSES, models.ProvisioningStatus),
        (constants.SUPPORTED_HEALTH_MONITOR_TYPES, models.HealthMonitorType),
        (constants.SUPPORTED_LB_ALGORITHMS, models.Algorithm),
        (constants.SUPPORTED_PROTOCOLS, models.Protocol),
        (constants.SUPPORTED_OPERATING_STATUSES, models.OperatingStatus),
        (constants.SUPPORTED_SP_TYPES, models.SessionPersistenceType),
        (constants.SUPPORTED_AMPHORA_ROLES, models.AmphoraRoles),
        (constants.SUPPORTED_LB_TOPOLOGIES, models.LBTopology),
        (constants.SUPPORTED_VRRP_AUTH, models.VRRPAuthMethod),
        (constants.SUPPORTED_L7RULE_TYPES, models.L7RuleType),
        (constants.SUPPORTED_L7RULE_COMPARE_TYPES, models.L7RuleCompareType),
        (constants.SUPPORTED_L7POLICY_ACTIONS, models.L7PolicyAction),
        (constants.SUPPORTED_CLIENT_AUTH_MODES, models.ClientAuthenticationMode),
    ]
    with orm.Session(engine) as session, session.begin():
        for names, model in seeds:
            session.add_all(model(name=name) for name in names)

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "octavia-test-ca")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory = os.path.dirname(conf)
    with open(os.path.join(directory, "ca.pem"), "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    encryption = serialization.BestAvailableEncryption(passphrase.encode())
    fd = os.open(os.path.join(directory, "ca.key"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
            )
        )


def main() -> None:
    service = sys.argv[1]
    if service == "octavia-prepare":
        prepare_octavia(sys.argv[2], os.environ["OCTAVIA_CA_PASSPHRASE"])
        return
    port = int(sys.argv[2])
    app = load_app(service)
    # Imported after the app: Cinder monkey-patches the standard library first.
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    class QuietHandler(WSGIRequestHandler):
        """One short access-log line per request on stderr (the launcher sends it to a file)."""

        def log_message(self, format: str, *args: object) -> None:
            sys.stderr.write(f"{self.log_date_time_string()} {format % args}\n")

    server: WSGIServer = make_server("127.0.0.1", port, app, handler_class=QuietHandler)
    print(f"serving {service} on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
