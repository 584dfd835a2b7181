"""A hook's JSON answer: Claude Code's field names, and never an exception whatever stdout holds.

Field names and meanings from Claude Code's hooks reference
(https://code.claude.com/docs/en/hooks, "JSON output"); ``reason`` is required
with ``block`` as in Codex's ``codex-rs/hooks/schema/generated/
stop.command.output.schema.json``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from subagents.runtime import HookOutput, HookSpecificOutput
from subagents.runtime._hooks.output import parse_hook_output


def test_claude_code_field_names() -> None:
    text = json.dumps(
        {
            "continue": False,
            "stopReason": "Done for today.",
            "suppressOutput": True,
            "systemMessage": "Heads up.",
            "decision": "block",
            "reason": "Run the tests.",
            "hookSpecificOutput": {
                "hookEventName": "SubagentStart",
                "additionalContext": "Use tabs.",
                "permissionDecision": "deny",
                "permissionDecisionReason": "No.",
            },
            "someFutureKey": {"nested": [1, 2, 3]},
        }
    )
    assert parse_hook_output(text, truncated=False) == (
        HookOutput(
            continue_=False,
            stop_reason="Done for today.",
            suppress_output=True,
            system_message="Heads up.",
            decision="block",
            reason="Run the tests.",
            hook_specific_output=HookSpecificOutput(
                hook_event_name="SubagentStart",
                additional_context="Use tabs.",
                permission_decision="deny",
                permission_decision_reason="No.",
            ),
        ),
        None,
    )


@pytest.mark.parametrize(
    ("stdout", "error"),
    [
        ("", None),
        ("Use tabs.", None),
        ("[note] Use tabs.", None),  # plain text that opens with a bracket
        ('  {"decision": "approve"}\n', None),
        ('{"decision": "block"', "not valid JSON"),
        ('["block"]', "an array, not an object"),
        ('{"reason": 5}', "Expected `str | null`, got `int`"),
        ("[" * 100_000, "nested too deeply"),
        ("{" + '"a":{' * 100_000, "nested too deeply"),
    ],
)
def test_what_is_text_and_what_is_refused(stdout: str, error: str | None) -> None:
    output, why = parse_hook_output(stdout, truncated=False)
    if error is None:
        assert why is None
    else:
        assert output is None
        assert why is not None
        assert error in why


def test_json_cut_by_the_cap_is_refused_as_such() -> None:
    assert parse_hook_output('{"decision": "block", "rea', truncated=True) == (
        None,
        "its JSON output was cut by the output cap and was ignored",
    )


_json: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["decision", "reason", "continue", "hookSpecificOutput"])
            | st.sampled_from(["additionalContext", "hookEventName", "systemMessage"])
            | st.text(max_size=4),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200) | _json.map(json.dumps), st.booleans())
def test_any_stdout_gives_an_answer_an_error_or_text(stdout: str, truncated: bool) -> None:
    output, why = parse_hook_output(stdout, truncated=truncated)
    assert output is None or why is None
    assert output is None or isinstance(output, HookOutput)
    assert why is None or why.strip()
