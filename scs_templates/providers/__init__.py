"""Infrastructure providers: the one place where OpenStack and Docker differ in Python.

:class:`Provider` (in :mod:`.base`) names every difference; :mod:`.openstack` and
:mod:`.docker` implement it. The catalogue (:mod:`scs_templates.catalogue`) lists them
and finds the provider of a settings file (``provider_of``). Nothing outside this package
compares ``spec.provider`` with a name. See docs/architecture.md, "Adding a provider".
"""

from __future__ import annotations

from scs_templates.providers.base import CloudOptions, Finding, Management, Progress, Provider

__all__ = ["CloudOptions", "Finding", "Management", "Progress", "Provider"]
