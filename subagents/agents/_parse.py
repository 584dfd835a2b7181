"""Safe parsing of YAML and JSON text, with line numbers and size limits.

YAML is read with the safe loader only: a tag that would build a Python object
(``!!python/object/apply:os.system``) is an error for that file. Before any
value is built, the node graph is walked with a budget, so alias bombs and
recursive anchors are refused instead of eating memory or the stack. The
lenient reader is the fallback for frontmatter that is not YAML at all: each
line ``key: value`` is read on its own, and refused as soon as a line says more
than that.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs
import yaml

from subagents.agents._diagnostics import Diagnostic, DiagnosticCode, Severity
from subagents.agents._exceptions import AgentsError
from subagents.agents._lines import KeyPath, LineIndex, json_line_index

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "LenientLine",
    "Parsed",
    "ParseProblem",
    "duplicate_diagnostics",
    "problem_diagnostic",
    "parse_json",
    "parse_lenient",
    "parse_quoted",
    "parse_yaml",
]

#: Most YAML nodes a document may expand to (aliases counted each time used).
MAX_NODES = 50_000
#: Deepest nesting of mappings and sequences a document may have.
MAX_DEPTH = 64

_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@attrs.frozen
class Parsed:
    """A parsed document and where its keys are."""

    data: Any
    index: LineIndex


@attrs.frozen
class ParseProblem:
    """Why a document could not be parsed; ``code`` is a DiagnosticCode value."""

    code: str
    message: str
    line: int


@attrs.frozen
class LenientLine:
    """A frontmatter line the lenient reader took as plain text."""

    key: str
    line: int
    reason: str


class _Refused(AgentsError):
    """Internal: the node walk refused the document (never escapes this module)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _mark_line(mark: Any, first_line: int) -> int:
    line = getattr(mark, "line", None)
    return first_line + line if isinstance(line, int) else first_line


def _walk(root: yaml.Node, first_line: int) -> LineIndex:
    """Index key lines; refuse cycles, excessive depth and excessive size."""
    lines: dict[KeyPath, int] = {}
    duplicates: list[tuple[KeyPath, int]] = []
    budget = MAX_NODES
    # (node, path, ids of the containers above it)
    stack: list[tuple[yaml.Node, KeyPath, frozenset[int]]] = [(root, (), frozenset())]
    while stack:
        node, path, above = stack.pop()
        budget -= 1
        if budget < 0:
            raise _Refused(
                f"the document expands to more than {MAX_NODES} YAML nodes "
                "(aliases count each time they are used); make it smaller",
                _mark_line(node.start_mark, first_line),
            )
        if isinstance(node, yaml.ScalarNode):
            continue
        if id(node) in above:
            raise _Refused(
                "a YAML alias refers to a node that contains it (a recursive "
                "structure); remove the alias",
                _mark_line(node.start_mark, first_line),
            )
        if len(path) >= MAX_DEPTH:
            raise _Refused(
                f"the document nests deeper than {MAX_DEPTH} levels; flatten it",
                _mark_line(node.start_mark, first_line),
            )
        inner = above | {id(node)}
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key = str(key_node.value)
                    child: KeyPath = (*path, key)
                    line = _mark_line(key_node.start_mark, first_line)
                    if key in seen and key != "<<":
                        duplicates.append((child, line))
                    seen.add(key)
                    lines.setdefault(child, line)
                else:
                    child = (*path, "?")
                    stack.append((key_node, child, inner))
                stack.append((value_node, child, inner))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                child = (*path, index)
                lines.setdefault(child, _mark_line(item.start_mark, first_line))
                stack.append((item, child, inner))
    return LineIndex(lines, default=first_line, duplicates=tuple(duplicates))


def parse_yaml(text: str, *, first_line: int = 1) -> Parsed | ParseProblem:
    """Parse one YAML document safely; ``first_line`` is the file line of its start."""
    loader = _SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Parsed(None, LineIndex(default=first_line))
        index = _walk(node, first_line)
        data = loader.construct_document(node)
    except _Refused as refused:
        return ParseProblem("too-large", refused.message, refused.line)
    except yaml.constructor.ConstructorError as exc:
        line = _mark_line(exc.problem_mark, first_line)
        problem = exc.problem or str(exc)
        if "could not determine a constructor" in problem:
            return ParseProblem(
                "unsafe-yaml",
                f"{problem}: agent files are read with the safe YAML loader, which "
                "builds plain data only; remove the tag",
                line,
            )
        return ParseProblem("syntax", f"invalid YAML value: {problem}", line)
    except yaml.MarkedYAMLError as exc:
        line = _mark_line(exc.problem_mark or exc.context_mark, first_line)
        problem = exc.problem or exc.context or "invalid YAML"
        return ParseProblem("syntax", f"not valid YAML: {problem}", line)
    except yaml.YAMLError as exc:
        return ParseProblem("syntax", f"not valid YAML: {exc}", first_line)
    except RecursionError:
        return ParseProblem("too-large", "the document nests too deeply; flatten it", first_line)
    except ValueError as exc:
        # int() of a number with thousands of digits, and the like.
        return ParseProblem("too-large", f"a YAML value cannot be read: {exc}", first_line)
    finally:
        loader.dispose()
    return Parsed(data, index)


