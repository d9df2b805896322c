"""The preflight's flavors and images checks against the REAL Nova API (flavors) and the
REAL Glance API (images on a file store), through the CLI's line per check and exit codes.

The stack (tests/support/openstack_stack.py: Keystone, Neutron, ``start_nova``, ``start_glance``) is
this module's own; the CLI, tenant and helpers are tests/cloud/test_openstack.py's.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cloud.test_openstack import (  # the fixtures resolve ``demo``/``stack`` to this module's
    _id,
    _lines,
    _unique,
    _wait_for,
    admin,
    cli_env,
    conn,
    run_cli,
)
from tests.support import openstack_settings_text, skip_or_fail
from tests.support.openstack_fixtures import Tenant, external_network, make_tenant, running_stack
from tests.support.openstack_stack import Stack

__all__ = ["admin", "cli_env", "conn", "run_cli"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Keystone + Neutron with the REAL Nova API (flavors) and the REAL Glance API (images,
    file store) added (tests/support/openstack_stack.py): its catalog has compute and image
    endpoints. A stack of this module's own: in tests/cloud/test_openstack.py's session stack
    they would turn the flavors and images checks of the install tests there (which expect
    them skipped) into failures. Stopped when the module ends."""
    for started in running_stack(tmp_path_factory, "openstack-glance-stack"):
        try:
            started.start_nova()
            started.start_glance()
            started.start_cinder()
        except Exception as error:
            skip_or_fail(f"Nova and Glance could not start in the test stack: {error}")
            raise
        yield started


