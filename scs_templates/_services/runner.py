"""helmfile over ``helmfile.d/10-services.yaml.gotmpl`` with generated services state values.

Same rules as :mod:`scs_templates._lifecycle.helmfile.runner` (which drives the cluster release):
the
project's helm through ``--helm-binary``, ``--skip-deps`` on every command that renders or syncs
unless the state names a helm (non-OCI) repository (:func:`deps_flags`), argument lists,
stdin ``/dev/null``, hermetic helm homes and ``HELMFILE_TEMPDIR``, no upgrade notice, the
state values as a 0600 JSON file in a private directory removed after the call, a
wall-clock timeout that kills helmfile's whole process group, and secret-looking
values redacted from errors. Only the services file is loaded (``--file`` names it), so the
cluster release of ``00-*`` never reaches the workload cluster.
"""

from __future__ import annotations

import builtins
import json
import logging
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scs_templates._core import atomic, process
from scs_templates._lifecycle.helmfile import helmfile_dir
from scs_templates._services.fetch_hint import fetch_failure
from scs_templates._tools.helm.runner import _secret_strings
from scs_templates._tools.helmfile import HelmfileError, HelmfileProcess
from scs_templates._tools.toolchain.resolve import Tool

__all__ = ["SERVICES_FILE", "ServicesHelmfile", "services_file"]

log = logging.getLogger(__name__)

SERVICES_FILE = "10-services.yaml.gotmpl"


def deps_flags(state: Mapping[str, Any]) -> list[str]:
    """``["--skip-deps"]``, or nothing when the state names a helm (non-OCI) repository.

    ``--skip-deps`` also skips helmfile's ``helm repo add``, and the helm home is private:
    a chart ``REPO/CHART`` of a helm repository (upstream or a ``spec.services.chartMirror``
    helm repository) is then "repo REPO not found" (seen: ``gitops`` rendering the Gateway
    API CRDs from a helm-repository mirror). OCI charts and local packages need no repository
    entry, so those states keep the flag (nothing else runs)."""
    from scs_templates._services.releases import STATE_KEY  # deferred: pydantic

    services = state.get(STATE_KEY)
    repositories = (services.get("repositories") if isinstance(services, Mapping) else None) or []
    if any(not repo.get("oci") for repo in repositories if isinstance(repo, Mapping)):
        return []
    return ["--skip-deps"]


def services_file() -> Path:
    """The services helmfile (source checkout or the copy inside the installed wheel)."""
    return helmfile_dir() / SERVICES_FILE


class ServicesHelmfile(HelmfileProcess):
    """helmfile for the services of ONE workload cluster.

    ``kubeconfig``/``kube_context`` select the workload cluster for ``sync``.
    ``state_file`` defaults to :func:`services_file`.
    """

    inherit_kubeconfig = False  # the management cluster's KUBECONFIG must never leak in
    default_timeout = 3600.0  # a whole cluster's services, with waiting

    def __init__(
        self,
        helmfile: Tool | None = None,
        helm: Tool | None = None,
        *,
        timeout: float | None = None,
        state_file: Path | None = None,
        kubeconfig: str | None = None,
        kube_context: str | None = None,
        home: Path | None = None,
    ) -> None:
        super().__init__(
            helmfile,
            helm,
            timeout=timeout,
            kubeconfig=kubeconfig,
            kube_context=kube_context,
            home=home,
        )
        self.state_file = state_file if state_file is not None else services_file()

    def run(
        self, state: Mapping[str, Any], command: Sequence[str], *, cluster: bool = False
    ) -> process.Completed:
        """``helmfile [global flags] COMMAND`` with ``state`` as the state values file.

        ``cluster`` adds ``--kubeconfig``/``--kube-context`` of the workload cluster.
        Raises :class:`HelmfileError` (exit 1) on failure, :class:`HelmfileTimeout`.
        """
        with tempfile.TemporaryDirectory(prefix="scs-templates-services-") as temp:
            temp_dir = Path(temp)
            state_path = atomic.write_file(
                temp_dir / "services-state-values.json",
                json.dumps(state, indent=2, sort_keys=False) + "\n",
                private=True,
            )
            try:
                return self.execute(
                    self.state_file,
                    state_path,
                    command,
                    workdir=temp_dir,
                    cluster=cluster,
                    sensitive=_secret_strings(state),
                )
            except HelmfileError as error:
                _raise_fetch_failure(error, state)
                raise

    # ------------------------------------------------------------------ commands

    def build(self, state: Mapping[str, Any]) -> str:
        """``helmfile build``: the rendered state (pulls OCI charts: not offline then)."""
        return self.run(state, ["build"]).stdout

    def list(self, state: Mapping[str, Any]) -> list[dict[str, Any]]:
        """``helmfile list --skip-charts --output json`` (offline)."""
        done = self.run(
            state, ["--allow-no-matching-release", "list", "--skip-charts", "--output", "json"]
        )
        data = json.loads(done.stdout or "[]")
        return [row for row in data if isinstance(row, dict)] if isinstance(data, list) else []

    def template(self, state: Mapping[str, Any]) -> str:
        """``helmfile template --skip-deps``: the manifests of every installed release."""
        return self.run(state, ["template", *deps_flags(state)]).stdout

    def render(self, state: Mapping[str, Any], *, kube_version: str) -> str:
        """``helmfile template`` as ``scs-templates services render`` prints it: every
        installed release with its CRDs (``--include-crds``: helm installs a chart's
        ``crds/`` too), without test hooks (``--skip-tests``: ``sync`` never runs them), for
        ``kube_version`` (charts that branch on the Kubernetes version render the same
        everywhere)."""
        command = [
            "template",
            *deps_flags(state),
            "--include-crds",
            "--skip-tests",
            "--kube-version",
            kube_version,
        ]
        return self.run(state, command).stdout

    def write_values(self, state: Mapping[str, Any], directory: Path) -> builtins.list[Path]:
        """``helmfile write-values``: each release's values as ``DIR/RELEASE.yaml``."""
        directory.mkdir(parents=True, exist_ok=True)
        target = str(directory.resolve()) + "/{{ .Release.Name }}.yaml"
        self.run(state, ["write-values", *deps_flags(state), "--output-file-template", target])
        return sorted(directory.glob("*.yaml"))

    def sync(
        self, state: Mapping[str, Any], *, releases: Sequence[str] = (), wait: bool = False
    ) -> str:
        """``helmfile sync --skip-deps`` to the workload cluster.

        ``releases`` limits the sync to those release names (``--selector name=...``; the
        others, including their needs, are left alone); empty means every release.
        """
        selectors: list[str] = []
        for name in releases:
            selectors += ["--selector", f"name={name}"]
        command = [*selectors, "sync", *deps_flags(state)]
        if wait:
            command.append("--wait")
        return self.run(state, command, cluster=True).stdout


def _raise_fetch_failure(error: HelmfileError, state: Mapping[str, Any]) -> None:
    """Raise the one-line message of :mod:`~scs_templates._services.fetch_hint` when
    ``error`` is a chart that could not be fetched (nothing otherwise)."""
    from scs_templates._services.releases import STATE_KEY  # deferred: pydantic

    services = state.get(STATE_KEY)
    message = fetch_failure(
        f"{error}\n{error.stderr}", services if isinstance(services, Mapping) else {}
    )
    if message is not None:
        raise HelmfileError(
            message, command=error.command, returncode=error.returncode, stderr=error.stderr
        ) from None
