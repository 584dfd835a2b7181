"""Untrusted text made safe and visible for a terminal: every control character shown escaped.

File and folder names, model text, tool arguments and results, agent
definitions and hook output come from people the user does not control. Written
to a terminal raw, their control characters act instead of showing: an ESC
starts a sequence that can move the cursor, rewrite what is on screen, set the
clipboard (OSC 52) or plant a link (OSC 8); a ``\\r`` overwrites a line; a bidi
override reverses what follows. :func:`visible` is the one function every
human-facing output passes such text through (``--json`` output escapes on its
own). It shows as is exactly what :meth:`str.isprintable` accepts (letters,
marks, numbers, punctuation, symbols and the ASCII space) and escapes
everything else the way Python does (``\\x1b``, ``\\u202e``, ``\\r``), so C0
and C1 controls, DEL, the start of every escape sequence, bidi overrides and
isolates, zero-width and other format characters, line separators, other
spaces, surrogates and unassigned code points can neither act nor hide. The
Hangul fillers, which are printable but draw nothing, are escaped too.

The result is unambiguous: a backslash that could be read as the start of an
escape is doubled, so two different texts never look the same.
:func:`visible_command` is the stricter form for approval prompts: it also
counts runs of spaces (``⟨2500 spaces⟩``) and escapes tabs, so nothing can be
pushed out of sight.
"""

from __future__ import annotations

from typing import Final

__all__ = ["SPACE_RUN", "visible", "visible_command"]

#: Runs of at least this many spaces are counted by :func:`visible_command`.
SPACE_RUN: Final = 3
#: Printable characters that draw nothing (the Hangul fillers): escaped like controls.
_BLANK: Final = frozenset("\u115f\u1160\u3164\uffa0")
#: What may follow a backslash in an escape this module writes.
_ESCAPE_LETTERS: Final = frozenset("\\xuUnrt")
#: Characters with a short escape.
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: The opening of a counted run of spaces, escaped itself where the text holds it.
_RUN_OPEN: Final = "⟨"
_RUN_CLOSE: Final = " spaces⟩"


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _shown(char: str, *, newlines: bool, tabs: bool, marker: bool) -> bool:
    """Whether ``char`` is written as it is (else escaped)."""
    if char.isprintable():
        return char not in _BLANK and not (marker and char == _RUN_OPEN)
    return (newlines and char == "\n") or (tabs and char == "\t")


def _render(text: str, *, newlines: bool, tabs: bool, runs: bool) -> str:
    out: list[str] = []
    length = len(text)
    index = 0
    while index < length:
        char = text[index]
        if runs and char == " ":
            end = index
            while end < length and text[end] == " ":
                end += 1
            count = end - index
            out.append(f"{_RUN_OPEN}{count}{_RUN_CLOSE}" if count >= SPACE_RUN else " " * count)
            index = end
            continue
        if char == "\\":
            following = text[index + 1] if index + 1 < length else ""
            ambiguous = following in _ESCAPE_LETTERS or (
                following != ""
                and not _shown(following, newlines=newlines, tabs=tabs, marker=runs)
            )
            out.append("\\\\" if following and ambiguous else "\\")
        elif _shown(char, newlines=newlines, tabs=tabs, marker=runs):
            out.append(char)
        else:
            out.append(_escape(char))
        index += 1
    return "".join(out)


def visible(text: str, *, newlines: bool = False) -> str:
    """``text`` with every character that could act on a terminal shown escaped.

    One line by default: ``\\n`` and ``\\t`` are escaped too. With ``newlines``
    (a block of text shown over several lines: a message, a system prompt),
    newlines and tabs are kept and everything else is escaped as always.
    """
    if text.isprintable() and "\\" not in text and _BLANK.isdisjoint(text):
        return text  # the common case, at C speed
    return _render(text, newlines=newlines, tabs=newlines, runs=False)


def visible_command(text: str) -> str:
    """``text`` for an approval prompt: :func:`visible` that also hides no whitespace.

    Newlines are kept (a script reads line by line; the caller marks where
    each line starts), tabs are escaped, and every run of :data:`SPACE_RUN` or
    more spaces is counted, ``⟨2500 spaces⟩``, so a long run cannot push the
    rest of a command out of view. A ``⟨`` in the text is escaped, so a count
    is always one.
    """
    return _render(text, newlines=True, tabs=False, runs=True)
