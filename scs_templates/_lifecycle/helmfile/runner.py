"""Drive helmfile over ``helmfile.d/`` with state values generated from the settings.

Rules, each for a measured reason (see ``docs/helmfile.md``):

* helmfile always gets the project's helm (:func:`~scs_templates._tools.toolchain.find_helm`)
  through ``--helm-binary``, never whatever helm is first on PATH;
* charts are made ready ONCE (``chart_for`` vendors the library chart; charts that still
  lack dependencies get ``helm dependency build`` under a per-chart file lock, because
  parallel builds of one chart directory race) and every command runs with ``--skip-deps``;
  otherwise helmfile rebuilds dependencies per release and per call;
* never interactive: stdin is /dev/null and ``helmfile init`` is never run;
* hermetic: helm homes and ``HELMFILE_TEMPDIR`` in a private directory, no upgrade notice
  (it calls the network and exits 3 offline);
* the generated state values file and the values file are JSON, mode 0600 (values may hold
  secret-looking strings), in a temporary directory removed after the call;
* a wall-clock timeout kills helmfile's whole process group (it runs helm as a child).
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import json
import logging
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml import YAML

from scs_templates._core import atomic, process
from scs_templates._core.errors import ToolError
from scs_templates._core.shipped import shipped_dir
from scs_templates._lifecycle import (
    DEFAULT_POLL_INTERVAL,
    DEFAULT_WAIT_TIMEOUT,
    delete,
    ensure_release_secrets,
    prune_superseded_templates,
)
from scs_templates._render.charts import chart_for
from scs_templates._render.render import kube_version_of
from scs_templates._render.values import build_values
from scs_templates._tools.helm import Helm
from scs_templates._tools.helm.errors import error_text
from scs_templates._tools.helm.runner import _secret_strings
from scs_templates._tools.helmfile import (
    HelmfileError,
    HelmfileProcess,
    HelmfileTimeout,
)
from scs_templates._tools.kube import KubeClient
from scs_templates._tools.toolchain.resolve import Tool

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scs_templates._core.progress import Progress
    from scs_templates._lifecycle import DeleteResult
    from scs_templates._render.charts import ChartRef
    from scs_templates._settings.model import ClusterSettings
    from scs_templates.providers.interface import CloudOptions

log = logging.getLogger(__name__)


def helmfile_dir() -> Path:
    """``helmfile.d`` of a source checkout, or the copy inside the installed wheel."""
    return shipped_dir("helmfile.d", "helmfile.d is")


@contextlib.contextmanager
def _chart_lock(chart: Path) -> Iterator[None]:
    lock_dir = Path(tempfile.gettempdir()) / "scs-templates-locks"
    lock_dir.mkdir(exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", str(chart.resolve()))[-200:]
    with (lock_dir / f"{name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class StateValues:
    """What :meth:`Helmfile.write_state` produced: the state values file and its content."""

    file: Path
    values_file: Path
    data: dict[str, Any]


class Helmfile(HelmfileProcess):
    """helmfile over ``helmfile.d`` for one management cluster.

    ``helmfile``/``helm`` default to the project's helmfile (built on first use) and
    :func:`find_helm`. ``state_dir`` defaults to the project's ``helmfile.d``. ``kubeconfig`` and
    ``kube_context`` select the management cluster for ``sync``/``destroy``/``list``.
    """

    def __init__(
        self,
        helmfile: Tool | None = None,
        helm: Tool | None = None,
        *,
        timeout: float | None = None,
        state_dir: Path | None = None,
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
        self.state_dir = state_dir if state_dir is not None else helmfile_dir()

    # ------------------------------------------------------------------ preparation

    def prepare_chart(self, chart: ChartRef) -> None:
        """Make sure ``chart`` renders with ``--skip-deps`` (dependencies in ``charts/``).

        ``chart_for`` already vendors the library chart, so usually nothing runs. A chart
        whose declared dependencies are missing gets one ``helm dependency build``, under
        a lock per chart directory.
        """
        path = Path(chart.path)
        if not _needs_dependency_build(path):
            return
        with _chart_lock(path):
            if not _needs_dependency_build(path):
                return
            self._run_helm(["dependency", "build", str(path), "--skip-refresh"])

    def state_values(
        self, settings: ClusterSettings
    ) -> tuple[dict[str, Any], dict[str, Any], ChartRef]:
        """The state values (without file paths) and helm values for ``settings``."""
        chart = chart_for(settings.resolved_provider())
        values = build_values(settings)
        cluster = {
            "release": settings.metadata.name,
            "namespace": settings.metadata.namespace,
            "chart": str(Path(chart.path).resolve()),
            "chartName": chart.name,
            "chartVersion": chart.version,
            "kubeVersion": kube_version_of(settings),
            "provider": settings.spec.provider,
            "template": settings.spec.template,
        }
        return {"cluster": cluster}, values, chart

    def write_state(self, settings: ClusterSettings, directory: Path) -> StateValues:
        """Write ``state-values.json`` and ``values.json`` (both 0600) into ``directory``."""
        state, values, chart = self.state_values(settings)
        self.prepare_chart(chart)
        values_file = atomic.write_file(
            directory / "values.json", json.dumps(values, indent=2) + "\n", private=True
        )
        state["cluster"]["valuesFile"] = str(values_file.resolve())
        file = atomic.write_file(
            directory / "state-values.json", json.dumps(state, indent=2) + "\n", private=True
        )
        return StateValues(file, values_file, state)

    # ------------------------------------------------------------------ running

    def _run_helm(self, args: Sequence[str]) -> None:
        argv = [str(self.helm.path), *args]
        with tempfile.TemporaryDirectory(prefix="scs-templates-helmfile-") as temp:
            done = process.run(argv, env=self.environment(Path(temp)), timeout=self.timeout)
        if done.returncode != 0:
            raise ToolError(f"helm {' '.join(args[:2])} failed: {error_text(done.stderr)}")

    def run(
        self,
        settings: ClusterSettings,
        command: Sequence[str],
        *,
        cluster: bool = False,
        kubeconfig: str | None = None,
    ) -> process.Completed:
        """Run ``helmfile [global flags] COMMAND`` with fresh state values for ``settings``.

        ``cluster`` adds ``--kubeconfig``/``--kube-context`` (commands that reach the API);
        ``kubeconfig`` overrides the instance's for this call (and implies ``cluster``).
        Raises :class:`HelmfileError` on a non-zero exit, :class:`HelmfileTimeout` on timeout.
        """
        sensitive = _secret_strings(build_values(settings))
        with tempfile.TemporaryDirectory(prefix="scs-templates-helmfile-") as temp:
            temp_dir = Path(temp)
            state = self.write_state(settings, temp_dir)
            return self.execute(
                self.state_dir,
                state.file,
                command,
                workdir=temp_dir,
                cluster=cluster,
                kubeconfig=kubeconfig,
                sensitive=sensitive,
            )

    # ------------------------------------------------------------------ commands

    def template(self, settings: ClusterSettings) -> str:
        """``helmfile template``: the manifests of every release, offline."""
        return self.run(settings, ["template", "--skip-deps"]).stdout

    def build(self, settings: ClusterSettings) -> str:
        """``helmfile build``: the fully rendered helmfile state (what would be deployed)."""
        return self.run(settings, ["build"]).stdout

    def list(self, settings: ClusterSettings) -> list[dict[str, Any]]:
        """``helmfile list --output json``: the releases declared for this cluster (offline)."""
        done = self.run(settings, ["list", "--skip-charts", "--output", "json"])
        data = json.loads(done.stdout or "[]")
        return [row for row in data if isinstance(row, dict)] if isinstance(data, list) else []

    def write_values(self, settings: ClusterSettings, directory: Path) -> builtins.list[Path]:
        """``helmfile write-values``: each release's merged values as ``DIR/RELEASE.yaml``.

        The files never hold a credential (the chart references the credentials Secret).
        """
        directory.mkdir(parents=True, exist_ok=True)
        target = str(directory.resolve()) + "/{{ .Release.Name }}.yaml"
        self.run(settings, ["write-values", "--skip-deps", "--output-file-template", target])
        return sorted(directory.glob("*.yaml"))

    def sync(
        self,
        settings: ClusterSettings,
        *,
        kubeconfig: str | None = None,
        prune: bool = True,
        progress: Progress | None = None,
    ) -> str:
        """``helmfile sync`` to the management cluster (no helm-diff plugin needed); returns
        helmfile's output.

        First, as ``install`` does (``lifecycle.ensure_release_secrets``): the registry
        mirrors' credentials Secrets are checked and the encryption key Secret is created
        when missing. OpenStack: the credentials Secret must exist first
        (``lifecycle.store_credentials`` or the manifest of ``openstack appcred create
        --write-secret``).

        After it, as ``install`` does (``prune``, on by default): the cluster's superseded
        hashed machine templates that nothing uses any more are removed
        (``lifecycle.prune_superseded_templates``; each one named through ``progress``).
        The charts keep them (``helm.sh/resource-policy: keep``) so that a rollout finds
        them; without this step every template change of a sync would leave one more
        generation behind until ``destroy``.
        """
        config = kubeconfig or self.kubeconfig
        with KubeClient(config, self.kube_context) as client:
            ensure_release_secrets(client, settings)
            done = self.run(settings, ["sync", "--skip-deps"], cluster=True, kubeconfig=kubeconfig)
            if prune:
                helm = Helm(
                    self.helm, kubeconfig=config, kube_context=self.kube_context, home=self.home
                )
                prune_superseded_templates(client, settings, helm, progress=progress)
        return done.stdout

    def destroy(
        self,
        settings: ClusterSettings,
        *,
        kubeconfig: str | None = None,
        timeout: float | None = None,
        poll_interval: float | None = None,
        cloud: CloudOptions | None = None,
    ) -> DeleteResult:
        """Delete the cluster as ``scs-templates delete`` does, with ``helmfile destroy``
        (never prompts) in place of ``helm uninstall`` (``lifecycle.delete``): the Cluster
        object first, waiting until Cluster API has torn it down (``timeout``), then the
        releases, the kept templates and the Secrets, then the provider's cloud resources
        (``cloud``).

        Why not ``helmfile destroy`` alone: it deletes every object of the release at once,
        the infrastructure cluster together with the machines; on the real plane CAPD's
        machines then stay Deleting (their infrastructure cluster is gone) and the Cluster
        never goes (docs/helmfile.md).
        """
        config = kubeconfig or self.kubeconfig
        helm = Helm(self.helm, kubeconfig=config, kube_context=self.kube_context, home=self.home)

        def uninstall() -> None:
            self.run(settings, ["destroy", "--skip-deps"], cluster=True, kubeconfig=kubeconfig)

        return delete(
            settings,
            helm=helm,
            kubeconfig=config,
            context=self.kube_context,
            timeout=timeout if timeout is not None else DEFAULT_WAIT_TIMEOUT,
            poll_interval=poll_interval if poll_interval is not None else DEFAULT_POLL_INTERVAL,
            cloud=cloud,
            uninstall=uninstall,
        )


def _needs_dependency_build(chart: Path) -> bool:
    """True when Chart.yaml declares dependencies that ``charts/`` does not hold."""
    try:
        meta = YAML(typ="safe").load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    except OSError:
        return False
    dependencies = (meta or {}).get("dependencies") or []
    if not dependencies:
        return False
    vendored = chart / "charts"
    for dependency in dependencies:
        name = str(dependency.get("name", ""))
        if not (vendored / name).is_dir() and not list(vendored.glob(f"{name}-*.tgz")):
            return True
    return False


__all__ = [
    "Helmfile",
    "HelmfileError",
    "HelmfileTimeout",
    "StateValues",
    "helmfile_dir",
]
