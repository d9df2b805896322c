"""Per-cluster application credentials in Keystone: their names, creation, reuse and deletion.

Design (see docs/openstack.md):

- Each cluster gets a RESTRICTED application credential ``$PREFIX-$CLUSTER-appcred.$NAMESPACE``
  (``unrestricted=False``: it cannot create or delete application credentials, itself
  included), created with the user's own credential (the clouds.yaml entry: an unrestricted
  application credential or a password login). A leak affects one cluster only. The
  namespace is part of the name because Keystone names are unique per user, and one user's
  clusters of one name in two namespaces must not share (and replace) one credential.
  Credentials of earlier versions, named without the namespace (``$PREFIX-$CLUSTER-appcred``,
  :func:`legacy_generation_name`), are still the cluster's when the credentials Secret holds
  them or their description names the cluster: reused while they work, rotated to and
  deleted with the new names; another namespace's are left alone.
- Keystone shows a secret exactly once, at creation. We keep it in the cluster's credentials
  Secret on the management cluster. The caller passes the stored secret (or None) to
  :func:`ensure_app_credential`; an existing credential is REUSED when that secret still
  authenticates, otherwise (secret unknown, wrong, credential expired) it is deleted and
  created again.
- Deleting the cluster deletes the credential with the parent credential (a restricted one
  cannot delete itself).
- Optionally a second credential ``$PREFIX-$CLUSTER-appcred-workload.$NAMESPACE`` for the in-cluster
  cloud controller manager and Cinder CSI (``cloud.conf``), so the credential inside the
  workload cluster is not the one Cluster API uses.

Secrets travel as :class:`~.connection.Secret`; the creation request is
sent with keystoneauth's request logging switched off, because its response carries the secret.
What the credentials Secret holds (clouds.yaml, cloud.conf) is written and read back by
:mod:`scs_templates.providers.openstack.credentials_secret`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scs_templates._core.errors import ToolError
from scs_templates._core.naming import in_namespace, resource_name
from scs_templates._core.timeouts import tool_timeout
from scs_templates.providers.openstack.connection import (
    CALL_TIMEOUT_SECONDS,
    SOCKET_GRACE_SECONDS,
    CloudAccess,
    Secret,
    bound_requests,
    cloud_access,
    error_summary,
    http_status,
    tool_error,
)
from scs_templates.providers.openstack.credential_records import (
    AppCredential,
    ClusterCredentials,
    EnsuredCredential,
    KeptCredential,
)
from scs_templates.providers.openstack.credentials_secret import parse_credentials_secret
from scs_templates.providers.openstack.section import section
from scs_templates.providers.openstack.values import CLOUD_CONF_KEY, CLOUDS_YAML_KEY

if TYPE_CHECKING:
    from openstack.connection import Connection

    from scs_templates._settings.model import ClusterSettings

CLUSTER_SUFFIX = "appcred"
WORKLOAD_SUFFIX = "appcred-workload"
SUFFIXES = (CLUSTER_SUFFIX, WORKLOAD_SUFFIX)


def credential_names(settings: ClusterSettings) -> tuple[str, str | None]:
    """``($PREFIX-$CLUSTER-appcred.$NAMESPACE, $PREFIX-$CLUSTER-appcred-workload.$NAMESPACE or
    None)``: the names of the first generation (a rotation adds ``-2``, ``-3``, ... before
    the namespace: :func:`generation_name`)."""
    cluster = generation_name(settings, CLUSTER_SUFFIX, 1)
    workload = None
    if section(settings).application_credential.separate_workload:
        workload = generation_name(settings, WORKLOAD_SUFFIX, 1)
    return cluster, workload


def generation_name(settings: ClusterSettings, suffix: str, generation: int) -> str:
    """The name of generation ``generation`` of the cluster's credential of kind ``suffix``.

    Keystone keeps application credential names unique per user and never renames one, so a
    rotation, which needs the old and the new credential side by side, numbers them:
    ``$PREFIX-$CLUSTER-appcred.$NAMESPACE`` (generation 1),
    ``$PREFIX-$CLUSTER-appcred-2.$NAMESPACE``, ... (:func:`.naming.in_namespace`).
    """
    return in_namespace(
        legacy_generation_name(settings, suffix, generation), settings.metadata.namespace
    )


def legacy_generation_name(settings: ClusterSettings, suffix: str, generation: int) -> str:
    """The name earlier versions gave generation ``generation``: without the namespace
    (``$PREFIX-$CLUSTER-appcred``, ``...-appcred-2``); the same for two clusters of one name
    in two namespaces, so such a credential is the cluster's only by its ID in the Secret or
    its description (:func:`cluster_credentials_in_keystone`). Never given to a new one."""
    resource = suffix if generation <= 1 else f"{suffix}-{generation}"
    return resource_name(settings.spec.prefix, settings.metadata.name, resource)


@dataclass(frozen=True, order=True)
class KnownCredential:
    """One of the cluster's application credentials as Keystone lists it (no secret:
    Keystone shows a secret only once, at creation)."""

    generation: int
    name: str
    id: str


def _generation_of(
    settings: ClusterSettings, suffix: str, name: str, naming: Any = generation_name
) -> int | None:
    if name == naming(settings, suffix, 1):
        return 1
    head = (
        name.removesuffix(f".{settings.metadata.namespace}") if naming is generation_name else name
    )
    tail = head.rpartition("-")[2]
    if tail.isdigit() and naming(settings, suffix, int(tail)) == name:
        return int(tail) if int(tail) >= 2 else None
    return None


def describes(settings: ClusterSettings, description: str) -> bool:
    """The credential's description names this cluster (every credential scs-templates made
    says ``... of cluster $NAMESPACE/$CLUSTER ...``)."""
    return (
        f" of cluster {settings.metadata.namespace}/{settings.metadata.name} " in f"{description} "
    )


_DESCRIBED_CLUSTER = re.compile(r" of cluster ([^/\s]+/[^/\s]+) ")


def _own_credentials(conn: Connection) -> list[Any]:
    identity: Any = conn.identity
    try:
        return list(identity.application_credentials(user=conn.current_user_id))
    except Exception as error:
        raise tool_error("listing application credentials", error) from None


def _classify(
    settings: ClusterSettings, found: list[Any], held: frozenset[str]
) -> tuple[dict[str, list[KnownCredential]], list[KeptCredential]]:
    family: dict[str, list[KnownCredential]] = {CLUSTER_SUFFIX: [], WORKLOAD_SUFFIX: []}
    kept: list[KeptCredential] = []
    for item in found:
        name, ident = str(item.name), str(item.id)
        description = str(item.description or "")
        ours_if_legacy = ident in held or describes(settings, description)
        for suffix, members in family.items():
            generation = _generation_of(settings, suffix, name)
            if generation is None:
                generation = _generation_of(settings, suffix, name, legacy_generation_name)
                if generation is not None and not ours_if_legacy:
                    owner = _DESCRIBED_CLUSTER.search(f"{description} ")
                    kept.append(KeptCredential(name, ident, owner.group(1) if owner else ""))
                    continue
            if generation is not None:
                members.append(KnownCredential(generation, name, ident))
    return {suffix: sorted(members) for suffix, members in family.items()}, sorted(kept)


def cluster_credentials_in_keystone(
    conn: Connection, settings: ClusterSettings, held: frozenset[str] = frozenset()
) -> dict[str, list[KnownCredential]]:
    """The cluster's credentials of each kind (:data:`CLUSTER_SUFFIX`,
    :data:`WORKLOAD_SUFFIX`) that the current user owns, oldest generation first.

    Named as :func:`generation_name` names them, or as earlier versions did
    (:func:`legacy_generation_name`) when the ID is in ``held`` (the credentials Secret
    holds it) or the description names this cluster: a legacy name of another namespace's
    cluster of the same name is not this cluster's (:func:`kept_legacy_credentials`)."""
    return _classify(settings, _own_credentials(conn), held)[0]


