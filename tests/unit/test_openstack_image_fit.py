"""The preflight's image-fit size comparisons (pure Python): the cases that the real Nova,
Cinder and Glance APIs are asked about in tests/cloud/test_openstack_preflight.py, and those
not shown against the services (an upload above 1 GiB)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("root_disk", "size", "virtual", "expected"),
    [
        (0, 20 * 1024**3, 0, []),
        (
            0,
            20 * 1024**3 + 1,
            0,
            [
                "flavor f's disk of 20 GiB cannot hold image i of 21474836481 bytes "
                "(Nova: FlavorDiskSmallerThanImage)"
            ],
        ),
        (21, 20 * 1024**3 + 1, 0, []),
        (
            20,
            20 * 1024**3 + 1,
            0,
            [
                "rootDiskGB 20 cannot hold image i of 21 GiB (21474836481 bytes; Cinder "
                "refuses the root volume)"
            ],
        ),
        (
            20,
            4096,
            30 * 1024**3,
            [
                "rootDiskGB 20 cannot hold image i's virtual size 30 GiB (Cinder refuses the "
                "root volume)"
            ],
        ),
        (30, 4096, 30 * 1024**3, []),
    ],
)
def test_image_fit_sizes(root_disk: int, size: int, virtual: int, expected: list[str]) -> None:
    """The size comparisons the real services are not shown (an upload above 1 GiB): Nova's
    bytes against the flavor's disk, Cinder's GiB rounded up against the root volume, and
    the virtual size (which Glance records for formats it inspects) against it."""
    from types import SimpleNamespace

    from scs_templates.providers.openstack.preflight import _Machine, _misfits

    machine = _Machine("controlPlane", ("spec", "controlPlane"), "f", "i", root_disk)
    flavor = SimpleNamespace(ram=4096, disk=20)
    image = SimpleNamespace(min_ram=0, min_disk=0, size=size, virtual_size=virtual, properties={})
    assert _misfits(machine, flavor, image) == expected
