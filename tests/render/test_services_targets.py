"""``services render`` marks each object's target cluster and ``--target`` filters (#39).

The cluster-autoscaler runs next to the Cluster on the MANAGEMENT cluster; every other
service in the workload cluster. Each printed document starts with ``# target: workload``
or ``# target: management``, decided by the chart its ``# Source:`` line names; ``--target``
keeps one of them (stdout, ``-o name|json`` and ``--output-dir`` alike).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scs_templates._cli.main import main
from scs_templates._services.preview import render_services
from scs_templates._settings.validate import load_settings
from tests.support import REPO, real_charts

PRODUCTION = REPO / "examples" / "openstack-production.yaml"

CANNED = """\
---
# Source: cilium/templates/cilium-agent/daemonset.yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cilium
  namespace: kube-system
---
# Source: cluster-autoscaler/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: prod1-cluster-autoscaler
  namespace: team-a
---
# Source: metrics-server/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: metrics-server
  namespace: kube-system
"""


class CannedHelmfile:
    """Stands in for ServicesHelmfile: helmfile's output of three releases."""

    def render(self, state: Any, *, kube_version: str) -> str:
        del state, kube_version
        return CANNED


@pytest.fixture
def canned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The preview's helmfile (where ``render_services`` takes it from) is the canned one."""
    import scs_templates._services.preview

    monkeypatch.setattr(scs_templates._services.preview, "ServicesHelmfile", CannedHelmfile)


def test_each_document_names_its_target_cluster(canned: None) -> None:
    result = render_services(load_settings(PRODUCTION).settings)
    by_name = {
        obj["metadata"]["name"]: where
        for obj, where in zip(result.objects, result.targets, strict=True)
    }
    assert by_name["prod1-cluster-autoscaler"] == "management"
    assert by_name["cilium"] == by_name["metrics-server"] == "workload"
    assert all(
        where == "workload"
        for obj, where in zip(result.objects, result.targets, strict=True)
        if obj["kind"] == "Namespace"
    )  # the Pod Security labels apply sets
    marked = result.marked()
    assert marked.count("---\n# target: ") == len(result.documents)
    assert "---\n# target: management\n# Source: cluster-autoscaler/" in marked


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_target_filters_every_output(
    canned: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["services", "render", str(PRODUCTION)]
    code, out, _ = run(capsys, *args, "--target", "management", "-o", "name")
    assert (code, out) == (0, "deployment.apps/prod1-cluster-autoscaler\n")
    code, out, _ = run(capsys, *args, "--target", "workload", "-o", "json")
    names = [item["metadata"]["name"] for item in json.loads(out)["items"]]
    assert code == 0 and "prod1-cluster-autoscaler" not in names and "cilium" in names
    code, out, _ = run(capsys, *args, "--target", "management")
    assert out.startswith("---\n# target: management\n# Source: cluster-autoscaler/")
    assert out.count("---\n") == 1
    code, _, _ = run(capsys, *args, "--target", "management", "--output-dir", str(tmp_path / "o"))
    (file,) = (tmp_path / "o").iterdir()
    assert file.name == "01-deployment-prod1-cluster-autoscaler.yaml"
    assert file.read_text().startswith("# target: management\n# Source: cluster-autoscaler/")


def test_a_tag_ruamel_cannot_read_in_helmfiles_output_is_one_line_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """helmfile's output goes through the loader ``render`` uses (_core/yaml_text): a value
    ruamel cannot read as its explicit tag's type was ``internal error: ValueError`` quoting
    the value; now it is helm's failure, one line, and the value is not shown."""
    import scs_templates._services.preview

    class Tagged(CannedHelmfile):
        def render(self, state: Any, *, kube_version: str) -> str:
            return super().render(state, kube_version=kube_version) + "data:\n  a: !!int S3CR3T\n"

    monkeypatch.setattr(scs_templates._services.preview, "ServicesHelmfile", Tagged)
    code, out, err = run(capsys, "services", "render", str(PRODUCTION), "-o", "name")
    assert (code, out) == (1, "")
    assert err.startswith("scs-templates: error: helm printed output that is not a YAML manifest")
    assert len(err.splitlines()) == 1 and "S3CR3T" not in err, err


def test_the_real_services_of_the_production_example_are_marked() -> None:
    """With the real charts: only the cluster-autoscaler's objects go to the management
    cluster, every document is marked, and the two targets together are the whole output."""
    from scs_templates._settings.layers import load_layers

    mirror = ("--chart-mirror", ("spec", "services", "chartMirror"), f"file://{real_charts()}")
    result = render_services(load_layers([str(PRODUCTION)], overrides=[mirror]).settings)
    management = result.selected("management")
    assert management, "the production example autoscales"
    assert all(result.documents[i].startswith("# Source: cluster-autoscaler/") for i in management)
    assert sorted(management + result.selected("workload")) == list(range(len(result.documents)))
    assert result.marked().count("---\n# target: ") == len(result.documents)
