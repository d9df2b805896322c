"""testenv.ports: a port given for a server stays ours until the server listens on it.

The kernel's choice of a connection's local port is narrowed to the one port under test
with ``IP_LOCAL_PORT_RANGE`` (Linux 6.3+), so whether the kernel would hand it out is asked
directly instead of hoped for among 28,000 ports."""

from __future__ import annotations

import errno
import socket
import struct
from collections.abc import Iterator

import pytest

from testenv.ports import free_port
from tests.support import skip_or_fail

#: ``IP_LOCAL_PORT_RANGE`` of linux/in.h: the local ports a socket may be given, lo | hi << 16.
IP_LOCAL_PORT_RANGE = 51


@pytest.fixture
def listener() -> Iterator[tuple[str, int]]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()


def only_port(sock: socket.socket, port: int) -> None:
    """Let the kernel give ``sock`` no local port but ``port``."""
    try:
        sock.setsockopt(socket.IPPROTO_IP, IP_LOCAL_PORT_RANGE, struct.pack("I", port | port << 16))
    except OSError as error:
        skip_or_fail(f"IP_LOCAL_PORT_RANGE (Linux 6.3+) is not supported here: {error}")


def test_a_closed_free_port_is_what_a_connection_takes(listener: tuple[str, int]) -> None:
    """Why a port is held: one found free and closed (what free_port did) is the kernel's to
    hand to the next outgoing connection (this check shows the narrowing works)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with socket.socket() as client:
        only_port(client, port)
        client.connect(listener)
        assert client.getsockname()[1] == port


def test_no_connection_and_no_other_bind_takes_a_port_given(listener: tuple[str, int]) -> None:
    port = free_port()
    with socket.socket() as client:
        only_port(client, port)
        with pytest.raises(OSError) as refused:
            client.connect(listener)
        assert refused.value.errno == errno.EADDRNOTAVAIL
    for reuse in (False, True):
        with socket.socket() as other:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, reuse)
            only_port(other, port)
            with pytest.raises(OSError) as taken:
                other.bind(("127.0.0.1", 0))
            assert taken.value.errno == errno.EADDRINUSE


# 0.0.0.0: every interface, as a manager binds its --webhook-port
@pytest.mark.parametrize("address", ["127.0.0.1", "0.0.0.0"])
def test_a_server_binding_with_so_reuseaddr_listens_on_a_port_given(address: str) -> None:
    """As every Go server binds (and Swift's, and wsgiref's): SO_REUSEADDR, then listen."""
    port = free_port()
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((address, port))
        server.listen()
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            accepted, _ = server.accept()
            accepted.close()


def test_each_port_given_is_another() -> None:
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50
