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
  Cluster API releases;
* the Cluster API module of the chosen release: ``docs/book/src/reference/versions.md`` (the
  Kubernetes minors it supports for workload and management clusters) and its CRDs, compared
  with the CRD sets in ``../shared/crds``;
* each shipped provider's own sources, read by its ``read_versions`` hook (toolkit:
  :mod:`scs_templates._versions.upstream`): its entry under ``providers``, its rows of
  ``sources``, the kind node images it publishes for the Kubernetes minors and the CRDs it
  adds to the Cluster API set;
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
import re
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scs_templates._core.version_numbers import Minor, minor_text
from scs_templates._core.version_numbers import exact as stable
from scs_templates._services.catalogue import CATALOGUE
from scs_templates._versions import KindImage
from scs_templates._versions.upstream import (
    Go,
    ProviderVersions,
    UpdateError,
    Upstream,
    contract_of,
    crd_texts,
    load_yaml,
    matching_crd_set,
    newest_served,
    release_minor,
)
from scs_templates.providers.interface import Provider
from scs_templates.providers.operations import operations_of
from scs_templates.providers.registry import shipped_providers

HERE = Path(__file__).resolve().parents[1] / "_versions"  # the table and its inputs
TABLE_PATH = HERE / "table.json"
INPUTS_PATH = HERE / "inputs.json"
REPO = HERE.parents[1]
SHARED = REPO.parent / "shared"

K8S_MODULE = "k8s.io/kubernetes"
CAPI_MODULE = "sigs.k8s.io/cluster-api"


# --------------------------------------------------------------------------- parsing (pure)


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
            chart = load_yaml(handle.read().decode("utf-8"))
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
    return sorted(release_minor(f"v{m}.0") or (0, 0) for m in entry["minors"])


def _follows_kubernetes_minor(chart: str) -> bool:
    """The chart's release line follows the Kubernetes minor (chart 2.M.x is for Kubernetes
    1.M): its catalogue row says so (a provider's cloud integrations)."""

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


# --------------------------------------------------------------------------- building


