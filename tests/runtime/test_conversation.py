"""Conversations, transcripts, fork context, wire encoding, and starting a task."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from subagents.agents import InputSpec, InputType, ModelSettings
from subagents.runtime import (
    Conversation,
    InvalidInputs,
    Message,
    ModelRequest,
    Origin,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    check_inputs,
    encode_messages,
    fork_context,
    fork_messages,
    prepare_task,
    request_params,
)
from subagents.runtime._fork import FORK_BOUNDARY
from tests.runtime.helpers import definition


def use(id: str, name: str = "Read") -> ToolUseBlock:
    return ToolUseBlock(id, name, {"file_path": f"{id}.py"})


def answer(id: str) -> ToolResultBlock:
    return ToolResultBlock(id, f"contents of {id}")


# The design document's example: [M1, M2, M3(tool_use), M4(tool_result), M5(tool_use, pending)].
M1 = Message.user("Refactor the parser.", origin=Origin.TASK)
M2 = Message.assistant("I will look at the parser first.")
M3 = Message("assistant", (TextBlock("Reading it."), use("t1")), Origin.MODEL)
M4 = Message("user", (answer("t1"),), Origin.TOOL_RESULTS)
M5 = Message(
    "assistant",
    (ThinkingBlock("Delegate this.", "sig"), TextBlock("Spawning a helper."), use("t2", "Task")),
    Origin.MODEL,
)


def test_fork_keeps_resolved_calls_and_strips_the_pending_one() -> None:
    forked = fork_messages([M1, M2, M3, M4, M5])
    assert forked[:4] == [M1, M2, M3, M4]
    assert forked[4] == Message("assistant", (TextBlock("Spawning a helper."),), Origin.MODEL)


def test_fork_context_adds_the_boundary_and_the_child_starts_counting_turns() -> None:
    child = Conversation(fork_context([M1, M2, M3, M4, M5]))
    boundary = child[-1]
    assert boundary.origin is Origin.FORK_BOUNDARY
    assert boundary.text == FORK_BOUNDARY
    assert boundary.text.startswith("### FORKING CONVERSATION CONTEXT ###")
    assert child.turns == 0


def test_fork_drops_messages_left_empty_and_orphan_results() -> None:
    only_call = Message("assistant", (use("t9"),), Origin.MODEL)
    orphan = Message("user", (answer("t0"), TextBlock("and a note")), Origin.TOOL_RESULTS)
    redacted = Message("assistant", (RedactedThinkingBlock("xxx"),), Origin.MODEL)
    assert fork_messages([M1, only_call, orphan, redacted]) == [
        M1,
        Message("user", (TextBlock("and a note"),), Origin.TOOL_RESULTS),
    ]
    assert Conversation([M1, M2, M3, M4, M5]).fork() == fork_messages([M1, M2, M3, M4, M5])


def test_prepare_task_forks_then_reminds_then_gives_the_task() -> None:
    agent = definition(fork_context=True, critical_reminder="Never edit tests.")
    prepared = prepare_task(
        agent, "Fix the bug.", cwd="/repo", parent_messages=[M1, M2, M3, M4, M5]
    )
    messages = list(prepared.conversation)
    assert messages[:5] == fork_messages([M1, M2, M3, M4, M5])
    assert messages[5].origin is Origin.FORK_BOUNDARY
    assert messages[6].origin is Origin.TASK
    assert messages[6].content == (TextBlock("Never edit tests."), TextBlock("Fix the bug."))
    assert prepared.system_prompt == "You are a test agent in /repo."


def test_prepare_task_ignores_the_parent_unless_the_definition_forks() -> None:
    prepared = prepare_task(definition(), "Fix it.", parent_messages=[M1, M2])
    assert [m.text for m in prepared.conversation] == ["Fix it."]


def test_typed_inputs_are_checked_and_fill_the_templates() -> None:
    agent = definition(
        inputs=(
            InputSpec("file_path", InputType.STRING, "File to review", required=True),
            InputSpec("focus", InputType.STRING, choices=("speed", "safety"), default="safety"),
            InputSpec("limit", InputType.INTEGER),
        ),
        query="Review ${file_path} for ${focus}.",
    )
    prepared = prepare_task(agent, "ignored", inputs={"file_path": "a.py", "limit": 3})
    assert prepared.inputs == {"file_path": "a.py", "focus": "safety", "limit": 3}
    assert prepared.conversation[0].text == "Review a.py for safety.\n\nInputs:\n- limit: 3"
    with pytest.raises(InvalidInputs) as caught:
        check_inputs(agent, {"focus": "looks", "limit": "many", "colour": "red"})
    message = str(caught.value)
    assert "'file_path' is a required property" in message
    assert "'looks' is not one of ['speed', 'safety']" in message
    assert "'many' is not of type 'integer'" in message
    assert "'colour' was unexpected" in message
    assert "Its inputs are: file_path, focus, limit." in message


def test_an_empty_task_is_refused() -> None:
    with pytest.raises(InvalidInputs, match="no task"):
        prepare_task(definition(), "   ")


def test_turns_count_the_agents_own_assistant_messages() -> None:
    conversation = Conversation([M1, M2, M3, M4])
    assert conversation.turns == 2
    conversation.append(Message.user(FORK_BOUNDARY, origin=Origin.FORK_BOUNDARY))
    assert conversation.turns == 0
    conversation.append(M2)
    assert (conversation.turns, len(conversation), conversation.last) == (1, 6, M2)


def test_transcript_round_trip_and_torn_last_line() -> None:
    conversation = Conversation([M1, M2, M3, M4, M5])
    data = conversation.to_jsonl()
    assert data.count(b"\n") == 5
    rebuilt = Conversation.from_jsonl(data)
    assert list(rebuilt) == list(conversation)
    assert rebuilt.turns == conversation.turns
    assert b'"origin"' in Conversation.encode_line(M1)
    assert Conversation.encode_line(M1) == data.split(b"\n")[0] + b"\n"
    torn = data + Conversation.encode_line(M2)[:20]
    assert list(Conversation.from_jsonl(torn)) == list(conversation)
    broken = b'{"role": "user"\n' + data
    with pytest.raises(msgspec.DecodeError):
        Conversation.from_jsonl(broken)


def test_encoding_merges_roles_and_marks_the_cache_breakpoint() -> None:
    grace = Message.user("Last chance.", origin=Origin.GRACE)
    encoded = encode_messages([M1, M3, M4, grace])
    assert [m["role"] for m in encoded] == ["user", "assistant", "user"]
    assert encoded[1]["content"] == [
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "t1.py"}},
    ]
    assert encoded[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "contents of t1"},
        {"type": "text", "text": "Last chance.", "cache_control": {"type": "ephemeral"}},
    ]
    assert "cache_control" not in encoded[0]["content"][0]
    error = Message("user", (ToolResultBlock("t1", "boom", True),))
    assert encode_messages([error])[0]["content"][0]["is_error"] is True


def test_request_params_map_settings_and_thinking() -> None:
    base = {"model": "m", "system": "", "messages": [M1], "max_tokens": 1000}
    plain = request_params(ModelRequest(**base))
    assert "system" not in plain
    assert "tools" not in plain
    assert "thinking" not in plain
    tuned = request_params(
        ModelRequest(
            **base, settings=ModelSettings(temperature=0.2, top_p=0.9, thinking_budget=4000)
        )
    )
    assert (tuned["temperature"], tuned["top_p"]) == (0.2, 0.9)
    assert tuned["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert tuned["max_tokens"] == 5000
    adaptive = request_params(ModelRequest(**base, settings=ModelSettings(thinking_budget=-1)))
    assert adaptive["thinking"] == {"type": "adaptive"}
    off = request_params(ModelRequest(**base, settings=ModelSettings(thinking_budget=0)))
    assert "thinking" not in off


def test_a_definitions_input_validator_is_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17: spawning many agents of one type checks their inputs with one validator."""
    from subagents.agents import AgentDefinition

    built = 0
    real = AgentDefinition.input_schema

    def counting(self: AgentDefinition) -> dict[str, Any]:
        nonlocal built
        built += 1
        return real(self)

    monkeypatch.setattr(AgentDefinition, "input_schema", counting)
    agent = definition(inputs=(InputSpec("limit", InputType.INTEGER),))
    for _ in range(5):
        assert check_inputs(agent, {"limit": 3}) == {"limit": 3}
    with pytest.raises(InvalidInputs, match="'many' is not of type 'integer'"):
        check_inputs(agent, {"limit": "many"})
    other = definition(inputs=(InputSpec("limit", InputType.STRING),))
    assert check_inputs(other, {"limit": "many"}) == {"limit": "many"}
    assert built == 2


def test_a_definition_without_inputs_spawned_without_any_validates_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 17, third round: most spawns give no inputs to a definition without an
    inputConfig; that ``{}`` passes is known without running the validator. Inputs given to
    such a definition are still refused, and a definition with an optional input still gets
    its default."""
    from subagents.runtime import _task

    validated: list[dict[str, Any]] = []
    real = _task._validator

    def counting(agent: Any) -> Any:
        validator = real(agent)

        class Counting:
            def iter_errors(self, given: dict[str, Any]) -> Any:
                validated.append(given)
                return validator.iter_errors(given)

        return Counting()

    monkeypatch.setattr(_task, "_validator", counting)
    plain = definition()
    for _ in range(3):
        assert check_inputs(plain, None) == {}
        assert check_inputs(plain, {}) == {}
    assert validated == []
    with pytest.raises(InvalidInputs, match="Additional properties are not allowed"):
        check_inputs(plain, {"limit": 3})
    optional = definition(inputs=(InputSpec("limit", InputType.INTEGER, default=7),))
    assert check_inputs(optional, None) == {"limit": 7}
    assert validated == [{"limit": 3}, {}]
