"""Loopback TCP ports for the servers the test environment starts, held until the process ends.

A port found by binding to port 0 and closing the socket is free at that moment only. The
kernel hands out ports of the same range (``ip_local_port_range``) as the local port of every
outgoing connection, and a full run makes thousands of them while planes start. The shared
plane's start lost a manager so: its webhook port was chosen, the CRDs were installed, and by
the time the manager bound the port a connection held it (``listen tcp :40003: bind: address
already in use``).

So each port :func:`free_port` gives stays bound by a socket of this process, with
``SO_REUSEADDR`` and never listening, until the process ends. The kernel gives such a port to
no outgoing connection and to no other ``bind`` to port 0, of this process or another. A
server that binds with ``SO_REUSEADDR`` binds and listens on it: every Go server does (etcd,
the API servers, the Cluster API managers, Flux, the registry), and so do Swift's servers
(eventlet) and the OpenStack services (wsgiref, tests/support/openstack_wsgi.py). A server
without ``SO_REUSEADDR`` cannot, so it must not be given one of these ports. The sockets are
not inheritable (PEP 446): no child process holds them.
"""

from __future__ import annotations

import socket

#: The sockets that hold the ports given (appending to a list is atomic: threads may call).
_HELD: list[socket.socket] = []


def free_port() -> int:
    """A loopback port held for this process (see the module) for a server to listen on."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
    except OSError:
        sock.close()
        raise
    _HELD.append(sock)
    return int(sock.getsockname()[1])
