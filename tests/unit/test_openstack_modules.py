"""The OpenStack modules keep one concern each, and the credentials Secret's keys are written once.

``openstack/appcred.py`` talks to Keystone (application credentials); ``openstack/
credentials_secret.py`` writes and reads the Secret's clouds.yaml and cloud.conf; the keys
of that Secret are the OpenStack chart's (``providers/openstack/values.py``). These checks
read the source, so a copy or a mixed-up module fails here, not in a review.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scs_templates._core.errors import InputError
from scs_templates._core.labels import credentials_secret_labels
from scs_templates.providers.openstack import values
from tests.support import REPO

PACKAGE = REPO / "scs_templates"
SECRET_KEYS = {values.CLOUDS_YAML_KEY, values.CLOUD_CONF_KEY, values.CACERT_KEY}


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports (at any depth: lazy imports count too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def _key_constants(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``NAME_KEY = "<one of the Secret's keys>"`` assignments: (line, name)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Constant):
            continue
        if node.value.value not in SECRET_KEYS:
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id.endswith("_KEY"):
                yield node.lineno, target.id


def test_the_credentials_secret_keys_are_defined_once() -> None:
    found = [
        f"{path.relative_to(REPO)} {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for _line, name in _key_constants(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [
        "scs_templates/providers/openstack/values.py CLOUDS_YAML_KEY",
        "scs_templates/providers/openstack/values.py CACERT_KEY",
        "scs_templates/providers/openstack/values.py CLOUD_CONF_KEY",
    ]


def test_the_key_finder_finds_a_copy() -> None:
    tree = ast.parse('X = 1\nOWN_CLOUDS_KEY = "clouds.yaml"\nNOT_A_CONSTANT = "cacert"\n')
    assert list(_key_constants(tree)) == [(2, "OWN_CLOUDS_KEY")]


def test_keystone_calls_and_secret_formats_live_in_separate_modules() -> None:
    credentials = _imported_modules(PACKAGE / "providers" / "openstack" / "appcred.py")
    formats = _imported_modules(PACKAGE / "providers" / "openstack" / "credentials_secret.py")
    # the Keystone module writes no YAML; the formats module makes no cloud call
    assert not {m for m in credentials if m.startswith("ruamel")}
    assert not {m for m in formats if m.split(".")[0] in {"keystoneauth1", "openstack"}}
    assert (
        "scs_templates.providers.openstack.connection" in formats
    )  # only for Secret and CloudAccess


def test_the_openstack_commands_leave_the_secret_manifest_to_the_library() -> None:
    """The CLI parses, calls the library and prints: the credentials Secret manifest is
    written and read by openstack/credentials_secret.py, not by the commands (openstack/cli.py
    declares them, openstack/cli_run.py runs them)."""
    cli = _imported_modules(PACKAGE / "providers" / "openstack" / "cli_run.py")
    assert not {m for m in cli if m.startswith("ruamel") or m == "base64"}
    assert "scs_templates.providers.openstack.credentials_secret" in cli


def _stored_settings() -> Any:
    from scs_templates._settings.validate import load_settings

    return load_settings(REPO / "examples" / "openstack-all-features.yaml").settings


def test_the_secret_manifest_round_trips_through_the_library(tmp_path: Path) -> None:
    from scs_templates.providers.openstack import credentials_secret as openstack
    from scs_templates.providers.openstack.connection import Secret

    settings = _stored_settings()
    data = {
        values.CLOUDS_YAML_KEY: Secret("clouds:\n  corp:\n    auth: {}\n"),
        values.CLOUD_CONF_KEY: Secret('[Global]\nauth-url="https://keystone"\n'),
    }
    target = tmp_path / "secret.yaml"
    openstack.write_secret_manifest(target, settings, data)
    assert target.stat().st_mode & 0o777 == 0o600
    assert openstack.read_secret_manifest(target) == {k: v.reveal() for k, v in data.items()}
    manifest = yaml.safe_load(target.read_text())
    assert manifest["metadata"] == {
        "name": values.credentials_secret_name(settings),
        "namespace": settings.metadata.namespace,
        "labels": credentials_secret_labels(settings.name),
    }
    assert target.read_text() == openstack.secret_manifest(settings, data).reveal()
    assert "auth-url" not in repr(openstack.secret_manifest(settings, data))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("kind: ConfigMap\n", "not a Kubernetes Secret manifest (kind: Secret)"),
        ("kind: [\n", "not a YAML Kubernetes Secret manifest"),
        ("kind: Secret\ndata:\n  clouds.yaml: '%%%'\n", "data.clouds.yaml is not base64"),
    ],
)
def test_a_bad_secret_manifest_is_refused_naming_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    from scs_templates.providers.openstack.credentials_secret import read_secret_manifest

    path = tmp_path / "old.yaml"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        read_secret_manifest(path)
    assert str(caught.value) == f"{path}: {message}"


def test_base64_data_is_read_back(tmp_path: Path) -> None:
    from scs_templates.providers.openstack.credentials_secret import read_secret_manifest

    path = tmp_path / "old.yaml"
    path.write_text("kind: Secret\ndata:\n  cacert: cGVt\nstringData:\n  cloud.conf: x\n")
    assert read_secret_manifest(path) == {"cacert": "pem", "cloud.conf": "x"}


def test_credentials_files_are_read_as_every_input_file(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 were a UnicodeDecodeError (a traceback) and a FIFO without a
    writer blocked for ever; both are one InputError naming the file, as for settings."""
    from scs_templates.providers.openstack.credentials_secret import read_secret_manifest

    binary = tmp_path / "latin1.yaml"
    binary.write_bytes(b"kind: Secret\nstringData:\n  x: caf\xe9\n")
    with pytest.raises(InputError) as caught:
        read_secret_manifest(binary)
    assert str(caught.value) == f"{binary}: not UTF-8 text (invalid byte at offset 33)"
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as caught:
        read_secret_manifest(fifo)
    assert str(caught.value) == (
        f"{fifo}: is not a regular file (a FIFO); use - to read from standard input"
    )
    with pytest.raises(InputError, match=r"is a directory, not a Kubernetes Secret manifest"):
        read_secret_manifest(tmp_path)
    large = tmp_path / "large.yaml"
    large.write_bytes(b"#" * (1024 * 1024 + 1))
    with pytest.raises(InputError, match=r"file is too large \(1048577 bytes; limit 1048576\)"):
        read_secret_manifest(large)


