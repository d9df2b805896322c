"""The example block at the end of every command's ``--help`` (argparse's epilog).

One table, keyed by the command's words, so that every command has examples
(tests/render/test_cli_output.py checks it). A line starting
with ``#`` explains the line before it.
"""

from __future__ import annotations

from scs_templates._clikit.examples import examples_block

EXAMPLES: dict[str, tuple[str, ...]] = {
    "validate": (
        "scs-templates validate cluster.yaml other.yaml",
        "scs-templates validate -f base.yaml -f prod.yaml --set spec.controlPlane.replicas=3",
        "# the merged document; problems name the file (or --set PATH) that set the value",
    ),
    "schema": ("scs-templates schema > cluster-settings.schema.json",),
    "render": (
        "scs-templates render cluster.yaml | kubectl apply -f -",
        "scs-templates render -f base.yaml -f prod.yaml --output-dir out/",
        "scs-templates render cluster.yaml -o name",
        "scs-templates render cluster.yaml --set 'spec.workers[0].replicas=5' -o json",
    ),
    "values": (
        "scs-templates values cluster.yaml",
        "scs-templates values cluster.yaml --output-dir out/",
        "# out/values.json and the `helm template` line that reproduces `render`",
    ),
    "templates": ("scs-templates templates",),
    "versions": ("scs-templates versions", "scs-templates versions -o json | jq .kubernetes"),
    "render-fleet": (
        "scs-templates render-fleet clusters/*.yaml --output-dir out/",
        "scs-templates render-fleet clusters/*.yaml --stdout -j 2",
    ),
    "install": (
        "scs-templates install cluster.yaml --wait --timeout 30m",
        "scs-templates install base.yaml -f prod.yaml --kubeconfig mgmt.yaml --context admin",
    ),
    "status": (
        "scs-templates status cluster.yaml",
        "scs-templates status cluster.yaml -o json | jq .cluster.phase",
    ),
    "kubeconfig": (
        "scs-templates kubeconfig cluster.yaml --output-file workload.kubeconfig",
        "scs-templates kubeconfig cluster.yaml | kubectl --kubeconfig /dev/stdin get nodes",
    ),
    "describe": (
        "scs-templates describe cluster.yaml",
        "scs-templates describe cluster.yaml -o json | jq .ready",
    ),
    "diff": ("scs-templates diff cluster.yaml --exit-code",),
    "delete": (
        "scs-templates delete cluster.yaml --dry-run",
        "scs-templates delete cluster.yaml --yes --timeout 30m",
    ),
    "encryption-key": ("scs-templates encryption-key status cluster.yaml",),
    "encryption-key create": ("scs-templates encryption-key create cluster.yaml",),
    "encryption-key status": ("scs-templates encryption-key status cluster.yaml",),
    "encryption-key rotate": (
        "scs-templates encryption-key rotate cluster.yaml --step add",
        "# then --step promote, then --step remove (docs/cluster-features.md)",
    ),
    "apply": (
        "scs-templates apply cluster.yaml --wait",
        "scs-templates apply cluster.yaml --chart-mirror oci://harbor.example/charts",
    ),
    "services": ("scs-templates services render cluster.yaml",),
    "services render": (
        "scs-templates services render cluster.yaml --output-dir services/",
        "scs-templates services render cluster.yaml --target management -o name",
        "scs-templates services render cluster.yaml --chart-mirror file:///srv/charts",
    ),
    "gitops": (
        "scs-templates gitops fleet/ clusters/*.yaml --chart-source oci://registry.example/scs",
        "scs-templates gitops fleet/ cluster.yaml --chart-source oci://registry.example/scs "
        "--chart-mirror file:///srv/charts",
        "# --chart-mirror: the Gateway API CRD chart gitops renders itself; offline with file://",
    ),
    "completion": (
        "scs-templates completion bash > ~/.local/share/bash-completion/completions/scs-templates",
        "scs-templates completion zsh > ~/.zfunc/_scs-templates",
        "scs-templates completion fish > ~/.config/fish/completions/scs-templates.fish",
    ),
    "tools": ("scs-templates tools status",),
    "tools install": ("scs-templates tools install",),
    "tools status": ("scs-templates tools status",),
}


def epilog(prog: str) -> str | None:
    """The example block of the command whose parser is called ``prog``
    (``scs-templates openstack appcred create``), or None."""
    lines = EXAMPLES.get(prog.partition(" ")[2])
    if not lines:
        return None
    return examples_block(lines)
