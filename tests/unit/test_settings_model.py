"""The settings model: examples, schema and reference in sync, round trips, versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

from scs_templates._cli.main import main
from scs_templates._settings.dump import dump_settings
from scs_templates._settings.reference import render_reference
from scs_templates._settings.schema import schema_text, settings_schema
from scs_templates._settings.validate import load_settings, parse_settings_text, validate_data
from scs_templates._versions.kubernetes import TESTED_PATCHES, parse_version
from tests.support import EXAMPLES, REPO
from tests.support.strategies import settings_documents


def test_there_are_the_three_required_examples() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"openstack-minimal.yaml", "openstack-production.yaml", "docker-dev.yaml"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_are_valid_and_warning_free(path: Path) -> None:
    loaded = load_settings(path)
    assert loaded.warnings == ()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_validate_against_the_published_schema(path: Path) -> None:
    from ruamel.yaml import YAML

    schema = json.loads((REPO / "schemas" / "cluster-settings.schema.json").read_text())
    data = YAML(typ="safe").load(path.read_text())
    jsonschema.Draft202012Validator(schema).validate(data)


def test_published_schema_rejects_an_unknown_key() -> None:
    schema = settings_schema()
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": "x"},
        "spec": {"templat": "simple"},
    }
    with pytest.raises(jsonschema.ValidationError, match="templat"):
        jsonschema.Draft202012Validator(schema).validate(data)


def test_committed_schema_is_in_sync() -> None:
    committed = (REPO / "schemas" / "cluster-settings.schema.json").read_text()
    assert committed == schema_text(shipped=True), (
        "schemas/cluster-settings.schema.json is stale: run "
        "`scs-templates schema > schemas/cluster-settings.schema.json`"
    )


def test_schema_command_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == schema_text()


def test_settings_reference_is_in_sync() -> None:
    committed = (REPO / "docs" / "settings.md").read_text()
    assert committed == render_reference(), (
        "docs/settings.md is stale: run `python -m scs_templates._settings.reference --write`"
    )


def test_each_provider_note_names_a_field_of_the_reference() -> None:
    """A provider's ``field_notes`` are listed under its name in docs/settings.md: each one
    must name a field of the reference (a renamed field must not leave a note behind), once,
    in the reference's order."""
    from scs_templates._settings.plugins import shipped_providers
    from scs_templates._settings.reference import rows

    order = [row.path for row in rows()]
    for provider in shipped_providers():
        paths = [path for path, _ in provider.field_notes]
        assert set(paths) <= set(order), (provider.name, set(paths) - set(order))
        assert paths == sorted(set(paths), key=order.index), provider.name


def test_every_field_has_a_description() -> None:
    def walk(node: Any, path: str) -> list[str]:
        missing = []
        if isinstance(node, dict):
            for key, prop in node.get("properties", {}).items():
                if "description" not in prop:
                    missing.append(f"{path}.{key}")
            for key, value in node.items():
                missing += walk(value, f"{path}/{key}")
        return missing

    assert walk(settings_schema(), "") == []


def test_readme_shows_the_schema_line() -> None:
    assert "# yaml-language-server: $schema=" in (REPO / "README.md").read_text()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.33.x", f"v1.33.{TESTED_PATCHES[(1, 33)]}"),
        ("v1.33.x", f"v1.33.{TESTED_PATCHES[(1, 33)]}"),
        ("1.34.0", "v1.34.0"),
        ("v1.35.2", "v1.35.2"),
    ],
)
def test_version_resolution(text: str, expected: str) -> None:
    assert str(parse_version(text)) == expected


def test_defaults_are_the_documented_kaas_v1_ones() -> None:
    settings = parse_settings_text(
        "apiVersion: scs-templates.scs.community/v1alpha1\nkind: ClusterSettings\n"
        "metadata: {name: x}\nspec: {provider: docker}\n"
    ).settings
    spec = settings.spec
    assert (spec.network.pod_cidr, spec.network.service_cidr, spec.network.node_cidr) == (
        "192.168.0.0/16",
        "10.96.0.0/12",
        "10.8.0.0/20",
    )
    assert spec.etcd.snapshot_count == 6400
    assert spec.etcd.quota_gib == 2
    assert spec.etcd.auto_compaction_retention == "8h"
    assert spec.etcd.defrag.schedule == "*-*-* 02:30:00"
    assert spec.security.pod_security.enforce == "baseline"
    assert spec.security.pod_security.warn == spec.security.pod_security.audit == "restricted"
    assert spec.security.api_rate_limits.event_qps == 5000
    assert spec.security.api_rate_limits.event_burst == 20000
    assert spec.prefix == "capi"
    assert spec.services.cni.type == "cilium"
    assert spec.openstack.application_credential.per_cluster is True


# ----------------------------------------------------------------- round trip (hypothesis)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(settings_documents())
def test_round_trip_model_yaml_model(document: dict[str, Any]) -> None:
    model = validate_data(document).settings
    text = dump_settings(model)
    again = parse_settings_text(text, file="round-trip.yaml").settings
    assert again == model
    assert dump_settings(again) == text
