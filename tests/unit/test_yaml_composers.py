"""libyaml composing (``loader.compose_with_libyaml``) against ruamel's pure-Python composer.

The loader takes libyaml's nodes only where they are the pure composer's: proven here on
the examples, the benchmark fleet, hand-picked YAML corners and generated documents (every
scalar style, flow and block collections, anchors and aliases, non-ASCII text, CRLF), and
on generated CORRUPTIONS of valid texts: whenever libyaml composes a text, the pure
composer composes the same nodes (same kinds, tags, values, styles, lines and columns, same
aliasing); whenever libyaml fails or a limit is reached, it gives None and the pure composer
decides (and words the error with its position).
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fleetgen import fleet_settings
from scs_templates._settings import loader
from tests.support import EXAMPLES


def _signature(node: Any, seen: dict[int, int] | None = None) -> Any:
    """Everything the loader reads from a node; plain style and folding marks normalised."""
    seen = {} if seen is None else seen
    if id(node) in seen:
        return ("alias", seen[id(node)])
    seen[id(node)] = len(seen)
    base = (node.id, str(node.tag), node.start_mark.line, node.start_mark.column)
    if node.id == "scalar" and node.value == "" and not node.style:
        # An empty value: libyaml marks where it would have started (after the ':' or '-'),
        # ruamel where the next token starts. The data is the same; positions of reported
        # problems and warnings always come from the pure composer (test below).
        base = (node.id, str(node.tag))
    if node.id == "scalar":
        value = node.value.replace("\a", "") if node.style == ">" else node.value
        return (*base, value, node.style or None)
    if node.id == "sequence":
        return (*base, tuple(_signature(item, seen) for item in node.value))
    return (*base, tuple((_signature(k, seen), _signature(v, seen)) for k, v in node.value))


def _pure(text: str) -> Any:
    try:
        return _signature(loader.compose_yaml(text))
    except loader.YamlSyntaxError:
        return "error"


def _agree(text: str) -> bool:
    """libyaml's nodes equal the pure composer's, or libyaml stepped aside. True when
    libyaml composed the text."""
    fast = loader.compose_with_libyaml(text)
    if fast is None:
        return False
    assert _signature(fast) == _pure(text), text
    return True


CORNERS = [
    "a: &x [1, 2]\nb: *x\nc: yes\nd: 0755\ne: 0o17\nf: 1_000\ng: ~\nh: 'q'\ni: \"d\\u00e9\"\n",
    "j: |\n  literal\n  lines\nk: >-\n  folded\n  lines\n\n  para\nl: 1.5e3\nm: .inf\n",
    "n: 2001-12-14\no: !!str 3\np: \"tab\\there\"\nq: 'it''s'\nr:\ns: [a, {b: c}, [d]]\n",
    "\u00e4\u00f6: [\u00e4, b, \u00e9\u00e9\u00e9]\nx: '\u4e2d\u6587' # comment\ny: z\n",
    "a: b\r\nc:\r\n  - d\r\n  - e: f\r\n",
    "---\na: 1\n...\n",
    "- x\n- - y\n  - - z\n",
    "key with spaces: value with spaces\n? complex\n: value\n",
    "a: >\n  folded\n   indented\n  back\n",
    "a: |+\n  keep\n\nb: |-\n  strip\n",
    "a: 'multi\n  line'\nb: \"multi\n  line\"\nc: plain\n  continued\n",
    "anchors: &a {x: &b [1, *b]}\n",  # an alias of an anchor still open: both refuse
]


@pytest.mark.parametrize("text", CORNERS)
def test_corners_compose_the_same(text: str) -> None:
    _agree(text)


def test_examples_and_fleet_compose_the_same_with_libyaml() -> None:
    texts = [path.read_text() for path in EXAMPLES]
    texts += [json.dumps(data, indent=2) for data in fleet_settings(12)]
    assert all(_agree(text) for text in texts)  # all of them by libyaml


def test_folded_scalars_have_no_marks_on_either_path() -> None:
    """ruamel's round-trip scanner puts \\a where a folded line break was; the value must
    not carry it (it did before libyaml composing, on the pure path)."""
    text = "apiVersion: v\nkind: k\nmetadata:\n  name: >-\n    a\n    b\n"
    data, _, _ = loader.parse_yaml(text, "f.yaml")
    assert data["metadata"]["name"] == "a b"
    pure = loader.compose_yaml(text)
    name = pure.value[2][1].value[0][1]
    assert "\a" in name.value  # what the loader has to remove itself


# --------------------------------------------------------------------------- generated

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["yes", "No", "on", "0755", "1_000", "~", "null", ".inf", "1.33.x", ""]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30),
    st.text(alphabet="ab \n-:#'\"", max_size=20),
)
_keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
_data = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=25,
)


def _dump(data: Any, flow: bool | None, style: str | None, width: int) -> str:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = flow
    yaml.default_style = style  # type: ignore[assignment]
    yaml.width = width
    yaml.allow_unicode = True
    stream = io.StringIO()
    yaml.dump({"root": data}, stream)
    return stream.getvalue()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _data,
    st.sampled_from([None, True, False]),
    st.sampled_from([None, "'", '"', "|", ">"]),
    st.sampled_from([20, 80, 4096]),
)
def test_generated_documents_compose_the_same(
    data: Any, flow: bool | None, style: str | None, width: int
) -> None:
    _agree(_dump(data, flow, style, width))


_VALID = [path.read_text() for path in EXAMPLES] + CORNERS
_PIECES = [
    *"[]{}: \t-'\"\n#>|?,!@%\r\\",
    *("&a ", "*a", "!!", "%YAML 1.1\n", "...", "---", "\ufeff", "\x85", "\u2028"),
]


@st.composite
def _corrupted(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(_VALID))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(st.sampled_from(_PIECES))
        if action == "insert":
            text = text[:at] + piece + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + len(piece) :]
        else:
            text = text[:at] + piece + text[at + 1 :]
    return text


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_corrupted())
def test_libyaml_never_composes_what_the_pure_composer_reads_otherwise(text: str) -> None:
    _agree(text)


# --------------------------------------------------------------------------- stepping aside


def test_deep_or_aliased_texts_go_to_the_pure_composer() -> None:
    deep = "a: " + "[" * (loader.MAX_DEPTH + 1) + "]" * (loader.MAX_DEPTH + 1) + "\n"
    assert loader.compose_with_libyaml(deep) is None
    assert _pure(deep) == "error"
    very_deep = "[" * (loader.LIBYAML_SAFE_NESTING + 1)
    assert loader.compose_with_libyaml(very_deep) is None  # never handed to C recursion
    aliases = "a: &x 1\nb: [" + ", ".join(["*x"] * (loader.MAX_ALIASES + 1)) + "]\n"
    assert loader.compose_with_libyaml(aliases) is None
    assert _pure(aliases) == "error"
    assert loader.compose_with_libyaml("%YAML 1.1\n---\na: yes\n") is None
    assert loader.compose_with_libyaml("a: [1, 2\n") is None  # errors: the pure composer's


def test_the_loader_composes_with_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str, **kwargs: Any) -> Any:
        raise AssertionError("the pure composer ran for a valid settings file")

    monkeypatch.setattr(loader, "compose_yaml", refuse)
    data, _, problems = loader.parse_yaml(EXAMPLES[0].read_text(), str(EXAMPLES[0]))
    assert data["kind"] == "ClusterSettings" and problems == []


# --------------------------------------------------------------------------- warnings


def _fleet_texts(tmp_path: Any, count: int = 24) -> list[str]:
    from bench.fleetgen import write_fleet

    return [path.read_text() for path in write_fleet(tmp_path, count)]


def test_warnings_placed_by_libyaml_are_the_pure_composers(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file with warnings is no longer composed twice: the warnings' lines and columns
    are the same as from the pure composer (every fleet file has some)."""
    from scs_templates._settings import validate

    texts = [path.read_text() for path in EXAMPLES] + _fleet_texts(tmp_path)
    pure_runs = []
    compose = loader.compose_yaml
    monkeypatch.setattr(
        loader, "compose_yaml", lambda t, **k: pure_runs.append(1) or compose(t, **k)
    )
    fast = [validate.parse_settings_text(text, file="f.yaml", plain=True) for text in texts]
    assert pure_runs == []  # libyaml alone placed them
    assert sum(bool(loaded.warnings) for loaded in fast) >= len(texts) // 2
    monkeypatch.setattr(loader, "compose_with_libyaml", lambda text: None)
    slow = [validate.parse_settings_text(text, file="f.yaml", plain=True) for text in texts]
    for one, other in zip(fast, slow, strict=True):
        assert [str(w) for w in one.warnings] == [str(w) for w in other.warnings]


