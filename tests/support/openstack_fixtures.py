"""The cloud tier's stacks and tenants.

A stack (tests/support/openstack_stack.py) is started per CONFIGURATION, not per module: the
modules that declare the same :class:`StackServices` (``STACK = ...`` at module level, through
the ``shared_stack`` fixture of tests/cloud/conftest.py) share one, started by the first of
them and stopped after the last of them in the session (:class:`SharedStacks`). What keeps
them apart is tenancy: each module makes its own Keystone project, user and application
credential (:func:`make_tenant`, with a name of the module) and its own plane and namespaces,
so it cannot see another module's resources. What a tenant cannot isolate is the admin's
cloud-wide resources (external networks, flavors, public images): a module that creates one
gives it a name of its own, and a module that counts them (tests/cloud/test_openstack.py,
tests/cloud/test_openstack_preflight.py) keeps a stack of its own (:func:`running_stack`).

A "tenant" is what a real user has: a project, a user with the member role in it, and an
UNRESTRICTED application credential in a clouds.yaml (0600) as their own credential.
"""

from __future__ import annotations

import os
import secrets
from collections import Counter
from collections.abc import Iterable, Iterator
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


@dataclass(frozen=True)
class StackServices:
    """What a stack runs besides Keystone and Neutron; modules that ask for an equal one share
    the stack. ``octavia``: "" (none), "noop" (its noop drivers) or "neutron-vips" (VIP ports
    in the real Neutron: OCCM's floating IPs); ``nova``: "" (none), "api" (servers stay
    BUILD) or "compute" (Placement and the fake compute driver: servers boot)."""

    octavia: str = ""
    cinder: bool = False
    glance: bool = False
    nova: str = ""

    @property
    def name(self) -> str:
        """A name for the state directory and the messages."""
        parts = [f"octavia-{self.octavia}" if self.octavia else ""]
        parts += ["cinder" if self.cinder else "", "glance" if self.glance else ""]
        parts += [f"nova-{self.nova}" if self.nova else ""]
        return "-".join(["stack", *(p for p in parts if p)])

    def start(self, stack: Stack) -> None:
        """Start the services on a running Keystone + Neutron (skip, or fail under CI=true)."""
        try:
            if self.octavia:
                stack.start_octavia_cinder(
                    cinder=self.cinder, neutron_vips=self.octavia == "neutron-vips"
                )
            elif self.cinder:
                stack.start_cinder()
            if self.glance:
                stack.start_glance()
            if self.nova:
                stack.start_nova(compute=self.nova == "compute")
        except Exception as error:
            skip_or_fail(f"{self.name}: a service did not start in the test stack: {error}")
            raise


#: Keystone and Neutron only.
KEYSTONE_NEUTRON = StackServices()
#: Octavia (noop drivers), Cinder and the Nova API: CAPO's OpenStackCluster reconcile (load
#: balancer, availability zones), Cinder CSI (whose plugin needs a compute endpoint to start,
#: though volumes ask nothing of Nova).
OCTAVIA_CINDER_NOVA_API = StackServices(octavia="noop", cinder=True, nova="api")
#: Octavia with its VIP ports in the real Neutron, no Nova (OCCM's load balancers and
#: floating IPs; with a compute endpoint OCCM would look its nodes up in Nova).
OCTAVIA_NEUTRON_VIPS = StackServices(octavia="neutron-vips")
#: Octavia (noop), Glance, Placement and Nova with compute: servers boot (CAPO's machines,
#: OCCM's node controller).
BOOTING = StackServices(octavia="noop", glance=True, nova="compute")


class SharedStacks:
    """The session's stacks, one per :class:`StackServices`: started when the first module
    asks for it, stopped when the last module of the session that declared it is done."""

    def __init__(self, tmp_path_factory: Any, declared: Iterable[StackServices]) -> None:
        self._factory = tmp_path_factory
        self._remaining = Counter(declared)
        self._running: dict[StackServices, Stack] = {}

    def acquire(self, services: StackServices) -> Stack:
        """The running stack of ``services``, started now if it is not running."""
        if services not in self._running:
            stack = start_or_skip(self._factory.mktemp(services.name))
            try:
                services.start(stack)
            except BaseException:
                stack.stop()
                raise
            self._running[services] = stack
        return self._running[services]

    def release(self, services: StackServices) -> None:
        """One module that declared ``services`` is done; the last one stops the stack."""
        self._remaining[services] -= 1
        if self._remaining[services] <= 0 and services in self._running:
            self._running.pop(services).stop()

    def stop(self) -> None:
        """Stop what still runs (modules that declared a stack but never asked for it)."""
        for stack in self._running.values():
            stack.stop()
        self._running.clear()


def external_network(admin: Any) -> Any:
    """The admin's external network ``public-fip`` with a subnet (the provider network
    floating IPs come from), made once per stack: the modules that use it share it."""
    name = "public-fip"
    found = admin.network.find_network(name)
    if found is not None:
        return found
    network = admin.network.create_network(name=name, is_router_external=True, is_shared=False)
    admin.network.create_subnet(
        network_id=network.id, ip_version=4, cidr="198.18.0.0/24", name=name
    )
    return network


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
