"""The preflight's flavors and images checks against the REAL Nova API (flavors) and the
REAL Glance API (images on a file store), through the CLI's line per check and exit codes.

The stack (tests/openstack_stack.py: Keystone, Neutron, ``start_nova``, ``start_glance``) is
this module's own; the CLI, tenant and helpers are tests/test_openstack.py's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openstack_fixtures import Tenant, make_tenant, running_stack
from openstack_stack import Stack

from tests.support import skip_or_fail
from tests.test_openstack import (  # the fixtures resolve ``demo``/``stack`` to this module's
    _external_network,
    _id,
    _lines,
    _settings_text,
    _unique,
    _wait_for,
    admin,
    cli_env,
    conn,
    run_cli,
)

__all__ = ["admin", "cli_env", "conn", "run_cli"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Keystone + Neutron with the REAL Nova API (flavors) and the REAL Glance API (images,
    file store) added (tests/openstack_stack.py): its catalog has compute and image
    endpoints. A stack of this module's own: in tests/test_openstack.py's session stack
    they would turn the flavors and images checks of the install tests there (which expect
    them skipped) into failures. Stopped when the module ends."""
    for started in running_stack(tmp_path_factory, "openstack-glance-stack"):
        try:
            started.start_nova()
            started.start_glance()
        except Exception as error:
            skip_or_fail(f"Nova and Glance could not start in the test stack: {error}")
            raise
        yield started


