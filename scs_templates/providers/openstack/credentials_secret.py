"""The content of the cluster's credentials Secret: clouds.yaml and cloud.conf, written and read.

Cluster API Provider OpenStack reads ``clouds.yaml`` (the identityRef Secret), the in-cluster
cloud controller manager and Cinder CSI read ``cloud.conf`` (gcfg); both hold an application
credential's ID and secret, so the next install can find the secret again (Keystone shows it
only once: :mod:`scs_templates.providers.openstack.appcred` makes and checks the credentials). The
Secret's keys and name are the chart's (:mod:`scs_templates.providers.openstack.values`).
Secrets travel as :class:`~scs_templates.providers.openstack.connection.Secret`.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scs_templates._core import atomic, secrets, textinput
from scs_templates._core.errors import InputError
from scs_templates._core.labels import credentials_secret_labels
from scs_templates.providers.openstack.connection import CloudAccess, Secret
from scs_templates.providers.openstack.section import section
from scs_templates.providers.openstack.values import (
    CACERT_KEY,
    CLOUD_CONF_KEY,
    CLOUDS_YAML_KEY,
)
from scs_templates.providers.openstack.values import (
    credentials_secret_name as credentials_secret_name,
)

if TYPE_CHECKING:
    from scs_templates._settings.model import ClusterSettings
    from scs_templates.providers.openstack.credential_records import (
        AppCredential,
        ClusterCredentials,
    )


@dataclass(frozen=True)
class StoredCredential:
    """What the credentials Secret remembers about a credential: its ID and secret."""

    id: str
    secret: Secret = field(repr=False)


def render_clouds_yaml(cloud_name: str, access: CloudAccess, credential: AppCredential) -> Secret:
    """clouds.yaml for Cluster API (CAPO's identityRef Secret)."""
    entry: dict[str, Any] = {
        "auth": {
            "auth_url": access.auth_url,
            "application_credential_id": credential.id,
            "application_credential_secret": credential.secret.reveal(),
        },
        "auth_type": "v3applicationcredential",
        "identity_api_version": 3,
        "interface": access.interface,
    }
    if access.region_name:
        entry["region_name"] = access.region_name
    if access.verify is False:
        entry["verify"] = False
    return Secret(_clouds_yaml(cloud_name, entry))


def _clouds_yaml(cloud_name: str, entry: Mapping[str, Any]) -> str:
    """A clouds.yaml holding the one entry ``cloud_name`` (block style)."""
    from ruamel.yaml import YAML  # deferred: ruamel

    yaml = YAML(typ="safe")
    yaml.default_flow_style = False
    buffer = io.StringIO()
    yaml.dump({"clouds": {cloud_name: dict(entry)}}, buffer)
    return buffer.getvalue()


def render_cloud_conf(
    access: CloudAccess,
    credential: AppCredential,
    *,
    load_balancer_provider: str = "amphora",
    floating_network_id: str | None = None,
    ca_file: str | None = None,
) -> Secret:
    """cloud.conf (gcfg) for the OpenStack cloud controller manager and Cinder CSI."""
    auth = [
        ("auth-url", access.auth_url),
        ("application-credential-id", credential.id),
        ("application-credential-secret", credential.secret.reveal()),
    ]
    if access.region_name:
        auth.append(("region", access.region_name))
    return _cloud_conf(
        auth,
        insecure=access.verify is False,
        ca_file=ca_file,
        load_balancer_provider=load_balancer_provider,
        floating_network_id=floating_network_id,
    )


# clouds.yaml auth keys -> cloud.conf [Global] keys (cloud-provider-openstack's names).
_CLOUD_CONF_AUTH_KEYS = (
    ("auth_url", "auth-url"),
    ("application_credential_id", "application-credential-id"),
    ("application_credential_secret", "application-credential-secret"),
    ("username", "username"),
    ("user_id", "user-id"),
    ("password", "password"),
    ("user_domain_name", "user-domain-name"),
    ("user_domain_id", "user-domain-id"),
    ("project_id", "tenant-id"),
    ("project_name", "tenant-name"),
    ("project_domain_name", "tenant-domain-name"),
    ("project_domain_id", "tenant-domain-id"),
    ("domain_name", "domain-name"),
    ("domain_id", "domain-id"),
)


def single_cloud_clouds_yaml(text: str, cloud_name: str) -> str | None:
    """clouds.yaml holding ONLY the entry ``cloud_name`` of ``text`` (None if it has none).

    A user's clouds.yaml usually holds every cloud and project they can reach; the cluster
    needs one entry, and the Secret (and helm's release history) must not carry the others.
    The secrets of the entry are registered for redaction (:mod:`scs_templates._core.secrets`).
    """
    from scs_templates._core.yaml_text import YAMLError, load  # deferred: ruamel

    try:
        document = load(text)
        entry = document["clouds"][cloud_name]
    except (YAMLError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if not isinstance(entry, dict):
        return None
    auth = entry.get("auth")
    if isinstance(auth, dict):
        secrets.register(
            *(
                str(auth[key])
                for key in ("password", "application_credential_secret", "token")
                if auth.get(key)
            )
        )
    return _clouds_yaml(cloud_name, entry)


def cloud_conf_from_clouds_yaml(
    text: str,
    cloud_name: str,
    *,
    load_balancer_provider: str = "amphora",
    floating_network_id: str | None = None,
) -> Secret | None:
    """cloud.conf for the same credential as a clouds.yaml entry (application credential or
    password), for users who bring their own clouds.yaml; None when the entry is unusable."""
    from scs_templates._core.yaml_text import YAMLError, load  # deferred: ruamel

    try:
        document = load(text)
        entry = document["clouds"][cloud_name]
        auth_section = entry.get("auth") or {}
    except (YAMLError, KeyError, TypeError, AttributeError):
        return None
    auth = [
        (conf_key, str(auth_section[yaml_key]))
        for yaml_key, conf_key in _CLOUD_CONF_AUTH_KEYS
        if auth_section.get(yaml_key)
    ]
    if not any(key == "auth-url" for key, _ in auth):
        return None
    if entry.get("region_name"):
        auth.append(("region", str(entry["region_name"])))
    return _cloud_conf(
        auth,
        insecure=entry.get("verify") is False,
        ca_file=None,
        load_balancer_provider=load_balancer_provider,
        floating_network_id=floating_network_id,
    )


def _cloud_conf(
    auth: list[tuple[str, str]],
    *,
    insecure: bool,
    ca_file: str | None,
    load_balancer_provider: str,
    floating_network_id: str | None,
) -> Secret:
    lines = ["[Global]", *(f"{key}={_gcfg(value)}" for key, value in auth)]
    if insecure:
        lines.append("tls-insecure=true")
    elif ca_file:
        lines.append(f"ca-file={_gcfg(ca_file)}")
    lines += [
        "",
        "[LoadBalancer]",
        "manage-security-groups=true",
        "create-monitor=true",
    ]
    if floating_network_id:
        lines.append(f"floating-network-id={_gcfg(floating_network_id)}")
    if load_balancer_provider == "ovn":
        lines += ["lb-provider=ovn", "lb-method=SOURCE_IP_PORT"]
    return Secret("\n".join(lines) + "\n")


def credentials_secret_data(
    credentials: ClusterCredentials,
    settings: ClusterSettings,
    *,
    floating_network_id: str | None = None,
) -> dict[str, Secret]:
    """The data of the cluster's credentials Secret: clouds.yaml, cloud.conf and, when the
    cloud entry names a CA bundle, cacert (its PEM content)."""
    floating = floating_network_id or section(settings).external_network_id
    data = {
        CLOUDS_YAML_KEY: render_clouds_yaml(
            credentials.cloud_name, credentials.access, credentials.cluster.credential
        ),
        CLOUD_CONF_KEY: render_cloud_conf(
            credentials.access,
            credentials.for_workload,
            load_balancer_provider=section(settings).load_balancer_provider,
            floating_network_id=floating,
        ),
    }
    if credentials.access.cacert_file:
        pem = read_credentials_file(
            Path(credentials.access.cacert_file).expanduser(),
            kind="a CA bundle",
            named=f"cacert {credentials.access.cacert_file} of the cloud entry",
        )
        data[CACERT_KEY] = Secret(pem)
    return data


#: A file of credentials or CA certificates ends up in a Kubernetes Secret, which holds at
#: most 1 MiB: a larger one is a mistake.
MAX_CREDENTIALS_FILE_BYTES = 1024 * 1024


def read_credentials_file(path: Path, *, kind: str, named: str | None = None) -> str:
    """The text of a clouds.yaml, CA bundle or Secret manifest the user names, read as every
    input file is (:func:`scs_templates._core.textinput.read_text`: at most
    :data:`MAX_CREDENTIALS_FILE_BYTES`, devices and FIFOs refused, UTF-8 or refused).

    InputError ``<named>: <reason>`` (``named`` defaults to the path); ``kind`` is what the
    file should be (``a clouds.yaml``), for the reason. The content is never in a message.
    """

    name = str(path)
    try:  # a file called "-" is that file, not standard input
        return textinput.read_text(
            "./-" if name == "-" else name, MAX_CREDENTIALS_FILE_BYTES, what=kind
        )
    except textinput.InputRefused as refused:
        raise InputError(f"{named if named is not None else path}: {refused}") from None


def parse_credentials_secret(
    data: Mapping[str, str | bytes], cloud_name: str
) -> dict[str, StoredCredential]:
    """Read back the credentials from a credentials Secret's data.

    Returns ``{"clouds.yaml": ..., "cloud.conf": ...}`` for the parts that hold an application
    credential; malformed parts are ignored (the credential is then recreated).
    """
    result: dict[str, StoredCredential] = {}
    clouds = _text(data.get(CLOUDS_YAML_KEY))
    if clouds:
        stored = _from_clouds_yaml(clouds, cloud_name)
        if stored:
            result[CLOUDS_YAML_KEY] = stored
    conf = _text(data.get(CLOUD_CONF_KEY))
    if conf:
        stored = _from_cloud_conf(conf)
        if stored:
            result[CLOUD_CONF_KEY] = stored
    return result


def _from_clouds_yaml(text: str, cloud_name: str) -> StoredCredential | None:
    from scs_templates._core.yaml_text import YAMLError, load  # deferred: ruamel

    try:
        document = load(text)
    except YAMLError:
        return None
    try:
        auth = document["clouds"][cloud_name]["auth"]
        credential_id = auth["application_credential_id"]
        secret = auth["application_credential_secret"]
    except (KeyError, TypeError):
        return None
    if isinstance(credential_id, str) and isinstance(secret, str) and credential_id and secret:
        return StoredCredential(credential_id, Secret(secret))
    return None


def _from_cloud_conf(text: str) -> StoredCredential | None:
    values: dict[str, str] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
            continue
        if section == "global" and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip().lower()] = _ungcfg(value.strip())
    credential_id = values.get("application-credential-id")
    secret = values.get("application-credential-secret")
    if credential_id and secret:
        return StoredCredential(credential_id, Secret(secret))
    return None


def secret_manifest(settings: ClusterSettings, data: Mapping[str, Secret]) -> Secret:
    """The credentials Secret as a Kubernetes manifest (``stringData``, block scalars).

    Labelled like the Secret ``install`` writes (cluster, ``clusterctl move``), so a GitOps
    user who applies it gets the same object. The text holds the credentials: a Secret.
    """
    from ruamel.yaml import YAML  # deferred: ruamel
    from ruamel.yaml.scalarstring import LiteralScalarString  # deferred: ruamel

    manifest = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": credentials_secret_name(settings),
            "namespace": settings.metadata.namespace,
            "labels": credentials_secret_labels(settings.name),
        },
        "type": "Opaque",
        "stringData": {key: LiteralScalarString(value.reveal()) for key, value in data.items()},
    }
    buffer = io.StringIO()
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.dump(manifest, buffer)
    return Secret(buffer.getvalue())


