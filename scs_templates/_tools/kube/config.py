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
from typing import TYPE_CHECKING

from scs_templates._core import textinput
from scs_templates._core.errors import InputError

if TYPE_CHECKING:
    from typing import Any

#: A kubeconfig with embedded certificates of many clusters is still far below this.
MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024


def kubeconfig_path(kubeconfig: str | None) -> tuple[str, bool]:
    """The file used (``--kubeconfig``, else the first of ``$KUBECONFIG``, else
    ``~/.kube/config``) and whether the user named it explicitly."""
    paths, source = kubeconfig_paths(kubeconfig)
    return paths[0], source != DEFAULT_SOURCE


#: How :func:`kubeconfig_paths` says that neither --kubeconfig nor $KUBECONFIG named a file.
DEFAULT_SOURCE = "the default"
#: How to name a kubeconfig, appended to every "no kubeconfig" message.
KUBECONFIG_HINT = "pass --kubeconfig FILE or set KUBECONFIG"


def kubeconfig_paths(kubeconfig: str | None) -> tuple[list[str], str]:
    """The files the kubeconfig is read from and who named them: ``--kubeconfig``,
    ``$KUBECONFIG`` (several files, merged as kubectl does) or :data:`DEFAULT_SOURCE`
    (``~/.kube/config``)."""
    if kubeconfig:
        return [kubeconfig], "--kubeconfig"
    listed = [part for part in os.environ.get("KUBECONFIG", "").split(os.pathsep) if part]
    if listed:
        return listed, "$KUBECONFIG"
    return [str(Path.home() / ".kube" / "config")], DEFAULT_SOURCE


def check_kubeconfig(kubeconfig: str | None, context: str | None = None) -> None:
    """Raise :class:`InputError` (one line, exit 2) when the kubeconfig to be used is
    missing or unusable, or has no such ``context`` (nor a current one): before anything is
    printed or changed, and the same for every command and the library (without it, helm
    went to ``localhost:8080`` and the ``kubernetes`` package said "Invalid kube-config
    file" for a missing file and for a mistyped ``--context``)."""
    paths, source = kubeconfig_paths(kubeconfig)
    documents = [(path, _document(path, source)) for path in paths]
    found = [(path, data) for path, data in documents if data is not None]
    if not found:
        if source == DEFAULT_SOURCE:
            raise InputError(
                f"no kubeconfig of the management cluster: {paths[0]} does not exist "
                f"(KUBECONFIG is not set); {KUBECONFIG_HINT}"
            )
        if source == "$KUBECONFIG":
            raise InputError(
                f"kubeconfig {os.pathsep.join(paths)} (from $KUBECONFIG): no such file; "
                f"{KUBECONFIG_HINT} naming an existing file"
            )
        raise InputError(f"kubeconfig {paths[0]}: no such file")
    where = found[0][0] if len(found) == 1 else os.pathsep.join(path for path, _ in found)
    names = [
        str(entry.get("name"))
        for _, data in found
        for entry in data.get("contexts") or []
        if isinstance(entry, dict) and entry.get("name") is not None
    ]
    listing = f" (it has: {', '.join(sorted(set(names)))})" if names else " (it has none)"
    if context is not None:
        if context not in names:
            raise InputError(f"kubeconfig {where}: no context {context!r}{listing}")
        return
    current = next((str(d["current-context"]) for _, d in found if d.get("current-context")), "")
    if not current:
        raise InputError(f"kubeconfig {where}: no current-context; pass --context NAME{listing}")
    if current not in names:
        raise InputError(
            f"kubeconfig {where}: its current-context {current!r} is not among its "
            f"contexts{listing}; pass --context NAME"
        )


def _document(path: str, source: str) -> dict[str, Any] | None:
    """The kubeconfig at ``path`` as a mapping; None when the file does not exist."""

    if source != "--kubeconfig" and not Path(path).exists():
        return None  # a missing file in $KUBECONFIG's list is skipped, as kubectl does
    try:
        text = textinput.read_text(path, MAX_KUBECONFIG_BYTES, what="a kubeconfig")
    except textinput.InputRefused as refused:
        if str(refused) == "no such file":
            return None
        raise InputError(f"kubeconfig {path}: {refused}") from None
    data = _load(text, path)
    if data is None:
        data = {}  # an empty file: no contexts (kubectl reads it so too)
    if not isinstance(data, dict):
        raise InputError(
            f"kubeconfig {path}: not a kubeconfig (expected a mapping with clusters, contexts "
            "and users)"
        )
    for key in ("clusters", "contexts", "users"):
        if data.get(key) is not None and not isinstance(data[key], list):
            raise InputError(f"kubeconfig {path}: {key} must be a list")
    return data


def _load(text: str, path: str) -> object:
    from ruamel.yaml.error import MarkedYAMLError  # deferred: ruamel

    from scs_templates._core.yaml_text import YAMLError, load  # deferred: ruamel

    try:
        return load(text, pure=True)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = (error.problem or error.context or "invalid").strip()
        if "alias" in problem:  # an alias name may be a credential someone mistyped
            problem = "an undefined alias"
        raise InputError(f"kubeconfig {path}: not valid YAML{where}: {problem}") from None
    except (YAMLError, RecursionError):
        raise InputError(f"kubeconfig {path}: not valid YAML") from None
