"""The provider abstraction: the catalogue's providers, and nothing else asking for names."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

import pytest

from scs_templates._core.errors import InputError
from scs_templates._settings.validate import parse_settings_text
from scs_templates.providers import registry as catalogue
from scs_templates.providers.docker import DOCKER
from scs_templates.providers.interface import Provider
from scs_templates.providers.openstack.provider import OPENSTACK
from scs_templates.providers.operations import operations_of
from tests.support import REPO, SHIPPED_PROVIDERS

PACKAGE = REPO / "scs_templates"


def test_catalogue_lists_the_shipped_providers_in_model_order() -> None:
    assert catalogue.shipped_providers() == (OPENSTACK, DOCKER)
    # the shipped ones first; plug-ins (the tests' toy: tests/plugins/toy) after them
    assert catalogue.provider_names()[:2] == ("openstack", "docker")
    assert [p.chart for p in catalogue.providers()][:2] == ["openstack-cluster", "docker-cluster"]


def _docker_settings() -> Any:
    return parse_settings_text(
        "apiVersion: scs-templates.scs.community/v1alpha1\nkind: ClusterSettings\n"
        "metadata: {name: dev}\nspec: {provider: docker}\n"
    ).settings


def test_provider_of_follows_spec_provider() -> None:
    assert catalogue.provider_of(_docker_settings()) is DOCKER


def test_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(InputError, match=r"unknown provider 'vsphere'; known: openstack, docker"):
        catalogue.provider("vsphere")


class _Extra(Provider):
    name = "extra"
    description = "a provider that exists only in this test"


def test_a_provider_can_be_registered_for_the_duration_of_a_block() -> None:
    extra = _Extra()
    with catalogue.registered_provider(extra):
        assert catalogue.provider("extra") is extra
        names = catalogue.provider_names()
        assert names[: len(SHIPPED_PROVIDERS)] == SHIPPED_PROVIDERS
        assert names[-1] == "extra"
        with (
            pytest.raises(ValueError, match="registered already"),
            catalogue.registered_provider(_Extra()),
        ):
            pass
    assert "extra" not in catalogue.provider_names()


def _provider_name_comparisons(tree: ast.AST) -> Iterator[int]:
    """Line numbers of ``<x>.provider == "<name>"`` or ``provider == "<name>"`` (or ``!=``)
    comparisons."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = any(
            (isinstance(s, ast.Attribute) and s.attr == "provider")
            or (isinstance(s, ast.Name) and s.id == "provider")
            for s in sides
        )
        literal = any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides)
        equality = any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops)
        if named and literal and equality:
            yield node.lineno


