# One module over 500 lines: the maintainer script that regenerates the versions table, read
# top to bottom as its pipeline (fetch the sources, parse each, build the table, diff or
# write); nothing imports it at run time.
"""Maintainer script: regenerate the versions table from its sources and show the diff.

    python -m scs_templates._maintain.update_versions            # read the sources, print the diff
    python -m scs_templates._maintain.update_versions --write    # ... and write table.json
    # exit 1 when table.json is out of date
    python -m scs_templates._maintain.update_versions --check

What it reads (nothing is typed in by hand except ``inputs.json``):

* the Go module proxy (``go list -m -versions``) for the ``k8s.io/kubernetes`` tags and the
  Cluster API releases; the CAPO release list is refused by the proxy, so newer CAPO tags are
  probed one by one with ``go mod download``;
* the Cluster API module of the chosen release: ``docs/book/src/reference/versions.md`` (the
  Kubernetes minors it supports for workload and management clusters) and its CRDs, compared
  with the CRD sets in ``../shared/crds``;
* the Cluster API test module (CAPD): ``infrastructure/kind/mapper.go``, the published kind
  node images with their digests;
* the CAPO module: ``metadata.yaml`` (contract) and the compatibility table of its README;
* the packaged upstream charts in ``../shared/charts`` (name, version, ``kubeVersion``);
* ``inputs.json``: upstream end-of-life dates (with the page each was read from), holds
  on service charts (with the reason), the Kubernetes minors upstream tests a chart's
  release line on (``support``: Cilium, Calico; with the page) and the releases of the
  applications that follow the Kubernetes minor while one chart serves several
  (``images``: cluster-autoscaler; with where the tags were read).

The table is data in the repository, reviewed like code: a render never reads a source, so
it stays reproducible. See docs/versions.md.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import json
import os
import re
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scs_templates._core.process import ProcessTimeout, run
from scs_templates._core.version_numbers import Minor, minor_text
from scs_templates._core.version_numbers import exact as stable

HERE = Path(__file__).resolve().parents[1] / "_versions"  # the table and its inputs
TABLE_PATH = HERE / "table.json"
INPUTS_PATH = HERE / "inputs.json"
REPO = HERE.parents[1]
SHARED = REPO.parent / "shared"

K8S_MODULE = "k8s.io/kubernetes"
CAPI_MODULE = "sigs.k8s.io/cluster-api"
CAPD_MODULE = "sigs.k8s.io/cluster-api/test"
CAPO_MODULE = "sigs.k8s.io/cluster-api-provider-openstack"
GO_TIMEOUT = 600.0


class UpdateError(Exception):
    """A source could not be read or does not say what the table needs."""


# --------------------------------------------------------------------------- parsing (pure)


def _minor_of(tag: str) -> Minor | None:
    parsed = stable(tag)
    return parsed[:2] if parsed else None


def newest_patches(tags: Iterable[str]) -> dict[Minor, int]:
    """The newest stable patch of every minor in ``tags``."""
    newest: dict[Minor, int] = {}
    for tag in tags:
        parsed = stable(tag)
        if parsed is None:
            continue
        key = parsed[:2]
        newest[key] = max(newest.get(key, -1), parsed[2])
    return newest


def capi_support(markdown: str, release: str) -> tuple[list[Minor], list[Minor]]:
    """Workload and management minors of ``release`` from CAPI's versions.md core table.

    A cell ``✓`` is both, ``✓ (only workload)`` workload only, ``✓ >= v1.14.1`` both from
    that patch on; an empty cell is neither.
    """
    parsed = stable(release)
    if parsed is None:
        raise UpdateError(f"not a release: {release}")
    column_name = f"v{parsed[0]}.{parsed[1]}"
    section = markdown.split("### Core provider", 1)
    if len(section) != 2:
        raise UpdateError("versions.md has no 'Core provider' section")
    rows = [line for line in section[1].splitlines() if line.startswith("|")]
    if not rows:
        raise UpdateError("versions.md: no core provider table")
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    try:
        column = next(i for i, cell in enumerate(header) if cell.startswith(column_name))
    except StopIteration:
        raise UpdateError(f"versions.md: no column for {column_name}") from None
    workload: list[Minor] = []
    management: list[Minor] = []
    for row in rows[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        match = re.match(r"Kubernetes v(\d+)\.(\d+)$", cells[0])
        if not match or column >= len(cells):
            continue
        cell = cells[column]
        if not cell.startswith("✓"):
            continue
        since = re.search(r">=\s*(v\d+\.\d+\.\d+)", cell)
        if since:
            needed = stable(since[1])
            if needed is not None and parsed < needed:
                continue
        minor = (int(match[1]), int(match[2]))
        workload.append(minor)
        if "only workload" not in cell:
            management.append(minor)
    if not workload:
        raise UpdateError(f"versions.md: no Kubernetes minors for {column_name}")
    return sorted(workload), sorted(management)


@dataclass(frozen=True)
class KindImage:
    version: tuple[int, int, int]
    image: str
    kind: str


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
        images.append(KindImage(version, image, kind))
    if not images:
        raise UpdateError("mapper.go: no pre-built images found")
    return images


def capo_capi_compat(readme: str, release: str) -> str:
    """The CAPI constraint of CAPO ``release``'s minor from its README's table."""
    parsed = stable(release)
    if parsed is None:
        raise UpdateError(f"not a release: {release}")
    wanted = f"v{parsed[0]}.{parsed[1]}"
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] == wanted:
            return cells[1]
    raise UpdateError(f"CAPO README: no compatibility row for {wanted}")


def contract_of(metadata: str, release: str) -> str:
    """The contract of ``release``'s minor in a clusterctl metadata.yaml."""
    parsed = stable(release)
    if parsed is None:
        raise UpdateError(f"not a release: {release}")
    data = _yaml(metadata) or {}
    for series in data.get("releaseSeries", []):
        if (series.get("major"), series.get("minor")) == parsed[:2]:
            return str(series["contract"])
    raise UpdateError(f"metadata.yaml: no release series for {release}")


