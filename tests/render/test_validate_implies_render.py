"""The model is as strict as the charts: whatever ``validate`` accepts, the REAL helm renders.

One source of the rules: the chart's values.schema.json is checked by helm (Go regexes:
``$`` only at the very end, ASCII ``\\d``/``\\w``; float64 numbers) and the templates may
fail on top. A settings file that validates and then fails to render is a bug of the model.

The corpus is derived from the examples: hypothesis replaces one to three leaves (numbers,
strings, booleans) of an example with edge values (bounds, beyond 2**53, trailing newlines,
non-ASCII, slashes, long strings) or random ones. Every variant that validates must render
with exit 0. The cases the bad-input campaign of issue #18 found are pinned as examples and
as a table of refusals, and so are those of issue #41 (findings 5 and 6).

The budget is small by default (``make check``/CI) and longer with
``SCS_TEMPLATES_PROPERTY_EXAMPLES`` (``make property``).
"""

from __future__ import annotations

import copy
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from scs_templates._core.errors import ToolNotFoundError
from scs_templates._render.render import render
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import validate_data
from scs_templates._tools.helm import Helm
from scs_templates._tools.toolchain.resolve import find_helm
from tests.support import EXAMPLES, skip_or_fail

EXAMPLES_PER_RUN = int(os.environ.get("SCS_TEMPLATES_PROPERTY_EXAMPLES", "40"))
CORPUS: list[dict[str, Any]] = [YAML(typ="safe").load(path.read_text()) for path in EXAMPLES]

EDGE_INTS = [
    0,
    1,
    -1,
    7,
    67,
    68,
    100,
    118,
    255,
    256,
    1279,
    1280,
    9000,
    65535,
    2**31 - 1,
    2**31,
    2**53,
    2**53 + 1,
    2**63 - 1,
]
EDGE_STRINGS = [
    "",
    "x",
    "a\n",
    "\n",
    " a",
    "a b",
    "ü",
    "ﾃｽﾄ",
    "١٢٣",
    "a/b",
    "..",
    ".",
    "-",
    "0",
    "true",
    "null",
    "*",
    "a" * 64,
    "a" * 300,
    "'",
    '"',
    "{{ .Values }}",
    "docker.io",
    "1.33.x",
    "1.33.99999999999999999999",
    "10.0.0.0/8",
    "fd00::/64",
    "*-*-* 02:30:00\n",
    "https://a",
    "https://a b",
    # issue #41: values the cluster refused after validate had accepted them
    "a,b",
    "my domain",
    "every day",
    "forever and ever",
    "1.33.99",
    "fd00::/64",
    "10.0.0.0/32",
    "Bogus",
    "*-*-* 24:00",
]