def kept_legacy_credentials(
    conn: Connection, settings: ClusterSettings, held: frozenset[str] = frozenset()
) -> list[KeptCredential]:
    """The credentials named as earlier versions (or KaaS v1) named this cluster's that are
    not this cluster's (:class:`KeptCredential`): what ``delete`` and ``appcred delete``
    leave alone and say so."""
    return _classify(settings, _own_credentials(conn), held)[1]


# --------------------------------------------------------------------------- keystone calls


def find_app_credential(conn: Connection, name: str) -> Any | None:
    """The current user's application credential called ``name``, or None."""
    identity: Any = conn.identity
    try:
        found = list(identity.application_credentials(user=conn.current_user_id, name=name))
    except Exception as error:
        raise tool_error(f"listing application credentials named {name}", error) from None
    matches = [item for item in found if item.name == name]
    return matches[0] if matches else None


def credential_authenticates(access: CloudAccess, credential_id: str, secret: Secret) -> bool:
    """Log in with the credential: True when Keystone accepts it.

    Unauthorized/not found -> False (wrong secret, deleted or expired credential). Anything
    else (cloud unreachable, 5xx, no answer within ``--timeout``) raises ToolError: we must
    not recreate on a hiccup. The login has the wall clock of every OpenStack call
    (:func:`bound_requests`): its session is not the connection's.
    """
    from keystoneauth1 import exceptions as ks_exceptions  # deferred: keystoneauth1
    from keystoneauth1 import session as ks_session  # deferred: keystoneauth1
    from keystoneauth1.identity import v3  # deferred: keystoneauth1

    auth = v3.ApplicationCredential(
        auth_url=access.auth_url,
        application_credential_id=credential_id,
        application_credential_secret=secret.reveal(),
    )
    limit = tool_timeout(CALL_TIMEOUT_SECONDS)
    session = ks_session.Session(
        auth=auth, verify=access.verify, timeout=limit + SOCKET_GRACE_SECONDS
    )
    bound_requests(session, limit, who=f"checking application credential {credential_id}")
    try:
        auth.get_auth_ref(session)
    except (ks_exceptions.Unauthorized, ks_exceptions.NotFound, ks_exceptions.Forbidden):
        return False
    except Exception as error:
        raise tool_error(
            f"checking application credential {credential_id}", error, [secret]
        ) from None
    return True