@pytest.fixture(scope="module")
def demo(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Tenant:
    """The demo user of this module's stack (as tests/cloud/test_openstack.py's)."""
    return make_tenant(stack, tmp_path_factory.mktemp("demo-cloud"), "demo")


def _preflight_file(
    tmp_path: Path, cluster: str, image: str, cp_flavor: str, worker_flavor: str, **extra: str
) -> Path:
    """Settings whose machine types and image are the test's own (flavors are cloud-wide)."""
    text = openstack_settings_text(cluster, "10.69.0.0/20", external=f"    image: {image}\n")
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
    external_network(admin)  # exactly one external network: that check passes
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


def _fit_file(
    tmp_path: Path,
    cluster: str,
    *,
    image: str,
    cp_flavor: str,
    worker_flavor: str,
    worker_image: str = "",
    worker_root_disk: int = 0,
) -> Path:
    """Settings for the image-fit check: one image for all (``spec.openstack.image``), the
    workers' own image and root volume where given."""
    workers = f"      machineType: {worker_flavor}\n"
    if worker_image:
        workers += f"      image: {worker_image}\n"
    if worker_root_disk:
        workers += f"      rootDiskGB: {worker_root_disk}\n"
    text = openstack_settings_text(cluster, "10.70.0.0/20", external=f"    image: {image}\n")
    text = text.replace("    machineType: SCS-2V-4-20s\n", f"    machineType: {cp_flavor}\n")
    text = text.replace("      machineType: SCS-4V-8-50s\n", workers)
    path = tmp_path / f"{cluster}-{uuid.uuid4().hex[:4]}.yaml"
    path.write_text(text)
    return path


def _line_of(path: Path, text: str) -> int:
    """The line (1-based) of ``path`` that is ``text``."""
    return path.read_text().splitlines().index(text) + 1


def _nova_refuses(conn: Any, flavor: Any, image: Any, expected: str) -> None:
    """The REAL Nova API refuses a server of this flavor and image with ``expected`` (its
    own validation, before any scheduling: proof that the check foresees Nova's answer)."""
    from openstack import exceptions

    with pytest.raises(exceptions.HttpException) as refused:
        conn.compute.create_server(
            name=f"fit-{uuid.uuid4().hex[:6]}",
            flavor_id=flavor.id,
            image_id=image.id,
            networks="none",
        )
    assert refused.value.status_code == 400, refused.value
    assert expected in str(refused.value), refused.value


def test_preflight_image_fit_against_real_nova_and_glance(
    run_cli: Any, tmp_path: Path, conn: Any, admin: Any
) -> None:
    """The image-fit check against real Nova flavors and real Glance images (their min_ram,
    min_disk and properties as Glance stores them): a flavor with less RAM than the image's
    min_ram and a disk below its min_disk, a root volume below min_disk, an image uploaded
    from an encrypted volume booted from the flavor's disk: each a failure in the settings
    (exit 2) naming the machine and its line; and for each, the REAL Nova API refuses such a
    server with the error the check names. Everything fitting: ok (exit 0)."""
    from openstack import exceptions

    cluster = _unique("fit")
    suffix = uuid.uuid4().hex[:6]
    small, large = f"fit-small-{suffix}", f"fit-large-{suffix}"
    image_name, encrypted_name = f"fit-{suffix}", f"fit-enc-{suffix}"
    external_network(admin)
    flavors: list[Any] = []
    images: list[Any] = []
    try:
        flavors.append(admin.compute.create_flavor(name=small, ram=2048, vcpus=1, disk=10))
        flavors.append(admin.compute.create_flavor(name=large, ram=8192, vcpus=4, disk=20))
        images.append(_upload(conn, image_name))
        conn.image.update_image(images[0].id, min_ram=4096, min_disk=15)
        images.append(_upload(conn, encrypted_name))
        conn.image.update_image(images[1].id, cinder_encryption_key_id=str(uuid.uuid4()))
        image, encrypted = (conn.image.get_image(i.id) for i in images)
        assert (image.min_ram, image.min_disk) == (4096, 15)

        # The control plane's flavor is too small for the image in RAM and disk.
        fit_file = functools.partial(
            _fit_file, tmp_path, cluster, image=image_name, worker_flavor=large
        )
        misfit = fit_file(cp_flavor=small)
        result = run_cli("openstack", "preflight", str(misfit))
        assert result.code == 2, result.out
        at = f"{misfit}:{_line_of(misfit, '  controlPlane:')}"
        assert _lines(result)["image-fit"] == (
            f"failed  image-fit: {at}: controlPlane: flavor {small} has 2048 MiB of RAM, image "
            f"{image_name} needs 4096 MiB (its min_ram; Nova: FlavorMemoryTooSmall); {at}: "
            f"controlPlane: flavor {small}'s disk of 10 GiB is smaller than image "
            f"{image_name}'s min_disk 15 GiB (Nova: FlavorDiskSmallerThanMinDisk) (choose a "
            "larger flavor or rootDiskGB, or another image)"
        )
        assert _lines(result)["flavors"].startswith("ok"), result.out
        _nova_refuses(conn, flavors[0], image, "Flavor's memory is too small for requested image")
        # RAM enough, disk still too small: Nova's next check.
        flavors.append(admin.compute.create_flavor(name=f"{small}-ram", ram=4096, vcpus=1, disk=10))
        _nova_refuses(
            conn,
            flavors[2],
            image,
            "Flavor's disk is smaller than the minimum size specified in image metadata",
        )

        # The workers' root volume is below the image's min_disk (Cinder refuses it).
        volume = fit_file(cp_flavor=large, worker_root_disk=10)
        result = run_cli("openstack", "preflight", str(volume))
        assert result.code == 2, result.out
        at = f"{volume}:{_line_of(volume, '    - name: workers')}"
        assert _lines(result)["image-fit"] == (
            f"failed  image-fit: {at}: workers[workers]: rootDiskGB 10 is smaller than image "
            f"{image_name}'s min_disk 15 GiB (Cinder refuses the root volume) (choose a larger "
            "flavor or rootDiskGB, or another image)"
        )
        # The REAL Cinder API refuses the root volume CAPO would create (size, image).
        with pytest.raises(exceptions.HttpException) as refused:
            conn.block_storage.create_volume(size=10, image_id=image.id, name=f"fit-{suffix}")
        assert refused.value.status_code == 400, refused.value
        assert "Volume size 10GB cannot be smaller than the image minDisk size 15GB" in str(
            refused.value
        ), refused.value
        assert not list(conn.block_storage.volumes(name=f"fit-{suffix}"))

        # An image uploaded from an encrypted volume, booted from the flavor's disk.
        direct = fit_file(cp_flavor=large, worker_image=encrypted_name)
        result = run_cli("openstack", "preflight", str(direct))
        assert result.code == 2, result.out
        at = f"{direct}:{_line_of(direct, '    - name: workers')}"
        assert _lines(result)["image-fit"] == (
            f"failed  image-fit: {at}: workers[workers]: image {encrypted_name} was uploaded "
            "from an encrypted volume (cinder_encryption_key_id): Nova boots it only from a "
            "volume (ImageUnacceptable): set rootDiskGB (choose a larger flavor or "
            "rootDiskGB, or another image)"
        )
        _nova_refuses(
            conn,
            flavors[1],
            encrypted,
            "Direct booting of an image uploaded from an encrypted volume is unsupported",
        )

        # Everything fits: the large flavor, the encrypted image on a root volume.
        fits = fit_file(cp_flavor=large, worker_image=encrypted_name, worker_root_disk=20)
        result = run_cli("openstack", "preflight", str(fits))
        assert result.code == 0, result.out
        assert _lines(result)["image-fit"] == (
            "ok      image-fit: images fit: controlPlane, workers[workers]"
        )
    finally:
        for leftover in images:
            conn.image.delete_image(leftover.id, ignore_missing=True)
        for flavor in flavors:
            admin.compute.delete_flavor(flavor.id, ignore_missing=True)


def test_preflight_image_fit_sizes_against_real_nova_cinder_and_glance(
    run_cli: Any, tmp_path: Path, conn: Any, admin: Any
) -> None:
    """An image one byte larger than 1 GiB, as Glance stores it (its ``size`` from the
    upload, the data a sparse file of zeros): on a flavor with a 1 GiB disk the check fails
    with FlavorDiskSmallerThanImage, and on a root volume of 1 GiB because Cinder rounds the
    image up to 2 GiB; for each the REAL Nova API and the REAL Cinder API refuse what CAPO
    would ask for with the error the check names (before, only the unit cases below)."""
    from openstack import exceptions

    cluster = _unique("size")
    suffix = uuid.uuid4().hex[:6]
    tiny, name = f"fit-tiny-{suffix}", f"fit-big-{suffix}"
    size = 1024**3 + 1
    data = tmp_path / "image.raw"
    with data.open("wb") as out:  # sparse: no disk used here, zeros when read
        out.truncate(size)
    external_network(admin)
    flavor = admin.compute.create_flavor(name=tiny, ram=4096, vcpus=2, disk=1)
    image = None
    try:
        image = conn.image.create_image(
            name=name,
            filename=str(data),
            disk_format="raw",
            container_format="bare",
            allow_duplicates=True,
            wait=True,
        )
        _wait_for(f"image {name} active", lambda: conn.image.get_image(image.id).status == "active")
        image = conn.image.get_image(image.id)
        assert image.size == size

        settings = _fit_file(
            tmp_path, cluster, image=name, cp_flavor=tiny, worker_flavor=tiny, worker_root_disk=1
        )
        result = run_cli("openstack", "preflight", str(settings))
        assert result.code == 2, result.out
        cp = f"{settings}:{_line_of(settings, '  controlPlane:')}"
        workers = f"{settings}:{_line_of(settings, '    - name: workers')}"
        assert _lines(result)["image-fit"] == (
            f"failed  image-fit: {cp}: controlPlane: flavor {tiny}'s disk of 1 GiB cannot hold "
            f"image {name} of {size} bytes (Nova: FlavorDiskSmallerThanImage); {workers}: "
            f"workers[workers]: rootDiskGB 1 cannot hold image {name} of 2 GiB ({size} bytes; "
            "Cinder refuses the root volume) (choose a larger flavor or rootDiskGB, or another "
            "image)"
        )
        _nova_refuses(
            conn,
            flavor,
            image,
            f"Flavor's disk is too small for requested image. Flavor disk is {1024**3} bytes, "
            f"image is {size} bytes.",
        )
        with pytest.raises(exceptions.HttpException) as refused:
            conn.block_storage.create_volume(size=1, image_id=image.id, name=f"fit-{suffix}")
        assert refused.value.status_code == 400, refused.value
        assert "Size of specified image 2GB is larger than volume size 1GB" in str(refused.value), (
            refused.value
        )
        assert not list(conn.block_storage.volumes(name=f"fit-{suffix}"))
    finally:
        if image is not None:
            conn.image.delete_image(image.id, ignore_missing=True)
        admin.compute.delete_flavor(flavor.id, ignore_missing=True)
