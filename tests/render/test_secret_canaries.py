"""Canary secrets through EVERY command, with and without ``--debug``: none is ever printed.

The canaries sit where real credentials sit: in the clouds.yaml entry of the cluster (a
password with ``"`` and ``\\``, so its JSON-escaped form differs from the raw one), inside its
``auth_url`` as URL userinfo, in ANOTHER cloud entry of the same file (which must never be
stored either), and in a KaaS v1 clusterctl.yaml. helm is a FAKE HELM (a TEST DOUBLE shell
script) that echoes the values it receives on stdin into its error, as a real helm does for
schema and template errors; a real helm cannot be made to echo on purpose. The OpenStack
commands meet a closed port on 127.0.0.1, so keystoneauth prints its own warning with the URL.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from scs_templates._cli.main import main
from scs_templates._core.secrets import encodings, forget_all, redact
from tests.support import REPO

PASSWORD = 'CANARY-pw-"quoted"-back\\slash-1f9a'
URL_PASSWORD = "CANARY-url-pw-77ab"
OTHER = "CANARY-other-cloud-5c3e"
MIGRATE_SECRET = "CANARY-kaas-b64-c0ffee"
CANARIES = (PASSWORD, URL_PASSWORD, OTHER, MIGRATE_SECRET)
OPENSTACK = REPO / "examples" / "openstack-minimal.yaml"


def clouds_yaml() -> str:
    quoted = PASSWORD.replace("\\", "\\\\").replace('"', '\\"')
    return (
        "clouds:\n"
        "  openstack:\n"
        "    auth:\n"
        f"      auth_url: http://admin:{URL_PASSWORD}@127.0.0.1:9/v3\n"
        "      username: admin\n"
        f'      password: "{quoted}"\n'
        "      project_name: admin\n"
        "      user_domain_name: Default\n"
        "      project_domain_name: Default\n"
        "    region_name: RegionOne\n"
        "  other:\n"
        "    auth:\n"
        "      auth_url: http://127.0.0.1:9/v3\n"
        "      username: other\n"
        f"      password: {OTHER}\n"
    )


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(clouds_yaml())
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
        "    server: https://127.0.0.1:9\ncontexts:\n- name: c\n  context:\n    cluster: c\n"
        "    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t0k3n\n"
    )
    helm_dir = tmp_path / "helm"
    helm_dir.mkdir()
    helm = helm_dir / "helm"
    helm.write_text(
        "#!/bin/sh\n"
        "# TEST DOUBLE for helm: records its stdin per command, echoes it in a failure.\n"
        'if [ "$1" = version ]; then printf "v4.3.2"; exit 0; fi\n'
        f'cat > "{helm_dir}/stdin.$1.log"\n'
        'if [ "$1" = list ]; then echo "[]"; exit 0; fi\n'
        'printf "Error: values don\'t meet the specifications: %s\\n" '
        f'"$(cat "{helm_dir}/stdin.$1.log")" >&2\n'
        "exit 1\n"
    )
    helm.chmod(0o755)
    clusterctl = tmp_path / "clusterctl.yaml"
    clusterctl.write_text(
        "KUBERNETES_VERSION: v1.33.5\n"
        f"OPENSTACK_CLOUD_YAML_B64: {MIGRATE_SECRET}\n"
        f"OPENSTACK_CLOUD_CACERT_B64: *{MIGRATE_SECRET}\n"
    )
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(clouds))
    monkeypatch.setenv("SCS_TEMPLATES_HELM", str(helm))
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    forget_all()
    return {
        "clouds": clouds,
        "kubeconfig": kubeconfig,
        "helm_dir": helm_dir,
        "clusterctl": clusterctl,
        "out": tmp_path / "out",
    }


def commands(world: dict[str, Path]) -> list[list[str]]:
    s, clouds, out = str(OPENSTACK), str(world["clouds"]), world["out"]
    return [
        ["validate", s],
        ["schema"],
        ["render", s],
        ["values", s],
        ["values", s, "--output-dir", str(out / "values")],
        ["render", s, "--output-dir", str(out / "render")],
        ["render-fleet", s, "--output-dir", str(out / "fleet")],
        ["templates"],
        ["install", s, "--clouds-yaml", clouds],
        ["apply", s, "--clouds-yaml", clouds, "--no-wait"],
        ["status", s],
        ["diff", s],
        ["delete", s, "--yes"],
        ["openstack", "preflight", s],
        ["openstack", "appcred", "create", s, "--write-secret", str(out / "secret.yaml")],
        ["openstack", "appcred", "delete", s],
        ["openstack", "cleanup", s, "--dry-run"],
        ["migrate", str(world["clusterctl"])],
        ["tools", "status"],
    ]


def leaked(text: str) -> list[str]:
    forms = {form for canary in CANARIES for form in encodings(canary)}
    forms |= {urllib.parse.quote(c) for c in CANARIES} | {json.dumps(c) for c in CANARIES}
    return sorted(form for form in forms if form in text)


COMMAND_IDS = [
    "validate", "schema", "render", "values", "values-o", "render-o", "render-fleet",
    "templates", "install", "apply", "status", "diff", "delete", "preflight",
    "appcred-create", "appcred-delete", "cleanup", "migrate", "tools-status",
]  # fmt: skip


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
@pytest.mark.parametrize("index", range(len(COMMAND_IDS)), ids=COMMAND_IDS)
def test_no_command_prints_a_canary(
    world: dict[str, Path], capsys: pytest.CaptureFixture[str], index: int, debug: bool
) -> None:
    argv = commands(world)[index]
    code = main((["--debug"] if debug else []) + argv)
    captured = capsys.readouterr()
    assert code in (0, 1, 2, 3), code
    assert leaked(captured.out) == [], argv
    assert leaked(captured.err) == [], argv
    for path in world["out"].rglob("*") if world["out"].exists() else ():
        if path.is_file():
            assert leaked(path.read_text()) == [], path


def test_install_stores_only_the_clusters_own_cloud_entry(world: dict[str, Path]) -> None:
    """What `install --clouds-yaml` puts into the Secret: the cluster's entry
    (spec.openstack.cloud) and never the file's other clouds. The release values hold no
    credential at all (the chart references the Secret, written through the API)."""
    from scs_templates._render.values import build_values
    from scs_templates._settings.validate import load_settings
    from scs_templates.providers.openstack.provision import secrets_from_files

    settings = load_settings(OPENSTACK).settings
    stored = secrets_from_files(settings, world["clouds"].read_text())
    text = "".join(stored.values())
    assert URL_PASSWORD in text and PASSWORD in text  # the own entry
    assert all(OTHER not in part and "other:" not in part for part in stored.values())
    values = json.dumps(build_values(settings), ensure_ascii=False)
    assert leaked(values) == [] and OTHER not in values


def test_redaction_covers_every_encoding() -> None:
    text = (
        f"raw {PASSWORD} json {json.dumps(PASSWORD)} url {urllib.parse.quote(PASSWORD, safe='')} "
        f"userinfo https://bob:{URL_PASSWORD}@host/v3 and https://alice:unknown-pw@h/"
    )
    import shlex

    text += f" shell {shlex.quote(PASSWORD)}"
    redacted = redact(text, [PASSWORD])
    assert leaked(redacted) == []
    assert "unknown-pw" not in redacted  # userinfo is redacted without being known
    assert redacted.count("<redacted>") == 6
