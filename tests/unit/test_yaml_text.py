"""YAML text from outside: an explicit tag whose value cannot be read is a YAML error that
quotes nothing (scs_templates/_core/yaml_text.py), wherever such text is read.

ruamel.yaml's safe constructors raised ValueError / KeyError for these, quoting the value; the
callers caught only YAMLError, so a user's Secret manifest, clouds.yaml or kubeconfig with
``password: !!int <the password>`` ended in the CLI's "internal error" line quoting it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scs_templates._cli.run.inspect import register_kubeconfig
from scs_templates._core.errors import InputError, ToolError
from scs_templates._core.yaml_text import YAMLError, load
from scs_templates._render import encryption
from scs_templates._tools.kube.config import check_kubeconfig
from scs_templates.providers.openstack import credentials_secret

PASSWORD = "s3cret-9"
TAGS = ("!!int", "!!float", "!!bool")


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("tag", TAGS)
def test_an_unreadable_tagged_value_is_a_yaml_error_that_quotes_nothing(
    tag: str, pure: bool
) -> None:
    with pytest.raises(YAMLError) as raised:
        load(f"password: {tag} {PASSWORD}\n", pure=pure)
    assert PASSWORD not in str(raised.value)


@pytest.mark.parametrize("tag", TAGS)
def test_files_from_outside_with_one_are_refused_without_the_value(
    tag: str, tmp_path: Path
) -> None:
    value = f"{tag} {PASSWORD}"
    manifest = tmp_path / "secret.yaml"
    manifest.write_text(f"kind: Secret\nstringData:\n  password: {value}\n")
    with pytest.raises(InputError) as refused:
        credentials_secret.read_secret_manifest(manifest)
    assert PASSWORD not in str(refused.value)

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(f"users:\n- name: u\n  user: {{password: {value}}}\n")
    with pytest.raises(InputError) as refused:
        check_kubeconfig(str(kubeconfig))
    assert PASSWORD not in str(refused.value)
    register_kubeconfig(kubeconfig.read_text())  # nothing to register, no error

    clouds = f"clouds:\n  c:\n    auth: {{password: {value}}}\n"
    assert credentials_secret.single_cloud_clouds_yaml(clouds, "c") is None
    assert credentials_secret.cloud_conf_from_clouds_yaml(clouds, "c") is None
    assert credentials_secret.parse_credentials_secret({"clouds.yaml": clouds}, "c") == {}

    stored = f"resources:\n- providers:\n  - secretbox: {{keys: [{{name: k, secret: {value}}}]}}\n"
    with pytest.raises(ToolError) as unreadable:
        encryption.key_names(stored)
    assert PASSWORD not in str(unreadable.value)


def test_each_thread_loads_with_its_own_loader() -> None:
    """One ruamel YAML instance per thread and parser (reused: a new one costs a quarter of
    a load); an instance must never load in two threads at once."""
    import threading

    from scs_templates._core.yaml_text import _loader

    here = _loader(False)
    assert _loader(False) is here
    assert _loader(True) is not here
    there: list[object] = []
    thread = threading.Thread(target=lambda: there.append(_loader(False)))
    thread.start()
    thread.join()
    assert there and there[0] is not here
