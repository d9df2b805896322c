"""The OpenStack provider (CAPO): :data:`OPENSTACK`, its values part and its workload setup.

The cloud side (application credentials, preflight, server groups, cleanup) is
:mod:`scs_templates.openstack`; importing this package does not import openstacksdk.
"""

from __future__ import annotations

from scs_templates.providers.openstack.provider import OPENSTACK, OpenStackProvider

__all__ = ["OPENSTACK", "OpenStackProvider"]