def create_app_credential(
    conn: Connection, name: str, *, description: str, expires_at: str | None = None
) -> AppCredential:
    """Create a RESTRICTED application credential (``unrestricted: false``) for the current
    user and project, with the user's roles in the project."""
    from openstack import exceptions as sdk_exceptions  # deferred: openstack

    body: dict[str, Any] = {"name": name, "description": description, "unrestricted": False}
    if expires_at:
        body["expires_at"] = expires_at
    try:
        # log=False: keystoneauth would otherwise log the response body (with the secret)
        # at debug level.
        response = conn.identity.post(
            f"/users/{conn.current_user_id}/application_credentials",
            json={"application_credential": body},
            log=False,
        )
        sdk_exceptions.raise_from_response(response)
        data = response.json()["application_credential"]
    except Exception as error:
        if http_status(error) == 403:
            raise ToolError(
                f"creating application credential {name}: HTTP 403: the login of this cloud "
                "entry may not create application credentials. A restricted application "
                "credential cannot create others: use an UNRESTRICTED application credential "
                "(openstack application credential create --unrestricted ...) or a password "
                f"login in clouds.yaml ({error_summary(error)})"
            ) from None
        raise tool_error(f"creating application credential {name}", error) from None
    return AppCredential(
        id=str(data["id"]),
        name=str(data["name"]),
        secret=Secret(str(data["secret"])),
        project_id=str(data.get("project_id") or conn.current_project_id),
        restricted=not data.get("unrestricted", False),
    )


def delete_app_credential(conn: Connection, name: str) -> bool:
    """Delete the current user's credential ``name``. True if one was deleted, False if there
    was none (deleting twice is harmless)."""
    existing = find_app_credential(conn, name)
    if existing is None:
        return False
    identity: Any = conn.identity
    try:
        identity.delete_application_credential(
            conn.current_user_id, existing.id, ignore_missing=True
        )
    except Exception as error:
        if http_status(error) == 403:
            raise ToolError(
                f"deleting application credential {name}: HTTP 403: a restricted application "
                "credential cannot delete application credentials (not even itself); use the "
                "parent credential (the unrestricted one or a password login that created it)"
            ) from None
        raise tool_error(f"deleting application credential {name}", error) from None
    return True


