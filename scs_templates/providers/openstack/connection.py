"""Connecting to the user's cloud, turning SDK failures into our errors, and :class:`Secret`.

openstacksdk is imported inside the functions: importing this module stays cheap and works
without it. Error messages never contain credentials: they are built from our own words, the
HTTP status and the service's message, and pass through :func:`redact` for every secret known
at that point.
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from scs_templates._core import secrets as secret_text
from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.timeouts import abandonable, inside_abandonable, tool_timeout

if TYPE_CHECKING:
    from openstack.connection import Connection

REDACTED = "**redacted**"
T = TypeVar("T")
#: Seconds one OpenStack call may take unless ``--timeout``/``SCS_TEMPLATES_TIMEOUT`` says
#: otherwise (:func:`scs_templates._core.timeouts.tool_timeout`).
CALL_TIMEOUT_SECONDS = 120.0
#: The socket timeouts of a connection are this much longer than its wall clock: the wall
#: clock (:func:`bounded`) ends a call and names it; the socket timeout a moment later only
#: frees what the abandoned thread still holds. Were they equal, whichever fired first would
#: decide, and openstacksdk swallows a timeout of its version discovery and tries again.
SOCKET_GRACE_SECONDS = 1.0


class CallAbandoned(ToolError):
    """An OpenStack call got no answer within ``--timeout`` and was abandoned (exit 1).

    It ends the command: code that turns a failed call into a result and goes on (a
    preflight check, a cleanup item) passes it on, and every later call of the same
    connection raises it at once (the abandoned thread may still hold keystoneauth's lock
    or the connection's socket)."""


class Secret:
    """A credential value that never shows itself in ``repr``, ``str``, f-strings or logs.

    Call :meth:`reveal` at the one place that must write the value (the Secret's content, an
    authentication request).
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError("Secret wraps a str")
        self._value = value

    def reveal(self) -> str:
        """The wrapped value. Do not print or log it."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    def __str__(self) -> str:
        return REDACTED

    def __format__(self, spec: str) -> str:
        return REDACTED

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self) -> Any:
        raise TypeError("a Secret is not pickled")


def redact(text: str, secrets: Iterable[Secret | str | None]) -> str:
    """Replace every form of every secret value in ``text``
    (:func:`scs_templates._core.secrets.redact`:
    raw, JSON-escaped, shell-quoted, URL-encoded, URL userinfo, registered secrets)."""

    values = [s.reveal() if isinstance(s, Secret) else s for s in secrets]
    return secret_text.redact(text, values).replace(secret_text.REDACTED, REDACTED)


@dataclass(frozen=True)
class CloudAccess:
    """Where and how to reach the cloud: what the per-cluster credentials need besides the ID
    and secret, taken from the user's clouds.yaml entry."""

    auth_url: str
    region_name: str | None
    interface: str
    verify: bool | str
    """True, False (insecure) or the path of a CA bundle."""
    cacert_file: str | None
    user_id: str
    project_id: str


def open_cloud(cloud: str) -> Connection:
    """Connect to ``cloud`` from clouds.yaml (OS_CLIENT_CONFIG_FILE and the usual places)
    and authenticate once, so a wrong entry or credential fails here with a clear message.
    The login and every later call of the connection are bounded by the wall clock
    (:func:`bounded`, :func:`bound_requests`).

    Raises InputError (exit 2) when the entry does not exist or is incomplete, ToolError
    (exit 1) when the cloud refuses the login or cannot be reached.
    """
    import openstack  # deferred: openstack
    from openstack.config import exceptions as config_exceptions  # deferred: openstack

    limit = tool_timeout(CALL_TIMEOUT_SECONDS)
    try:  # api_timeout: the connect and read timeouts of every request of this connection
        conn = openstack.connect(cloud=cloud, api_timeout=limit + SOCKET_GRACE_SECONDS)
        _register_auth_secrets(conn)
    except config_exceptions.OpenStackConfigException as error:
        raise InputError(
            f"cloud {cloud!r}: {_first_line(str(error))} (clouds.yaml is found through "
            "OS_CLIENT_CONFIG_FILE, ./clouds.yaml, ~/.config/openstack/clouds.yaml, "
            "/etc/openstack/clouds.yaml; pick another entry with --os-cloud)"
        ) from None
    except Exception as error:
        raise tool_error(f"cloud {cloud!r}: cannot read its configuration", error) from None
    endpoint = str((conn.config.get_auth_args() or {}).get("auth_url") or f"cloud {cloud!r}")
    _quiet_discovery_warning()
    bound_requests(conn.session, limit, who=f"cloud {cloud!r}")
    try:
        bounded(conn.authorize, what=f"cloud {cloud!r}: login at {endpoint}", limit=limit)
    except ToolError:
        raise
    except Exception as error:
        raise tool_error(f"cloud {cloud!r}: login at {endpoint} failed", error) from None
    return conn


