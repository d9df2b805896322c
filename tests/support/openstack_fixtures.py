"""Helpers for tests/cloud/test_openstack.py: start the real stack, create a user's tenant.

A "tenant" is what a real user has: a project, a user with the member role in it, and an
UNRESTRICTED application credential in a clouds.yaml (0600) as their own credential.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support import skip_or_fail
from tests.support.openstack_stack import REGION, Stack, start_stack


def running_stack(tmp_path_factory: Any, name: str) -> Iterator[Stack]:
    """For a fixture: the stack with its state in a fresh directory, stopped afterwards."""
    started = start_or_skip(tmp_path_factory.mktemp(name))
    yield started
    started.stop()


def start_or_skip(state_dir: Path) -> Stack:
    """Start the stack; skip the tests with the reason when it cannot start (fail under CI)."""
    try:
        return start_stack(state_dir)
    except Exception as error:
        skip_or_fail(f"the local Keystone/Neutron test stack could not start: {error}")
        raise


@dataclass
class Tenant:
    name: str
    cloud: str
    project_id: str
    user_id: str
    clouds_yaml: Path
    auth_url: str
    password: str = field(repr=False)
    parent_id: str = ""
    parent_secret: str = field(default="", repr=False)

    def connect(self) -> Any:
        """A connection with the tenant's own (unrestricted) application credential."""
        import openstack

        return openstack.connect(
            auth={
                "auth_url": self.auth_url,
                "application_credential_id": self.parent_id,
                "application_credential_secret": self.parent_secret,
            },
            auth_type="v3applicationcredential",
            region_name=REGION,
        )

    def connect_with_appcred(self, credential_id: str, secret: str) -> Any:
        import openstack

        return openstack.connect(
            auth={
                "auth_url": self.auth_url,
                "application_credential_id": credential_id,
                "application_credential_secret": secret,
            },
            auth_type="v3applicationcredential",
            region_name=REGION,
        )


def make_tenant(stack: Stack, directory: Path, name: str) -> Tenant:
    """Project + member user + unrestricted application credential + clouds.yaml."""
    import openstack
    from openstack import exceptions
    from ruamel.yaml import YAML

    admin = stack.admin_connection()
    identity = admin.identity
    project = identity.create_project(name=name, domain_id="default")
    password = secrets.token_urlsafe(16)
    user = identity.create_user(
        name=f"{name}-user", password=password, domain_id="default", default_project_id=project.id
    )
    identity.assign_project_role_to_user(project, user, identity.find_role("member"))
    admin.close()

    login = openstack.connect(
        auth={
            "auth_url": stack.auth_url,
            "username": f"{name}-user",
            "password": password,
            "project_id": project.id,
            "user_domain_name": "Default",
        },
        auth_type="password",
        region_name=REGION,
    )
    response = login.identity.post(
        f"/users/{user.id}/application_credentials",
        json={"application_credential": {"name": f"{name}-own", "unrestricted": True}},
        log=False,
    )
    exceptions.raise_from_response(response)
    parent = response.json()["application_credential"]
    login.close()

    clouds = {
        "clouds": {
            name: {
                "auth": {
                    "auth_url": stack.auth_url,
                    "application_credential_id": parent["id"],
                    "application_credential_secret": parent["secret"],
                },
                "auth_type": "v3applicationcredential",
                "region_name": REGION,
                "interface": "public",
                "identity_api_version": 3,
            },
            f"{name}-password": {
                "auth": {
                    "auth_url": stack.auth_url,
                    "username": f"{name}-user",
                    "password": password,
                    "project_id": project.id,
                    "user_domain_name": "Default",
                },
                "region_name": REGION,
                "identity_api_version": 3,
            },
        }
    }
    path = directory / f"clouds-{name}.yaml"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        YAML(typ="safe").dump(clouds, handle)
    return Tenant(
        name=name,
        cloud=name,
        project_id=project.id,
        user_id=user.id,
        clouds_yaml=path,
        auth_url=stack.auth_url,
        password=password,
        parent_id=parent["id"],
        parent_secret=parent["secret"],
    )
