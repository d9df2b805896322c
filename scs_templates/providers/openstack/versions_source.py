"""Where the versions table's OpenStack facts come from: CAPO, the module
``sigs.k8s.io/cluster-api-provider-openstack``.

The proxy refuses CAPO's version list, so the release is probed: from the newest release
the current table or ``inputs.json`` (``openstackProviderFrom``) names, the next patches
and minors one by one (:func:`scs_templates._versions.upstream.probe_newer`). Of the
release found the table records the contract (``metadata.yaml``), the Cluster API versions
its README's compatibility table requires, and the folder of ``../shared/crds`` holding
exactly its CRDs. Only the maintainer script imports this module
(``OpenStackOperations.read_versions``).
"""

from __future__ import annotations

from scs_templates._core.version_numbers import exact as stable
from scs_templates._versions.upstream import (
    ProviderVersions,
    UpdateError,
    Upstream,
    contract_of,
    crd_texts,
    matching_crd_set,
    probe_candidates,
    probe_newer,
)

__all__ = ["MODULE", "capi_compat", "read_versions"]

MODULE = "sigs.k8s.io/cluster-api-provider-openstack"
#: The key of ``inputs.json`` naming the release to probe from when the table names none.
INPUTS_KEY = "openstackProviderFrom"
#: The folders of ``../shared/crds`` with CAPO's CRDs start with this.
CRD_SETS = "cluster-api-provider-openstack-v"


def capi_compat(readme: str, release: str) -> str:
    """The Cluster API constraint of CAPO ``release``'s minor from its README's table."""
    parsed = stable(release)
    if parsed is None:
        raise UpdateError(f"not a release: {release}")
    wanted = f"v{parsed[0]}.{parsed[1]}"
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] == wanted:
            return cells[1]
    raise UpdateError(f"CAPO README: no compatibility row for {wanted}")


def read_versions(upstream: Upstream, name: str) -> ProviderVersions:
    """The newest CAPO release served after the one known (the table's entry ``name`` or
    ``inputs.json``), its contract, Cluster API compatibility and CRD set."""
    known = max(
        (
            k
            for k in (upstream.current_release(name), str(upstream.inputs.get(INPUTS_KEY, "")))
            if stable(k)
        ),
        key=lambda k: stable(k) or (0, 0, 0),
        default="",
    )
    if not known:
        raise UpdateError("neither table.json nor inputs.json names a CAPO release to probe from")
    release, directory = probe_newer(upstream.go, MODULE, known)
    readme = (directory / "README.md").read_text(encoding="utf-8")
    metadata = (directory / "metadata.yaml").read_text(encoding="utf-8")
    return ProviderVersions(
        entry={
            "module": MODULE,
            "release": release,
            "contract": contract_of(metadata, release),
            "clusterAPI": capi_compat(readme, release),
            "crds": matching_crd_set(
                upstream.shared_crds, CRD_SETS, crd_texts(directory / "config/crd/bases")
            ),
        },
        sources={
            "capo": {
                "what": "CAPO release, contract and Cluster API compatibility",
                "where": f"{MODULE}@{release} metadata.yaml and README.md; the proxy "
                "refuses the CAPO version list, newer tags probed: "
                + ", ".join(probe_candidates(known)),
                "readOn": upstream.today,
            }
        },
        read=(f"{MODULE}@{release}",),
    )