def test_no_provider_name_comparison_outside_the_providers_package() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "providers" not in path.relative_to(PACKAGE).parts
        for line in _provider_name_comparisons(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "ask catalogue.provider_of(settings) instead: " + ", ".join(found)


def test_the_comparison_finder_finds_one() -> None:
    tree = ast.parse('if settings.spec.provider == "openstack":\n    pass\n')
    assert list(_provider_name_comparisons(tree)) == [1]
    tree = ast.parse('x = 1\nif provider != "docker":\n    pass\n')
    assert list(_provider_name_comparisons(tree)) == [2]


def _cloud_sdk_imports(tree: ast.AST) -> Iterator[int]:
    """Line numbers of imports of openstacksdk (``openstack``) or keystoneauth1."""
    sdks = ("openstack", "keystoneauth1")
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        if any(name.split(".")[0] in sdks for name in names):
            yield node.lineno


def test_the_openstack_modules_live_under_the_openstack_provider() -> None:
    """One obvious place per provider: every module that talks to an OpenStack cloud is in
    scs_templates/providers/openstack/ (no top-level scs_templates/openstack any more)."""
    home = PACKAGE / "providers" / "openstack"
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if home not in path.parents
        for line in _cloud_sdk_imports(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == [], "OpenStack cloud code belongs in scs_templates/providers/openstack/"
    assert not (PACKAGE / "openstack").exists()
    inside = [
        path.name
        for path in sorted(home.glob("*.py"))
        if list(_cloud_sdk_imports(ast.parse(path.read_text(encoding="utf-8"))))
    ]
    assert "connection.py" in inside and "appcred.py" in inside


def test_the_sdk_import_finder_finds_both_spellings() -> None:
    tree = ast.parse("import openstack\nfrom openstack.config import loader\nimport openstackx\n")
    assert list(_cloud_sdk_imports(tree)) == [1, 2]


def test_the_service_catalogue_is_the_network_then_each_providers_own_then_the_common() -> None:
    from scs_templates._services import catalogue as services

    own = [info for p in catalogue.providers() for info in operations_of(p).services()]
    assert [info.release for info in own] == [
        "openstack-cloud-controller-manager",
        "metadata-policy",
        "snapshot-controller",
        "openstack-cinder-csi",
    ]
    assert (*services._NETWORK, *own, *services._COMMON) == services.CATALOGUE
    # each provider's rows are for that provider only
    for provider in catalogue.providers():
        rows = operations_of(provider).services()
        assert all(info.providers == (provider.name,) for info in rows)
    # a provider without a cloud adds none
    assert operations_of(DOCKER).services() == ()


def test_cloud_options_come_from_the_clusters_provider_only() -> None:
    import argparse

    from scs_templates._cli.run.lifecycle import cloud_options
    from scs_templates._clikit.arguments import provider_options
    from scs_templates.providers.interface import CloudOptions

    parser = argparse.ArgumentParser()
    provider_options(parser, credentials=False)
    args = parser.parse_args(["--os-cloud", "mine", "--skip-openstack"])
    assert cloud_options(args, "openstack") == CloudOptions(touch=False, account="mine")
    # a provider without options of its own gets the defaults, whatever was given
    assert cloud_options(args, "docker") == CloudOptions()
    with pytest.raises(SystemExit):  # without credentials=True there is no --clouds-yaml
        parser.parse_args(["--clouds-yaml", "x"])


@pytest.mark.parametrize("example", ["openstack-production.yaml", "docker-clusterclass.yaml"])
def test_the_provider_is_resolved_once_per_settings_document(
    example: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validation's rules, the values (the ClusterClass name, the chart version) and every
    later ``provider_of`` ask the one provider object the document resolved: the registry
    is searched once per document, not per question."""
    from scs_templates._render.values import build_values
    from scs_templates._settings import plugins
    from scs_templates._settings.validate import load_settings

    asked: list[str] = []
    search = plugins.provider_named

    def counted(name: str) -> object:
        asked.append(name)
        return search(name)

    monkeypatch.setattr(plugins, "provider_named", counted)
    settings = load_settings(REPO / "examples" / example).settings
    build_values(settings)
    build_values(settings)
    resolved = catalogue.provider_of(settings)
    assert asked == [settings.spec.provider]
    assert resolved is catalogue.provider(settings.spec.provider)


def test_a_copy_naming_another_provider_resolves_its_own() -> None:
    settings: Any = _docker_settings()
    assert catalogue.provider_of(settings) is DOCKER
    spec = settings.spec.model_copy(update={"provider": "openstack"})
    assert catalogue.provider_of(settings.model_copy(update={"spec": spec})) is OPENSTACK
    assert catalogue.provider_of(settings) is DOCKER


def test_the_lifecycle_options_group_is_read_once_for_every_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """install, apply and delete each add the providers' options; reading the entry points
    (every ``*.dist-info`` on sys.path) once serves all three, as ``--help`` builds them."""
    from scs_templates._cli.main import build_parser
    from scs_templates._clikit import arguments

    groups: list[str] = []

    def counted(group: str) -> Iterator[tuple[str, str, str]]:
        groups.append(group)
        return entry_points(group)

    entry_points = arguments.entry_points
    monkeypatch.setattr(arguments, "entry_points", counted)
    arguments._cloud_option_modules.cache_clear()
    try:
        parser = build_parser()
    finally:
        arguments._cloud_option_modules.cache_clear()
    assert groups.count(arguments.CLOUD_OPTIONS_GROUP) == 1
    assert "--os-cloud" in parser._subparsers._group_actions[0].choices["delete"].format_help()  # type: ignore[union-attr]
