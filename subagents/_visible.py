"""Untrusted text made safe and visible for a terminal: every control character shown as a sign.

File and folder names, model text, tool arguments and results, agent
definitions and hook output come from people the user does not control. Written
to a terminal raw, their control characters act instead of showing: an ESC
starts a sequence that can move the cursor, rewrite what is on screen, set the
clipboard (OSC 52) or plant a link (OSC 8); a carriage return overwrites a
line; a bidi override reverses what follows. :func:`visible` is the one
function every human-facing output passes such text through (``--json``
output escapes on its own).

It shows as is exactly what :meth:`str.isprintable` accepts (letters, marks,
numbers, punctuation, symbols and the ASCII space), except the Hangul fillers,
which draw nothing. A C0 control or DEL is shown as its Unicode control
picture (ESC as ``␛``, BEL as ``␇``, CR as ``␍``, LF as ``␊``); anything else
is shown as its code point in angle brackets (a C1 control as ``⟨U+009B⟩``, a
bidi override as ``⟨U+202E⟩``, a zero-width space as ``⟨U+200B⟩``). So no
control, escape sequence, bidi override or isolate, format character, line
separator, other space, surrogate or unassigned code point can act or hide.
Backslashes are left alone, so code reads as written. A control picture or a
``⟨`` that the text itself holds is shown by its code point, so two different
texts never look the same. :func:`visible_command` is the stricter form for
approval prompts: it also counts runs of spaces (``⟨2500 spaces⟩``) and shows
tabs, so nothing can be pushed out of sight. :func:`json_safe` is the same
care for JSON output, which escapes C0 controls but not C1 controls or bidi
overrides.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["SPACE_RUN", "json_safe", "visible", "visible_command"]

#: Runs of at least this many spaces are counted by :func:`visible_command`.
SPACE_RUN: Final = 3
#: Printable characters that draw nothing (the Hangul fillers): shown by code point.
_BLANK: Final = frozenset("\u115f\u1160\u3164\uffa0")
#: The Unicode block of control pictures: these signs stand for controls, so a
#: text's own are shown by code point, like ``⟨``, which opens every other sign.
_PICTURES: Final = range(0x2400, 0x2440)
_OPEN: Final = "⟨"
#: The printable characters that are shown by code point.
_SPECIAL: Final = re.compile("[\u115f\u1160\u3164\uffa0\u2400-\u243f⟨]")


def _sign(char: str) -> str:
    """How ``char``, which may not be written as it is, is shown."""
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"{_OPEN}U+{code:04X}⟩"


def _shown(char: str, *, newlines: bool, tabs: bool) -> bool:
    """Whether ``char`` is written as it is."""
    if char.isprintable():
        return not (char in _BLANK or ord(char) in _PICTURES or char == _OPEN)
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
            out.append(f"{_OPEN}{count} spaces⟩" if count >= SPACE_RUN else " " * count)
            index = end
            continue
        out.append(char if _shown(char, newlines=newlines, tabs=tabs) else _sign(char))
        index += 1
    return "".join(out)


def _plain(text: str) -> bool:
    """Whether ``text`` has nothing to show differently (the common case, at C speed)."""
    return text.isprintable() and _SPECIAL.search(text) is None


def visible(text: str, *, newlines: bool = False) -> str:
    """``text`` with every character that could act on a terminal shown escaped.

    One line by default: newlines and tabs are shown as ``␊`` and ``␉`` too. With ``newlines``
    (a block of text shown over several lines: a message, a system prompt),
    newlines and tabs are kept and everything else is escaped as always.
    """
    if _plain(text):
        return text
    return _render(text, newlines=newlines, tabs=newlines, runs=False)


def visible_command(text: str) -> str:
    """``text`` for an approval prompt: :func:`visible` that also hides no whitespace.

    Newlines are kept (a script reads line by line; the caller marks where
    each line starts), tabs are shown as ``␉``, and every run of :data:`SPACE_RUN` or
    more spaces is counted, ``⟨2500 spaces⟩``, so a long run cannot push the
    rest of a command out of view.
    """
    return _render(text, newlines=True, tabs=False, runs=True)


#: A run of what JSON may write raw beyond printable ASCII (the rest it escapes or is ASCII).
_JSON_WIDE: Final = re.compile("[^\\x00-\\x7e]+")


def _json_char(char: str) -> str:
    if char.isprintable() and char not in _BLANK:
        return char
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _json_run(match: re.Match[str]) -> str:
    run = match.group()
    if run.isprintable() and _BLANK.isdisjoint(run):
        return run
    return "".join(_json_char(char) for char in run)


def json_safe(text: str) -> str:
    """JSON ``text`` with what a terminal could obey written as ``\\u`` escapes; the same value.

    JSON encoders escape C0 controls in strings but write DEL, C1 controls,
    bidi overrides, zero-width and other format characters, and Unicode
    separators raw; here each character :func:`visible` would not show as is
    becomes its ``\\uXXXX`` escape (a surrogate pair above U+FFFF), which
    decodes to the same character. Such characters only stand inside JSON
    strings, so the document means the same.
    """
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_WIDE.sub(_json_run, text)