def parse_json(text: str) -> Parsed | ParseProblem:
    """Parse JSON text; duplicate keys and key lines are indexed."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return ParseProblem("syntax", f"not valid JSON: {exc.msg}", exc.lineno)
    except RecursionError:
        return ParseProblem("too-large", "the JSON nests too deeply; flatten it", 1)
    except ValueError as exc:
        return ParseProblem("too-large", f"a JSON value cannot be read: {exc}", 1)
    return Parsed(data, json_line_index(text))


# A value opening with one of these means YAML structure (a list, a mapping, a
# quote, an anchor, a tag, a block scalar): not plain text to take as written.
_STRUCTURE_STARTS = frozenset("[{&*!|>\"'%@`")
_LENIENT_KEY = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(?P<value>.*))?$")


def parse_lenient(text: str, *, first_line: int) -> tuple[Parsed, tuple[LenientLine, ...]] | None:
    """Read frontmatter as one ``key: value`` per line, or ``None`` if it is not that.

    Each line is first parsed as YAML on its own (so ``maxTurns: 5`` is still a
    number); a line that is not YAML by itself keeps the text after ``key:``
    verbatim, and is returned as a :class:`LenientLine`. Indented lines, list
    items, values that open YAML structure (``[``, ``{``, quotes, anchors, tags,
    block scalars), unsafe tags and repeated keys are not guessed at: the whole
    reading is refused.
    """
    data: dict[str, Any] = {}
    lines: dict[KeyPath, int] = {}
    plain: list[LenientLine] = []
    for offset, raw_line in enumerate(text.split("\n")):
        line_no = first_line + offset
        line = raw_line.rstrip()
        if not line or line.lstrip().startswith("#"):
            continue
        match = _LENIENT_KEY.match(line)
        if match is None:
            return None
        key = match.group("key")
        if key in data:
            return None
        value_text = (match.group("value") or "").strip()
        parsed = parse_yaml(line, first_line=line_no)
        if isinstance(parsed, Parsed):
            if not isinstance(parsed.data, dict) or list(parsed.data) != [key]:
                return None
            value = parsed.data[key]
        elif parsed.code == "syntax" and value_text[:1] not in _STRUCTURE_STARTS:
            value = value_text
            plain.append(LenientLine(key, line_no, parsed.message))
        else:
            return None
        data[key] = value
        lines[(key,)] = line_no
    return Parsed(data, LineIndex(lines, default=first_line)), tuple(plain)


# A value opening with one of these is YAML structure written on purpose (a
# quoted scalar, a flow list or mapping, a block scalar): it is never re-quoted.
_NEVER_REQUOTED = frozenset("[{|>\"'")


def parse_quoted(text: str, *, first_line: int) -> tuple[Parsed, tuple[LenientLine, ...]] | None:
    """Quote the top-level values that are not YAML on their own and parse again.

    Claude Code does this when a frontmatter fails to parse: a description that
    opens with ``**`` (an alias marker to YAML) or holds ``: `` is read as the
    text written. Only unindented ``key: value`` lines whose line alone is a
    YAML syntax error, and whose value does not open a quoted scalar, a flow
    collection or a block scalar, are quoted; the rest of the document (lists,
    nested mappings) keeps its structure. Returns ``None`` when nothing could be
    quoted or the quoted text still does not parse.
    """
    lines = text.split("\n")
    quoted: list[LenientLine] = []
    for offset, raw_line in enumerate(lines):
        line = raw_line.rstrip()
        match = _LENIENT_KEY.match(line)
        if match is None:
            continue
        value = (match.group("value") or "").strip()
        if not value or value[0] in _NEVER_REQUOTED:
            continue
        alone = parse_yaml(line, first_line=first_line + offset)
        if isinstance(alone, Parsed) or alone.code != "syntax":
            continue
        key = match.group("key")
        lines[offset] = f"{key}: {json.dumps(value, ensure_ascii=False)}"
        quoted.append(LenientLine(key, first_line + offset, alone.message))
    if not quoted:
        return None
    parsed = parse_yaml("\n".join(lines), first_line=first_line)
    if not isinstance(parsed, Parsed):
        return None
    return parsed, tuple(quoted)


def problem_diagnostic(problem: ParseProblem, path: Path | None) -> Diagnostic:
    """The error diagnostic for a document that could not be parsed."""
    return Diagnostic(
        Severity.ERROR, DiagnosticCode(problem.code), problem.message, path, problem.line, None
    )


def duplicate_diagnostics(index: LineIndex, path: Path | None) -> list[Diagnostic]:
    """A warning for each key given twice in one mapping (the last one wins)."""
    found: list[Diagnostic] = []
    for keys, line in index.duplicates:
        field = ".".join(str(k) for k in keys)
        found.append(
            Diagnostic(
                Severity.WARNING,
                DiagnosticCode.DUPLICATE_KEY,
                f"{field} is given more than once; the last one is used",
                path,
                line,
                field,
            )
        )
    return found
