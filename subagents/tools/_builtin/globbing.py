"""Glob patterns (``**``, ``*``, ``?``, ``[...]``, ``{a,b}``) compiled to regular expressions.

Patterns match paths relative to the search directory, with ``/`` separators.
``*`` and ``?`` stay inside one path segment, ``**/`` spans zero or more
directories, and hidden files are matched like any other (as ``find`` does).
The expressions run on RE2 (linear time), and runs of ``**/`` collapse into one,
so no glob can make matching backtrack.
"""

from __future__ import annotations

import re

from subagents.tools._builtin.regex import LinearRegex, compile_linear
from subagents.tools._exceptions import ToolError

__all__ = ["compile_glob"]

_MAX_ALTERNATIVES = 256
#: A class that matches no character (RE2 has no ``(?!)``).
_NOTHING = r"[^\x00-\x{10FFFF}]"


def compile_glob(pattern: str, *, braces: bool = True) -> LinearRegex:
    """The regular expression matching exactly the paths ``pattern`` names.

    Without ``braces``, ``{`` and ``}`` are literal characters, as in ``fnmatch``,
    and the regex stays linear in the pattern's size (no ``{a,b}`` expansion).
    """
    if not pattern:
        raise ToolError("The glob pattern is empty.")
    if "\x00" in pattern:
        raise ToolError("The glob pattern contains a NUL character.")
    if pattern.startswith("/"):
        raise ToolError(
            "Glob patterns are relative to the search directory; "
            "pass the directory as `path` and a relative pattern."
        )
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if ".." in pattern.split("/"):
        raise ToolError("Glob patterns cannot contain '..'; pass the directory as `path` instead.")
    alternatives = _expand_braces(pattern) if braces else [pattern]
    regex = "|".join(f"(?:{_translate(p)})" for p in alternatives)
    return compile_linear(regex, lines=False, dot_all=True, what="glob pattern", shown=pattern)


def _expand_braces(pattern: str) -> list[str]:
    results = [pattern]
    expanded: list[str] = []
    while results:
        current = results.pop()
        span = _first_brace(current)
        if span is None:
            expanded.append(current)
        else:
            start, end, options = span
            results.extend(current[:start] + option + current[end + 1 :] for option in options)
        if len(expanded) + len(results) > _MAX_ALTERNATIVES:
            raise ToolError(f"The glob pattern expands to more than {_MAX_ALTERNATIVES} patterns.")
    return expanded


def _first_brace(pattern: str) -> tuple[int, int, list[str]] | None:
    """The first ``{a,b}`` group with a comma at its top level: start, end, options."""
    for start, char in enumerate(pattern):
        if char != "{":
            continue
        depth = 0
        options: list[str] = []
        last = start + 1
        for index in range(start, len(pattern)):
            c = pattern[index]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    if not options:
                        break
                    options.append(pattern[last:index])
                    return start, index, options
            elif c == "," and depth == 1:
                options.append(pattern[last:index])
                last = index + 1
    return None


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            while i < n and pattern[i] == "*":
                i += 1
            if i < n and pattern[i] == "/":
                out.append("(?:[^/]*/)*")
                i += 1
                # '**/**/' spans what '**/' spans: one group, however many are written.
                i = _skip_repeated_globstars(pattern, i)
            else:
                out.append(".*")
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _class_end(pattern, i)
            if end is None:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = "".join(ch if ch == "-" else re.escape(ch) for ch in body)
                out.append(f"[{'^/' if negate else ''}{body}]" if body else _NOTHING)
                i = end + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _skip_repeated_globstars(pattern: str, i: int) -> int:
    """Where the run of ``**/`` (or ``***/``) starting at ``i`` ends."""
    n = len(pattern)
    while pattern.startswith("**", i):
        j = i + 2
        while j < n and pattern[j] == "*":
            j += 1
        if j >= n or pattern[j] != "/":
            break
        i = j + 1
    return i


def _class_end(pattern: str, start: int) -> int | None:
    j = start + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    end = pattern.find("]", j)
    return None if end == -1 else end