def _quiet_discovery_warning() -> None:
    """keystoneauth warns when identity discovery fails, then the login fails: the one error
    line says it already (``--debug`` keeps the warning)."""

    if not logging.getLogger("scs_templates").isEnabledFor(logging.DEBUG):
        logging.getLogger("keystoneauth.identity.generic.base").setLevel(logging.ERROR)


def bounded(call: Callable[[], T], *, what: str | Callable[[], str], limit: float) -> T:
    """``call()``, abandoned after ``limit`` seconds with :class:`CallAbandoned` (exit 1)
    naming ``what`` (or what ``what()`` says then: the endpoint it was waiting for).

    keystoneauth can block for ever without any network wait: behind an authenticating
    proxy (``GET /v3`` answers 401) it re-authenticates inside its discovery and takes its
    own non-reentrant lock a second time (issue #41). And a server that sends a byte now and
    then never trips a socket's read timeout. No socket timeout ends either, so the call
    runs where it can be abandoned (:func:`~scs_templates._core.timeouts.abandonable`).
    """

    def abandoned() -> CallAbandoned:
        where = what() if callable(what) else what
        return CallAbandoned(
            f"{where}: no answer within {limit:g} s (--timeout); the call was abandoned"
        )

    return abandonable(call, limit, abandoned, "openstack-call")


