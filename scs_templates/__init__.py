"""scs-templates: one standardized cluster settings file -> Cluster API clusters.

The package is imported by the CLI and by other tools. Keep this module light: importing
``scs_templates`` must not pull in pydantic models, kubernetes or openstacksdk, so that
``scs-templates --help`` stays fast. The public library API lives in :mod:`scs_templates.api`.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
