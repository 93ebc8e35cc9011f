"""YAML written by anyone, read as plain data: the one reader of dataset specs and suites.

A dataset spec (:mod:`audit.ingest.spec`) or an expectation suite
(:mod:`audit.suites.suite_file`) may arrive in a pull request from a stranger, so its YAML is
read as data and never as instructions, with bounds on what it can make the reader do:

* **Core values only.** A node is text, an integer, a float, a boolean, null, a list or a
  mapping. Any other tag is refused with its line: ``!!python/name:``, ``!!python/object``
  and every other ``!!python/...`` tag, ``!!binary``, ``!!set``, ``!!omap``, ``!!timestamp``
  and any custom ``!tag``. A date such as ``2021-01-01`` is the text ``"2021-01-01"``, and
  ``=`` is text too (PyYAML's ``value`` and merge-key types are not resolved), so no plain
  value can fail to construct. A plain ``<<:`` key, a YAML 1.1 merge key that YAML 1.2 does
  not have, is refused with its line rather than read as a key named ``<<`` (which a spec
  refused as an unknown key and a ``--pools`` metadata file read as a field, exit 0); a
  quoted ``"<<"`` is a key.
* **Plain values are read by YAML 1.2's core schema** (YAML 1.2.2, section 10.3), not by
  PyYAML's YAML 1.1 rules, which turn words and ids into other values: ``yes`` / ``no`` /
  ``on`` / ``off`` (a binary label, a pool named ``on``) are text, not booleans (only
  ``true`` / ``false`` are); ``1:30`` is text, not the base-60 integer 90; ``1_000`` and
  ``0b1`` are text; ``1e-3`` is the number 0.001, not the text ``"1e-3"`` (PyYAML needs a
  ``.`` and a signed exponent). ``0o17`` and ``0x1F`` are octal and hexadecimal integers, as
  the core schema says. One departure from it: a whole number written with a leading zero
  (``007``, ``010``) is text, as JSON allows no such number and ids are written so (an
  annotator ``007`` in ``pools.map``, a nominal label ``007`` in ``labels_in_set``); PyYAML
  read ``007`` as octal 7, ``010`` as 8 and ``008`` as text. A numeric scale still reads
  such a value as its number (``order: [009, 010]`` is 9, 10).
* **Keys are single values** (text, a number, a boolean); a list or a mapping as a key is
  refused with its line.
* **Text is Unicode.** A pair of ``\\u`` escapes of UTF-16 surrogates (``"\\ud83d\\ude00"``,
  how ``json.dump`` writes a character past U+FFFF) is the one character it encodes, as in
  JSON, which YAML 1.2 reads; PyYAML left two lone surrogates, which no id or label holds. A
  surrogate left alone is refused with its line.
* **Depth.** At most :data:`MAX_DEPTH` levels of nested lists and mappings, counted with every
  alias written out; the reader stops at the first level too deep, so a document nested
  100,000 levels deep is refused at its line, not by a ``RecursionError``.
* **Aliases.** ``&anchor`` / ``*alias`` are allowed, but the document with every alias
  written out may hold at most :data:`MAX_NODES` nodes (values, lists and mappings), and no
  alias may point into the node that holds it. A "billion laughs" document of a few hundred
  bytes (nine aliases of nine aliases, nine levels deep) writes out to 10^9 values; it is
  refused, naming the line of the node that grows past the bound, before anything reads it.
* **Size.** At most :data:`MAX_BYTES` of text (:func:`read_yaml_text`); a spec or suite is a
  few kilobytes.

Every refusal is a :class:`YamlProblem` with the 1-based line (and column) it is about; the
spec and suite readers turn it into their own error naming the file. What the document may
hold (its keys and their types) is checked next, by a pydantic model
(:mod:`audit.ingest.yamlmodel`).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from ..escape.markdown import escaping_strings

#: Deepest nesting of lists and mappings accepted (a spec or suite needs 4 or 5).
MAX_DEPTH = 64
#: Most nodes a document may hold with its aliases written out.
MAX_NODES = 100_000
#: Largest spec or suite file read (bytes).
MAX_BYTES = 4 * 1024 * 1024

_CORE = "tag:yaml.org,2002:"
#: The tags a node may carry: YAML's core schema.
ALLOWED_TAGS = frozenset(_CORE + t for t in ("str", "int", "float", "bool", "null", "seq", "map"))
_NOT_RESOLVED = frozenset(_CORE + t for t in ("timestamp", "value", "merge"))


class YamlProblem(ValueError):
    """YAML that cannot be read, or that breaks one of the module's bounds.

    ``line`` and ``column`` are 1-based (None when the problem has no place); ``syntax`` is
    True when the text is not YAML at all (the message is then the parser's own words).
    """

    def __init__(self, message: str, line: int | None = None, column: int | None = None, *,
                 syntax: bool = False):
        self.message, self.line, self.column, self.syntax = message, line, column, syntax
        where = f"line {line}: " if line is not None else ""
        super().__init__(where + message)


def _mark(node_or_mark):
    mark = getattr(node_or_mark, "start_mark", node_or_mark)
    if mark is None:
        return None, None
    return mark.line + 1, mark.column + 1


def _shown_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else tag


#: YAML 1.2 core schema's plain scalars (YAML 1.2.2, section 10.3.2), which replace PyYAML's
#: YAML 1.1 bool / int / float resolvers; null is the same in both.
_CORE_SCALARS = (
    ("bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), "tTfF"),
    # a whole number with a leading zero (007) is text: the module docstring says why
    ("int", re.compile(r"^(?:[-+]?(?:0|[1-9][0-9]*)|0o[0-7]+|0x[0-9a-fA-F]+)$"),
     "-+0123456789"),
    ("float", re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][-+]?[0-9]+)?"
                         r"|[-+]?[0-9]+[eE][-+]?[0-9]+"
                         r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), "-+.0123456789"),
)
#: A UTF-16 surrogate, as a ``\\u`` escape of a double-quoted scalar may write one.
_SURROGATE = re.compile("[\ud800-\udfff]")
#: A high surrogate and the low one after it: one character past U+FFFF.
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
#: YAML 1.2 core schema's own integers, leading zeros included: what a dumped text must not be
#: read as by another reader.
_CORE_INT = re.compile(r"^[-+]?[0-9]+$")


def _core_resolvers() -> dict:
    """PyYAML's resolver table without the YAML 1.1 types (timestamp, value, merge, bool,
    int, float), with the core schema's bool, int and float added."""
    replaced = _NOT_RESOLVED | {_CORE + t for t, _, _ in _CORE_SCALARS}
    table = {first: [(tag, regexp) for tag, regexp in resolvers if tag not in replaced]
             for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    for name, regexp, firsts in _CORE_SCALARS:
        for first in firsts:
            table.setdefault(first, []).append((_CORE + name, regexp))
    return table


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, resolving only core-schema scalars (YAML 1.2) and composing
    depth-first with a depth bound (checked before descending, so the bound holds whatever the
    input)."""

    yaml_implicit_resolvers = _core_resolvers()

    def construct_yaml_int(self, node) -> int:
        """A core-schema integer: decimal (leading zeros are decimal: ``010`` is 10), ``0o``
        octal or ``0x`` hexadecimal."""
        text = self.construct_scalar(node)
        if text[:2] in ("0o", "0x"):
            return int(text[2:], 8 if text[1] == "o" else 16)
        return int(text, 10)

    def construct_yaml_str(self, node) -> str:
        """Text, with each pair of ``\\u`` escapes of UTF-16 surrogates (``"\\ud83d\\ude00"``,
        as JSON writes a character past U+FFFF) read as the one character it encodes, as a
        JSON reader reads it (YAML 1.2 reads JSON); a surrogate left alone is no character,
        and is refused with its line."""
        text = self.construct_scalar(node)
        if not _SURROGATE.search(text):
            return text
        text = _PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode(
            "utf-16-le"), text)
        lone = _SURROGATE.search(text)
        if lone is not None:
            line, column = _mark(node)
            raise YamlProblem(f"the text holds \\u{ord(lone.group()):04x}, half of a UTF-16 "
                              "surrogate pair, alone: it is no character; write the character "
                              "itself, or \\U and its eight hex digits", line, column)
        return text

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        if self._depth >= MAX_DEPTH:
            line, column = _mark(self.peek_event())
            raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep (the limit for a spec "
                              "or suite)", line, column)
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node.tag not in ALLOWED_TAGS:
            line, column = _mark(node)
            raise YamlProblem(f"the tag {_shown_tag(node.tag)!r} is not allowed: a spec or suite "
                              "holds plain values only (text, numbers, booleans, lists, "
                              "mappings)", line, column)
        if isinstance(node, yaml.MappingNode):
            for key, _ in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    line, column = _mark(key)
                    what = "list" if isinstance(key, yaml.SequenceNode) else "mapping"
                    raise YamlProblem(f"a {what} is used as a key; a key must be a single "
                                      "value (a name or a number)", line, column)
                if key.value == "<<" and key.style is None and key.tag == _CORE + "str":
                    line, column = _mark(key)
                    raise YamlProblem("'<<' (a YAML 1.1 merge key) does not merge here: write "
                                      "the keys out, or quote '<<' to use it as a key",
                                      line, column)
        return node


_Loader.add_constructor(_CORE + "int", _Loader.construct_yaml_int)
_Loader.add_constructor(_CORE + "str", _Loader.construct_yaml_str)


@escaping_strings
class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper quoting every text that YAML 1.1, the core schema or this module
    would read as something else (``'08'``, ``'1e3'``, ``'0o7'`` as well as ``'no'`` and
    ``'07'``), so a file written here reads back as written by :func:`compose` and by any
    YAML 1.1 or 1.2 reader; a text holding a control, bidi or invisible character is written
    double-quoted with YAML escapes (:func:`audit.escape.markdown.escaping_strings`: PyYAML
    wrote NEL raw, read back as a space)."""

    yaml_implicit_resolvers = {
        first: [*_core_resolvers().get(first, []),
                *yaml.SafeDumper.yaml_implicit_resolvers.get(first, []),
                *([(_CORE + "int", _CORE_INT)] if first and first in "-+0123456789" else [])]
        for first in {*_core_resolvers(), *yaml.SafeDumper.yaml_implicit_resolvers}}


def dump(data) -> str:
    """``data`` (plain values, lists, mappings) as block YAML that :func:`compose` and
    :func:`construct` read back to the same values (keys in the order given, Unicode kept)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


def read_yaml_text(path: Path, *, what: str) -> str:
    """The text of a YAML file of at most :data:`MAX_BYTES` (UTF-8, a BOM allowed).

    Raises
    ------
    YamlProblem
        The file is larger than :data:`MAX_BYTES` or not UTF-8.
    """
    with open(path, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise YamlProblem(f"the {what} is larger than {MAX_BYTES:,} bytes, the most a {what} "
                          "may hold")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise YamlProblem(f"not UTF-8 text: invalid byte at byte offset {err.start}; save the "
                          f"file as UTF-8", line) from None


def compose(text: str) -> yaml.Node | None:
    """The YAML node tree of ``text`` (None for an empty document), within the module's bounds.

    Raises
    ------
    YamlProblem
        Invalid YAML, a tag that is not plain data, a non-scalar key, nesting deeper than
        :data:`MAX_DEPTH`, aliases writing out to more than :data:`MAX_NODES` nodes or into
        themselves; the line is given.
    """
    try:
        loader = _Loader(text)
    except yaml.YAMLError as err:  # a character YAML forbids (NUL, most control characters)
        raise _parse_problem(err, text) from None
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as err:
        raise _parse_problem(err, text) from None
    finally:
        loader.dispose()
    if root is not None:
        _check_expanded(root)
    return root


def construct(node: yaml.Node):
    """The Python value of a node :func:`compose` returned (core values only)."""
    return _Loader("").construct_document(node)


def constructor() -> yaml.SafeLoader:
    """A loader whose ``construct_object(node, deep=True)`` reads nodes :func:`compose`
    returned, sharing one memo (an aliased node is built once)."""
    return _Loader("")


def _parse_problem(err: yaml.YAMLError, text: str) -> YamlProblem:
    if isinstance(err, yaml.reader.ReaderError):  # no mark: the position is a character index
        line = text.count("\n", 0, err.position) + 1
        return YamlProblem(f"the character U+{int(err.character):04X} is not allowed in YAML "
                           "text (a control character)", line, syntax=True)
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    context, context_mark = getattr(err, "context", None), getattr(err, "context_mark", None)
    if context and context_mark is not None and context_mark is not mark:
        problem += f" ({context} at line {context_mark.line + 1})"
    line, column = _mark(mark)
    return YamlProblem(problem, line, column, syntax=True)


def _check_expanded(root: yaml.Node) -> None:
    """Nodes and depth of ``root`` with every alias written out, each shared node counted once
    per use (memoised: the walk visits each distinct node once, whatever the expansion)."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()
    construct_one = _Loader("").construct_object

    def visit(node) -> None:
        key = id(node)
        if key in size:
            return
        if key in open_nodes:
            line, column = _mark(node)
            raise YamlProblem("an alias refers to the node that contains it (a recursive "
                              "alias)", line, column)
        if isinstance(node, yaml.ScalarNode):
            try:
                construct_one(node)
            except YamlProblem:
                raise
            except (ValueError, OverflowError, yaml.YAMLError) as err:
                line, column = _mark(node)
                raise YamlProblem(f"cannot read {node.value!r} as {_shown_tag(node.tag)} "
                                  f"({err}); quote it to make it text", line, column) from None
            size[key], depth[key] = 1, 1
            return
        open_nodes.add(key)
        children = ([c for pair in node.value for c in pair]
                    if isinstance(node, yaml.MappingNode) else list(node.value))
        for child in children:
            visit(child)
        open_nodes.discard(key)
        size[key] = 1 + sum(size[id(c)] for c in children)
        depth[key] = 1 + max((depth[id(c)] for c in children), default=0)
        if size[key] > MAX_NODES:
            line, column = _mark(node)
            raise YamlProblem(f"with its aliases written out, this holds more than "
                              f"{MAX_NODES:,} values (an alias bomb?); write the values out",
                              line, column)
        if depth[key] > MAX_DEPTH:
            line, column = _mark(node)
            raise YamlProblem(f"with its aliases written out, this is nested more than "
                              f"{MAX_DEPTH} levels deep", line, column)

    visit(root)
