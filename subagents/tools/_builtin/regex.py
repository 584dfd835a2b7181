"""Linear-time regular expressions (RE2) for Grep and Glob, with work bounded per native call.

Python's ``re`` backtracks: ``(a+)+$`` over forty ``a`` runs for hours while
holding the GIL, so no deadline, cancel or Ctrl-C can stop it. RE2 matches in
time linear in the text, releases the GIL while it runs, and refuses the few
constructs that need backtracking (backreferences, lookaround), which we turn
into a :class:`ToolError` saying what to write instead. A single RE2 call
cannot be interrupted, so callers cut their text into windows whose worst case
(``program size * bytes``) fits :data:`REGEX_WORK_PER_CALL` and check their
stop flag between windows.
"""

from __future__ import annotations

from typing import Any, Final, final

import attrs
import re2

from subagents.tools._config import REGEX_MAX_MEMORY_BYTES, REGEX_WORK_PER_CALL
from subagents.tools._exceptions import ToolError

__all__ = ["LinearRegex", "compile_linear", "SYNTAX_NOTE"]

#: What a pattern's author needs to know; repeated in the Grep tool's description.
SYNTAX_NOTE: Final = (
    "RE2 syntax (linear time, like ripgrep): Python `re` syntax except no backreferences "
    "(\\1, (?P=name)), no lookaround ((?=, (?!, (?<=, (?<!), no atomic groups or possessive "
    "quantifiers, no (?x) verbose mode, repetition counts at most 1000; \\w \\d \\s \\b are "
    "ASCII-only (use \\pL, \\p{Greek}, [[:alpha:]] for Unicode classes); \\A and \\Z anchor "
    "at the searched line (or file in multiline mode)."
)

_UNSUPPORTED: Final = (
    tuple(f"invalid escape sequence: \\{d}" for d in "123456789"),
    "backreferences (\\1, (?P=name)) are not supported; match the repeated text "
    "explicitly or search for one part and Read the lines",
)
_LOOKAROUND: Final = (
    ("invalid perl operator: (?=", "invalid perl operator: (?!", "invalid perl operator: (?<"),
    "lookahead and lookbehind ((?=...), (?!...), (?<=...), (?<!...)) are not supported; "
    "match the surrounding text as part of the pattern instead",
)
_ATOMIC: Final = (
    ("invalid perl operator: (?>", *(f"bad repetition operator: {q}+" for q in "*+?}")),
    "atomic groups and possessive quantifiers are not needed (RE2 never backtracks); "
    "drop the '>' or the trailing '+'",
)
_CONDITIONAL: Final = (
    ("invalid perl operator: (?(",),
    "conditional groups (?(1)...) are not supported; search for each alternative",
)
_VERBOSE: Final = (
    ("invalid perl operator: (?x", "invalid perl operator: (?ax", "invalid perl operator: (?ix"),
    "verbose mode (?x) is not supported; remove the spaces and comments",
)
_REPEAT: Final = (
    ("invalid repetition size",),
    "repetition counts above 1000 are not supported; use a smaller count or '+'",
)
_HINTS: Final = (_UNSUPPORTED, _LOOKAROUND, _ATOMIC, _CONDITIONAL, _VERBOSE, _REPEAT)


@final
@attrs.frozen
class LinearRegex:
    """A compiled RE2 pattern searched over UTF-8 bytes.

    ``program_size`` is RE2's instruction count: the worst case of one search is
    about that many steps per byte, which is how :meth:`window_bytes` sizes the
    windows a caller may search in one uninterruptible call.
    """

    pattern: str
    program_size: int
    _compiled: Any = attrs.field(repr=False)

    def search(self, data: bytes, pos: int, endpos: int) -> tuple[int, int] | None:
        """Byte span of the first match starting in ``data[pos:endpos]``, or None."""
        found = self._compiled.search(data, pos, endpos)
        return None if found is None else (found.start(), found.end())

    def fullmatch(self, text: str) -> bool:
        """Whether the whole of ``text`` matches."""
        return self._compiled.fullmatch(text) is not None

    def window_bytes(self) -> int:
        """The most bytes one call may search and still stay within the work budget."""
        return max(1, REGEX_WORK_PER_CALL // max(1, self.program_size))


def compile_linear(
    pattern: str,
    *,
    ignore_case: bool = False,
    lines: bool = True,
    dot_all: bool = False,
    what: str = "regular expression",
    shown: str | None = None,
) -> LinearRegex:
    """Compile ``pattern`` with RE2, or raise a ToolError that says what to write instead.

    With ``lines`` (grep's default) no match can span a newline, ``^``/``$``
    match at every line, and ``\\A``/``\\Z`` mean the line's start and end, so
    a window of whole lines searches exactly like each line on its own. Without
    it ``^``/``$`` still match at lines, ``\\A``/``\\Z`` at the text's ends.
    Errors name ``what`` and ``shown`` (the pattern the model wrote, when
    ``pattern`` was translated from it, as for globs).
    """
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    options.max_mem = REGEX_MAX_MEMORY_BYTES
    options.case_sensitive = not ignore_case
    options.never_nl = lines
    options.dot_nl = dot_all
    translated = "(?m)" + _translate_escapes(pattern, lines=lines)
    try:
        compiled = re2.compile(translated, options)
    except re2.error as exc:
        message = _message(exc)
        if shown is not None:
            raise ToolError(f"Invalid {what} {shown!r}: {message}.") from None
        raise ToolError(_explain(pattern, message, what)) from None
    except (TypeError, ValueError) as exc:  # e.g. a lone surrogate the wrapper cannot encode
        raise ToolError(f"Invalid {what} {shown or pattern!r}: {exc}.") from None
    return LinearRegex(pattern=pattern, program_size=int(compiled.programsize), compiled=compiled)


def _message(exc: BaseException) -> str:
    raw = exc.args[0] if exc.args else str(exc)
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def _explain(pattern: str, message: str, what: str) -> str:
    message = message.replace(": (?m)", ": ", 1)  # the flag we added is not the model's
    named_backreference = message.startswith("invalid perl operator: (?P") and "(?P=" in pattern
    for prefixes, hint in _HINTS:
        if message.startswith(prefixes) or (named_backreference and hint is _UNSUPPORTED[1]):
            return f"Unsupported {what} {pattern!r} ({message}): {hint}. {SYNTAX_NOTE}"
    if "pattern too large" in message:
        return (
            f"The {what} {pattern!r} is too large to search in bounded time; "
            "split it into simpler searches."
        )
    return f"Invalid {what} {pattern!r}: {message}. {SYNTAX_NOTE}"


def _translate_escapes(pattern: str, *, lines: bool) -> str:
    r"""Python's ``\A``, ``\Z``, ``\uXXXX`` and ``\UXXXXXXXX`` in RE2's spelling.

    Per line, ``\A`` and ``\Z`` are the line's ends (``^``/``$`` under ``(?m)``
    with no newline inside the match); over a whole text, ``\A`` and ``\z``.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if not in_class and e == "A":
                out.append("^" if lines else r"\A")
            elif not in_class and e in "Zz":
                out.append("$" if lines else r"\z")
            elif e in "uU":
                width = 4 if e == "u" else 8
                digits = pattern[i + 2 : i + 2 + width]
                if len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
                    out.append(f"\\x{{{digits}}}")
                    i += 2 + width
                    continue
                out.append(pattern[i : i + 2])
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            i += 1
            # A ']' (after an optional '^') first in a class is a literal.
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append(r"\]")
                i += 1
            continue
        if c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)
