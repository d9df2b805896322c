"""Names we control: ``$PREFIX-$CLUSTER-$RESOURCE``, DNS-1123, at most 63 characters.

Cluster API derives more names from ours (MachineSets and Machines append "-xxxxx" each,
immutable templates get "-<8 hex>"), and a name cut at 63 must never end in '-' (an
azimuth-cloud bug). The settings rules keep valid names short; :func:`naming.fit` is the
safety net. Rendered names are checked in test_charts.py.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scs_templates._core import naming
from scs_templates._render.values import TEMPLATE_BASE_LIMIT, build_values
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import validate_data

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

label = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?\Z")


def is_dns_label(name: str, limit: int = naming.MAX_NAME) -> bool:
    return bool(DNS_LABEL.match(name)) and len(name) <= limit


def all_names(values: dict[str, Any]) -> dict[str, str]:
    """Every object name in the values, keyed by where it is."""
    names = {
        "cluster": values["cluster"]["name"],
        "infra": values["cluster"]["infraName"],
        "controlPlane": values["controlPlane"]["name"],  # and its MachineHealthCheck
    }
    if "openstack" in values:
        names["credentials"] = values["openstack"]["credentials"]["secretName"]
    for group in values["workers"]:
        # the MachineDeployment and its MachineHealthCheck
        names[f"{group['name']}.deployment"] = group["deploymentName"]
    return names


def test_short_names_are_kept() -> None:
    assert naming.resource_name("capi", "demo", "workers") == "capi-demo-workers"
    assert naming.resource_name("capi", "demo") == "capi-demo"


def test_long_names_are_shortened_with_a_hash_and_no_trailing_dash() -> None:
    # Position 55 is a '-': a plain cut would leave it at the end.
    long = naming.resource_name("a" * 20, "b" * 30, "c" * 40)
    assert len(long) == naming.MAX_NAME
    assert is_dns_label(long)
    assert not long.endswith("-")
    tricky = naming.fit("x" * 54 + "-" + "y" * 20)
    assert is_dns_label(tricky) and "--" not in tricky[-9:]
    # Different long names stay different (the hash covers the whole name).
    assert naming.fit("a" * 70 + "1") != naming.fit("a" * 70 + "2")


def test_template_base_leaves_room_for_the_hash() -> None:
    assert TEMPLATE_BASE_LIMIT + naming.TEMPLATE_HASH_SUFFIX == naming.MAX_NAME
    assert len(naming.fit("z" * 80, TEMPLATE_BASE_LIMIT)) == TEMPLATE_BASE_LIMIT


def _settings(prefix: str, cluster: str, groups: list[str], provider: str) -> Any:
    data = {
        "apiVersion": "scs-templates.scs.community/v1alpha1",
        "kind": "ClusterSettings",
        "metadata": {"name": cluster},
        "spec": {
            "template": "multi-md",
            "provider": provider,
            "prefix": prefix,
            "controlPlane": {"machineType": "m"} if provider == "openstack" else {},
            "workers": [
                {"name": g, **({"machineType": "m"} if provider == "openstack" else {})}
                for g in groups
            ],
        },
    }
    try:
        return validate_data(data).settings
    except SettingsError:
        return None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    prefix=label,
    cluster=label,
    groups=st.lists(label, min_size=1, max_size=4, unique=True),
    provider=st.sampled_from(["openstack", "docker"]),
)
def test_every_name_of_valid_settings_fits(
    prefix: str, cluster: str, groups: list[str], provider: str
) -> None:
    settings_ = _settings(prefix, cluster, groups, provider)
    assume(settings_ is not None)
    values = build_values(settings_)
    for where, name in all_names(values).items():
        assert is_dns_label(name), (where, name)
    # Machine owners leave room for the MachineSet and Machine suffixes.
    assert len(values["controlPlane"]["name"]) <= naming.MACHINE_OWNER_BUDGET
    for group in values["workers"]:
        assert len(group["deploymentName"]) <= naming.MACHINE_OWNER_BUDGET
        assert is_dns_label(group["templateBase"], TEMPLATE_BASE_LIMIT)
    assert is_dns_label(values["controlPlane"]["templateBase"], TEMPLATE_BASE_LIMIT)
    # $PREFIX-$CLUSTER-$RESOURCE, unshortened, for valid settings.
    assert values["controlPlane"]["name"] == f"{prefix}-{cluster}-control-plane"
    assert [g["deploymentName"] for g in values["workers"]] == [
        f"{prefix}-{cluster}-{g}" for g in groups
    ]


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,60}[a-z0-9])?\Z"), min_size=1, max_size=4)
)
def test_fit_always_gives_a_dns_label(parts: list[str]) -> None:
    name = naming.fit("-".join(parts))
    assert is_dns_label(name), name


def test_per_cluster_names_fit_their_limit() -> None:
    assert naming.per_cluster("prod", "cert-manager") == "prod-cert-manager"
    long = naming.per_cluster("c" * 50, "cluster-autoscaler", 53)
    assert len(long) == 53 and is_dns_label(long, 53)
    assert naming.full_name("capi", "prod", "md-0") == "capi-prod-md-0"
    assert naming.resource_name("capi", "x" * 70) == naming.fit(naming.full_name("capi", "x" * 70))


def test_names_and_labels_are_written_once() -> None:
    """The kubeconfig Secret's name and the project's labels live in naming.py and labels.py;
    everywhere else asks them (a hand-written copy is found here)."""
    from tests.support import REPO

    owners = {"scs_templates/_core/naming.py", "scs_templates/_core/labels.py"}
    written = re.compile(
        r'[\w}]-kubeconfig"|"scs\.community/|"app\.kubernetes\.io/(managed-by|component)"'
        r'|"clusterctl\.cluster\.x-k8s\.io/move"|"node-restriction\.kubernetes\.io"'
    )
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "scs_templates").rglob("*.py"))
        if str(path.relative_to(REPO)) not in owners
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if written.search(line)
    ]
    assert offenders == []


def test_capo_names_are_written_once() -> None:
    """CAPO's names of the cluster's network and security groups (which preflight and delete
    look for) are built in openstack/capo_names.py only, as CAPO builds them: not fitted."""
    from scs_templates.providers.openstack import capo_names
    from tests.support import REPO, settings_of

    written = re.compile(
        r'k8s-clusterapi|"k8s-cluster"|secgroup|cluster-api-provider-openstack cluster'
    )
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted((REPO / "scs_templates").rglob("*.py"))
        if path.name != "capo_names.py"
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if written.search(line)
    ]
    assert offenders == []
    long = "c" * 60  # a long namespace and name: CAPO does not fit, neither may we
    flavor = {"machineType": "m"}
    spec = {"provider": "openstack", "controlPlane": flavor, "workers": [{"name": "w", **flavor}]}
    settings_ = settings_of(spec, "demo", long)
    assert capo_names.capo_network_name(settings_) == f"k8s-clusterapi-cluster-{long}-demo"
    assert capo_names.capo_description(settings_) == (
        f"Created by cluster-api-provider-openstack cluster {long}-demo"
    )
    assert capo_names.capo_security_group_names(settings_) == [
        f"k8s-cluster-{long}-demo-secgroup-{role}" for role in ("controlplane", "worker", "bastion")
    ]
