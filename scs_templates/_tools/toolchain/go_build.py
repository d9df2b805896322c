"""How a ``go build`` of ours runs: the compiler flags and the garbage collector's setting.

Both only make a build cheaper; neither changes what the program does:

* ``-gcflags=all=-dwarf=false``: every build links with ``-s -w``, which drops the debug
  information from the binary; a compiler that does not write it first saves ~5 % of the
  CPU (the csi-provisioner sidecar from an empty Go build cache: 148 -> 138 CPU s).
* The Go compiler spends much of its time collecting garbage. With ``GOGC=off`` and a
  ``GOMEMLIMIT`` it collects only when its heap reaches the limit: kube-apiserver v1.34 from
  an empty build cache 264 -> 221 CPU s together with the flag above (-16 %), at a peak of
  1.4 GB per compile. The limit is the memory available when the build starts, shared by
  twice the compiles ``go`` runs side by side (one per CPU) plus two (the linker and ``go``
  itself), at most 2 GiB; below 1 GiB the collector keeps Go's default. A ``GOGC`` or
  ``GOMEMLIMIT`` of the caller's own is left as it is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: The ``-gcflags`` value of every build: no DWARF from the compiler (the linker's ``-w``
#: would drop it).
NO_DWARF = "all=-dwarf=false"
#: The ``-gcflags`` extra of a build without the compiler's optimisations and inlining (a
#: program built only to be looked at, or one that mostly waits: the test plane's).
UNOPTIMISED = "all=-N -l"
#: At most this much heap per Go process of a build before its collector runs.
MAX_LIMIT = 2 << 30
#: Below this per-process share of the available memory, Go's default collector stays.
MIN_LIMIT = 1 << 30

MEMINFO = Path("/proc/meminfo")
#: The variables that set the Go runtime's collector.
COLLECTOR_VARS = ("GOGC", "GOMEMLIMIT")


def callers_collector(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` sets the Go collector itself: then no setting of ours joins it
    (here and for helm, :data:`scs_templates._tools.helm.runner.TEMPLATE_COLLECTOR`)."""
    return any(name in environ for name in COLLECTOR_VARS)


def unless_callers(setting: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """``setting`` (a collector setting of ours: GOGC, GOMEMLIMIT), or nothing where
    ``environ`` sets the collector itself (:func:`callers_collector`)."""
    return {} if callers_collector(environ) else dict(setting)


def gcflags(extra: str = "") -> str:
    """``-gcflags`` for all packages: ``extra`` (e.g. ``all=-N -l``) plus :data:`NO_DWARF`."""
    if not extra:
        return NO_DWARF
    if not extra.startswith("all="):
        raise ValueError(f"gcflags must apply to all packages (all=...), not {extra!r}")
    return f"{extra} {NO_DWARF.removeprefix('all=')}"


def available_memory(meminfo: Path = MEMINFO) -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (``None`` where there is none)."""
    try:
        text = meminfo.read_text(encoding="ascii")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "MemAvailable":
            number, _, unit = value.strip().partition(" ")
            if number.isdigit() and unit == "kB":
                return int(number) * 1024
    return None


def collector_env(
    environ: Mapping[str, str] = os.environ,
    *,
    available: int | None = None,
    cpus: int | None = None,
) -> dict[str, str]:
    """``{"GOGC": "off", "GOMEMLIMIT": "NMiB"}`` for a build, or ``{}`` to keep Go's default
    (the caller set either variable, the memory is unknown or too small)."""
    if callers_collector(environ):
        return {}
    memory = available_memory() if available is None else available
    if memory is None:
        return {}
    processes = 2 * (cpus or os.cpu_count() or 1) + 2
    limit = min(MAX_LIMIT, memory // processes)
    if limit < MIN_LIMIT:
        return {}
    return {"GOGC": "off", "GOMEMLIMIT": f"{limit >> 20}MiB"}