@pytest.fixture(scope="module")
def demo(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    """The demo user of this module's stack (as tests/test_openstack.py's)."""
    return make_tenant(stack, tmp_path_factory.mktemp("demo-cloud"), "demo")


def _preflight_file(
    tmp_path: Path, cluster: str, image: str, cp_flavor: str, worker_flavor: str, **extra: str
) -> Path:
    """Settings whose machine types and image are the test's own (flavors are cloud-wide)."""
    text = _settings_text(cluster, "10.69.0.0/20", external=f"    image: {image}\n")
    text = text.replace("SCS-2V-4-20s", cp_flavor).replace("SCS-4V-8-50s", worker_flavor)
    if root := extra.get("worker_root_disk"):
        text = text.replace(
            f"      machineType: {worker_flavor}\n",
            f"      machineType: {worker_flavor}\n      rootDiskGB: {root}\n",
        )
    path = tmp_path / f"{cluster}-{uuid.uuid4().hex[:4]}.yaml"
    path.write_text(text)
    return path


def _upload(conn: Any, name: str) -> Any:
    """A small raw image, uploaded (``PUT /v2/images/<id>/file`` into Glance's file store)."""
    image = conn.image.create_image(
        name=name,
        data=b"\0" * 4096,
        disk_format="raw",
        container_format="bare",
        allow_duplicates=True,
        wait=True,
    )
    _wait_for(f"image {name} active", lambda: conn.image.get_image(image.id).status == "active")
    return conn.image.get_image(image.id)


@pytest.mark.openstack
def test_preflight_flavors_and_images_against_real_nova_and_glance(
    run_cli: Any, tmp_path: Path, conn: Any, admin: Any
) -> None:
    """Every branch of the flavors and images checks, through the CLI's line per check and
    exit code, against real Nova flavors and real Glance images: found; missing (exit 2);
    a flavor or image ID where CAPO v0.14.7 wants a name (exit 2); a zero-disk flavor
    without rootDiskGB (exit 2); an image name two images share (exit 1: CAPO refuses it);
    an image not yet uploaded (exit 1)."""
    cluster = _unique("img")
    suffix = uuid.uuid4().hex[:6]
    cp_flavor, worker_flavor = f"cp-{suffix}", f"wk-{suffix}"
    image_name = f"ubuntu-{suffix}-v1.37.2"
    settings_file = _preflight_file(
        tmp_path, cluster, f"ubuntu-{suffix}-{{version}}", cp_flavor, worker_flavor
    )
    _external_network(admin)  # exactly one external network: that check passes
    flavors: list[Any] = []
    images: list[Any] = []
    try:
        # Nothing exists yet: both checks fail on the settings, naming who uses what.
        missing = run_cli("openstack", "preflight", str(settings_file))
        assert missing.code == 2, missing.out
        lines = _lines(missing)
        assert lines["external-network"].startswith("ok"), missing.out
        assert lines["flavors"] == (
            f"failed  flavors: flavor(s): {cp_flavor} not found (used by controlPlane); "
            f"{worker_flavor} not found (used by workers[workers])"
        )
        assert lines["images"] == (
            f"failed  images: image(s): {image_name} not found (used by controlPlane, "
            "workers[workers]) (upload them or set spec.openstack.image / the image overrides)"
        )

        # Real flavors; the workers' one has no disk and the settings give no rootDiskGB.
        flavors.append(admin.compute.create_flavor(name=cp_flavor, ram=4096, vcpus=2, disk=20))
        flavors.append(admin.compute.create_flavor(name=worker_flavor, ram=8192, vcpus=4, disk=0))
        images.append(_upload(conn, image_name))
        zero = run_cli("openstack", "preflight", str(settings_file))
        assert zero.code == 2, zero.out
        assert _lines(zero)["flavors"] == (
            f"failed  flavors: flavor(s): {worker_flavor} has no disk (disk 0) and no rootDiskGB "
            "is set (used by workers[workers]; Nova boots from an image only onto a flavor "
            "disk: set rootDiskGB)"
        )
        assert _lines(zero)["images"] == f"ok      images: found: {image_name}"

        # With a root volume for the workers: everything passes.
        rooted = _preflight_file(
            tmp_path,
            cluster,
            f"ubuntu-{suffix}-{{version}}",
            cp_flavor,
            worker_flavor,
            worker_root_disk="50",
        )
        good = run_cli("openstack", "preflight", str(rooted))
        assert good.code == 0, good.out
        assert _lines(good)["flavors"] == (f"ok      flavors: found: {cp_flavor}, {worker_flavor}")

        # IDs where CAPO wants names: Nova and Glance would find them, CAPO would not.
        by_id = _preflight_file(
            tmp_path, cluster, images[0].id, flavors[0].id, worker_flavor, worker_root_disk="50"
        )
        ids = run_cli("openstack", "preflight", str(by_id))
        assert ids.code == 2, ids.out
        assert _lines(ids)["flavors"] == (
            f"failed  flavors: flavor(s): {flavors[0].id} is the ID of flavor {cp_flavor}, not "
            "a name (used by controlPlane; CAPO looks flavors up by name: set the name)"
        )
        assert _lines(ids)["images"] == (
            f"failed  images: image(s): {images[0].id} is the ID of image {image_name}, not a "
            "name (used by controlPlane, workers[workers]; CAPO looks images up by name: set "
            "the name) (upload them or set spec.openstack.image / the image overrides)"
        )

        # A second image of that name: ambiguous for CAPO; the cloud is at fault (exit 1).
        images.append(_upload(conn, image_name))
        two = run_cli("openstack", "preflight", str(rooted))
        assert two.code == 1, two.out
        first, second = sorted(images, key=_id)
        assert _lines(two)["images"] == (
            f"failed  images: image(s): {image_name} is ambiguous: 2 images have this name: "
            f"{first.id} (shared), {second.id} (shared) (used by controlPlane, "
            "workers[workers]; CAPO refuses a name that matches several: rename or delete all "
            "but one)"
        )

        # One image whose data was never uploaded (queued): Nova cannot boot it (exit 1).
        for image in images:
            conn.image.delete_image(image.id)
        images.clear()
        response = conn.image.post(
            "/images",
            json={"name": image_name, "disk_format": "raw", "container_format": "bare"},
        )
        assert response.status_code == 201, response.text
        images.append(conn.image.get_image(response.json()["id"]))
        queued = run_cli("openstack", "preflight", str(rooted))
        assert queued.code == 1, queued.out
        assert _lines(queued)["images"] == (
            f"failed  images: image(s): {image_name} ({images[0].id}) is queued, not active "
            "(used by controlPlane, workers[workers]; upload its data)"
        )
    finally:
        for image in images:
            conn.image.delete_image(image.id, ignore_missing=True)
        for flavor in flavors:
            admin.compute.delete_flavor(flavor.id, ignore_missing=True)
