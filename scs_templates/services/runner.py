"""helmfile over ``helmfile.d/10-services.yaml.gotmpl`` with generated services state values.

Same rules as :mod:`scs_templates.helmfile.runner` (which drives the cluster release): a
helm 3 through ``--helm-binary``, ``--skip-deps`` on every command that renders or syncs,
argument lists, stdin ``/dev/null``, hermetic helm homes and ``HELMFILE_TEMPDIR``, no
upgrade notice, the state values as a 0600 JSON file in a private directory removed after
the call, a wall-clock timeout that kills helmfile's whole process group, and secret-looking
values redacted from errors. Only the services file is loaded (``--file`` names it), so the
cluster release of ``00-*`` never reaches the workload cluster.
"""

from __future__ import annotations

import builtins
import json
import logging
import re
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scs_templates import atomic
from scs_templates.errors import ToolError
from scs_templates.helm import process
from scs_templates.helm.errors import error_text, redact
from scs_templates.helm.runner import _default_home, _secret_strings
from scs_templates.helmfile import HelmfileError, HelmfileTimeout, helmfile_dir
from scs_templates.toolchain import Tool, find_helm_for_helmfile, find_helmfile, hermetic_env

__all__ = ["SERVICES_FILE", "ServicesHelmfile", "services_file"]

log = logging.getLogger(__name__)

SERVICES_FILE = "10-services.yaml.gotmpl"
_STDERR_BLOCK = re.compile(r"^STDERR:\s*$(.*?)^(?:COMBINED OUTPUT:|\Z)", re.M | re.S)


def services_file() -> Path:
    """The services helmfile (source checkout or the copy inside the installed wheel)."""
    return helmfile_dir() / SERVICES_FILE


def _error_message(stderr: str) -> str:
    match = _STDERR_BLOCK.search(stderr)
    if match:
        inner = "\n".join(line.strip() for line in match.group(1).splitlines())
        text = error_text(inner)
        if text:
            return text
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "err" in line.lower()]
    return "\n".join((errors or lines)[-5:]) or "no message"


class ServicesHelmfile:
    """helmfile for the services of ONE workload cluster.

    ``kubeconfig``/``kube_context`` select the workload cluster for ``sync``.
    ``state_file`` defaults to :func:`services_file`.
    """

    def __init__(
        self,
        helmfile: Tool | None = None,
        helm: Tool | None = None,
        *,
        timeout: float = 3600.0,
        state_file: Path | None = None,
        kubeconfig: str | None = None,
        kube_context: str | None = None,
        home: Path | None = None,
    ) -> None:
        self.helmfile = helmfile if helmfile is not None else find_helmfile()
        self.helm = helm if helm is not None else find_helm_for_helmfile()
        if self.helm.major != 3:
            raise ToolError(
                f"helmfile {self.helmfile.version} needs helm 3, got helm {self.helm.version}"
            )
        self.timeout = timeout
        self.state_file = state_file if state_file is not None else services_file()
        self.kubeconfig = kubeconfig
        self.kube_context = kube_context
        self.home = home

    def environment(self, tempdir: Path) -> dict[str, str]:
        env = hermetic_env(self.home if self.home is not None else _default_home())
        env["HELMFILE_UPGRADE_NOTICE_DISABLED"] = "1"
        env["HELMFILE_TEMPDIR"] = str(tempdir)
        env.pop("HELMFILE_ENVIRONMENT", None)
        env.pop("KUBECONFIG", None)
        if self.kubeconfig is not None:
            env["KUBECONFIG"] = self.kubeconfig
        return env

    def run(
        self, state: Mapping[str, Any], command: Sequence[str], *, cluster: bool = False
    ) -> process.Completed:
        """``helmfile [global flags] COMMAND`` with ``state`` as the state values file.

        ``cluster`` adds ``--kubeconfig``/``--kube-context`` of the workload cluster.
        Raises :class:`HelmfileError` (exit 1) on failure, :class:`HelmfileTimeout`.
        """
        sensitive = _secret_strings(state)
        with tempfile.TemporaryDirectory(prefix="scs-templates-services-") as temp:
            temp_dir = Path(temp)
            (temp_dir / "helmfile-tmp").mkdir()
            state_path = atomic.write_file(
                temp_dir / "services-state-values.json",
                json.dumps(state, indent=2, sort_keys=False) + "\n",
                private=True,
            )
            argv = [
                str(self.helmfile.path),
                "--file",
                str(self.state_file),
                "--helm-binary",
                str(self.helm.path),
                "--state-values-file",
                str(state_path),
                "--no-color",
            ]
            if cluster and self.kubeconfig is not None:
                argv += ["--kubeconfig", self.kubeconfig]
            if cluster and self.kube_context is not None:
                argv += ["--kube-context", self.kube_context]
            argv += list(command)
            label = f"helmfile {command[0]}"
            log.debug("running %s", shlex.join(argv))
            try:
                done = process.run(
                    argv, env=self.environment(temp_dir / "helmfile-tmp"), timeout=self.timeout
                )
            except process.ProcessTimeout as error:
                raise HelmfileTimeout(
                    f"{label} did not finish within {self.timeout:g} s and was stopped",
                    command=argv,
                    returncode=-9,
                    stderr=redact(error.stderr, sensitive),
                ) from None
            except OSError as error:
                raise ToolError(
                    f"cannot run {self.helmfile.path}: {error.strerror or error}"
                ) from None
        stderr = redact(done.stderr, sensitive)
        if done.returncode != 0:
            raise HelmfileError(
                f"{label} failed (exit {done.returncode}): {_error_message(stderr)}",
                command=argv,
                returncode=done.returncode,
                stderr=stderr,
            )
        if stderr.strip():
            log.debug("%s wrote on stderr (exit 0):\n%s", label, stderr.rstrip())
        return done

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
        return self.run(state, ["template", "--skip-deps"]).stdout

    def write_values(self, state: Mapping[str, Any], directory: Path) -> builtins.list[Path]:
        """``helmfile write-values``: each release's values as ``DIR/RELEASE.yaml``."""
        directory.mkdir(parents=True, exist_ok=True)
        target = str(directory.resolve()) + "/{{ .Release.Name }}.yaml"
        self.run(state, ["write-values", "--skip-deps", "--output-file-template", target])
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
        command = [*selectors, "sync", "--skip-deps"]
        if wait:
            command.append("--wait")
        return self.run(state, command, cluster=True).stdout