def _yaml(text: str) -> Any:
    from ruamel.yaml import YAML  # deferred: ruamel

    return YAML(typ="safe", pure=True).load(text)


_COMPARATOR = re.compile(r"(>=|<=|!=|>|<|=|\^|~)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-[\w.]+)?")


def admits(constraint: str | None, version: tuple[int, int, int]) -> bool:
    """Whether a chart's ``kubeVersion`` constraint (semver ranges) admits ``version``.

    Covers what charts write: ``>= 1.22.0-0``, ``>=1.21.0-0 <1.38.0-0``, comma lists and
    ``||`` alternatives. No constraint admits everything.
    """
    if not constraint or not constraint.strip():
        return True
    for alternative in constraint.split("||"):
        ok = True
        text = alternative.replace(",", " ").strip()
        position = 0
        while position < len(text):
            if text[position].isspace():
                position += 1
                continue
            match = _COMPARATOR.match(text, position)
            if not match or match.end() == position:
                raise UpdateError(f"kubeVersion {constraint!r}: cannot read {text[position:]!r}")
            position = match.end()
            op = match[1] or "="
            bound = (int(match[2]), int(match[3] or 0), int(match[4] or 0))
            ok = (
                ok
                and {
                    ">=": version >= bound,
                    "<=": version <= bound,
                    ">": version > bound,
                    "<": version < bound,
                    "=": version == bound,
                    "!=": version != bound,
                    "^": version >= bound and version[0] == bound[0],
                    "~": version >= bound and version[:2] == bound[:2],
                }[op]
            )
        if ok:
            return True
    return False


@dataclass(frozen=True)
class ChartPackage:
    name: str
    version: str
    kube_version: str | None

    @property
    def key(self) -> tuple[int, int, int]:
        parsed = stable(self.version)
        return parsed if parsed is not None else (-1, -1, -1)


def chart_packages(directory: Path) -> list[ChartPackage]:
    """Name, version and kubeVersion of every packaged chart (``*.tgz``) in ``directory``."""
    packages: list[ChartPackage] = []
    for path in sorted(directory.glob("*.tgz")):
        with tarfile.open(path) as archive:
            member = next(
                (
                    m
                    for m in archive.getmembers()
                    if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml")
                ),
                None,
            )
            if member is None:
                raise UpdateError(f"{path.name}: no Chart.yaml")
            handle = archive.extractfile(member)
            if handle is None:
                raise UpdateError(f"{path.name}: unreadable Chart.yaml")
            chart = _yaml(handle.read().decode("utf-8"))
        packages.append(
            ChartPackage(str(chart["name"]), str(chart["version"]), chart.get("kubeVersion"))
        )
    return packages


