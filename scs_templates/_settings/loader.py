"""Read a settings file into plain data plus a map of source positions.

We compose the YAML node graph ourselves (ruamel.yaml, YAML 1.2) instead of loading it, so
that every value keeps its line and column and the YAML 1.1 traps can be refused instead of
silently changing meaning: unquoted ``yes``/``no``/``on``/``off``/``y``/``n`` (booleans to
YAML 1.1 tools such as helm, strings to YAML 1.2), octal-looking numbers (``0755``),
duplicate keys, merge keys. Every failure is one :class:`Problem` with file:line:col.

Hostile input is bounded at every step: at most :data:`MAX_FILE_BYTES` are read from any
file (devices and FIFOs refused), nesting is limited while composing (ruamel's composer
recurses per level), and the alias count and the size after expanding aliases are limited
(a few hundred bytes of nested aliases expand to billions of values).

Composing is libyaml's (ruamel's C parser, ~10x faster than ruamel's pure-Python composer,
which dominated loading a fleet) whenever it can be trusted to give the same nodes, and the
pure-Python composer's otherwise: it stays the authority for every error and its position,
for texts libyaml may read differently (:data:`_DIVERGING`), for texts that could nest
deeper than libyaml's recursion should go, and when the C extension is missing. A text
libyaml composes is checked against the same depth and alias limits; anything over them,
and any error, is composed again by the pure-Python composer, which then reports it; the
problems and warnings of a settings file are always positioned by the pure-Python composer
(``parse_settings_text``). ``tests/unit/test_yaml_composers.py`` proves both give the same nodes.
"""

from __future__ import annotations

import math
import re
from pathlib import Path as FsPath
from typing import TYPE_CHECKING

from _ruamel_yaml import CParser  # type: ignore[import-not-found]  # ruamel.yaml.clib

from scs_templates._core import textinput
from scs_templates._settings.problems import Path, Problem, SettingsError

if TYPE_CHECKING:
    from typing import Any

MAX_FILE_BYTES = 1024 * 1024  # a settings file is a few KB; 1 MiB is certainly a mistake
#: Deepest nesting of mappings and lists (a settings file needs about 8 levels).
MAX_DEPTH = 64
#: Most aliases (``*name``) in one file.
MAX_ALIASES = 256
#: Most values (mapping entries, list items, scalars) once aliases are expanded.
MAX_VALUES = 100_000

_YAML11_BOOLS = {"yes", "no", "on", "off", "y", "n"}
_OCTAL_LOOKING = re.compile(r"^[-+]?0[0-9_]+$")

Positions = dict[Path, tuple[int, int]]


class _Collector:
    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.positions: Positions = {}
        #: paths whose position is an empty plain scalar's: libyaml marks where the value
        #: would have started, the pure composer where the next token starts
        self.uncertain: set[Path] = set()
        self.visited = 0

    def add(self, node: Any, path: Path, message: str) -> None:
        mark = node.start_mark
        self.problems.append(Problem(mark.line + 1, mark.column + 1, path, message, file=self.file))


def read_text(path: FsPath | str) -> str:
    """Read a settings file (``-``: stdin) as UTF-8 text, at most :data:`MAX_FILE_BYTES`.

    Devices, FIFOs and sockets are refused (see :mod:`scs_templates._core.textinput`).
    """

    try:
        return textinput.read_text(
            str(path), MAX_FILE_BYTES, what="a settings file", binary=_NOT_BINARY
        )
    except textinput.InputRefused as refused:
        file = textinput.display_name(str(path))
        raise SettingsError([Problem(message=str(refused), file=file)]) from None


#: What a settings file with a NUL byte is not.
_NOT_BINARY = "a YAML text file"


def decode(raw: bytes, file: str) -> str:
    """The text of a settings file's bytes ``raw`` (read from ``file``), as :func:`read_text`
    decodes it."""

    try:
        return textinput.decode_text(raw, _NOT_BINARY)
    except textinput.InputRefused as refused:
        raise SettingsError([Problem(message=str(refused), file=file)]) from None