def write_secret_manifest(
    path: Path, settings: ClusterSettings, data: Mapping[str, Secret]
) -> None:
    """Write :func:`secret_manifest` to ``path``: 0600, atomic (temp + rename); InputError
    naming the path when it cannot be written."""

    atomic.write_file(path.expanduser(), secret_manifest(settings, data).reveal(), private=True)


def read_secret_manifest(path: Path) -> dict[str, str]:
    """``stringData`` (and base64 ``data``) of a Kubernetes Secret manifest file, such as
    :func:`write_secret_manifest` wrote: the ``existing`` credentials of
    :func:`scs_templates.providers.openstack.appcred.ensure_cluster_credentials`."""

    from scs_templates._core.yaml_text import YAMLError, load  # deferred: ruamel

    text = read_credentials_file(path, kind="a Kubernetes Secret manifest")
    try:
        document = load(text)
    except YAMLError:
        raise InputError(f"{path}: not a YAML Kubernetes Secret manifest") from None
    if not isinstance(document, dict) or document.get("kind") != "Secret":
        raise InputError(f"{path}: not a Kubernetes Secret manifest (kind: Secret)")
    result: dict[str, str] = {}
    for key, value in (document.get("data") or {}).items():
        try:
            result[str(key)] = base64.b64decode(str(value), validate=True).decode()
        except ValueError:
            raise InputError(f"{path}: data.{key} is not base64") from None
    for key, value in (document.get("stringData") or {}).items():
        result[str(key)] = str(value)
    return result


def _gcfg(value: str) -> str:
    """A gcfg string value, quoted (so ';', '#' and spaces survive)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _ungcfg(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value


def _text(value: str | bytes | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value
