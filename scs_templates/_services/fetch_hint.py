"""A chart that cannot be fetched: name it and suggest ``--chart-mirror``.

helmfile's and helm's own text for a registry or repository they cannot reach (``Head
"https://registry-1.docker.io/v2/envoyproxy/gateway-crds-helm/manifests/v1.5.1": dial tcp:
lookup registry-1.docker.io: no such host``) says neither which release needed the chart
nor that a mirror would help. :func:`fetch_failure` turns such a failure into one line that
names the charts and the way out; other failures are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: What helm, helmfile and Go's HTTP client print when a chart source cannot be reached.
NETWORK_ERROR = re.compile(
    r"dial tcp|no such host|connection refused|connection reset|i/o timeout|"
    r"TLS handshake timeout|network is unreachable|server misbehaving|"
    r"context deadline exceeded|(?:Head|Get|Post) \"https?://",
    re.IGNORECASE,
)
#: Longest piece of the tool's own line kept in the message.
MAX_DETAIL = 300

MIRROR_HINT = (
    "without network, pass --chart-mirror file:///DIR (a folder of packaged charts "
    "NAME-VERSION.tgz, e.g. from `helm pull`) or --chart-mirror oci://REGISTRY/PATH "
    "(spec.services.chartMirror in the settings)"
)


def fetch_failure(text: str, state: Mapping[str, Any]) -> str | None:
    """The message for a failure ``text`` of helmfile over services ``state`` (the state
    values' ``services`` section) when it is a network failure, else None."""
    match = NETWORK_ERROR.search(text)
    if match is None:
        return None
    releases = [r for r in state.get("releases") or () if isinstance(r, Mapping)]
    remote = [r for r in releases if r.get("installed", True) and "/" in str(r.get("chart"))]
    remote = [r for r in remote if not str(r.get("chart", "")).startswith("/")]
    named = [r for r in remote if _chart_name(r) in text] or remote
    charts = ", ".join(sorted({f"{_chart_name(r)} {r.get('version', '')}".strip() for r in named}))
    line = next(
        (part for part in text.splitlines() if NETWORK_ERROR.search(part)), match.group()
    ).strip()
    if len(line) > MAX_DETAIL:
        line = line[:MAX_DETAIL] + " ..."
    what = f"cannot fetch the chart(s) {charts}" if charts else "cannot fetch a chart"
    return f"{what}: {line}; {MIRROR_HINT}"


def _chart_name(release: Mapping[str, Any]) -> str:
    return str(release.get("chart", "")).rpartition("/")[2]
