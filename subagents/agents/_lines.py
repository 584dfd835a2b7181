"""Where each key of a parsed document is, so diagnostics can name the line.

Both YAML (from the composed node tree) and JSON (from a small scanner over
text that :mod:`json` has already accepted) give a :class:`LineIndex`: a map
from a key path such as ``("runConfig", "maxTurns")`` to a 1-based line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import attrs

__all__ = ["KeyPath", "LineIndex", "json_line_index"]

KeyPath = tuple[str | int, ...]


@attrs.frozen
class LineIndex:
    """Key path -> line; a path not recorded falls back to its nearest parent."""

    lines: dict[KeyPath, int] = attrs.field(factory=dict, hash=False)
    #: The line for the document itself (where the frontmatter or file starts).
    default: int = 1
    #: Keys given twice in one mapping (the last one wins), with their lines.
    duplicates: tuple[tuple[KeyPath, int], ...] = ()

    def line(self, path: Sequence[str | int]) -> int:
        """The line of ``path``, of its nearest recorded parent, or :attr:`default`."""
        key = tuple(path)
        while key:
            found = self.lines.get(key)
            if found is not None:
                return found
            key = key[:-1]
        return self.default


_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\],:]|\n')


@attrs.define
class _Frame:
    is_object: bool
    current: str | int | None
    expect_key: bool
    seen: set[str] = attrs.field(factory=set)


def json_line_index(text: str) -> LineIndex:
    """Index the keys and array items of ``text``, which must be valid JSON."""
    lines: dict[KeyPath, int] = {}
    duplicates: list[tuple[KeyPath, int]] = []
    stack: list[_Frame] = []
    line = 1

    def here() -> KeyPath:
        return tuple(f.current for f in stack if f.current is not None)

    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
            continue
        top = stack[-1] if stack else None
        if token[0] == '"':
            if top is not None and top.is_object and top.expect_key:
                key: str = json.loads(token)
                top.current = key
                top.expect_key = False
                if key in top.seen:
                    duplicates.append((here(), line))
                top.seen.add(key)
                lines.setdefault(here(), line)
            elif top is not None and not top.is_object:
                lines.setdefault(here(), line)
            continue
        if token in "{[":
            if top is not None and not top.is_object:
                lines.setdefault(here(), line)
            is_object = token == "{"
            stack.append(_Frame(is_object, None if is_object else 0, is_object))
        elif token in "}]":
            if stack:
                stack.pop()
        elif token == "," and top is not None:
            if top.is_object:
                top.expect_key = True
            elif isinstance(top.current, int):
                top.current += 1
    return LineIndex(lines, duplicates=tuple(duplicates))
