"""``scs-templates migrate --proxy-profile`` end to end, with helm: the migrated KaaS v1 proxy
reaches containerd and kubelet in the rendered bootstrap templates. The migration itself is
tests/unit/test_migrate.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scs_templates._cli.main import main
from tests.support import REPO

DATA = REPO / "tests" / "data" / "kaas-v1"


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- proxy profile


def test_cli_proxy_profile_reaches_the_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`migrate --proxy-profile` end to end: the written settings file validates, and the
    rendered bootstrap templates give containerd and kubelet the KaaS v1 proxy, with the
    profile's NO_PROXY entries and the cluster's own."""
    from scs_templates import api
    from scs_templates._settings.validate import load_settings
    from tests.support import pinned_helm

    profile = tmp_path / "proxy.sh"
    profile.write_text(
        'export HTTP_PROXY="http://proxy.corp:3128"\n'
        "export HTTPS_PROXY=http://proxy.corp:3129\n"
        "export NO_PROXY=.corp,10.0.0.0/8\n"
    )
    target = tmp_path / "settings.yaml"
    argv = [
        "migrate",
        str(DATA / "r6.yaml"),
        "--proxy-profile",
        str(profile),
        "--output-file",
        str(target),
    ]
    code, _out, err = run_cli(argv, capsys)
    assert code == 0, err
    result = api.render(load_settings(target).settings, helm=pinned_helm())
    templates = [o for o in result.objects if o["kind"] == "KubeadmConfigTemplate"]
    kcp = next(o for o in result.objects if o["kind"] == "KubeadmControlPlane")
    specs = [kcp["spec"]["kubeadmConfigSpec"]] + [t["spec"]["template"]["spec"] for t in templates]
    assert len(specs) >= 2
    for spec in specs:
        files = {f["path"]: f.get("content", "") for f in spec["files"]}
        for unit in ("containerd", "kubelet"):
            dropin = files[f"/etc/systemd/system/{unit}.service.d/http-proxy.conf"]
            assert 'Environment="HTTP_PROXY=http://proxy.corp:3128"' in dropin, dropin
            assert 'Environment="HTTPS_PROXY=http://proxy.corp:3129"' in dropin, dropin
            no_proxy = re.search(r'Environment="NO_PROXY=([^"]*)"', dropin)
            assert no_proxy is not None, dropin
            entries = no_proxy.group(1).split(",")
            assert {".corp", "10.0.0.0/8", "localhost", ".svc"} <= set(entries), entries