def ensure_app_credential(
    conn: Connection,
    name: str,
    existing_secret: Secret | None,
    *,
    existing_id: str | None = None,
    description: str = "",
    access: CloudAccess | None = None,
    create_as: str | None = None,
) -> EnsuredCredential:
    """Reuse the credential ``name`` if ``existing_secret`` still authenticates it, else
    (re)create it restricted, named ``create_as`` (default: ``name``; a legacy name is
    replaced by the current one).

    ``existing_secret`` is the secret stored at the last run (from the credentials Secret),
    None when unknown. ``existing_id``, when given, must match the credential found by name
    (a stored secret of an older credential with the same name is not tried).
    """
    access = access or cloud_access(conn)
    description = description or "scs-templates per-cluster credential (restricted)"
    found = find_app_credential(conn, name)
    reason = "created: none existed"
    if found is not None:
        if bool(getattr(found, "unrestricted", False)):
            reason = "recreated: the existing one is unrestricted"
        elif existing_secret is None:
            reason = "recreated: its secret is not known (not in the credentials Secret)"
        elif existing_id is not None and existing_id != found.id:
            reason = "recreated: the stored secret belongs to another credential"
        elif credential_authenticates(access, str(found.id), existing_secret):
            credential = AppCredential(
                id=str(found.id),
                name=name,
                secret=existing_secret,
                project_id=str(getattr(found, "project_id", "") or access.project_id),
                restricted=True,
            )
            return EnsuredCredential(credential, created=False, reason="reused")
        else:
            reason = "recreated: the stored secret no longer authenticates"
        delete_app_credential(conn, name)
    create_as = create_as or name
    if create_as != name:
        delete_app_credential(conn, create_as)  # a left-over of an interrupted run
    credential = create_app_credential(conn, create_as, description=description)
    return EnsuredCredential(credential, created=True, reason=reason)


def ensure_cluster_credentials(
    conn: Connection,
    settings: ClusterSettings,
    existing: Mapping[str, str | bytes] | None = None,
) -> ClusterCredentials:
    """Ensure the cluster's credential(s). ``existing`` is the data of the cluster's current
    credentials Secret (decoded values) or None; its secrets are reused when they still work.
    """
    stored = parse_credentials_secret(existing, section(settings).cloud) if existing else {}
    access = cloud_access(conn)
    held = frozenset(credential.id for credential in stored.values())
    family, kept = _classify(settings, _own_credentials(conn), held)
    purpose = f"cluster {settings.metadata.namespace}/{settings.metadata.name}"

    def ensure(suffix: str, key: str, what: str) -> EnsuredCredential:
        known = stored.get(key)
        members = family[suffix]
        # the generation the Secret holds (after a rotation: not the first), else the newest
        in_secret = [m for m in members if known is not None and m.id == known.id]
        candidates = in_secret or members[-1:]
        chosen = candidates[0] if candidates else None
        name = chosen.name if chosen else generation_name(settings, suffix, 1)
        # a legacy name (no namespace) is reused while it works, never made again
        replacement = generation_name(settings, suffix, chosen.generation if chosen else 1)
        return ensure_app_credential(
            conn,
            name,
            known.secret if known else None,
            existing_id=known.id if known else None,
            description=f"scs-templates: {what} of {purpose} (restricted)",
            access=access,
            create_as=replacement,
        )

    cluster = ensure(CLUSTER_SUFFIX, CLOUDS_YAML_KEY, "Cluster API credential")
    workload = None
    if section(settings).application_credential.separate_workload:
        workload = ensure(WORKLOAD_SUFFIX, CLOUD_CONF_KEY, "in-cluster OCCM/CSI credential")
    return ClusterCredentials(section(settings).cloud, access, cluster, workload, tuple(kept))


def delete_cluster_credentials(
    conn: Connection, settings: ClusterSettings, held: frozenset[str] = frozenset()
) -> dict[str, bool]:
    """Delete every credential of the cluster (both kinds, every generation, the legacy
    names its description claims or whose ID is in ``held``: the credentials Secret held
    it); name -> whether one was deleted (the first generation's names are always listed)."""
    result = {generation_name(settings, suffix, 1): False for suffix in SUFFIXES}
    for members in cluster_credentials_in_keystone(conn, settings, held).values():
        for member in members:
            result[member.name] = delete_app_credential(conn, member.name)
    return dict(sorted(result.items()))