def _line(version: str) -> str:
    """``1.20`` of ``1.20.0``, ``v3.32`` of ``v3.32.1``: a release line as people name it."""
    return version.rsplit(".", 1)[0]


def support_entry(
    support: Sequence[Mapping[str, Any]], version: tuple[int, int, int]
) -> Mapping[str, Any] | None:
    """The entry of ``support`` (``inputs.json``: a release line from version ``from`` on and
    the Kubernetes minors upstream tests it on) that covers ``version``: the one with the
    newest ``from`` not after it; None when no entry covers it."""
    covering = [
        entry
        for entry in support
        if (stable(str(entry["from"])) or (0, 0, 0))[:2] == version[:2]
        and (stable(str(entry["from"])) or (0, 0, 0)) <= version
    ]
    return max(covering, key=lambda e: stable(str(e["from"])) or (0, 0, 0), default=None)


def _tested(entry: Mapping[str, Any]) -> list[Minor]:
    return sorted(_minor_of(f"v{m}.0") or (0, 0) for m in entry["minors"])


def _follows_kubernetes_minor(chart: str) -> bool:
    """The chart's release line follows the Kubernetes minor (chart 2.M.x is for Kubernetes
    1.M): its catalogue row says so (a provider's cloud integrations)."""
    from scs_templates._services.catalogue import CATALOGUE  # deferred: scs_templates._services

    return any(info.chart == chart and info.follows_kubernetes_minor for info in CATALOGUE)


def pick_chart(
    chart: str,
    packages: Sequence[ChartPackage],
    minor: Minor,
    hold: Mapping[str, str] | None,
    support: Sequence[Mapping[str, Any]] = (),
) -> tuple[str, str | None]:
    """The default version of ``chart`` for Kubernetes ``minor``, and a note when it is a
    compromise. The newest stable package whose kubeVersion admits the minor (and that is
    below a hold, and whose release line upstream tests on this minor or an older one:
    ``support``, a release line is never the default of a minor older than the oldest it is
    tested on; a minor newer than the newest it is tested on gets it with a note); for the
    charts that follow the Kubernetes minor (:func:`_follows_kubernetes_minor`) the
    newest of the same minor, else of the previous minor (the version skew policy lets a
    cloud controller manager be one minor older, never newer).
    """
    below = stable(hold["below"]) if hold else None

    def supported(package: ChartPackage) -> bool:
        entry = support_entry(support, package.key)
        return entry is None or minor >= _tested(entry)[0]

    candidates = sorted(
        (
            p
            for p in packages
            if p.name == chart
            and stable(p.version) is not None
            and admits(p.kube_version, (*minor, 0))
            and (below is None or p.key < below)
            and supported(p)
        ),
        key=lambda p: p.key,
    )
    if not candidates:
        raise UpdateError(f"no package of chart {chart!r} fits Kubernetes {minor_text(minor)}")
    if not _follows_kubernetes_minor(chart):
        chosen = candidates[-1]
        entry = support_entry(support, chosen.key)
        if entry is not None and minor > _tested(entry)[-1]:
            tested = _tested(entry)
            return chosen.version, (
                f"newer than the Kubernetes minors {chart} {_line(chosen.version)} is tested on "
                f"({minor_text(tested[0])} to {minor_text(tested[-1])}): the newest release"
            )
        return chosen.version, None
    for line, note in ((minor[1], None), (minor[1] - 1, "one minor older (skew policy)")):
        same = [p for p in candidates if p.key[1] == line]
        if same:
            return same[-1].version, note
    older = [p for p in candidates if p.key[1] < minor[1]]
    nearest_newer = [p for p in candidates if p.key[1] == candidates[0].key[1]]
    chosen = older[-1] if older else nearest_newer[-1]
    return chosen.version, (
        f"no {chart} {minor[0] + 1}.{minor[1]}.x or {minor[0] + 1}.{minor[1] - 1}.x chart "
        "available: outside the Kubernetes version skew policy"
    )


def pick_image(releases: Sequence[str], minor: Minor) -> tuple[str, str | None]:
    """The image tag (``vX.Y.Z``) of an application that follows the Kubernetes minor
    (cluster-autoscaler: release 1.M is for Kubernetes 1.M): the newest release of the
    cluster's minor, else of the newest older minor (with a note); never a newer minor."""
    parsed = sorted(p for p in (stable(r) for r in releases) if p is not None and p[:2] <= minor)
    if not parsed:
        raise UpdateError(f"no release for Kubernetes {minor_text(minor)} or older")
    newest = parsed[-1]
    tag = "v{}.{}.{}".format(*newest)
    if newest[:2] == minor:
        return tag, None
    return tag, (
        f"{tag}: no release for Kubernetes {minor_text(minor)}, the newest release of the "
        "newest older minor"
    )


