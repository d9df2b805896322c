"""Fixtures of the render tier (the tier's marker comes from tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import skip_or_fail


@pytest.fixture(scope="module")
def helm_path() -> Path:
    """The path of the helm that ``render`` finds (skip, or fail in CI, without one)."""
    from scs_templates._core.errors import ToolNotFoundError
    from scs_templates._tools.toolchain.resolve import find_helm

    try:
        return find_helm().path
    except ToolNotFoundError as error:
        skip_or_fail(f"helm is not installed (`scs-templates tools install`): {error}")
        raise


@pytest.fixture
def no_tool_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    """No helm chosen by the environment (SCS_TEMPLATES_HELM) nor a namespace (HELM_NAMESPACE):
    the test finds the tools as a user's plain shell would."""
    for var in ("SCS_TEMPLATES_HELM", "HELM_NAMESPACE"):
        monkeypatch.delenv(var, raising=False)
