"""Where the files shipped beside the package are: a source checkout, or the wheel.

The wheel force-includes ``charts`` and ``helmfile.d`` as ``scs_templates/_data/<name>``;
a source checkout (editable install, tests) has them next to the package.
"""

from __future__ import annotations

from pathlib import Path

from scs_templates._core.errors import ScsTemplatesError

__all__ = ["shipped_dir"]

_PACKAGE = Path(__file__).resolve().parents[1]  # scs_templates/, above _core/


def shipped_dir(name: str, what: str, marker: str = ".") -> Path:
    """The folder ``name`` (holding ``marker``) from the wheel's data or the checkout;
    ScsTemplatesError naming ``what`` and both places otherwise."""
    candidates = (_PACKAGE / "_data" / name, _PACKAGE.parent / name)
    for candidate in candidates:
        if (candidate / marker).exists() and candidate.is_dir():
            return candidate
    raise ScsTemplatesError(
        f"{what} missing (looked in {candidates[0]} and {candidates[1]}); reinstall scs-templates"
    )
