"""Serve Keystone or Neutron with the stdlib wsgiref server (ONE request at a time).

Run by tests/openstack_stack.py with the python of the separate test-stack virtualenv:

    python openstack_wsgi.py keystone|neutron PORT

The configuration comes from the environment (OS_KEYSTONE_CONFIG_DIR, OS_NEUTRON_CONFIG_DIR,
OS_NEUTRON_CONFIG_FILES). Single-threaded on purpose: SQLite answers concurrent writers with
"database is locked". This file must not import anything from the project.
"""

from __future__ import annotations

import sys
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class QuietHandler(WSGIRequestHandler):
    """One short access-log line per request on stderr (the launcher sends it to a file)."""

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"{self.log_date_time_string()} {format % args}\n")


def load_app(service: str) -> object:
    # Both apps parse sys.argv through oslo.config: leave only the program name.
    sys.argv = [sys.argv[0]]
    if service == "keystone":
        from keystone.server import wsgi

        return wsgi.initialize_public_application()
    if service == "neutron":
        from neutron.wsgi import api

        return api.application
    raise SystemExit(f"unknown service {service!r}")


def main() -> None:
    service, port = sys.argv[1], int(sys.argv[2])
    app = load_app(service)
    server: WSGIServer = make_server("127.0.0.1", port, app, handler_class=QuietHandler)  # type: ignore[arg-type]
    print(f"serving {service} on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