def _dataclass_fields(tree: ast.AST) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(class name, its annotated fields) of every class in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names = tuple(
                statement.target.id
                for statement in node.body
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
            )
            if names:
                yield node.name, names


def test_one_class_describes_a_cloud_object_for_the_cleanup() -> None:
    """The network cleanup and step (c)'s leftovers print one after the other in delete's
    output, so they describe objects and word their lines alike: cloud_report.CloudItem and
    report_lines, once. Fails when a module of providers/openstack defines a class of the
    same fields again (cleanup.Item and leftovers.Leftover were two copies) or the reports
    build their lines by hand."""
    owners: dict[tuple[str, ...], list[str]] = {}
    for path in sorted((PACKAGE / "providers" / "openstack").glob("*.py")):
        for name, fields in _dataclass_fields(ast.parse(path.read_text(encoding="utf-8"))):
            if len(fields) >= 3:
                owners.setdefault(fields, []).append(f"{path.name}:{name}")
    assert {fields: where for fields, where in owners.items() if len(where) > 1} == {}
    assert owners[("kind", "id", "name", "detail")] == ["cloud_report.py:CloudItem"]
    for module in ("cleanup.py", "leftovers.py"):
        source = (PACKAGE / "providers" / "openstack" / module).read_text(encoding="utf-8")
        assert "report_lines(" in source and '"would delete"' not in source, module