def crd_texts(directory: Path) -> dict[str, str]:
    """CRD file name -> content without comment lines (kustomize/controller-gen headers)."""
    return {
        path.name: "\n".join(
            line
            for line in path.read_text(encoding="utf-8").splitlines()
            if not line.startswith("#")
        )
        for path in sorted(directory.glob("*.yaml"))
    }


def matching_crd_set(shared_crds: Path, prefix: str, module_crds: Mapping[str, str]) -> str:
    """The folder of ``shared_crds`` (name starting with ``prefix``) with exactly the CRDs of
    the module, or "" when none matches."""
    for folder in sorted(shared_crds.glob(f"{prefix}*"), reverse=True):
        if folder.is_dir() and crd_texts(folder) == dict(module_crds):
            return folder.name
    return ""


# --------------------------------------------------------------------------- the Go proxy


class Go:
    """``go list``/``go mod download`` in a throwaway module (the proxy is a package registry)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        (workdir / "go.mod").write_text("module scs-templates/versions-probe\n\ngo 1.21\n")
        self.env = {**os.environ, "GOFLAGS": "-mod=mod", "GO111MODULE": "on"}

    def _go(self, *args: str) -> tuple[int, str, str]:
        try:
            done = run(["go", *args], env=self.env, timeout=GO_TIMEOUT, cwd=self.workdir)
        except ProcessTimeout as error:
            raise UpdateError(f"go {' '.join(args)}: {error}") from None
        except OSError as error:
            raise UpdateError(f"cannot run go: {error}") from None
        return done.returncode, done.stdout, done.stderr

    def versions(self, module: str) -> list[str] | None:
        """Every version the proxy lists, or None when it refuses the list."""
        code, out, err = self._go("list", "-m", "-versions", module)
        if code != 0:
            if "403" in err or "404" in err or "410" in err:
                return None
            raise UpdateError(f"go list -m -versions {module}: {err.strip()}")
        return out.split()[1:]

    def download(self, module: str, version: str) -> Path | None:
        """The module directory of ``module@version``, or None when the proxy does not serve it."""
        code, out, err = self._go("mod", "download", "-json", f"{module}@{version}")
        try:
            info = json.loads(out) if out.strip() else {}
        except json.JSONDecodeError:
            info = {}
        if code == 0 and info.get("Dir"):
            return Path(info["Dir"])
        message = str(info.get("Error") or err)
        if any(code_ in message for code_ in ("403", "404", "410", "unknown revision")):
            return None
        raise UpdateError(f"go mod download {module}@{version}: {message.strip()}")


def newest_served(go: Go, module: str, listed: Sequence[str]) -> tuple[str, Path]:
    """The newest stable version of ``listed`` whose module zip the proxy serves."""
    for version in sorted(
        (v for v in listed if stable(v)), key=lambda v: stable(v) or (0, 0, 0), reverse=True
    ):
        directory = go.download(module, version)
        if directory is not None:
            return version, directory
    raise UpdateError(f"the proxy serves no stable version of {module}")


def probe_candidates(known: str) -> list[str]:
    """The tags tried after ``known``: the next three patches and the next two minors."""
    major, minor, patch = stable(known) or (0, 0, 0)
    candidates = [f"v{major}.{minor}.{p}" for p in range(patch + 1, patch + 4)]
    return candidates + [f"v{major}.{m}.0" for m in range(minor + 1, minor + 3)]


def probe_newer(go: Go, module: str, known: str) -> tuple[str, Path]:
    """From a known release, the newest of the next patches and next minors that is served
    (for modules whose version list the proxy refuses)."""
    parsed = stable(known)
    if parsed is None:
        raise UpdateError(f"not a release: {known}")
    best = known
    directory = go.download(module, known)
    if directory is None:
        raise UpdateError(f"{module}@{known} is not served")
    for candidate in probe_candidates(known):
        found = go.download(module, candidate)
        if found is not None and (stable(candidate) or parsed) > (stable(best) or parsed):
            best, directory = candidate, found
    return best, directory


# --------------------------------------------------------------------------- building


def build_table(
    *,
    today: str,
    k8s_tags: Sequence[str],
    capi_release: str,
    capi_dir: Path,
    capd_release: str,
    capd_dir: Path,
    capd_crd_dir: Path,
    capo_release: str,
    capo_dir: Path,
    capo_probed: Sequence[str],
    packages: Sequence[ChartPackage],
    shared_crds: Path,
    inputs: Mapping[str, Any],
    releases: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    """The whole table from what was read (pure apart from reading files in the given dirs)."""
    versions_md = (capi_dir / "docs/book/src/reference/versions.md").read_text(encoding="utf-8")
    workload, management = capi_support(versions_md, capi_release)
    mapper = kind_images((capd_dir / "infrastructure/kind/mapper.go").read_text(encoding="utf-8"))
    proxy_patches = newest_patches(k8s_tags)
    eol_inputs: Mapping[str, Any] = inputs.get("endOfLife", {})
    kubernetes = {
        minor_text(minor): _kubernetes_entry(minor, mapper, proxy_patches, eol_inputs)
        for minor in workload
    }
    capo_readme = (capo_dir / "README.md").read_text(encoding="utf-8")
    module_crds = _module_crds(capi_dir)
    services = _service_entries(releases, packages, workload, inputs)
    return {
        "_comment": "GENERATED by `python -m scs_templates._maintain.update_versions --write` "
        "from the "
        "sources below and inputs.json; review the diff, never edit by hand.",
        "readOn": today,
        "sources": _table_sources(
            today, k8s_tags, workload, capi_release, capd_release, capo_release, capo_probed
        ),
        "clusterAPI": {
            "module": CAPI_MODULE,
            "release": capi_release,
            "contract": contract_of(
                (capi_dir / "metadata.yaml").read_text(encoding="utf-8"), capi_release
            ),
            "workloadMinors": [minor_text(m) for m in workload],
            "managementMinors": [minor_text(m) for m in management],
            "crds": matching_crd_set(
                shared_crds, "cluster-api-v", {**module_crds, **crd_texts(capd_crd_dir)}
            ),
        },
        "providers": _providers_entry(
            capi_release, capd_release, capo_release, capo_dir, capo_readme, shared_crds
        ),
        "kubernetes": kubernetes,
        "services": services,
    }


def _service_entries(
    releases: Sequence[tuple[str, str]],
    packages: Sequence[ChartPackage],
    workload: Sequence[Minor],
    inputs: Mapping[str, Any],
) -> dict[str, Any]:
    """The table's ``services``: per release its chart for every workload minor."""
    holds: Mapping[str, Any] = inputs.get("holds", {})
    supports: Mapping[str, Any] = inputs.get("support", {})
    app_images: Mapping[str, Any] = inputs.get("images", {})
    services: dict[str, Any] = {}
    for release, chart in releases:
        services[release] = _service_entry(
            release, chart, packages, workload, holds, supports.get(release, []), app_images
        )
    return services


