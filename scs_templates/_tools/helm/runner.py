"""The one place that runs helm: hermetic, time-limited, secret-safe, helm 4.

Every other module (render, install, status, diff, the fleet code) goes through :class:`Helm`
so the rules hold everywhere:

* argument lists, never a shell; the argv never contains values (they may hold secrets):
  values go to helm as JSON on stdin (``-f -``), which also avoids every YAML 1.1 trap;
* ``-n NAMESPACE`` on every command and ``--kube-version`` wherever helm has it, because
  otherwise the output depends on the kubeconfig's context and on helm's built-in default
  Kubernetes version (which helm 4 derives from the client-go it was built with);
* helm's homes (cache, config, data, helm 4's content cache) point at a private directory
  and the caller's ``HELM_*`` variables are dropped, so the user's repositories, plugins and
  registry logins neither leak in nor get modified;
* a wall-clock timeout kills helm's whole process group (:mod:`.process`);
* success is decided on the exit code only: helm warns on stderr while succeeding; those
  warnings are logged at debug level.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import shlex
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scs_templates._core import process
from scs_templates._core.errors import ToolError, ToolNotFoundError
from scs_templates._core.records import record
from scs_templates._core.timeouts import explicit as explicit_timeout
from scs_templates._core.timeouts import tool_timeout
from scs_templates._tools.helm.errors import HelmError, HelmTimeout, error_text, redact
from scs_templates._tools.toolchain.go_build import unless_callers
from scs_templates._tools.toolchain.resolve import Tool, find_helm, hermetic_env

if TYPE_CHECKING:
    from typing import Any


#: Debug lines (``--debug``): each helm command line, how long it took, its stderr on success.
log = logging.getLogger(__name__)


#: Values under keys that match this are treated as secrets and scrubbed from error texts.
_SECRET_KEY = re.compile(
    r"(password|passwd|secret|token|credential|cacert|clouds|private.?key|\bkey\b)", re.I
)
#: The wall clock of one helm call unless ``--timeout``/``SCS_TEMPLATES_TIMEOUT`` say otherwise.
DEFAULT_TIMEOUT_SECONDS = 300.0
#: Margin between helm's own ``--timeout`` and our wall clock, so helm can report first.
_WALL_MARGIN_SECONDS = 60.0


@record
class ReleaseInfo:
    """One installed release as ``helm list`` describes it."""

    name: str
    namespace: str
    revision: int
    status: str
    chart: str
    app_version: str
    updated: str


# --------------------------------------------------------------------------- helm homes

_home_lock = threading.Lock()
_process_home: tuple[int, Path] | None = None


def _default_home() -> Path:
    """A private helm home for this process, removed when the process exits.

    Keyed by pid: a forked child (multiprocessing) gets its own directory instead of sharing
    (and later deleting) its parent's.
    """
    global _process_home
    with _home_lock:
        if _process_home is None or _process_home[0] != os.getpid():
            path = Path(tempfile.mkdtemp(prefix="scs-templates-helm-"))
            atexit.register(shutil.rmtree, path, True)
            _process_home = (os.getpid(), path)
        return _process_home[1]


def _secret_strings(values: Any, *, under_secret: bool = False) -> set[str]:
    """String leaves of ``values`` below keys that look secret (password, token, clouds...)."""
    found: set[str] = set()
    if isinstance(values, Mapping):
        for key, value in values.items():
            found |= _secret_strings(
                value, under_secret=under_secret or bool(_SECRET_KEY.search(str(key)))
            )
    elif isinstance(values, list | tuple):
        for item in values:
            found |= _secret_strings(item, under_secret=under_secret)
    elif isinstance(values, str) and under_secret and len(values) >= 4:
        found.add(values)
        found.update(line for line in values.splitlines() if len(line.strip()) >= 8)
    return found


#: The helm subcommands that talk to a cluster: every other one (template, lint, show, pull,
#: version ...) runs without ``KUBECONFIG``, whether the caller's environment or the
#: ``kubeconfig`` of this runner has one (issue #41: an offline render never hands the
#: management cluster's credentials file to helm).
CLUSTER_COMMANDS = frozenset(
    {"install", "upgrade", "uninstall", "rollback", "status", "list", "get", "history", "test"}
)


#: The Go collector of a one-cluster ``helm template``: none, up to a backstop. Such a helm
#: lives a fraction of a second and allocates a few MB; with Go's default (GOGC=100) its
#: collections cost ~25 % of its CPU (20 renders of each example, docs/performance.md "Why it
#: is fast") for ~5 MB of peak memory (52 -> 57 MB). GOMEMLIMIT keeps the collector for a
#: chart that allocates far more. A caller who set GOGC or GOMEMLIMIT keeps its own.
TEMPLATE_COLLECTOR = {"GOGC": "off", "GOMEMLIMIT": "256MiB"}


def template_collector(environ: Mapping[str, str]) -> dict[str, str]:
    """:data:`TEMPLATE_COLLECTOR`, or nothing where ``environ`` sets GOGC or GOMEMLIMIT."""
    return unless_callers(TEMPLATE_COLLECTOR, environ)


class Helm:
    """A configured helm binary. Thread-safe; one instance can serve a whole fleet.

    ``tool`` defaults to :func:`find_helm` (``SCS_TEMPLATES_HELM``, PATH, tools cache).
    ``timeout`` is the wall clock per helm call in seconds (default
    :func:`~scs_templates._core.timeouts.tool_timeout` of 300 s). ``kubeconfig``/``kube_context``
    are passed explicitly to the commands that talk to a cluster. ``home`` is the root of
    helm's cache/config/data directories; by default a per-process temp directory.
    """

    def __init__(
        self,
        tool: Tool | None = None,
        *,
        timeout: float | None = None,
        kubeconfig: str | None = None,
        kube_context: str | None = None,
        home: Path | None = None,
    ) -> None:
        self.tool = tool if tool is not None else find_helm()
        if self.tool.major != 4:
            raise ToolNotFoundError(
                f"{self.tool.path}: helm {self.tool.version} is not supported (need helm 4)"
            )
        self.major: int = self.tool.major
        self.timeout = timeout if timeout is not None else tool_timeout(DEFAULT_TIMEOUT_SECONDS)
        self.kubeconfig = kubeconfig
        self.kube_context = kube_context
        self.home = home

    def __repr__(self) -> str:
        return f"Helm({self.tool.path}, version={self.tool.version})"

    # ------------------------------------------------------------------ environment

    def environment(self) -> dict[str, str]:
        """The environment helm runs with: hermetic homes, no inherited ``HELM_*``."""
        home = self.home if self.home is not None else _default_home()
        env = hermetic_env(home)
        env["HELM_CONTENT_CACHE"] = str(home / "content")
        if self.kubeconfig is not None:
            env["KUBECONFIG"] = self.kubeconfig
        return env

    def _cluster_flags(self) -> list[str]:
        flags: list[str] = []
        if self.kubeconfig is not None:
            flags += ["--kubeconfig", self.kubeconfig]
        if self.kube_context is not None:
            flags += ["--kube-context", self.kube_context]
        return flags

    # ------------------------------------------------------------------ running

    def run(
        self,
        args: Sequence[str],
        *,
        values: Mapping[str, Any] | None = None,
        sensitive: Iterable[str] = (),
        timeout: float | None = None,
        what: str | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> process.Completed:
        """Run ``helm ARGS`` and return the finished process; raise :class:`HelmError` on failure.

        With ``values`` the argv must contain ``-f -``; the values are sent as JSON on stdin.
        ``sensitive`` strings (plus the string values under secret-looking keys) are scrubbed
        from the error message and stderr. ``what`` names the action in messages.
        ``extra_env`` adds variables on top of the hermetic environment (never ``HELM_*``).
        """
        argv = [str(self.tool.path), *args]
        secrets = set(sensitive)
        stdin: bytes | None = None
        if values is not None:
            if "-" not in args:
                raise ValueError("values need `-f -` in the helm arguments")
            stdin = json.dumps(values, ensure_ascii=False).encode("utf-8")
            secrets |= _secret_strings(values)
        label = what or f"helm {args[0] if args else ''}".strip()
        limit = self.timeout if timeout is None else timeout
        debug = log.isEnabledFor(logging.DEBUG)
        if debug:
            log.debug("running %s", shlex.join(argv))
        try:
            env = self._command_environment(args, extra_env)
            done = process.run(argv, env=env, timeout=limit, stdin=stdin)
        except process.ProcessTimeout as error:
            stderr = redact(error.stderr, secrets)
            raise HelmTimeout(
                f"{label} did not finish within {limit:g} s and was stopped",
                command=argv,
                returncode=-9,
                stderr=stderr,
            ) from None
        except OSError as error:
            raise ToolError(f"cannot run {self.tool.path}: {error.strerror or error}") from None
        stderr = redact(done.stderr, secrets)
        if done.returncode != 0:
            detail = error_text(stderr) or f"exit code {done.returncode}, no message"
            raise HelmError(
                f"{label} failed: {detail}",
                command=argv,
                returncode=done.returncode,
                stderr=stderr,
            )
        if debug:
            log.debug("%s finished in %.2f s", label, done.seconds)
        if debug and stderr.strip():
            log.debug("%s wrote on stderr (exit 0):\n%s", label, stderr.rstrip())
        return done

    def _command_environment(
        self, args: Sequence[str], extra_env: Mapping[str, str] | None
    ) -> dict[str, str]:
        """The environment of one helm command: ``extra_env`` on top of the hermetic one
        (never ``HELM_*``), and no kubeconfig for a command that does not talk to a cluster."""
        env = self.environment()
        env.update({k: v for k, v in (extra_env or {}).items() if not k.startswith("HELM_")})
        if not args or args[0] not in CLUSTER_COMMANDS:
            env.pop("KUBECONFIG", None)
        return env

    # ------------------------------------------------------------------ offline commands

    @staticmethod
    def template_args(
        release: str, chart: Path | str, *, namespace: str, kube_version: str
    ) -> list[str]:
        """The ``helm template`` arguments (without ``-f``) used by :meth:`template`.

        Public so ``scs-templates values -o`` can print the very same command line.
        """
        return [
            "template",
            release,
            str(chart),
            "-n",
            namespace,
            "--kube-version",
            kube_version,
        ]

    def template(
        self,
        release: str,
        chart: Path,
        *,
        namespace: str,
        values: Mapping[str, Any],
        kube_version: str,
        sensitive: Iterable[str] = (),
    ) -> str:
        """``helm template``: the rendered manifests, exactly as helm printed them."""
        args = [
            *self.template_args(release, chart, namespace=namespace, kube_version=kube_version),
            "-f",
            "-",
        ]
        done = self.run(
            args,
            values=values,
            sensitive=sensitive,
            what=f"helm template {release}",
            extra_env=template_collector(os.environ),
        )
        return done.stdout

    def lint(
        self,
        chart: Path,
        *,
        values: Mapping[str, Any],
        namespace: str,
        kube_version: str,
        strict: bool = True,
    ) -> str:
        """``helm lint`` with the given values; returns its report.

        Note: lint does NOT fail on ``required``/``fail`` (helm logs them and exits 0); use
        :meth:`template` to prove values render.
        """
        args = ["lint", str(chart), "-n", namespace, "--kube-version", kube_version]
        if strict:
            args.append("--strict")
        args += ["-f", "-"]
        return self.run(args, values=values, what=f"helm lint {chart}").stdout

    # ------------------------------------------------------------------ cluster commands

    def upgrade_install(
        self,
        release: str,
        chart: Path,
        *,
        namespace: str,
        values: Mapping[str, Any],
        create_namespace: bool = True,
        rollback_on_failure: bool = True,
        wait: bool = False,
        timeout: float | None = None,
        sensitive: Iterable[str] = (),
    ) -> ReleaseInfo:
        """``helm upgrade --install``; returns the release as installed.

        ``rollback_on_failure`` is ``--rollback-on-failure`` (it implies waiting). Waiting is
        ``--wait=legacy`` (helm 3's semantics), also when only rolling back on failure. helm 4's
        default ``watcher`` strategy (kstatus) counts Cluster API objects that are still
        provisioning as in progress, so an upgrade of a young cluster would wait for the
        timeout and be rolled back; the cluster's readiness is followed by ``install --wait``
        through the Cluster's conditions instead. ``timeout`` is helm's ``--timeout``;
        our wall clock then allows a minute more, unless the user set one
        (:func:`~scs_templates._core.timeouts.explicit`): then that is the wall clock and helm's
        ``--timeout`` is cut to end inside it. ``--kube-version`` does not exist here:
        the cluster tells helm its version.
        """
        args = ["upgrade", "--install", release, str(chart), "-n", namespace]
        args += self._cluster_flags()
        if create_namespace:
            args.append("--create-namespace")
        if rollback_on_failure:
            args.append("--rollback-on-failure")
        if wait or rollback_on_failure:
            args.append(self._wait_flag())
        wall, timeout = self._upgrade_timeouts(timeout)
        if timeout is not None:
            args += ["--timeout", f"{max(1, round(timeout))}s"]
        args += ["-o", "json", "-f", "-"]
        done = self.run(
            args,
            values=values,
            sensitive=sensitive,
            timeout=wall,
            what=f"helm upgrade --install {release}",
        )
        info = _release_from_json(done.stdout, namespace)
        if info is not None:
            return info
        found = self.status(release, namespace=namespace)
        if found is None:
            raise ToolError(f"helm upgrade --install {release}: release not found afterwards")
        return found

    def _upgrade_timeouts(self, timeout: float | None) -> tuple[float, float | None]:
        """Our wall clock and helm's ``--timeout`` (None: helm's default) of an upgrade,
        as :meth:`upgrade_install` describes them."""
        helm_timeout = 300.0 if timeout is None else timeout
        wall = max(self.timeout, helm_timeout + _WALL_MARGIN_SECONDS)
        knob = explicit_timeout()
        if knob is not None:
            # the user's --timeout / SCS_TEMPLATES_TIMEOUT is the longest this helm may run:
            # helm's own --timeout ends inside it (leaving a quarter, at most the margin, to
            # roll back and report); before, the wall clock was at least 6 minutes whatever
            # the user had set
            wall = knob
            helm_timeout = min(helm_timeout, max(1.0, knob - min(_WALL_MARGIN_SECONDS, knob / 4)))
            timeout = helm_timeout
        return wall, timeout

    def status(self, release: str, *, namespace: str) -> ReleaseInfo | None:
        """The release's state, or None when it is not installed.

        Uses ``helm list``: unlike ``helm status -o json``, it never prints the release's
        values.
        """
        pattern = "^" + release.replace(".", r"\.") + "$"
        args = ["list", "-n", namespace, *self._cluster_flags(), "--filter", pattern]
        args += ["-o", "json"]
        done = self.run(args, what=f"helm list {release}")
        rows = json.loads(done.stdout or "[]") or []
        for row in rows:
            if isinstance(row, dict) and row.get("name") == release:
                return _release_from_row(row, namespace)
        return None

    def get_manifest(self, release: str, *, namespace: str) -> str:
        """The manifests helm stored for the release's current revision."""
        args = ["get", "manifest", release, "-n", namespace, *self._cluster_flags()]
        return self.run(args, what=f"helm get manifest {release}").stdout

    def get_values(self, release: str, *, namespace: str) -> dict[str, Any]:
        """The user-supplied values of the release (may hold secrets: do not log them)."""
        args = ["get", "values", release, "-n", namespace, *self._cluster_flags()]
        args += ["-o", "json"]
        done = self.run(args, what=f"helm get values {release}")
        data = json.loads(done.stdout or "null")
        return data if isinstance(data, dict) else {}

    def _wait_flag(self) -> str:
        """helm 3's wait semantics (see :meth:`upgrade_install`)."""
        return "--wait=legacy"

    def uninstall(self, release: str, *, namespace: str, wait: bool = False) -> None:
        """``helm uninstall``; ``wait`` waits until the resources are gone."""
        args = ["uninstall", release, "-n", namespace, *self._cluster_flags()]
        if wait:
            args.append(self._wait_flag())
        self.run(args, what=f"helm uninstall {release}")