def leaves(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every scalar below ``spec`` and ``metadata``."""
    if isinstance(data, dict):
        return [p for key, value in data.items() for p in leaves(value, (*path, key))]
    if isinstance(data, list):
        return [p for index, value in enumerate(data) for p in leaves(value, (*path, index))]
    return [path] if path and path[0] in ("spec", "metadata") else []


def replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    result = copy.deepcopy(data)
    node = result
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return result


def value_like(original: Any) -> st.SearchStrategy[Any]:
    if isinstance(original, bool):
        return st.booleans()
    if isinstance(original, int):
        return st.sampled_from(EDGE_INTS) | st.integers(min_value=-5, max_value=10**6)
    if isinstance(original, str):
        return st.sampled_from(EDGE_STRINGS) | st.text(max_size=12)
    return st.sampled_from(EDGE_STRINGS)


@st.composite
def variants(draw: st.DrawFn) -> dict[str, Any]:
    data = draw(st.sampled_from(CORPUS))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(leaves(data)))
        node: Any = data
        for part in path:
            node = node[part]
        data = replaced(data, path, draw(value_like(node)))
    return data


@pytest.fixture(scope="module")
def helm() -> Helm:
    try:
        return Helm(find_helm())
    except ToolNotFoundError as error:
        skip_or_fail(f"helm not found: {error}")
        raise


def render_or_fail(helm: Helm, data: dict[str, Any]) -> None:
    try:
        loaded = validate_data(data)
    except SettingsError:
        return  # refused: fine, nothing promised
    render(loaded.settings, helm=helm)  # raises HelmError (exit 1) if the charts disagree


def _example(path: str, value: Any, index: int = 0) -> dict[str, Any]:
    spec_path = tuple(int(p) if p.isdigit() else p for p in path.split("."))
    data = CORPUS[index]
    return replaced(data, spec_path, value) if _has(data, spec_path) else data


def _has(data: Any, path: tuple[Any, ...]) -> bool:
    node = data
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    return isinstance(node, dict | list)


@settings(
    max_examples=EXAMPLES_PER_RUN,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=variants())
@example(data=_example("spec.kubernetes.version", "1.33.99999999999999999999"))
@example(
    data=_example(
        "spec.workers.0.machineType",
        "\x7f",
        next(i for i, path in enumerate(EXAMPLES) if path.stem == "openstack-minimal"),
    )
)
def test_every_settings_file_validate_accepts_renders(helm: Helm, data: dict[str, Any]) -> None:
    render_or_fail(helm, data)


def with_spec(index: int, **changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(CORPUS[index])
    for dotted, value in changes.items():
        node = data["spec"]
        parts = dotted.split("__")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return data


def example_index(name: str) -> int:
    return next(i for i, path in enumerate(EXAMPLES) if path.stem == name)


DEV, MINIMAL = example_index("docker-dev"), example_index("openstack-minimal")


@pytest.mark.parametrize(
    ("data", "path", "words"),
    [
        (
            with_spec(DEV, etcd={"defrag": {"schedule": "*-*-* 02:30:00\n"}}),
            "spec.etcd.defrag.schedule",
            "OnCalendar",
        ),
        (
            with_spec(DEV, etcd={"defrag": {"schedule": "Montag 02:30:00ü"}}),
            "spec.etcd.defrag.schedule",
            "OnCalendar",
        ),
        (
            with_spec(DEV, registryMirrors=[{"registry": "a/b", "endpoints": ["https://m"]}]),
            "spec.registryMirrors[0].registry",
            "registry host",
        ),
        (
            with_spec(DEV, registryMirrors=[{"registry": "..", "endpoints": ["https://m"]}]),
            "spec.registryMirrors[0].registry",
            "registry host",
        ),
        (
            with_spec(MINIMAL, openstack__serverMetadata={"workers": {"k": "v" * 300}}),
            "spec.openstack.serverMetadata.workers.k",
            "255",
        ),
        (
            with_spec(DEV, kubernetes={"version": "1.33.99999999999999999999"}),
            "spec.kubernetes.version",
            "Kubernetes version",
        ),
        (
            with_spec(DEV, security={"apiRateLimits": {"maxRequestsInflight": 2**63 - 1}}),
            "spec.security.apiRateLimits.maxRequestsInflight",
            "less than or equal",
        ),
        (
            with_spec(DEV, security={"apiRateLimits": {"eventBurst": 2**53 + 1}}),
            "spec.security.apiRateLimits.eventBurst",
            "less than or equal",
        ),
        (
            with_spec(
                DEV,
                network={
                    "podCIDR": "fd00:10::/56",
                    "serviceCIDR": "10.96.0.0/12",
                    "nodeCIDR": "10.0.0.0/20",
                },
            ),
            "spec.network.podCIDR",
            "IP family",
        ),
        (
            with_spec(DEV, services={"metricsServer": {"values": {"replicas": 2**53 + 1}}}),
            "spec.services.metricsServer.values.replicas",
            "2**53",
        ),
        (
            with_spec(MINIMAL, workers=[{"name": "md-0", "replicas": 1, "machineType": "\x7f"}]),
            "spec.workers[0].machineType",
            "not printable",
        ),
        (
            with_spec(DEV, services={"metricsServer": {"values": {"a\x01": "b"}}}),
            "spec.services.metricsServer.values.a\x01",
            "not printable",
        ),
    ],
    ids=[
        "schedule-trailing-newline",
        "schedule-unicode",
        "registry-slash",
        "registry-dotdot",
        "metadata-300-chars",
        "patch-huge",
        "inflight-int64-max",
        "burst-beyond-float64",
        "mixed-cidr-families",
        "service-values-beyond-float64",
        "control-character-in-a-name",
        "control-character-in-a-key",
    ],
)
def test_what_the_charts_refuse_validate_refuses(
    data: dict[str, Any], path: str, words: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        validate_data(data)
    lines = [str(problem) for problem in caught.value.problems]
    assert any(f" {path}: " in f" {line}" and words in line for line in lines), lines


PROXY = {"httpProxy": "http://proxy.example:3128"}
#: Issue #41: the edges of what validate now accepts (findings 5 and 6) render.
BOUNDARIES = [
    (
        "noproxy-domain-and-cidr",
        with_spec(
            MINIMAL, network={"proxy": {**PROXY, "noProxy": [".corp.example", "10.0.0.0/8"]}}
        ),
    ),
    (
        "service-domain-with-proxy",
        with_spec(MINIMAL, network={"proxy": PROXY, "serviceDomain": "k8s.corp.example"}),
    ),
    ("mtu-118", with_spec(MINIMAL, network={"mtu": 118})),
    (
        "mtu-118-calico",
        with_spec(MINIMAL, network={"mtu": 118}, services={"cni": {"type": "calico"}}),
    ),
    ("pod-cidr-24", with_spec(MINIMAL, network={"podCIDR": "10.244.0.0/24"})),
    (
        "pod-cidr-8",
        with_spec(
            MINIMAL,
            network={
                "podCIDR": "10.0.0.0/8",
                "nodeCIDR": "172.16.0.0/20",
                "serviceCIDR": "172.20.0.0/16",
            },
        ),
    ),
    (
        "label-prefix-253",
        with_spec(
            MINIMAL,
            workers=[
                {
                    "name": "md",
                    "replicas": 1,
                    "machineType": "m",
                    "labels": {".".join(["a" * 62] * 4) + "/x": "v" * 63},
                }
            ],
        ),
    ),
    (
        "schedule-forms",
        with_spec(
            MINIMAL,
            etcd={
                "defrag": {"schedule": "Sat,Sun *-*-1..7 03:00 UTC"},
                "autoCompactionRetention": "1h30m",
            },
        ),
    ),
    (
        "encryption-wildcards",
        with_spec(
            MINIMAL,
            security={"encryptionAtRest": {"resources": ["secrets", "configmaps", "*.apps"]}},
        ),
    ),
    (
        "sg-ipv6",
        with_spec(
            MINIMAL,
            openstack={
                "nodeSecurityGroupRules": [
                    {"name": "v6", "etherType": "IPv6", "remoteIPPrefix": "fd00::/64"}
                ]
            },
        ),
    ),
]


@pytest.mark.parametrize("data", [b[1] for b in BOUNDARIES], ids=[b[0] for b in BOUNDARIES])
def test_finding5_the_edges_validate_accepts_render(helm: Helm, data: dict[str, Any]) -> None:
    validate_data(data)  # accepted ...
    render_or_fail(helm, data)  # ... and rendered


def test_examples_as_pinned_still_render(helm: Helm) -> None:
    for data in CORPUS:
        render_or_fail(helm, data)


def _schema_nodes(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        found.append((path, node))
        for key, value in node.items():
            found += _schema_nodes(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _schema_nodes(value, f"{path}/{index}")
    return found


def test_every_integer_setting_is_bounded_within_float64() -> None:
    """helm reads values through float64: a model integer without a bound could be changed."""
    from scs_templates._settings.schema import settings_schema

    unbounded = [
        path
        for path, node in _schema_nodes(settings_schema())
        if node.get("type") == "integer"
        and "enum" not in node
        and "const" not in node
        and not (
            abs(node.get("maximum", 2**64)) <= 2**53 and abs(node.get("minimum", -(2**64))) <= 2**53
        )
    ]
    assert unbounded == []


def test_patterns_use_ascii_classes_only() -> None:
    """Go's \\d and \\w (the chart schema, helm) are ASCII; the model's Rust/Python ones are not."""
    from scs_templates._settings.schema import settings_schema

    loose = [
        (path, node["pattern"])
        for path, node in _schema_nodes(settings_schema())
        if isinstance(node.get("pattern"), str)
        and any(c in node["pattern"] for c in ("\\d", "\\w", "\\b"))
    ]
    assert loose == []


# --------------------------------------------------------------------------- from the schema


SCHEMA_SECTIONS = ("network", "etcd", "security", "controlPlane", "kubernetes", "openstack")


def from_schema(node: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    """A hypothesis strategy for the values of a node of the published JSON Schema: enums,
    bounded integers, strings of the node's pattern (hypothesis' ``from_regex``) or short
    printable text, lists of up to two items, objects with any subset of their keys.
    Free-form mappings (helm values, the audit Policy) stay empty."""
    if "$ref" in node:
        return from_schema(defs[node["$ref"].rsplit("/", 1)[1]], defs, depth)
    if "anyOf" in node:
        return st.one_of([from_schema(branch, defs, depth) for branch in node["anyOf"]])
    if "enum" in node or "const" in node:
        return st.sampled_from(node.get("enum") or [node.get("const")])
    kind = node.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(node.get("minimum", -(2**31)), node.get("maximum", 2**31))
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True).filter(
                lambda text: len(text) <= node.get("maxLength", 300)
            )
        return st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12)
    if kind == "array":
        items = from_schema(node.get("items", {"type": "string"}), defs, depth + 1)
        return st.lists(items, min_size=node.get("minItems", 0), max_size=2)
    if kind == "object" and node.get("properties") and depth < 4:
        required = set(node.get("required", ()))
        fields = {
            key: from_schema(value, defs, depth + 1) for key, value in node["properties"].items()
        }
        return st.fixed_dictionaries(
            {key: value for key, value in fields.items() if key in required},
            optional={key: value for key, value in fields.items() if key not in required},
        )
    return st.just({})


@st.composite
def schema_variants(draw: st.DrawFn) -> dict[str, Any]:
    """An example with one section of its spec replaced by one generated from the schema."""
    from scs_templates._settings.schema import settings_schema

    schema = settings_schema()
    defs = schema["$defs"]
    data = copy.deepcopy(draw(st.sampled_from(CORPUS)))
    section = draw(st.sampled_from(SCHEMA_SECTIONS))
    node = defs["Spec"]["properties"][section]
    data["spec"][section] = draw(from_schema(node, defs))
    return data


@settings(
    max_examples=EXAMPLES_PER_RUN,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
@given(data=schema_variants())
def test_settings_generated_from_the_schema_that_validate_accepts_render(
    helm: Helm, data: dict[str, Any]
) -> None:
    render_or_fail(helm, data)