def _kubernetes_entry(
    minor: Minor,
    mapper: Sequence[KindImage],
    proxy_patches: Mapping[Minor, int],
    eol_inputs: Mapping[str, Any],
) -> dict[str, Any]:
    """One Kubernetes minor: its newest patch (and the source that named it), its end of
    life and its kind node images."""
    key = minor_text(minor)
    images = [i for i in mapper if i.version[:2] == minor]
    # (patch, preference, source): on a tie the release list is the source named.
    candidates: list[tuple[int, int, str]] = []
    if minor in proxy_patches:
        candidates.append((proxy_patches[minor], 1, "k8s-tags"))
    if images:
        candidates.append((max(i.version[2] for i in images), 0, "kind-mapper"))
    if not candidates:
        raise UpdateError(f"no release of Kubernetes {key} in any source")
    patch, _, source = max(candidates)
    if key not in eol_inputs:
        raise UpdateError(
            f"inputs.json has no endOfLife entry for Kubernetes {key}: add its date and "
            "the page it was read from (kubernetes.io/releases/{key}/)"
        )
    seen: set[tuple[int, int, int]] = set()
    kind_rows = []
    for image in sorted(images, key=lambda i: i.version, reverse=True):
        if image.version in seen:  # rebuilt by a newer kind: the first (newest) wins
            continue
        seen.add(image.version)
        kind_rows.append(
            {
                "version": "v{}.{}.{}".format(*image.version),
                "image": image.image,
                "kind": image.kind,
            }
        )
    return {
        "patch": f"v{key}.{patch}",
        "patchSource": source,
        "endOfLife": eol_inputs[key],
        "kindImages": kind_rows,
    }