def _release_from_row(row: Mapping[str, Any], namespace: str) -> ReleaseInfo:
    try:
        revision = int(row.get("revision") or 0)
    except (TypeError, ValueError):
        revision = 0
    return ReleaseInfo(
        name=str(row.get("name", "")),
        namespace=str(row.get("namespace") or namespace),
        revision=revision,
        status=str(row.get("status", "")),
        chart=str(row.get("chart", "")),
        app_version=str(row.get("app_version", "")),
        updated=str(row.get("updated", "")),
    )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _release_from_json(text: str, namespace: str) -> ReleaseInfo | None:
    """A :class:`ReleaseInfo` from ``helm upgrade -o json`` (a release object), if parsable."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or "name" not in data:
        return None
    info = _mapping(data.get("info"))
    meta = _mapping(_mapping(data.get("chart")).get("metadata"))
    chart_name = f"{meta.get('name', '')}-{meta.get('version', '')}" if meta else ""
    return ReleaseInfo(
        name=str(data["name"]),
        namespace=str(data.get("namespace") or namespace),
        revision=int(data.get("version") or 0),
        status=str(info.get("status", "")),
        chart=chart_name,
        app_version=str(meta.get("appVersion", "")),
        updated=str(info.get("last_deployed", "")),
    )


__all__ = ["Helm", "HelmError", "HelmTimeout", "ReleaseInfo"]
