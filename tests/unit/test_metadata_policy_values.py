"""The metadata policy's values (issue #40 defect 11): whatever namespaces the settings allow,
the chart gets them sorted, once, with kube-system, and values its schema accepts."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from scs_templates._settings.model import settings_model
from scs_templates.providers.openstack.metadata_policy import (
    metadata_policy_enabled,
    metadata_policy_values,
)
from tests.support import REPO, services_settings
from tests.support.strategies import dns_label

SCHEMA = Draft7Validator(
    json.loads((REPO / "charts/scs-metadata-policy/values.schema.json").read_text())
)


@settings(max_examples=40, deadline=None)
@given(
    extra=st.lists(dns_label, max_size=6),
    cni=st.sampled_from(["cilium", "calico"]),
    deny=st.booleans(),
)
def test_values_are_sorted_unique_with_kube_system_and_fit_the_chart_schema(
    extra: list[str], cni: str, deny: bool
) -> None:
    data = services_settings(cni={"type": cni}).model_dump(by_alias=True, exclude_none=True)
    data["spec"]["openstack"]["metadataService"] = {"denyPods": deny, "allowedNamespaces": extra}
    chosen = settings_model().model_validate(data)
    values = metadata_policy_values(chosen)
    assert values["allowedNamespaces"] == sorted({"kube-system", *extra})
    assert values["cni"] == cni and values["deniedCidrs"] == ["169.254.169.254/32"]
    assert list(SCHEMA.iter_errors(values)) == []
    assert metadata_policy_enabled(chosen) is deny