class YamlSyntaxError(Exception):
    """The text is not YAML we read; ``line``/``column`` are 1-based (0: unknown)."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message


def compose_yaml(text: str, *, name_aliases: bool = True) -> Any:
    """Compose the single YAML document of ``text`` into ruamel nodes, within the limits.

    Nesting deeper than :data:`MAX_DEPTH` and more than :data:`MAX_ALIASES` aliases are
    refused while composing (ruamel's composer recurses once per level, so a few hundred
    levels would end in ``RecursionError``). A syntax error at the end of the text that was
    caused by an unclosed ``[``/``{``/quote points at where it was opened. With
    ``name_aliases=False`` an undefined alias is not named (its name may come from a secret
    value). Raises :class:`YamlSyntaxError`; returns None for an empty document.
    """
    from ruamel.yaml import YAML  # deferred: ruamel
    from ruamel.yaml.error import MarkedYAMLError, YAMLError  # deferred: ruamel

    yaml = YAML(typ="rt")
    yaml.Composer = _bounded_composer()
    try:
        return yaml.compose(text)
    except _LimitExceeded as error:
        raise YamlSyntaxError(error.line, error.column, error.message) from None
    except MarkedYAMLError as error:
        raise _syntax_error(error, text, name_aliases=name_aliases) from None
    except YAMLError as error:
        raise YamlSyntaxError(
            0, 0, str(error).splitlines()[0] if str(error) else "invalid"
        ) from None
    except RecursionError:  # pragma: no cover - the depth limit comes first
        raise YamlSyntaxError(0, 0, f"nested more than {MAX_DEPTH} levels deep") from None
    except NotImplementedError as error:  # ruamel: "overlap in comment" (a comment it cannot place)
        raise _unplaceable_comment(error) from None


def _unplaceable_comment(error: NotImplementedError) -> YamlSyntaxError:
    """ruamel.yaml's round-trip composer gives up on some comments next to a block scalar
    header (``a: #|+`` followed by a blank line): say where, as a syntax error (exit 2)."""
    found = re.search(r"line: (\d+), col: (\d+)", str(error))
    line, column = (int(found.group(1)) + 1, int(found.group(2)) + 1) if found else (0, 0)
    return YamlSyntaxError(
        line, column, "a comment here cannot be read (ruamel.yaml); move it to a line of its own"
    )


#: Upper bound of the nesting a text can reach, above which libyaml (whose composer recurses
#: in C, without Python's recursion limit) is not asked; the pure-Python composer's own
#: limit then reports the depth.
LIBYAML_SAFE_NESTING = 2000
#: What libyaml (a YAML 1.1 parser) may read differently from ruamel (YAML 1.2), found by
#: ``tests/unit/test_yaml_composers.py``: directives, document end markers, explicit tags,
#: anchors and aliases, a comment glued to a block scalar header, tabs, the 1.1-only line
#: breaks NEL, LS and PS, a byte-order mark inside the text. Such texts (rare in settings
#: files) are composed by the pure-Python composer.
_DIVERGING = re.compile(
    r"^%|^[.][.][.]|(?:^|[\s\[{,])[&*]|[|>][-+0-9]*#|[!\t\x85\u2028\u2029\ufeff]",
    re.MULTILINE,
)


def compose_with_libyaml(text: str) -> Any:
    """The root node composed by libyaml, or None when the pure-Python composer must decide
    (no C extension, a directive, possibly deep nesting, an error, a limit exceeded, an
    empty document)."""
    nesting = text.count("[") + text.count("{") + text.count("-") + text.count("\n") + 1
    if nesting > LIBYAML_SAFE_NESTING or _DIVERGING.search(text):
        return None
    try:
        composer = _libyaml_composer()(text)
        node = composer.get_single_node()
    except Exception:  # any doubt: the pure-Python composer decides
        return None
    if node is None or not _within_limits(node):
        return None
    return node


def _within_limits(root: Any) -> bool:
    """Depth and alias count as the bounded composer counts them: an alias is a second
    visit of a node (libyaml gives the anchored node itself), not descended again."""
    seen: set[int] = set()
    aliases = 0
    pending = [(root, 1)]
    while pending:
        node, depth = pending.pop()
        if id(node) in seen:
            aliases += 1
            if aliases > MAX_ALIASES:
                return False
            continue
        seen.add(id(node))
        if node.id == "scalar":
            continue
        if depth > MAX_DEPTH:
            return False
        if node.id == "sequence":
            pending.extend((item, depth + 1) for item in node.value)
        else:
            for key, value in node.value:
                pending.append((key, depth + 1))
                pending.append((value, depth + 1))
    return True


_LIBYAML: Any = None


def _libyaml_composer() -> Any:
    """libyaml's parser and composer with ruamel's YAML 1.2 resolver (the tags the
    pure-Python composer gives). Raises ImportError without the C extension."""
    global _LIBYAML
    if _LIBYAML is None:
        from ruamel.yaml.resolver import VersionedResolver  # deferred: ruamel

        class LibyamlComposer(CParser, VersionedResolver):  # type: ignore[misc]
            def __init__(self, text: str) -> None:
                CParser.__init__(self, text)
                VersionedResolver.__init__(self, loadumper=self)
                self._parser = self._composer = self

        _LIBYAML = LibyamlComposer
    return _LIBYAML


class _LimitExceeded(Exception):
    def __init__(self, mark: Any, message: str) -> None:
        super().__init__(message)
        self.line = mark.line + 1 if mark is not None else 0
        self.column = mark.column + 1 if mark is not None else 0
        self.message = message


def _syntax_error(error: Any, text: str, *, name_aliases: bool) -> YamlSyntaxError:
    mark = error.problem_mark or error.context_mark
    problem = (error.problem or error.context or "invalid YAML").strip()
    if "\\t" in problem or "'\\t'" in problem or "tab" in problem:
        problem = "tab character; YAML indentation must use spaces"
    if problem.startswith("found undefined alias") and not name_aliases:
        problem = "found an undefined alias (*name without a matching &name)"
    at_end = "stream end" in problem or "end of stream" in problem
    opened = getattr(error, "open_flow", None)
    if at_end and opened is not None:
        start, bracket = opened
        closing = "]" if bracket == "[" else "}"
        mark = start
        problem = f"{bracket!r} is never closed (expected {closing!r} before the end of the file)"
    elif opened is not None and _expects_closing(problem, opened[1]) and mark is not None:
        # a bracket left open mid-file: the parser fails where the text goes on without it
        start, bracket = opened
        problem = (
            f"{bracket!r} is never closed (at line {mark.line + 1}, column {mark.column + 1}: "
            f"{problem.replace(', but got', ', found')})"
        )
        mark = start
    elif at_end and error.context_mark is not None and "quoted scalar" in (error.context or ""):
        mark = error.context_mark
        problem = "quoted string is never closed (no closing quote before the end of the file)"
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
    return YamlSyntaxError(line, column, problem)


def _expects_closing(problem: str, bracket: str) -> bool:
    """Whether the parser's ``problem`` is that it wanted ``bracket``'s closing one (or a
    comma): what it says when a ``[`` or ``{`` was left open and the file went on."""
    closing = "]" if bracket == "[" else "}"
    return problem.startswith(f"expected ',' or '{closing}'")


_COMPOSER: Any = None


def _bounded_composer() -> Any:
    """ruamel's Composer with a depth limit, an alias limit and unclosed-bracket tracking."""
    global _COMPOSER
    if _COMPOSER is not None:
        return _COMPOSER
    from ruamel.yaml.composer import Composer  # deferred: ruamel
    from ruamel.yaml.error import MarkedYAMLError  # deferred: ruamel

    # deferred: ruamel
    from ruamel.yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent

    class BoundedComposer(Composer):
        depth = 0
        aliases = 0

        def __init__(self, loader: Any = None) -> None:
            super().__init__(loader)
            # A re-defined anchor is valid YAML; ruamel's warning about it quotes the file's
            # lines (which may hold secrets in a clusterctl.yaml) on stderr.
            self.warn_double_anchors = False

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.parser.peek_event()
            if isinstance(event, AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_ALIASES:
                    raise _LimitExceeded(
                        event.start_mark, f"more than {MAX_ALIASES} aliases (*name)"
                    )
                return super().compose_node(parent, index)
            if not isinstance(event, MappingStartEvent | SequenceStartEvent):
                return super().compose_node(parent, index)
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    raise _LimitExceeded(
                        event.start_mark, f"nested more than {MAX_DEPTH} levels deep"
                    )
                return super().compose_node(parent, index)
            except MarkedYAMLError as error:
                if event.flow_style is True and getattr(error, "open_flow", None) is None:
                    bracket = "[" if isinstance(event, SequenceStartEvent) else "{"
                    error.open_flow = (event.start_mark, bracket)  # type: ignore[attr-defined]
                raise
            finally:
                self.depth -= 1

    _COMPOSER = BoundedComposer
    return _COMPOSER


def parse_yaml(
    text: str, file: str, *, libyaml: bool = True
) -> tuple[Any, Positions, list[Problem]]:
    """Parse YAML text into plain data, the positions of every value, and value problems.

    Syntax errors and exceeded limits raise at once; problems of single values (YAML 1.1
    traps, duplicate keys) are returned so they are reported together with the validation
    problems. ``libyaml=False``: the pure-Python composer only (its positions; libyaml
    places an empty value where it would have started, ruamel where the next token does).
    """
    data, positions, problems, _ = parse_yaml_marked(text, file, libyaml=libyaml)
    return data, positions, problems


def parse_yaml_marked(
    text: str, file: str, *, libyaml: bool = True
) -> tuple[Any, Positions, list[Problem], set[Path]]:
    """:func:`parse_yaml`, plus the paths whose position may differ from the pure
    composer's: those of empty plain scalars, when libyaml composed the text (empty
    otherwise). Every other position is the pure composer's (``tests/test_yaml_composers``)."""
    if not text.strip() or all(
        not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()
    ):
        raise SettingsError(
            [Problem(message="file is empty; expected a ClusterSettings document", file=file)]
        )
    node = compose_with_libyaml(text) if libyaml else None
    by_libyaml = node is not None
    try:
        if node is None:
            node = compose_yaml(text)
    except YamlSyntaxError as error:
        raise SettingsError(
            [Problem(error.line, error.column, (), f"invalid YAML: {error.message}", file=file)]
        ) from None
    if node is None:
        raise SettingsError(
            [Problem(message="file is empty; expected a ClusterSettings document", file=file)]
        )
    collector = _Collector(file)
    if node.id != "mapping":
        what = "a list" if node.id == "sequence" else "a single value"
        collector.add(
            node, (), f"expected a mapping (apiVersion, kind, metadata, spec), found {what}"
        )
        raise SettingsError(collector.problems)
    data = _convert(node, (), collector, 0)
    uncertain = collector.uncertain if by_libyaml else set()
    return data, collector.positions, collector.problems, uncertain


def _empty_plain(node: Any) -> bool:
    return bool(node.id == "scalar" and node.value == "" and not node.style)


def _convert(node: Any, path: Path, out: _Collector, depth: int) -> Any:
    """Plain data of ``node``. Aliases are expanded, so the budget counts every visit: a few
    hundred bytes of nested aliases would otherwise expand to billions of values."""
    out.visited += 1
    if out.visited > MAX_VALUES or depth > MAX_DEPTH:
        why = (
            f"more than {MAX_VALUES} values once aliases are expanded"
            if out.visited > MAX_VALUES
            else f"nested more than {MAX_DEPTH} levels deep once aliases are expanded"
        )
        out.add(node, (), why)
        raise SettingsError(out.problems[-1:])
    if path not in out.positions:
        out.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if _empty_plain(node):
            out.uncertain.add(path)
    if node.id == "mapping":
        result: dict[str, Any] = {}
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.id != "scalar":
                out.add(key_node, path, "keys must be plain strings")
                continue
            key = str(key_node.value)
            if key == "<<":
                out.add(key_node, path, "merge keys (<<) are not supported; write the values out")
                continue
            if str(key_node.tag) != "tag:yaml.org,2002:str" or (
                not key_node.style and key.lower() in _YAML11_BOOLS
            ):
                out.add(key_node, (*path, key), f"key {key!r} is not a plain string; quote it")
                continue
            if key in seen:
                out.add(
                    key_node,
                    (*path, key),
                    f"duplicate key (first defined on line {seen[key]})",
                )
                continue
            seen[key] = key_node.start_mark.line + 1
            out.positions[(*path, key)] = (
                key_node.start_mark.line + 1,
                key_node.start_mark.column + 1,
            )
            if _empty_plain(key_node):
                out.uncertain.add((*path, key))
            result[key] = _convert(value_node, (*path, key), out, depth + 1)
        return result
    if node.id == "sequence":
        return [
            _convert(item, (*path, index), out, depth + 1) for index, item in enumerate(node.value)
        ]
    return _scalar(node, path, out)


def _scalar(node: Any, path: Path, out: _Collector) -> Any:
    tag = str(node.tag)
    text: str = node.value
    plain = not node.style  # ruamel: None, libyaml: ""
    if node.style == ">":  # ruamel's round-trip scanner marks folded line breaks with \a
        text = text.replace("\a", "")
    if plain and text.lower() in _YAML11_BOOLS:
        out.add(
            node,
            path,
            f"ambiguous value {text!r} (a boolean in YAML 1.1, a string in YAML 1.2): "
            "write true/false, or quote it if you mean the string",
        )
        return text
    if plain and _OCTAL_LOOKING.match(text) and text.strip("+-0_"):
        out.add(
            node,
            path,
            f"ambiguous number {text!r} (octal in YAML 1.1, decimal in YAML 1.2): "
            "write it without the leading zero, or quote it",
        )
        return text
    if tag == "tag:yaml.org,2002:str":
        return text
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:bool":
        if text.lower() not in ("true", "false"):  # ``!!bool maybe``
            out.add(node, path, f"cannot read {text!r} as true or false")
            return text
        return text.lower() == "true"
    if tag == "tag:yaml.org,2002:int":
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            out.add(node, path, f"cannot read {text!r} as a number")
            return text
    if tag == "tag:yaml.org,2002:float":
        lowered = text.lower().lstrip("+")
        if lowered in {".inf", "-.inf", ".nan"}:
            out.add(node, path, f"{text!r}: infinity and NaN are not allowed")
            return text
        try:
            value = float(text.replace("_", ""))
        except ValueError:  # ``!!float x``
            out.add(node, path, f"cannot read {text!r} as a number")
            return text
        return value if math.isfinite(value) else text
    if tag == "tag:yaml.org,2002:timestamp":
        return text
    out.add(node, path, f"unsupported YAML tag {tag}")
    return text
