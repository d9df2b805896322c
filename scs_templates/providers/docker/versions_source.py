"""Where the versions table's Docker facts come from: CAPD, the Cluster API test module
``sigs.k8s.io/cluster-api/test``.

Its ``infrastructure/kind/mapper.go`` is the table of published kind node images (tag and
digest) that CAPD maps Kubernetes versions to; the newest patch release of the targeted
Cluster API minor is read for it (the images keep being added in patches). CAPD is part of
the Cluster API release: the table's provider entry names that release, and its
``infrastructure/docker/config/crd/bases`` CRDs at that release belong to the Cluster API
CRD set. Only the maintainer script imports this module (``DockerOperations.read_versions``).
"""

from __future__ import annotations

import re

from scs_templates._core.version_numbers import exact as stable
from scs_templates._versions import KindImage
from scs_templates._versions.upstream import (
    ProviderVersions,
    UpdateError,
    Upstream,
    crd_texts,
    newest_served,
    release_minor,
)

__all__ = ["MAPPER", "MODULE", "SOURCE", "kind_images", "read_versions"]

MODULE = "sigs.k8s.io/cluster-api/test"
#: The published kind node images, in the module.
MAPPER = "infrastructure/kind/mapper.go"
#: CAPD's CRDs, in the module.
CRDS = "infrastructure/docker/config/crd/bases"
#: The key of its row in the table's ``sources`` (a Kubernetes minor's ``patchSource``).
SOURCE = "kind-mapper"

_MAPPING = re.compile(
    r'KubernetesVersion:\s*semver\.MustParse\("(?P<version>[^"]+)"\),\s*'
    r"Mode:\s*\w+,\s*"
    r'Image:\s*"(?P<image>[^"]+)"'
)
_KIND_COMMENT = re.compile(r"//\s*Pre-built images for Kind (v\d+(?:\.\d+)*)")


def kind_images(go_source: str) -> list[KindImage]:
    """The pre-built kind node images of CAPD's mapper.go, in file order (newest kind first)."""
    images: list[KindImage] = []
    kind = ""
    position = 0
    for match in _MAPPING.finditer(go_source):
        for comment in _KIND_COMMENT.finditer(go_source, position, match.start()):
            kind = comment[1]
        position = match.end()
        image = match["image"]
        # The image's own tag is what a node runs (upstream maps 1.27.16 to a v1.27.17 image).
        version = stable(image.split("@", 1)[0].rsplit(":", 1)[-1])
        if version is None or "@sha256:" not in image:
            raise UpdateError(f"mapper.go: unexpected entry {match[0]!r}")
        images.append(KindImage("v{}.{}.{}".format(*version), image, kind))
    if not images:
        raise UpdateError("mapper.go: no pre-built images found")
    return images


def read_versions(upstream: Upstream) -> ProviderVersions:
    """CAPD at the targeted Cluster API release (entry, CRDs) and the newest patch of its
    minor (the kind images)."""
    go, capi = upstream.go, upstream.cluster_api_release
    listed = [v for v in (go.versions(MODULE) or []) if release_minor(v) == release_minor(capi)]
    release, directory = newest_served(go, MODULE, listed or [capi])
    same = go.download(MODULE, capi)
    if same is None:
        raise UpdateError(f"{MODULE}@{capi} (the Docker provider) is not served")
    return ProviderVersions(
        entry={"module": MODULE, "release": capi, "kindMapperFrom": release},
        sources={
            SOURCE: {
                "what": "published kind node images (with digests) that CAPD maps versions to",
                "where": f"{MODULE}@{release} {MAPPER}",
                "readOn": upstream.today,
            }
        },
        kind_images=tuple(kind_images((directory / MAPPER).read_text(encoding="utf-8"))),
        kind_images_source=SOURCE,
        cluster_api_crds=crd_texts(same / CRDS),
        read=tuple(dict.fromkeys((f"{MODULE}@{release}", f"{MODULE}@{capi}"))),
    )