def test_a_warning_at_an_empty_value_is_placed_by_the_pure_composer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """libyaml marks an empty value where it would have started: such a position is
    uncertain, and a warning placed there makes the pure composer read the file again."""
    from scs_templates._settings import rules, validate

    text = (
        EXAMPLES[0].read_text().replace("kind: ClusterSettings", "kind: ClusterSettings\nx:\n  -\n")
    )
    data, _, _, uncertain = loader.parse_yaml_marked(text, "f.yaml")
    assert ("x", 0) in uncertain and data["x"] == [None]
    assert loader.parse_yaml_marked(text, "f.yaml", libyaml=False)[3] == set()
    del data["x"]
    pure_runs = []
    compose = loader.compose_yaml
    monkeypatch.setattr(
        loader, "compose_yaml", lambda t, **k: pure_runs.append(1) or compose(t, **k)
    )
    monkeypatch.setattr(rules, "warnings", lambda settings: iter([(("x", 0), "look here")]))
    monkeypatch.setattr(validate, "_check_header", lambda data: [])
    monkeypatch.setattr(validate, "_plain", lambda data: object())
    monkeypatch.setattr(rules, "errors", lambda settings: iter([]))
    loaded = validate.parse_settings_text(text, file="f.yaml", plain=True)
    assert pure_runs == [1]
    pure_positions = loader.parse_yaml(text, "f.yaml", libyaml=False)[1]
    assert [(w.line, w.column) for w in loaded.warnings] == [pure_positions[("x", 0)]]
