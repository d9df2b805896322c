"""The OpenStack provider without a cloud: secrets that never show themselves, the credential
Secret's content, the server groups wanted. Against the REAL Keystone and Neutron:
tests/cloud/test_openstack.py.
"""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from scs_templates._settings.validate import parse_settings_text
from scs_templates.providers.openstack.connection import CloudAccess, Secret
from scs_templates.providers.openstack.credentials_secret import (
    credentials_secret_data,
    parse_credentials_secret,
)
from tests.support import openstack_settings

# --------------------------------------------------------------------------- no stack needed


def test_secret_never_shows_itself() -> None:
    secret = Secret("s3cr3t-value")
    assert "s3cr3t" not in repr(secret)
    assert "s3cr3t" not in str(secret)
    assert "s3cr3t" not in f"{secret} {secret!r} {secret:>20}"
    assert "s3cr3t" not in repr({"k": secret})
    assert secret.reveal() == "s3cr3t-value"
    assert secret == Secret("s3cr3t-value")


def test_secret_content_round_trip() -> None:
    from scs_templates.providers.openstack.appcred import (
        AppCredential,
        ClusterCredentials,
        EnsuredCredential,
    )

    extra = "      separateWorkload: true\n"
    settings = openstack_settings("roundtrip", "10.199.0.0/20", extra=extra)
    access = CloudAccess("https://keystone.example/v3", "RegionOne", "public", True, None, "u", "p")
    cluster = AppCredential("id-1", "capi-roundtrip-appcred", Secret("sec;ret#1"), "p")
    workload = AppCredential("id-2", "capi-roundtrip-appcred-workload", Secret('se"c\\2'), "p")
    credentials = ClusterCredentials(
        "demo",
        access,
        EnsuredCredential(cluster, True, "created"),
        EnsuredCredential(workload, True, "created"),
    )
    data = credentials_secret_data(credentials, settings, floating_network_id="ext-id")
    assert "sec;ret#1" not in repr(data)
    clouds = YAML(typ="safe").load(data["clouds.yaml"].reveal())
    entry = clouds["clouds"]["demo"]
    assert entry["auth_type"] == "v3applicationcredential"
    assert entry["auth"]["application_credential_id"] == "id-1"
    assert entry["region_name"] == "RegionOne"
    assert entry["interface"] == "public"
    conf = data["cloud.conf"].reveal()
    assert "[Global]" in conf and "[LoadBalancer]" in conf
    assert 'application-credential-id="id-2"' in conf
    assert 'floating-network-id="ext-id"' in conf
    stored = parse_credentials_secret({k: v.reveal() for k, v in data.items()}, "demo")
    assert stored["clouds.yaml"].id == "id-1"
    assert stored["clouds.yaml"].secret.reveal() == "sec;ret#1"
    assert stored["cloud.conf"].id == "id-2"
    assert stored["cloud.conf"].secret.reveal() == 'se"c\\2'


# --------------------------------------------------------------------------- server groups


@pytest.mark.parametrize(
    ("anti_affinity", "expected"),
    [
        (
            "",
            [
                ("capi-sg-control-plane", "anti-affinity"),
                ("capi-sg-a", "soft-anti-affinity"),
                ("capi-sg-b", "soft-anti-affinity"),
            ],
        ),
        (
            "antiAffinity: {controlPlane: soft, workers: none}",
            [("capi-sg-control-plane", "soft-anti-affinity")],
        ),
        ("antiAffinity: {controlPlane: none, workers: none}", []),
    ],
    ids=["defaults", "soft-cp-no-workers", "none"],
)
def test_wanted_server_groups_follow_the_settings(
    anti_affinity: str, expected: list[tuple[str, str]]
) -> None:
    from scs_templates.providers.openstack.servergroups import wanted_server_groups

    text = (
        "apiVersion: scs-templates.scs.community/v1alpha1\nkind: ClusterSettings\n"
        "metadata: {name: sg}\nspec:\n  template: multi-md\n"
        "  controlPlane: {machineType: m}\n"
        "  workers: [{name: a, machineType: m}, {name: b, machineType: m}]\n"
        f"  openstack: {{{anti_affinity}}}\n"
    )
    assert wanted_server_groups(parse_settings_text(text).settings) == expected


# --------------------------------------------------------------------------- library API


#: The kinds of the chart whose controllers would add a finalizer.
