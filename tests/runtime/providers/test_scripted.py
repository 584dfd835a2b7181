"""The scripted provider: policies, scripts, simulated latency, usage and faults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from subagents import testing
from subagents.agents import OutputSpec
from subagents.runtime import (
    COMPLETE_TASK,
    AnthropicProvider,
    Message,
    ModelRequest,
    Overloaded,
    Reply,
    Script,
    ScriptedProvider,
    ScriptError,
    TerminateReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    ToolUseBlock,
    Usage,
    complete_task_tool,
    default_policy,
    default_provider,
    load_scripts,
    run_agent,
    sample_for_schema,
)
from tests.runtime.helpers import REPORT_SCHEMA, definition, spec, task


def request(**fields: Any) -> ModelRequest:
    values: dict[str, Any] = {"model": "m", "system": "sys", "messages": [Message.user("go")]}
    values.update(fields)
    return ModelRequest(**values)


SCRIPT = """
- text: Looking around.
  thinking: The entry point is probably main.py.
  tool_calls:
    - {name: Glob, input: {pattern: "**/main.py"}}
  usage: {input_tokens: 100, output_tokens: 20, cache_read_tokens: 80}
- tool_calls: [{name: Read, raw_input: "{not json"}]
- error: {type: overloaded_error, message: try later}
- hang: true
- complete_task: {result: found it}
  latency: 2.5