def bound_requests(session: Any, limit: float, *, who: str = "") -> None:
    """Put every request of the keystoneauth ``session`` (every SDK call of a connection:
    its proxies send through ``session.request``) under :func:`bounded`: a call after the
    login is abandoned after ``limit`` seconds too, whether its server never answers or
    trickles a byte a second (which a per-request read timeout never ends). The error names
    ``who`` (``cloud 'NAME'``, as the login's does: a command may talk to more than one
    cloud) and the last URL the call sent; after one abandoned call every later one raises
    at once."""

    request = session.request
    transport = session.session  # the requests.Session under keystoneauth
    send = transport.request
    sent: list[str] = []
    abandoned: list[str] = []

    def recording(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        parts = urlsplit(str(url))  # the endpoint and path; a query may hold filters only
        sent.append(f"{method} {urlunsplit((*parts[:3], '', ''))}")
        return send(method, url, *args, **kwargs)

    def bounded_request(url: str, method: str, *args: Any, **kwargs: Any) -> Any:
        if inside_abandonable():  # a login or discovery inside a call: its clock holds
            return request(url, method, *args, **kwargs)
        if abandoned:
            raise CallAbandoned(abandoned[0])
        first = len(sent)

        def where() -> str:
            call = sent[-1] if len(sent) > first else f"{method} {url}"
            return f"{who}: {call}" if who else call

        try:
            return bounded(lambda: request(url, method, *args, **kwargs), what=where, limit=limit)
        except CallAbandoned as error:
            abandoned.append(str(error))
            raise

    transport.request = recording
    session.request = bounded_request


_AUTH_SECRET_KEYS = ("password", "application_credential_secret", "token", "passcode")


def _register_auth_secrets(conn: Connection) -> None:
    """Every message from now on redacts this cloud's credential (see
    scs_templates._core.secrets)."""

    auth = conn.config.get_auth_args() or {}
    secret_text.register(*(str(auth[key]) for key in _AUTH_SECRET_KEYS if auth.get(key)))


def cloud_access(conn: Connection) -> CloudAccess:
    """Auth URL, region, interface and TLS settings of an open connection."""
    config = conn.config
    auth_args = config.get_auth_args()
    auth_url = str(auth_args.get("auth_url") or "")
    if not auth_url:
        raise InputError("the cloud entry has no auth_url")
    verify, _cert = config.get_requests_verify_args()
    cacert = config.config.get("cacert")
    return CloudAccess(
        auth_url=auth_url,
        region_name=config.get_region_name() or None,
        interface=str(config.get_interface() or "public"),
        verify=True if verify is None else verify,
        cacert_file=str(cacert) if cacert else None,
        user_id=str(conn.current_user_id),
        project_id=str(conn.current_project_id),
    )


def has_service(conn: Connection, service_type: str) -> bool:
    """True when the service catalog has an endpoint for ``service_type``."""
    try:
        return bool(conn.has_service(service_type))
    except CallAbandoned:
        raise
    except Exception:
        return False


def http_status(error: BaseException) -> int | None:
    """The HTTP status of an openstacksdk/keystoneauth error, if it has one."""
    for attribute in ("status_code", "http_status"):
        value = getattr(error, attribute, None)
        if isinstance(value, int):
            return value
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and every exception it wraps (cause, context, urllib3's ``reason``, an
    exception among ``args``), outermost first."""
    found: list[BaseException] = []
    pending = [error]
    while pending:
        current = pending.pop(0)
        if any(current is seen for seen in found):
            continue
        found.append(current)
        wrapped = [current.__cause__, current.__context__, getattr(current, "reason", None)]
        wrapped += list(getattr(current, "args", ()))
        pending += [item for item in wrapped if isinstance(item, BaseException)]
    return found


#: keystoneauth's ConnectFailure text: ``Unable to establish connection to URL: <requests'>``.
_CONNECT_URL = re.compile(r"Unable to establish connection to (\S+?):? ")


def unreachable_summary(error: BaseException) -> str | None:
    """``cannot reach URL: reason`` when ``error`` is a failed connection (refused, no such
    host, no answer in time, TLS), else None: keystoneauth's and requests' texts quote
    urllib3's pool and ``<urllib3.connection.HTTPConnection object at 0x...>`` reprs."""
    chain = _chain(error)
    names = {f"{type(item).__module__}.{type(item).__name__}" for item in chain}
    if not names & _CONNECTION_ERRORS:
        return None
    url = next((m.group(1) for m in map(_CONNECT_URL.search, map(str, chain)) if m), None)
    if url is None:
        request = next(
            (getattr(i, "request", None) for i in chain if getattr(i, "request", None)), None
        )
        url = getattr(request, "url", None)
    where = url or "the cloud"
    if names & _TIMEOUTS:
        return f"cannot reach {where}: no answer in time"
    reasons = [item.strerror for item in chain if isinstance(item, OSError) and item.strerror]
    if reasons:
        return f"cannot reach {where}: {reasons[-1]}"
    text = re.sub(r"<[^<>]*>: ", "", str(chain[-1]))
    return f"cannot reach {where}: {re.sub(r'HTTPS?ConnectionPool[(][^)]*[)]: ', '', text)}"


#: Connection failures (by module and class name: nothing is imported to recognise them).
_CONNECTION_ERRORS = frozenset(
    {
        "keystoneauth1.exceptions.connection.ConnectFailure",
        "keystoneauth1.exceptions.connection.ConnectTimeout",
        "keystoneauth1.exceptions.connection.SSLError",
        "keystoneauth1.exceptions.connection.UnknownConnectionError",
        "requests.exceptions.ConnectionError",
        "requests.exceptions.ConnectTimeout",
        "requests.exceptions.SSLError",
    }
)
_TIMEOUTS = frozenset(
    {
        "keystoneauth1.exceptions.connection.ConnectTimeout",
        "requests.exceptions.ConnectTimeout",
    }
)


def error_summary(error: BaseException, secrets: Iterable[Secret | str | None] = ()) -> str:
    """One line about an SDK error: HTTP status and the service's message, redacted; a
    failed connection as :func:`unreachable_summary` (the endpoint and why)."""
    unreachable = unreachable_summary(error)
    if unreachable is not None:
        return redact(unreachable, secrets)
    status = http_status(error)
    details = getattr(error, "details", None)
    message = str(details) if details else str(error)
    message = _first_line(message) or type(error).__name__
    text = f"HTTP {status}: {message}" if status else message
    return redact(text, secrets)


def tool_error(
    what: str, error: BaseException, secrets: Iterable[Secret | str | None] = ()
) -> ToolError:
    """A ToolError ``what: <summary>`` for an SDK failure; an abandoned call as it is (its
    line names the endpoint, and it must end the command)."""
    if isinstance(error, CallAbandoned):
        return error
    return ToolError(f"{what}: {error_summary(error, secrets)}")


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""
