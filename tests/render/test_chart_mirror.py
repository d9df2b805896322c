"""``--chart-mirror URL`` for ``services render``, ``apply`` and ``gitops``, and a chart
that cannot be fetched named with the way out (issue #39).

Proven: the option replaces spec.services.chartMirror of ``services render`` and ``apply``
(a problem names ``--chart-mirror``); ``gitops`` with examples/openstack-production.yaml
works offline with ``--chart-mirror file:///DIR`` (the real gateway-crds-helm package, real
helmfile) and flags on stderr the one step that reads a chart when it has none; ``oci://``
mirrors re-source the chart; a network failure of helmfile (the issue's own text) becomes
one line naming the chart and suggesting the mirror.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scs_templates._cli.main import build_parser, main
from scs_templates._clikit.common import load_args
from scs_templates._services.fetch_hint import fetch_failure
from scs_templates._services.releases import (
    MIRROR_REPOSITORY,
    Repository,
    from_mirror,
    service_releases,
)
from scs_templates._services.runner import ServicesHelmfile
from scs_templates._settings.validate import load_settings
from scs_templates._tools.helmfile import HelmfileError
from tests.support import REPO, real_charts

PRODUCTION = REPO / "examples" / "openstack-production.yaml"
#: What helmfile printed for `gitops` of the production example without network (issue #39).
OFFLINE = (
    'Error: failed to do request: Head "https://registry-1.docker.io/v2/envoyproxy/'
    'gateway-crds-helm/manifests/v1.9.0": dial tcp: lookup registry-1.docker.io on '
    "10.255.255.53:53: no such host"
)
STATE = {
    "releases": [
        {"name": "gateway-api-crds", "chart": "envoyproxy/gateway-crds-helm", "version": "v1.9.0"},
        {"name": "cilium", "chart": "cilium/cilium", "version": "1.18.2"},
        {"name": "local", "chart": "/srv/charts/x-1.0.0.tgz", "version": "1.0.0"},
    ]
}


def test_a_network_failure_names_the_chart_and_the_mirror() -> None:
    message = fetch_failure(f"helmfile template failed (exit 1): {OFFLINE}", STATE)
    assert message is not None
    assert message.startswith("cannot fetch the chart(s) gateway-crds-helm v1.9.0: ")
    assert "no such host" in message and "--chart-mirror file:///DIR" in message
    assert "\n" not in message


def test_a_network_failure_naming_no_chart_names_every_remote_one() -> None:
    message = fetch_failure("Error: dial tcp 10.0.0.1:443: i/o timeout", STATE)
    assert message is not None
    assert "cilium 1.18.2, gateway-crds-helm v1.9.0:" in message
    assert "x-1.0.0" not in message  # a local package needs no network


def test_other_failures_are_left_alone() -> None:
    assert fetch_failure('Error: template: cilium/templates/x.yaml:3: bad "value"', STATE) is None


def test_the_services_runner_raises_the_named_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(*_args: Any, **_options: Any) -> Any:
        raise HelmfileError(
            "helmfile template failed (exit 1): " + OFFLINE.splitlines()[0],
            command=["template"],
            returncode=1,
            stderr=OFFLINE,
        )

    monkeypatch.setattr(ServicesHelmfile, "execute", offline)
    with pytest.raises(HelmfileError) as raised:
        ServicesHelmfile().run({"services": STATE}, ["template"])
    assert str(raised.value).startswith("cannot fetch the chart(s) gateway-crds-helm v1.9.0")
    assert raised.value.returncode == 1


def test_an_oci_mirror_re_sources_the_chart() -> None:
    settings = load_settings(PRODUCTION).settings
    (crds,) = [r for r in service_releases(settings) if r.info.server_side]
    mirrored = from_mirror(crds, "oci://registry.example/charts/")
    assert mirrored.chart == f"{MIRROR_REPOSITORY}/gateway-crds-helm"
    assert mirrored.source is not None
    assert mirrored.source.repository == Repository(
        MIRROR_REPOSITORY, "registry.example/charts", oci=True
    )
    local = from_mirror(crds, "file:///srv/charts")
    assert local.chart == f"/srv/charts/gateway-crds-helm-{crds.version}.tgz"
    assert from_mirror(crds, None) is crds


@pytest.mark.parametrize("command", [["services", "render"], ["apply"]], ids=" ".join)
def test_chart_mirror_replaces_the_settings_mirror(command: list[str]) -> None:
    args = build_parser().parse_args(
        [*command, str(PRODUCTION), "--chart-mirror", "oci://registry.example/charts"]
    )
    settings = load_args(args).settings
    assert settings.spec.services.chart_mirror == "oci://registry.example/charts"


def test_services_render_reads_a_local_chart_mirror_from_the_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(["services", "render", str(PRODUCTION), "--chart-mirror", f"file://{tmp_path}"])
    assert code == 2  # checked before helmfile runs: every chart must be in the folder
    err = capsys.readouterr().err
    assert "spec.services.chartMirror: missing packaged charts: " in err
    assert f"{tmp_path}/gateway-crds-helm-" in err


def test_gitops_flags_the_one_step_that_reads_a_chart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from scs_templates._cli.run.gitops import _note_rendered_charts

    settings = load_settings(PRODUCTION).settings
    _note_rendered_charts([settings, settings], None)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1  # once per chart, not per cluster
    assert lines[0].startswith("scs-templates: note: gitops renders gateway-api-crds itself")
    assert "from oci://docker.io/envoyproxy" in lines[0]
    _note_rendered_charts([settings], "file:///srv/charts")
    assert capsys.readouterr().err == ""


def test_gitops_of_the_production_example_works_offline_with_a_local_mirror(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The issue's failure: `gitops` of examples/openstack-production.yaml ran helmfile
    against registry-1.docker.io. With --chart-mirror file:///DIR it reads the real package."""
    settings = load_settings(PRODUCTION).settings
    (crds,) = [r for r in service_releases(settings) if r.info.server_side]
    package = real_charts() / f"{crds.chart_name}-{crds.version}.tgz"
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / package.name).symlink_to(package)
    repo = tmp_path / "repo"
    code = main(
        [
            "gitops",
            str(repo),
            str(PRODUCTION),
            "--chart-source",
            "oci://registry.example/scs",
            "--chart-mirror",
            f"file://{mirror}",
        ]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert "note:" not in err
    (folder,) = (repo / "crds").iterdir()
    assert folder.name.startswith(f"gateway-api-crds-{crds.version}-")
    files = sorted(p.name for p in folder.iterdir())
    assert any(name.startswith("customresourcedefinition-") for name in files), files


def test_gitops_names_the_option_for_a_missing_local_package(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(
        [
            "gitops",
            str(tmp_path / "repo"),
            str(PRODUCTION),
            "--chart-source",
            "oci://registry.example/scs",
            "--chart-mirror",
            f"file://{tmp_path}",
        ]
    )
    assert code == 2
    assert "missing packaged charts: " in capsys.readouterr().err
