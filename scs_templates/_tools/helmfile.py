"""What every helmfile run shares: the binaries, a hermetic environment, one way to run.

Both the cluster runner (:mod:`.runner`, ``helmfile.d`` on the management cluster) and the
services runner (:mod:`scs_templates._services.runner`, one workload cluster) build on
:class:`HelmfileProcess`, so the rules live in one place: the project's helm through
``--helm-binary`` (never whatever helm is on PATH), stdin ``/dev/null``, hermetic helm
homes and ``HELMFILE_TEMPDIR``, no upgrade notice (it calls the network and exits 3
offline), a wall-clock timeout that kills helmfile's whole process group, decisions on the
exit code only, and secret strings redacted from every error.
"""

from __future__ import annotations

import logging
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from scs_templates._core import process
from scs_templates._core.errors import ToolError
from scs_templates._core.timeouts import tool_timeout
from scs_templates._tools.helm.errors import error_text, redact, shorten
from scs_templates._tools.helm.runner import _default_home
from scs_templates._tools.toolchain.install import ensure_tool
from scs_templates._tools.toolchain.resolve import Tool, find_helm, hermetic_env

log = logging.getLogger(__name__)

_STDERR_BLOCK = re.compile(r"^STDERR:\s*$(.*?)^(?:COMBINED OUTPUT:|\Z)", re.M | re.S)


class HelmfileError(ToolError):
    """helmfile exited non-zero. ``command`` holds no values; ``stderr`` is redacted."""

    def __init__(self, message: str, *, command: Sequence[str], returncode: int, stderr: str):
        super().__init__(message)
        self.command: list[str] = list(command)
        self.returncode = returncode
        self.stderr = stderr


class HelmfileTimeout(HelmfileError):
    """helmfile ran past its deadline; its process group (helm included) was killed."""


def error_message(stderr: str) -> str:
    """helm's error from helmfile's PATH/ARGS/STDERR block, else helmfile's own last lines."""
    match = _STDERR_BLOCK.search(stderr)
    if match:
        inner = "\n".join(line.strip() for line in match.group(1).splitlines())
        text = error_text(inner)
        if text:
            return text
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "err" in line.lower()]
    return shorten("\n".join((errors or lines)[-5:])) or "no message"


def _helmfile() -> Tool:
    """The helmfile to run; built now (minutes, once) when it is nowhere yet: helmfile is
    built lazily, the first time a helmfile command needs it (docs/toolchain.md)."""

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    return ensure_tool("helmfile", progress=progress)


class HelmfileProcess:
    """helmfile + the project's helm, with the shared rules. ``kubeconfig``/``kube_context`` select
    the cluster that commands reaching an API talk to."""

    #: Keep the caller's ``KUBECONFIG`` when no kubeconfig is given (False: never leak it).
    inherit_kubeconfig = True
    #: Wall clock of one helmfile call unless ``--timeout``/``SCS_TEMPLATES_TIMEOUT`` is set.
    default_timeout = 900.0

    def __init__(
        self,
        helmfile: Tool | None = None,
        helm: Tool | None = None,
        *,
        timeout: float | None = None,
        kubeconfig: str | None = None,
        kube_context: str | None = None,
        home: Path | None = None,
    ) -> None:
        self.helmfile = helmfile if helmfile is not None else _helmfile()
        self.helm = helm if helm is not None else find_helm()
        self.timeout = timeout if timeout is not None else tool_timeout(self.default_timeout)
        self.kubeconfig = kubeconfig
        self.kube_context = kube_context
        self.home = home

    def _home(self) -> Path:
        return self.home if self.home is not None else _default_home()

    def environment(self, tempdir: Path) -> dict[str, str]:
        env = hermetic_env(self._home())
        env["HELMFILE_UPGRADE_NOTICE_DISABLED"] = "1"
        env["HELMFILE_TEMPDIR"] = str(tempdir)
        env.pop("HELMFILE_ENVIRONMENT", None)
        if not self.inherit_kubeconfig:
            env.pop("KUBECONFIG", None)
        if self.kubeconfig is not None:
            env["KUBECONFIG"] = self.kubeconfig
        return env

    def execute(
        self,
        file: Path,
        state_file: Path,
        command: Sequence[str],
        *,
        workdir: Path,
        cluster: bool = False,
        kubeconfig: str | None = None,
        sensitive: set[str] | frozenset[str] = frozenset(),
    ) -> process.Completed:
        """``helmfile --file FILE ... --state-values-file STATE COMMAND``.

        ``workdir`` is a private directory of the caller (``HELMFILE_TEMPDIR`` goes below it).
        ``cluster`` adds ``--kubeconfig``/``--kube-context``; ``kubeconfig`` overrides the
        instance's for this call (and implies ``cluster``). Raises :class:`HelmfileError`
        on a non-zero exit, :class:`HelmfileTimeout` on timeout.
        """
        kubeconfig = kubeconfig if kubeconfig is not None else self.kubeconfig
        cluster = cluster or kubeconfig is not None
        argv = self._argv(file, state_file, command, cluster=cluster, kubeconfig=kubeconfig)
        label = f"helmfile {command[0]}" if command else "helmfile"
        log.debug("running %s", shlex.join(argv))
        helmfile_tmp = workdir / "helmfile-tmp"
        helmfile_tmp.mkdir(exist_ok=True)
        env = self.environment(helmfile_tmp)
        if kubeconfig is not None:
            env["KUBECONFIG"] = kubeconfig
        if not cluster:  # offline (template, build, list, write-values): no credentials (#41)
            env.pop("KUBECONFIG", None)
        try:
            done = process.run(argv, env=env, timeout=self.timeout)
        except process.ProcessTimeout as error:
            raise HelmfileTimeout(
                f"{label} did not finish within {self.timeout:g} s and was stopped",
                command=argv,
                returncode=-9,
                stderr=redact(error.stderr, sensitive),
            ) from None
        except OSError as error:
            raise ToolError(f"cannot run {self.helmfile.path}: {error.strerror or error}") from None
        stderr = redact(done.stderr, sensitive)
        if done.returncode != 0:
            raise HelmfileError(
                f"{label} failed (exit {done.returncode}): {error_message(stderr)}",
                command=argv,
                returncode=done.returncode,
                stderr=stderr,
            )
        if stderr.strip():
            log.debug("%s wrote on stderr (exit 0):\n%s", label, stderr.rstrip())
        return done

    def _argv(
        self,
        file: Path,
        state_file: Path,
        command: Sequence[str],
        *,
        cluster: bool,
        kubeconfig: str | None,
    ) -> list[str]:
        """helmfile's command line (the cluster's only where ``cluster``)."""
        argv = [
            str(self.helmfile.path),
            "--file",
            str(file),
            "--helm-binary",
            str(self.helm.path),
            "--state-values-file",
            str(state_file),
            "--no-color",
        ]
        if cluster and kubeconfig is not None:
            argv += ["--kubeconfig", kubeconfig]
        if cluster and self.kube_context is not None:
            argv += ["--kube-context", self.kube_context]
        argv += list(command)
        return argv