def _module_crds(capi_dir: Path) -> dict[str, str]:
    """The CRDs of the Cluster API module (core, kubeadm bootstrap and control plane)."""
    module_crds: dict[str, str] = {}
    for sub in (
        "core/config/crd/bases",
        "config/crd/bases",
        "bootstrap/kubeadm/config/crd/bases",
        "controlplane/kubeadm/config/crd/bases",
    ):
        if (capi_dir / sub).is_dir():
            module_crds.update(crd_texts(capi_dir / sub))
    return module_crds


def _table_sources(
    today: str,
    k8s_tags: Sequence[str],
    workload: Sequence[Minor],
    capi_release: str,
    capd_release: str,
    capo_release: str,
    capo_probed: Sequence[str],
) -> dict[str, Any]:
    """The table's ``sources``: what was read where, and when."""
    return {
        "k8s-tags": {
            "what": "Kubernetes release tags",
            "where": f"Go module proxy: go list -m -versions {K8S_MODULE}",
            "readOn": today,
            "note": "the proxy serves only a subset of the upstream tags",
            "versions": sorted(
                (t for t in k8s_tags if _minor_of(t) in set(workload)),
                key=lambda t: stable(t) or (0, 0, 0),
            ),
        },
        "capi-versions": {
            "what": "Kubernetes minors supported by Cluster API "
            + ".".join(capi_release.split(".")[:2]),
            "where": f"{CAPI_MODULE}@{capi_release} docs/book/src/reference/versions.md",
            "readOn": today,
        },
        "kind-mapper": {
            "what": "published kind node images (with digests) that CAPD maps versions to",
            "where": f"{CAPD_MODULE}@{capd_release} infrastructure/kind/mapper.go",
            "readOn": today,
        },
        "capo": {
            "what": "CAPO release, contract and Cluster API compatibility",
            "where": f"{CAPO_MODULE}@{capo_release} metadata.yaml and README.md; the proxy "
            "refuses the CAPO version list, newer tags probed: " + ", ".join(capo_probed),
            "readOn": today,
        },
        "charts": {
            "what": "packaged upstream service charts (version, kubeVersion)",
            "where": "the charts' published packages (newest upstream releases as of the "
            "date read)",
            "readOn": today,
        },
    }


def _providers_entry(
    capi_release: str,
    capd_release: str,
    capo_release: str,
    capo_dir: Path,
    capo_readme: str,
    shared_crds: Path,
) -> dict[str, Any]:
    """The table's ``providers``: CAPD's and CAPO's release, contract and CRDs."""
    return {
        "docker": {
            "module": CAPD_MODULE,
            "release": capi_release,
            "kindMapperFrom": capd_release,
        },
        "openstack": {
            "module": CAPO_MODULE,
            "release": capo_release,
            "contract": contract_of(
                (capo_dir / "metadata.yaml").read_text(encoding="utf-8"), capo_release
            ),
            "clusterAPI": capo_capi_compat(capo_readme, capo_release),
            "crds": matching_crd_set(
                shared_crds,
                "cluster-api-provider-openstack-v",
                crd_texts(capo_dir / "config/crd/bases"),
            ),
        },
    }


def _service_entry(
    release: str,
    chart: str,
    packages: Sequence[ChartPackage],
    workload: Sequence[Minor],
    holds: Mapping[str, Any],
    support: Sequence[Mapping[str, Any]],
    images: Mapping[str, Any],
) -> dict[str, Any]:
    """One release's table entry: chart version (and image tag, for the applications that
    follow the Kubernetes minor) per minor, the notes, the hold and the support read."""
    by_minor: dict[str, str] = {}
    notes: dict[str, str] = {}
    for minor in workload:
        version, note = pick_chart(chart, packages, minor, holds.get(release), support)
        by_minor[minor_text(minor)] = version
        if note:
            notes[minor_text(minor)] = note
    entry: dict[str, Any] = {"chart": chart, "byMinor": by_minor}
    if release in images:
        image = images[release]
        tags: dict[str, str] = {}
        for minor in workload:
            tag, note = pick_image(image["releases"], minor)
            tags[minor_text(minor)] = tag
            if note:
                notes[minor_text(minor)] = f"image {note}"
        entry["image"] = {
            "repository": image["repository"],
            "byMinor": tags,
            "source": image["source"],
            "readOn": image["readOn"],
        }
    if notes:
        entry["notes"] = notes
    if release in holds:
        entry["hold"] = dict(holds[release])
    if support:
        entry["support"] = [dict(s) for s in support]
    return entry


