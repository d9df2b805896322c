"""Running helmfile over ``helmfile.d/`` with state values generated from cluster settings."""

from __future__ import annotations

from scs_templates._lifecycle.helmfile.runner import (
    Helmfile,
    HelmfileError,
    HelmfileTimeout,
    StateValues,
    helmfile_dir,
)

__all__ = ["Helmfile", "HelmfileError", "HelmfileTimeout", "StateValues", "helmfile_dir"]
