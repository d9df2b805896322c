"""Check a kubeconfig before anything uses it: a broken one is the user's input (exit 2).

Without this check a kubeconfig that is not YAML, not a mapping or binary ended as an
``internal error`` from the ``kubernetes`` package's loader (exit 1), or as helm's
``Kubernetes cluster unreachable`` (exit 1, "a tool failed"), although nothing but the file
was wrong. Only the structure is checked here; whether the credentials work is the API
server's answer. Messages never quote the file's content (it holds credentials).
"""

from __future__ import annotations

import os
from pathlib import Path

from scs_templates.errors import InputError

#: A kubeconfig with embedded certificates of many clusters is still far below this.
MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024


def kubeconfig_path(kubeconfig: str | None) -> tuple[str, bool]:
    """The file used (``--kubeconfig``, else the first of ``$KUBECONFIG``, else
    ``~/.kube/config``) and whether the user named it explicitly."""
    if kubeconfig:
        return kubeconfig, True
    listed = [part for part in os.environ.get("KUBECONFIG", "").split(os.pathsep) if part]
    if listed:
        return listed[0], True
    return str(Path.home() / ".kube" / "config"), False


def check_kubeconfig(kubeconfig: str | None) -> None:
    """Raise :class:`InputError` (one line) when the kubeconfig to be used is unusable."""
    from scs_templates import textinput

    path, explicit = kubeconfig_path(kubeconfig)
    if not explicit and not Path(path).exists():
        return  # no kubeconfig at all: the tools say so in their own words
    try:
        text = textinput.read_text(path, MAX_KUBECONFIG_BYTES, what="a kubeconfig")
    except textinput.InputRefused as refused:
        raise InputError(f"kubeconfig {path}: {refused}") from None
    data = _load(text, path)
    if not isinstance(data, dict):
        raise InputError(
            f"kubeconfig {path}: not a kubeconfig (expected a mapping with clusters, contexts "
            "and users)"
        )
    for key in ("clusters", "contexts", "users"):
        if data.get(key) is not None and not isinstance(data[key], list):
            raise InputError(f"kubeconfig {path}: {key} must be a list")


def _load(text: str, path: str) -> object:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return YAML(typ="safe", pure=True).load(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = (error.problem or error.context or "invalid").strip()
        if "alias" in problem:  # an alias name may be a credential someone mistyped
            problem = "an undefined alias"
        raise InputError(f"kubeconfig {path}: not valid YAML{where}: {problem}") from None
    except (YAMLError, RecursionError, ValueError):
        raise InputError(f"kubeconfig {path}: not valid YAML") from None