def read_sources(
    *, today: str, charts: Path, crds: Path, inputs: Mapping[str, Any], current: Mapping[str, Any]
) -> dict[str, Any]:
    """Read every source (network: the Go module proxy) and build the table."""
    from scs_templates._services.catalogue import CATALOGUE  # deferred: scs_templates._services

    with tempfile.TemporaryDirectory(prefix="scs-versions-") as temp:
        go = Go(Path(temp))
        k8s_tags = go.versions(K8S_MODULE)
        if k8s_tags is None:
            raise UpdateError(f"the proxy refuses the version list of {K8S_MODULE}")
        capi_listed = go.versions(CAPI_MODULE) or []
        capi_release, capi_dir = newest_served(go, CAPI_MODULE, capi_listed)
        capi_minor = _minor_of(capi_release)
        capd_listed = [v for v in (go.versions(CAPD_MODULE) or []) if _minor_of(v) == capi_minor]
        capd_release, capd_dir = newest_served(go, CAPD_MODULE, capd_listed or [capi_release])
        capd_same = go.download(CAPD_MODULE, capi_release)
        if capd_same is None:
            raise UpdateError(f"{CAPD_MODULE}@{capi_release} (the Docker provider) is not served")
        known = [
            str(current.get("providers", {}).get("openstack", {}).get("release", "")),
            str(inputs.get("openstackProviderFrom", "")),
        ]
        known_capo = max(
            (k for k in known if stable(k)), key=lambda k: stable(k) or (0, 0, 0), default=""
        )
        if not known_capo:
            raise UpdateError(
                "neither table.json nor inputs.json names a CAPO release to probe from"
            )
        capo_release, capo_dir = probe_newer(go, CAPO_MODULE, known_capo)
        probed = probe_candidates(known_capo)
        return build_table(
            today=today,
            k8s_tags=k8s_tags,
            capi_release=capi_release,
            capi_dir=capi_dir,
            capd_release=capd_release,
            capd_dir=capd_dir,
            capd_crd_dir=capd_same / "infrastructure/docker/config/crd/bases",
            capo_release=capo_release,
            capo_dir=capo_dir,
            capo_probed=probed,
            packages=chart_packages(charts),
            shared_crds=crds,
            inputs=inputs,
            releases=[
                (info.release, info.chart)
                for info in CATALOGUE
                if not info.version_of and not info.packaged  # ours: no upstream release
            ],
        )


def dump(table: Mapping[str, Any]) -> str:
    return json.dumps(table, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scs_templates._maintain.update_versions",
        description=__doc__.split("\n\n")[0],
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"write {TABLE_PATH.name}")
    mode.add_argument("--check", action="store_true", help="exit 1 when the table is stale")
    parser.add_argument("--charts", type=Path, default=SHARED / "charts")
    parser.add_argument("--crds", type=Path, default=SHARED / "crds")
    parser.add_argument(
        "--today",
        default=datetime.datetime.now(datetime.UTC).date().isoformat(),
        help="the read-on date to record (default: today, UTC)",
    )
    args = parser.parse_args(argv)
    old = TABLE_PATH.read_text(encoding="utf-8") if TABLE_PATH.exists() else "{}\n"
    try:
        inputs = json.loads(INPUTS_PATH.read_text(encoding="utf-8"))
        new = dump(
            read_sources(
                today=args.today,
                charts=args.charts,
                crds=args.crds,
                inputs=inputs,
                current=json.loads(old),
            )
        )
    except UpdateError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    diff = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{TABLE_PATH.name}",
            f"b/{TABLE_PATH.name}",
        )
    )
    sys.stdout.writelines(diff)
    if not diff:
        print(f"{TABLE_PATH.name} is up to date with its sources")
    if args.write and diff:
        temp = TABLE_PATH.with_suffix(".json.tmp")
        temp.write_text(new, encoding="utf-8")
        temp.replace(TABLE_PATH)
        print(f"wrote {TABLE_PATH}", file=sys.stderr)
    return 1 if args.check and diff else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
