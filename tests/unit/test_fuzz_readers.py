"""Fuzz the two readers of untrusted YAML: the settings loader and the KaaS v1 migrate reader.

hypothesis mutates the seed corpus (the examples, the KaaS v1 fixtures and the hostile shapes
in tests/fuzz_corpus/: alias bombs, deep nesting, tags, merge keys, unclosed brackets) at the
byte level and by splicing YAML syntax. Whatever comes out, a reader may only return a result
or raise its one error type with one-line messages; any other exception (RecursionError,
MemoryError, a ruamel exception, a pydantic one) is a bug.

Brief in CI (``SCS_TEMPLATES_FUZZ_EXAMPLES``, default 150 per reader); longer on demand:
``make fuzz`` (20,000 per reader). Failures hypothesis finds are replayed from its database
(.hypothesis/) on the next run; add the input to tests/fuzz_corpus/ to keep it forever.
"""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scs_templates._core.errors import InputError
from scs_templates._settings.loader import YamlSyntaxError, compose_yaml, decode
from scs_templates._settings.problems import SettingsError
from scs_templates._settings.validate import parse_settings_text
from scs_templates.providers.openstack.migrate.kaas_v1 import _SECRET_KEYS, migrate_kaas_v1
from scs_templates.providers.openstack.migrate.reading import _nodes, _secret_nodes
from tests.support import EXAMPLES, REPO

CORPUS_DIR = REPO / "tests" / "fuzz_corpus"
SETTINGS_SEEDS = [p.read_bytes() for p in EXAMPLES] + [
    p.read_bytes() for p in sorted((CORPUS_DIR / "settings").glob("*.yaml"))
]
CLUSTERCTL_SEEDS = [
    p.read_bytes() for p in sorted((REPO / "tests" / "data" / "kaas-v1").glob("*.yaml"))
] + [p.read_bytes() for p in sorted((CORPUS_DIR / "clusterctl").glob("*.yaml"))]

EXAMPLES_PER_RUN = int(os.environ.get("SCS_TEMPLATES_FUZZ_EXAMPLES", "150"))
SYNTAX = [
    b"&a ", b"*a", b"[", b"]", b"{", b"}", b": ", b"- ", b"\t", b"\n", b"\n  ", b"'", b'"',
    b"!!python/object ", b"!!binary ", b"<<: ", b"---\n", b"...\n", b"? ", b"|\n", b">-\n",
    b"#", b"%YAML 1.1\n", b"\\", b"\xef\xbb\xbf", b"\x00", b"\xff", b"yes", b"0755", b".inf",
    b"9223372036854775808", b"1e400", b"~", b"null", b"\xc3\xbc",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        position = draw(st.integers(min_value=0, max_value=len(data)))
        action = draw(st.sampled_from(["insert", "delete", "replace", "splice", "repeat"]))
        if action == "insert":
            data[position:position] = draw(st.sampled_from(SYNTAX))
        elif action == "delete":
            data[position : position + draw(st.integers(1, 16))] = b""
        elif action == "replace":
            data[position : position + 1] = draw(st.binary(min_size=1, max_size=4))
        elif action == "splice":
            other = draw(st.sampled_from(seeds))
            start = draw(st.integers(min_value=0, max_value=len(other)))
            data[position:position] = other[start : start + draw(st.integers(1, 200))]
        else:  # repeat a chunk, which grows nesting and alias chains
            chunk = bytes(data[position : position + draw(st.integers(1, 40))])
            data[position:position] = chunk * draw(st.integers(2, 30))
    return bytes(data)


FUZZ = settings(
    max_examples=EXAMPLES_PER_RUN,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FUZZ
@given(raw=mutated(SETTINGS_SEEDS))
def test_settings_loader_never_fails_otherwise(raw: bytes) -> None:
    try:
        text = decode(raw, "f.yaml")
        parse_settings_text(text, file="f.yaml")
    except SettingsError as error:
        assert error.problems
        for problem in error.problems:
            line = str(problem)
            assert line.startswith("f.yaml"), line
            assert "\n" not in problem.message, line


#: The seeds' secret (``OPENSTACK_CLOUD_YAML_B64: c2VjcmV0``, base64 of "secret").
SECRET = "c2VjcmV0"
SECRET_LINE = re.compile(rf"[ \t]*\w+_B64[ \t]*:[ \t]*{SECRET}[ \t]*")


def held_only_as_a_secret(text: str) -> bool:
    """True when :data:`SECRET` is in ``text`` only within secret keys' values (an alias of
    one included), as the reader composes it: then no message may quote it. A mutation can
    splice it into another key or value, which a message may quote (an invalid DNS server):
    no leak. Where the text is not YAML, only the seeds' own shape of line counts."""
    try:
        root = compose_yaml(text, name_aliases=False)
    except YamlSyntaxError:  # the reader refuses it with a syntax error
        lines = text.splitlines()
        return all(SECRET_LINE.fullmatch(line) for line in lines if SECRET in line)
    if root is None or root.id != "mapping":
        return SECRET not in text
    secrets = _secret_nodes(root, _SECRET_KEYS)
    holders = [n for n in _nodes(root) if n.id == "scalar" and SECRET in str(n.value)]
    held = sum(str(node.value).count(SECRET) for node in holders)
    # each occurrence in a secret's value: none in a comment, a tag or another scalar
    return held == text.count(SECRET) and all(id(node) in secrets for node in holders)


@FUZZ
@given(raw=mutated(CLUSTERCTL_SEEDS))
@example(  # found by make fuzz: the secret's text spliced into an invalid DNS server list
    raw=b'KUBERNETES_VERSION: v1.33.5\nWORKER_MACHINE_COUNT: 3\nOPENSTACK_DNS_NAMESERVERS: "[\n'
    b'OPENSTACK_CLOUD_YAML_B64: c2VjcmV0 5.1.66.255, 185.150.99.255, ]"\n'
    b"OPENSTACK_CLOUD_YAML_B64: c2VjcmV0\n"
)
def test_migrate_reader_never_fails_otherwise(raw: bytes) -> None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return  # read_input refuses it first (tested in test_migrate.py)
    try:
        migrate_kaas_v1(text, file="c.yaml")
    except InputError as error:
        message = str(error)
        assert message.startswith("c.yaml"), message
        if held_only_as_a_secret(text):
            assert SECRET not in message  # a secret key's value is never quoted
