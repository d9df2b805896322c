"""Where Flux takes the cluster chart from: an OCI registry or a git repository the user names.

Flux on the management cluster cannot read the charts inside an installed scs-templates
package, so the user names a source that holds them: ``oci://REGISTRY/PATH`` (the provider
chart packaged with its library dependency and pushed as ``PATH/<provider>-cluster:<chart
version>``) or a git URL of a repository holding this project's ``charts/`` folder at a
ref (helm-controller resolves the ``file://`` library dependency inside the checkout).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlparse

from scs_templates._core import naming
from scs_templates._core.errors import InputError

__all__ = ["ChartSourceSpec", "parse_chart_source"]

SOURCE_API = "source.toolkit.fluxcd.io/v1"
_GIT_SCHEMES = ("https", "http", "ssh")


@dataclass(frozen=True)
class ChartSourceSpec:
    """The cluster chart's source as named on the command line.

    ``kind`` is ``oci`` or ``git``; ``url`` the registry path (``oci://...``, without the
    chart name) or the git URL; ``ref`` the git branch/tag (``git`` only); ``plain_http``
    an OCI registry served without TLS (``oci`` only: the OCIRepository's ``insecure``).
    """

    kind: Literal["oci", "git"]
    url: str
    ref: str = ""
    path: str = "charts"
    plain_http: bool = False

    def source_name(self, chart: str, version: str) -> str:
        """Name of the source object: one OCIRepository per chart and chart version, one
        GitRepository per ref.

        The version (ref) is part of the name so that a run with a new scs-templates release
        (or a new ``--chart-ref``) adds a source instead of changing the one that the
        clusters written earlier use: a cluster kept in the repository (not given on this
        run, or a topology cluster not rebased) keeps its chart. A changed chart under an
        unchanged ClusterClass name would change that class in place and roll every
        cluster using it.
        """
        if self.kind == "oci":
            return naming.fit(f"scs-templates-{chart}-{_slug(version)}")
        return naming.fit(f"scs-templates-{_slug(self.ref)}")

    def source_object(self, chart: str, version: str, namespace: str, interval: str) -> Any:
        """The OCIRepository (per provider chart) or GitRepository object."""
        metadata = {"name": self.source_name(chart, version), "namespace": namespace}
        if self.kind == "oci":
            spec: dict[str, Any] = {
                "interval": interval,
                "url": f"{self.url.rstrip('/')}/{chart}",
                "ref": {"tag": version},
                "layerSelector": {
                    "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                    "operation": "copy",
                },
            }
            if self.plain_http:
                spec["insecure"] = True
            return {
                "apiVersion": SOURCE_API,
                "kind": "OCIRepository",
                "metadata": metadata,
                "spec": spec,
            }
        ref_key = "tag" if self.ref.startswith("v") and self.ref[1:2].isdigit() else "branch"
        return {
            "apiVersion": SOURCE_API,
            "kind": "GitRepository",
            "metadata": metadata,
            "spec": {"interval": interval, "url": self.url, "ref": {ref_key: self.ref}},
        }

    def release_chart(
        self, chart: str, version: str, namespace: str, interval: str
    ) -> dict[str, Any]:
        """The HelmRelease ``spec`` part that names the chart (``chartRef`` or ``chart``)."""
        if self.kind == "oci":
            return {
                "chartRef": {
                    "kind": "OCIRepository",
                    "name": self.source_name(chart, version),
                    "namespace": namespace,
                }
            }
        return {
            "chart": {
                "spec": {
                    "chart": f"./{self.path.strip('/')}/{chart}",
                    "interval": interval,
                    "reconcileStrategy": "Revision",
                    "sourceRef": {
                        "kind": "GitRepository",
                        "name": self.source_name(chart, version),
                        "namespace": namespace,
                    },
                }
            }
        }


def _slug(text: str) -> str:
    """``text`` as a DNS label part (``v0.2.0`` -> ``v0-2-0``, ``release/1.x`` ->
    ``release-1-x``); a hash suffix when that lost information (case, other characters)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if slug != text.replace(".", "-"):
        slug = f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"
    return slug


def parse_chart_source(
    url: str, ref: str | None = None, *, plain_http: bool = False
) -> ChartSourceSpec:
    """``oci://REGISTRY/PATH`` or a git URL (``https://``/``ssh://``) -> a source spec.

    A git source needs ``ref`` (a tag such as ``v0.2.0`` or a branch); an OCI source takes
    the chart version as its tag and refuses a ``ref``. ``plain_http``: the registry
    speaks HTTP without TLS (as ``helm push --plain-http``; a registry inside the
    management cluster's network, say); a git URL says its scheme itself, so it is refused
    there. Raises :class:`InputError` (exit 2).
    """
    if url.startswith("oci://"):
        if ref:
            raise InputError("--chart-ref: an OCI chart source is pinned by the chart version")
        if not url.removeprefix("oci://").strip("/"):
            raise InputError(f"--chart-source: {url!r} names no registry")
        return ChartSourceSpec("oci", url.rstrip("/"), plain_http=plain_http)
    if plain_http:
        raise InputError(
            "--plain-http: only for an oci:// --chart-source (a git URL names http:// itself)"
        )
    parsed = urlparse(url)
    if parsed.scheme in _GIT_SCHEMES and parsed.netloc:
        if parsed.password or (parsed.username and parsed.scheme != "ssh"):
            raise InputError(
                "--chart-source: credentials in the URL would land in the repository; "
                "give Flux a secretRef for the GitRepository instead"
            )
        if not ref:
            raise InputError("--chart-ref: a git chart source needs a tag or branch")
        return ChartSourceSpec("git", url, ref)
    raise InputError(
        f"--chart-source: {url!r} is neither oci://REGISTRY/PATH nor an https:// or ssh:// git URL"
    )
