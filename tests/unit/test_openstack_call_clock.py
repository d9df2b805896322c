"""The wall clock of every OpenStack call after the login (issue #41, finding 3):
:func:`bound_requests` on a keystoneauth-shaped session, and the code that turns a failed
call into a result passing an abandoned one on. The CLI against a fault-injection Keystone:
tests/render/test_openstack_timeouts.py; against the real one: tests/cloud/."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from scs_templates._core.errors import ToolError
from scs_templates.providers.openstack import cleanup, leftovers
from scs_templates.providers.openstack.connection import (
    CallAbandoned,
    bound_requests,
    has_service,
    tool_error,
)

LIMIT = 0.3


class Transport:
    """requests.Session's ``request``: records, then blocks while ``stuck`` is set."""

    def __init__(self) -> None:
        self.stuck = threading.Event()
        self.released = threading.Event()

    def request(self, method: str, url: str, **kwargs: Any) -> str:
        if self.stuck.is_set():
            self.released.wait(10)
        return f"{method} {url} on {threading.current_thread().name}"


class Session:
    """keystoneauth's Session: a path and an endpoint, sent through ``self.session``; a
    request may make another one first (a re-authentication, a discovery)."""

    def __init__(self) -> None:
        self.session = Transport()
        self.threads: list[str] = []

    def request(self, url: str, method: str, **kwargs: Any) -> str:
        self.threads.append(threading.current_thread().name)
        if kwargs.get("nested"):
            self.request("/v3", "GET")
        return str(self.session.request(method, f"http://cloud:5000{url}?name=x"))


@pytest.fixture
def session() -> Any:
    bounded = Session()
    bound_requests(bounded, LIMIT)
    yield bounded
    bounded.session.released.set()


def test_finding3_a_stuck_call_after_the_login_names_the_url_it_waited_for(
    session: Any,
) -> None:
    assert session.request("/v3/users", "GET").startswith("GET http://cloud:5000/v3/users")
    session.session.stuck.set()
    started = time.monotonic()
    with pytest.raises(CallAbandoned) as abandoned:
        session.request("/v3/users/u/application_credentials", "GET")
    assert time.monotonic() - started < LIMIT + 1
    assert str(abandoned.value) == (
        "GET http://cloud:5000/v3/users/u/application_credentials: no answer within "
        f"{LIMIT:g} s (--timeout); the call was abandoned"
    )  # the query (filters) is not part of the endpoint


def test_an_abandoned_call_names_the_cloud_it_was_made_for() -> None:
    """A command may talk to more than one cloud: the line says which, as the login's does."""
    named = Session()
    bound_requests(named, LIMIT, who="cloud 'prod'")
    named.session.stuck.set()
    try:
        with pytest.raises(CallAbandoned) as abandoned:
            named.request("/v3/projects", "GET")
    finally:
        named.session.released.set()
    assert str(abandoned.value).startswith("cloud 'prod': GET http://cloud:5000/v3/projects: ")


def test_finding3_after_an_abandoned_call_every_later_call_fails_at_once(session: Any) -> None:
    session.session.stuck.set()
    with pytest.raises(CallAbandoned) as first:
        session.request("/v3/projects", "GET")
    session.session.stuck.clear()  # the server would answer now: the connection is spent
    started = time.monotonic()
    with pytest.raises(CallAbandoned) as later:
        session.request("/v3/users", "GET")
    assert time.monotonic() - started < LIMIT / 2
    assert str(later.value) == str(first.value)


def test_a_request_made_inside_a_bounded_request_runs_in_its_thread(session: Any) -> None:
    """A re-authentication or discovery inside a call is bounded by the call's clock: no
    second thread (and no second clock that could outlast the first)."""
    session.request("/v3/users", "GET", nested=True)
    outer, inner = session.threads
    assert outer == inner == "openstack-call"


def test_an_abandoned_call_is_passed_on_not_turned_into_a_result() -> None:
    abandoned = CallAbandoned("GET http://cloud:9696/v2.0/ports: no answer within 3 s")
    assert tool_error("listing ports", abandoned) is abandoned
    with pytest.raises(CallAbandoned):
        leftovers._already_gone(abandoned)
    assert leftovers._already_gone(ToolError("HTTP 409")) is False

    def delete(resource_id: str) -> None:
        raise abandoned

    with pytest.raises(CallAbandoned):
        cleanup._delete_with_retry(delete, "port-1", lambda seconds: None)

    class Conn:
        def has_service(self, service_type: str) -> bool:
            raise abandoned

    with pytest.raises(CallAbandoned):
        has_service(Conn(), "network")  # type: ignore[arg-type]
