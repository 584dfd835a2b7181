"""The prompt template: Codex's ``{column}`` and ``{{``/``}}``, checked first, filled in one pass.

Codex: ``render_instruction_template`` in ``codex-rs/core/src/tools/handlers/agent_jobs.rs``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from subagents.jobs import JobInputError, PromptTemplate


def test_placeholders_are_filled_and_doubled_braces_are_literal() -> None:
    template = PromptTemplate('Review {path}; reply {{"ok": true}} for {path}.')
    assert template.placeholders == ("path",)
    assert template.render({"path": "a.py"}) == 'Review a.py; reply {"ok": true} for a.py.'


def test_values_other_than_text_are_written_as_json() -> None:
    template = PromptTemplate("{n} {flag} {items} {none}")
    assert template.render({"n": 3, "flag": True, "items": [1, "a"], "none": None}) == (
        '3 true [1,"a"] '
    )


def test_a_value_holding_a_placeholder_is_not_filled_again() -> None:
    template = PromptTemplate("{a} then {b}")
    assert template.render({"a": "{b}", "b": "B"}) == "{b} then B"


def test_a_placeholder_without_its_column_is_refused_naming_the_columns() -> None:
    template = PromptTemplate('Parse {"key": 1} from {text}')
    with pytest.raises(JobInputError, match=r'placeholder \{"key": 1\}') as caught:
        template.check(["text"], path="in.csv")
    assert "{{" in str(caught.value)
    assert caught.value.column == '"key": 1'
    template.check(["text", '"key": 1'])


_TOKENS = st.one_of(
    st.text(alphabet="ab ", min_size=1, max_size=3),
    st.sampled_from(["{{", "}}", "{x}", "{y}"]),
)


@given(st.lists(_TOKENS, max_size=12), st.text(alphabet="xy{}", max_size=6))
def test_a_template_renders_token_by_token(tokens: list[str], value: str) -> None:
    rendered = {"{{": "{", "}}": "}", "{x}": value, "{y}": "Y"}
    template = PromptTemplate("".join(tokens))
    assert template.render({"x": value, "y": "Y"}) == "".join(rendered.get(t, t) for t in tokens)
    assert set(template.placeholders) == {t[1] for t in tokens if t in ("{x}", "{y}")}
