"""A provider is a plug-in: the toy provider, a distribution of its own under tests/plugins/toy,
installed into the test environment (``make test-plugins``) and declared only by its entry
point, validates, renders, appears in ``templates`` and ``schema`` and gets its section
documented, while no file under scs_templates/ names it.

The commands run as a user runs them (the installed ``scs-templates`` in a process of its
own), so the provider is found the way a third party's would be.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scs_templates._settings.reference import render_reference
from scs_templates.providers.registry import provider_names, shipped_providers
from tests.support import REPO, crd_validation, in_ci, skip_or_fail

TOY = """\
apiVersion: scs-templates.scs.community/v1alpha1
kind: ClusterSettings
metadata:
  name: play
  namespace: toys
spec:
  provider: toy
  controlPlane:
    replicas: {replicas}
  toy:
    vmStartup: {startup}
"""


@pytest.fixture(scope="module", autouse=True)
def _toy_installed() -> None:
    if "toy" not in provider_names():
        reason = "the toy provider plug-in is not installed: run `make test-plugins`"
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scs_templates._cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _settings(tmp_path: Path, *, replicas: int = 1, startup: str = "7s") -> Path:
    path = tmp_path / "toy.yaml"
    path.write_text(TOY.format(replicas=replicas, startup=startup), encoding="utf-8")
    return path


def test_the_toy_validates_and_its_own_rules_and_section_are_applied(tmp_path: Path) -> None:
    assert _cli("validate", str(_settings(tmp_path)), cwd=tmp_path).returncode == 0
    three = _cli("validate", str(_settings(tmp_path, replicas=3)), cwd=tmp_path)
    assert three.returncode == 2
    assert "spec.controlPlane.replicas" in three.stderr
    assert "provider 'toy' runs one control-plane machine" in three.stderr
    bad = _cli("validate", str(_settings(tmp_path, startup="soon")), cwd=tmp_path)
    assert bad.returncode == 2
    assert "spec.toy.vmStartup" in bad.stderr


def test_the_toy_renders_crd_valid_objects_with_its_section_in_them(tmp_path: Path) -> None:
    reason = crd_validation.skip_or_fail_reason()
    if reason:
        skip_or_fail(reason)
    out = tmp_path / "out"
    done = _cli("render", str(_settings(tmp_path)), "--output-dir", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from scs_templates._render.render import split_documents

    objects = [
        obj
        for path in sorted(out.iterdir())
        for obj in split_documents(path.read_text(encoding="utf-8"))[1]
    ]
    kinds = {str(obj["kind"]) for obj in objects}
    assert {"Cluster", "DevCluster", "DevMachineTemplate", "KubeadmControlPlane"} <= kinds
    assert crd_validation.validate_all(objects) == []
    machines = [obj for obj in objects if obj["kind"] == "DevMachineTemplate"]
    backend = machines[0]["spec"]["template"]["spec"]["backend"]["inMemory"]
    assert backend["vm"]["provisioning"]["startupDuration"] == "7s"


@pytest.mark.parametrize("template", ["multi-md", "clusterclass"])
def test_the_toy_renders_every_template_crd_valid(tmp_path: Path, template: str) -> None:
    reason = crd_validation.skip_or_fail_reason()
    if reason:
        skip_or_fail(reason)
    path = _settings(tmp_path)
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            "  provider: toy\n", f"  provider: toy\n  template: {template}\n"
        ),
        encoding="utf-8",
    )
    done = _cli("render", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from scs_templates._render.render import split_documents

    objects = split_documents(done.stdout)[1]
    assert crd_validation.validate_all(objects) == []


def test_the_toy_appears_in_templates_and_schema_but_not_in_the_published_schema(
    tmp_path: Path,
) -> None:
    rows = _cli("templates", cwd=tmp_path)
    assert rows.returncode == 0
    assert any(
        line.split()[:3] == ["simple", "toy", "toy-cluster"] for line in rows.stdout.splitlines()
    )
    schema = json.loads(_cli("schema", cwd=tmp_path).stdout)
    spec = schema["$defs"]["Spec"]["properties"]
    assert "toy" in spec["provider"]["enum"]
    assert spec["toy"]["$ref"] == "#/$defs/Toy"
    assert schema["$defs"]["Toy"]["properties"]["vmStartup"]["default"] == "2s"
    published = json.loads((REPO / "schemas" / "cluster-settings.schema.json").read_text())
    assert published["$defs"]["Spec"]["properties"]["provider"]["enum"] == [
        provider.name for provider in shipped_providers()
    ]
    assert "Toy" not in published["$defs"]


def test_the_toy_section_is_documented_with_the_installed_providers() -> None:
    installed = render_reference(shipped=False)
    assert '| `spec.toy.vmStartup` | string | `"2s"` |' in installed
    assert "spec.toy" not in render_reference()  # docs/settings.md: the shipped providers


def test_no_file_of_the_package_names_the_toy() -> None:
    named = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "scs_templates").rglob("*"))
        if path.is_file()
        and path.suffix in {".py", ".tpl", ".yaml", ".json", ".j2"}
        and "toy" in path.read_text(encoding="utf-8", errors="replace").lower()
    ]
    assert named == []