"""


async def test_a_yaml_script_plays_one_reply_per_turn(
    autojump_clock: trio.testing.MockClock,
) -> None:
    script = Script.from_text(SCRIPT)
    assert len(script) == 5
    provider = ScriptedProvider(script, chunk_size=4)
    events: list[object] = []
    first = await provider.stream(request(agent_id="a1", turn=0), events.append)
    assert first.content == (
        ThinkingBlock("The entry point is probably main.py.", "scripted"),
        TextBlock("Looking around."),
        ToolUseBlock("toolu_a1_0_0", "Glob", {"pattern": "**/main.py"}),
    )
    assert first.usage == Usage(100, 20, 80, 0)
    assert first.stop_reason == "tool_use"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Looking around."
    assert next(e for e in events if isinstance(e, TextDelta)) == TextDelta("Look")
    assert any(isinstance(e, ThinkingDelta) for e in events)
    assert events[-1] == ToolCall("toolu_a1_0_0", "Glob", {"pattern": "**/main.py"})

    second = await provider.stream(request(agent_id="a1", turn=1), None)
    assert second.content == (ToolUseBlock("toolu_a1_1_0", "Read", {}),)
    assert "invalid JSON" in second.invalid_tool_inputs["toolu_a1_1_0"]

    with pytest.raises(Overloaded, match="try later"):
        await provider.stream(request(turn=2), None)

    with trio.move_on_after(100) as hung:
        await provider.stream(request(turn=3), None)
    assert hung.cancelled_caught

    start = trio.current_time()
    last = await provider.stream(request(turn=4), None)
    assert trio.current_time() - start == pytest.approx(2.5)
    assert last.content == (ToolUseBlock("toolu_agent_4_0", COMPLETE_TASK, {"result": "found it"}),)
    assert provider.calls == 5

    with pytest.raises(ScriptError, match="no reply for turn 6"):
        await provider.stream(request(turn=5), None)


async def test_policies_are_chosen_per_agent_type_and_may_be_async(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async def slow(request: ModelRequest) -> Reply:
        await trio.sleep(1.0)
        return testing.say("explored")

    provider = ScriptedProvider(
        policies={"Explore": slow, "Plan": [testing.say("planned")]}, latency=0.5
    )
    start = trio.current_time()
    assert (await provider.stream(request(agent_type="Explore"), None)).content[0].text == (  # type: ignore[union-attr]
        "explored"
    )
    assert trio.current_time() - start == pytest.approx(1.5)
    plan = await provider.stream(request(agent_type="Plan"), None)
    assert plan.content[0].text == "planned"  # type: ignore[union-attr]
    other = await provider.stream(request(agent_type="Bash"), None)
    assert other.content[0].text.startswith("[scripted reply")  # type: ignore[union-attr]


async def test_a_policy_that_returns_the_wrong_thing_is_a_script_error() -> None:
    provider = ScriptedProvider(lambda request: "not a reply")  # type: ignore[arg-type,return-value]
    with pytest.raises(ScriptError, match="returned str, not a Reply"):
        await provider.stream(request(), None)


async def test_script_files_map_agent_types(tmp_path: Path) -> None:
    path = tmp_path / "scripts.yaml"
    path.write_text("Explore:\n  - text: found\n'*':\n  - text: generic\n")
    assert sorted(load_scripts(path)) == ["*", "Explore"]
    provider = ScriptedProvider.from_file(path)
    explore = await provider.stream(request(agent_type="Explore"), None)
    other = await provider.stream(request(agent_type="Plan"), None)
    assert (explore.content, other.content) == ((TextBlock("found"),), (TextBlock("generic"),))
    listed = tmp_path / "list.json"
    listed.write_text('[{"text": "one"}, {"text": "two"}]')
    assert len(load_scripts(listed)["*"]) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- text: hi\n  bogus: true\n", "unknown field `bogus`"),
        ("- text: 1\n", r"Expected `str`, got `int` - at `\$\[0\].text`"),
        ("- [unclosed\n", "not valid YAML"),
        ("just a string\n", "a list of turns"),
    ],
)
def test_bad_scripts_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScriptError, match=message):
        load_scripts(path)


def test_a_missing_script_file_is_a_script_error(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read"):
        load_scripts(tmp_path / "absent.yaml")


def test_the_default_policy_quotes_the_task_or_completes_with_a_schema_sample() -> None:
    plain = default_policy(request(messages=[Message.user("Count the files.")]))
    assert "Count the files." in plain.text
    assert not plain.tool_calls
    spec_ = complete_task_tool(OutputSpec("report", schema=REPORT_SCHEMA)).spec
    completing = default_policy(request(tools=[spec_]))
    (call,) = completing.tool_calls
    assert call.name == COMPLETE_TASK
    assert complete_task_tool(OutputSpec("report", schema=REPORT_SCHEMA)).check(call.input)
    free = default_policy(request(tools=[complete_task_tool(None).spec]))
    assert free.tool_calls[0].input == {"result": free.text}


def test_the_default_policy_samples_a_structured_output_named_result() -> None:
    """A job row's output spec is named ``result`` (Codex's name): it gets a sample of its
    schema, not the text a run without an output schema reports."""
    schema = {"type": "object", "required": ["label"], "properties": {"label": {"enum": ["a"]}}}
    tool = complete_task_tool(OutputSpec("result", schema=schema))
    (call,) = default_policy(request(tools=[tool.spec])).tool_calls
    assert call.input == {"result": {"label": "a"}}
    assert not isinstance(tool.check(call.input), str)


async def test_the_default_policy_completes_an_agent_with_an_output_schema() -> None:
    agent = spec(definition(output=True), ScriptedProvider())
    result = await run_agent(agent, task())
    assert result.terminate_reason is TerminateReason.GOAL
    assert result.output == {"summary": "scripted", "count": 0}


@pytest.mark.parametrize(
    ("schema", "sample"),
    [
        ({"type": "string", "minLength": 3}, "xxx"),
        ({"type": "integer", "minimum": 5}, 5),
        ({"type": "number", "exclusiveMinimum": 1}, 2),
        ({"enum": ["a", "b"]}, "a"),
        ({"const": 7}, 7),
        ({"type": ["null", "boolean"]}, False),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "scripted"),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 2}, [0, 0]),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"a": "scripted"},
        ),
        ({}, None),
    ],
)
def test_schema_samples(schema: dict[str, Any], sample: Any) -> None:
    assert sample_for_schema(schema) == sample


def test_default_provider_follows_the_api_key() -> None:
    assert isinstance(default_provider({}), ScriptedProvider)
    assert isinstance(default_provider({"ANTHROPIC_API_KEY": "  "}), ScriptedProvider)
    chosen = default_provider(
        {"ANTHROPIC_API_KEY": "sk-x", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}
    )
    assert isinstance(chosen, AnthropicProvider)
    assert (chosen.api_key, chosen.base_url) == ("sk-x", "http://127.0.0.1:1")


async def test_zero_latency_still_checkpoints() -> None:
    provider = ScriptedProvider([testing.say("x")])
    with trio.CancelScope() as scope:
        scope.cancel()
        await provider.stream(request(), None)
    assert scope.cancelled_caught