def build_table(
    *,
    today: str,
    k8s_tags: Sequence[str],
    capi_release: str,
    capi_dir: Path,
    providers: Mapping[str, ProviderVersions],
    packages: Sequence[ChartPackage],
    shared_crds: Path,
    inputs: Mapping[str, Any],
    releases: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    """The whole table from what was read (pure apart from reading files in the given dirs);
    ``providers``: what each provider's ``read_versions`` gave, by provider name (taken in
    name order, so the table does not depend on the order they were read in)."""
    versions_md = (capi_dir / "docs/book/src/reference/versions.md").read_text(encoding="utf-8")
    workload, management = capi_support(versions_md, capi_release)
    ordered = [providers[name] for name in sorted(providers)]
    proxy_patches = newest_patches(k8s_tags)
    eol_inputs: Mapping[str, Any] = inputs.get("endOfLife", {})
    kubernetes = {
        minor_text(minor): _kubernetes_entry(minor, ordered, proxy_patches, eol_inputs)
        for minor in workload
    }
    crds = _module_crds(capi_dir)
    for contribution in ordered:
        crds.update(contribution.cluster_api_crds)
    return {
        "_comment": "GENERATED by `python -m scs_templates._maintain.update_versions --write` "
        "from the "
        "sources below and inputs.json; review the diff, never edit by hand.",
        "readOn": today,
        "sources": _table_sources(today, k8s_tags, workload, capi_release, ordered),
        "clusterAPI": {
            "module": CAPI_MODULE,
            "release": capi_release,
            "contract": contract_of(
                (capi_dir / "metadata.yaml").read_text(encoding="utf-8"), capi_release
            ),
            "workloadMinors": [minor_text(m) for m in workload],
            "managementMinors": [minor_text(m) for m in management],
            "crds": matching_crd_set(shared_crds, "cluster-api-v", crds),
        },
        "providers": {name: dict(providers[name].entry) for name in sorted(providers)},
        "kubernetes": kubernetes,
        "services": _service_entries(releases, packages, workload, inputs),
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
    providers: Sequence[ProviderVersions],
    proxy_patches: Mapping[Minor, int],
    eol_inputs: Mapping[str, Any],
) -> dict[str, Any]:
    """One Kubernetes minor: its newest patch (and the source that named it), its end of
    life and the kind node images the providers read."""
    key = minor_text(minor)
    # (patch, preference, source): on a tie the release list is the source named.
    candidates: list[tuple[int, int, str]] = []
    if minor in proxy_patches:
        candidates.append((proxy_patches[minor], 1, "k8s-tags"))
    images: list[KindImage] = []
    for contribution in providers:
        own = [i for i in contribution.kind_images if release_minor(i.version) == minor]
        if own:
            candidates.append((max(i.patch for i in own), 0, contribution.kind_images_source))
        images += own
    if not candidates:
        raise UpdateError(f"no release of Kubernetes {key} in any source")
    patch, _, source = max(candidates)
    if key not in eol_inputs:
        raise UpdateError(
            f"inputs.json has no endOfLife entry for Kubernetes {key}: add its date and "
            "the page it was read from (kubernetes.io/releases/{key}/)"
        )
    return {
        "patch": f"v{key}.{patch}",
        "patchSource": source,
        "endOfLife": eol_inputs[key],
        "kindImages": _kind_rows(images),
    }


def _kind_rows(images: Sequence[KindImage]) -> list[dict[str, str]]:
    """A minor's ``kindImages``: newest version first, one image per version (an image
    rebuilt by a newer kind: the first read, the newest kind, wins)."""
    seen: set[str] = set()
    rows = []
    for image in sorted(images, key=lambda i: stable(i.version) or (0, 0, 0), reverse=True):
        if image.version in seen:
            continue
        seen.add(image.version)
        rows.append({"version": image.version, "image": image.image, "kind": image.kind})
    return rows


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
    providers: Sequence[ProviderVersions],
) -> dict[str, Any]:
    """The table's ``sources``: what was read where, and when (the providers' rows after
    Cluster API's)."""
    sources: dict[str, Any] = {
        "k8s-tags": {
            "what": "Kubernetes release tags",
            "where": f"Go module proxy: go list -m -versions {K8S_MODULE}",
            "readOn": today,
            "note": "the proxy serves only a subset of the upstream tags",
            "versions": sorted(
                (t for t in k8s_tags if release_minor(t) in set(workload)),
                key=lambda t: stable(t) or (0, 0, 0),
            ),
        },
        "capi-versions": {
            "what": "Kubernetes minors supported by Cluster API "
            + ".".join(capi_release.split(".")[:2]),
            "where": f"{CAPI_MODULE}@{capi_release} docs/book/src/reference/versions.md",
            "readOn": today,
        },
    }
    for contribution in providers:
        for key, row in contribution.sources.items():
            if key in sources:
                raise UpdateError(f"two sources of the table are called {key!r}")
            sources[key] = dict(row)
    sources["charts"] = {
        "what": "packaged upstream service charts (version, kubeVersion)",
        "where": "the charts' published packages (newest upstream releases as of the date read)",
        "readOn": today,
    }
    return sources


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


def provider_versions(
    upstream: Upstream, providers: Iterable[Provider]
) -> dict[str, ProviderVersions]:
    """What each provider reads of its upstream sources (``Operations.read_versions``), by
    name, read in name order; a provider without versions of its own contributes nothing."""
    found: dict[str, ProviderVersions] = {}
    for provider in sorted(providers, key=lambda p: p.name):
        contribution = operations_of(provider).read_versions(upstream)
        if contribution is not None:
            found[provider.name] = contribution
    return found


def read_sources(
    *, today: str, charts: Path, crds: Path, inputs: Mapping[str, Any], current: Mapping[str, Any]
) -> dict[str, Any]:
    """Read every source (network: the Go module proxy) and build the table."""

    with tempfile.TemporaryDirectory(prefix="scs-versions-") as temp:
        go = Go(Path(temp))
        k8s_tags = go.versions(K8S_MODULE)
        if k8s_tags is None:
            raise UpdateError(f"the proxy refuses the version list of {K8S_MODULE}")
        capi_release, capi_dir = newest_served(go, CAPI_MODULE, go.versions(CAPI_MODULE) or [])
        upstream = Upstream(go, capi_release, current, inputs, crds, today)
        return build_table(
            today=today,
            k8s_tags=k8s_tags,
            capi_release=capi_release,
            capi_dir=capi_dir,
            providers=provider_versions(upstream, shipped_providers()),
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
