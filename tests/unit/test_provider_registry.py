"""The provider registry reads entry points from the installed distributions' metadata."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scs_templates._core.entry_points import entry_points
from scs_templates._settings import plugins
from scs_templates.providers.registry import provider_names, shipped_providers


def _dist(where: Path, folder: str, text: str) -> None:
    (where / folder).mkdir(parents=True)
    (where / folder / "entry_points.txt").write_text(text, encoding="utf-8")


def test_entry_points_of_the_group_only_and_the_first_distribution_of_a_name_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    _dist(
        first,
        "toy_cloud-1.0.dist-info",
        "[console_scripts]\ntoy = toy:main\n\n[scs_templates.providers]\ntoy = toy_cloud:TOY\n",
    )
    _dist(second, "toy_cloud-0.9.dist-info", "[scs_templates.providers]\nold = old:OLD\n")
    _dist(second, "other-2.dist-info", "[scs_templates.providers]\n# a comment\nx = x.y:Z.w\n")
    monkeypatch.setattr(sys, "path", [str(first), str(second), str(tmp_path / "missing")])
    assert list(entry_points(plugins.GROUP)) == [
        ("toy-cloud", "toy", "toy_cloud:TOY"),
        ("other", "x", "x.y:Z.w"),
    ]


def test_the_shipped_providers_come_from_our_own_entry_points() -> None:
    assert [p.name for p in shipped_providers()] == ["openstack", "docker"]
    assert provider_names()[:2] == ("openstack", "docker")
