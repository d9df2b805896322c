"""Running helm: :class:`Helm` (template, lint, upgrade/install, status, ...) and its errors.

See :mod:`scs_templates._tools.helm.runner` for the rules every helm call follows.
"""

from __future__ import annotations

from scs_templates._tools.helm.errors import HelmError, HelmTimeout
from scs_templates._tools.helm.runner import Helm, ReleaseInfo

__all__ = ["Helm", "HelmError", "HelmTimeout", "ReleaseInfo"]
