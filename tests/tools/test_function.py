"""Function tools: ``@tool`` turns a typed function into a :class:`Tool`.

Follows the anchors' documented behaviour: the OpenAI Agents SDK's
``@function_tool`` (https://openai.github.io/openai-agents-python/tools/#function-tools:
"the name of the tool will be the name of the Python function", "the tool
description will be taken from the docstring of the function", "the schema for
the function inputs is automatically created from the function's arguments",
"descriptions for each input are taken from the docstring", Google/NumPy/Sphinx
styles via ``griffe``; an exception becomes an error message for the model),
and the Claude Agent SDK's ``@tool`` (name, description, input schema, handler
returning content).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import msgspec
import pytest
import trio
import trio.testing

import subagents
from subagents import testing
from subagents.actors import Completed
from subagents.runtime import ScriptedProvider
from subagents.tools import (
    FunctionTool,
    ToolContext,
    ToolFlags,
    ToolRegistrationError,
    ToolResult,
    dispatch,
    input_schema,
    tool,
)
from tests.runtime.world import World, tool_results

MakeCtx = Callable[..., ToolContext]


@tool(read_only=True, background_safe=True)
def word_count(
    text: Annotated[str, "The text to count."],
    minimum: Annotated[int, msgspec.Meta(ge=0, description="Shortest word counted.")] = 0,
    separator: str | None = None,
) -> int:
    """Count the words of a text.

    Words shorter than ``minimum`` are left out.

    Args:
        text: Not used: the Annotated string wins.
        separator: What splits words (default: whitespace).
    """
    return len([w for w in text.split(separator) if len(w) >= minimum])


class Opaque:
    """A type msgspec cannot describe as JSON."""


def test_the_schema_comes_from_the_signature_and_the_docstring() -> None:
    assert isinstance(word_count, FunctionTool)
    assert word_count.name == "word_count"
    assert word_count.description == (
        "Count the words of a text.\n\nWords shorter than ``minimum`` are left out."
    )
    assert word_count.flags == ToolFlags(read_only=True, background_safe=True)
    schema = input_schema(word_count.arguments_type)
    assert schema == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The text to count."},
            "minimum": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Shortest word counted.",
            },
            "separator": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "What splits words (default: whitespace).",
            },
        },
        "required": ["text"],
        "additionalProperties": False,
    }
    assert word_count.function("a bb ccc", minimum=2) == 2  # the function stays callable


def test_numpy_style_docstrings_and_the_package_level_name() -> None:
    @subagents.tool(needs_approval=True, name="lookup-user")
    async def lookup(user_id: int, verbose: bool = False) -> dict[str, Any]:
        """Look a user up.

        Parameters
        ----------
        user_id
            The numeric id.
        verbose
            Say more.
        """
        return {"id": user_id}

    assert lookup.name == "lookup-user"
    assert lookup.description == "Look a user up."
    assert lookup.flags == ToolFlags(needs_approval=True)
    props = input_schema(lookup.arguments_type)["properties"]
    assert props["user_id"] == {"type": "integer", "description": "The numeric id."}
    assert props["verbose"]["description"] == "Say more."
    assert subagents.tool is tool


def test_bad_functions_are_refused_when_decorated() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        """Has no types."""

    def star(*names: str) -> str:
        """Takes *names."""
        return ""

    def undocumented(x: int) -> int:
        return x

    def opaque(x: Opaque) -> str:
        """An argument msgspec cannot describe."""
        return ""

    with pytest.raises(ToolRegistrationError, match="no type annotation"):
        tool(untyped)
    with pytest.raises(ToolRegistrationError, match=r"\*names"):
        tool(star)
    with pytest.raises(ToolRegistrationError, match="no description"):
        tool(undocumented)
    assert tool(description="Echo a number.")(undocumented).description == "Echo a number."
    with pytest.raises(ToolRegistrationError, match="cannot be described as JSON"):
        tool(opaque)
    with pytest.raises(ToolRegistrationError, match="invalid tool name"):
        tool(name="no spaces allowed", description="x")(undocumented)


async def test_sync_and_async_functions_and_every_return_kind(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    threads: list[bool] = []

    @tool
    def sync_json(n: int) -> list[int]:
        """Numbers."""
        threads.append(threading.current_thread() is not threading.main_thread())
        return list(range(n))

    @tool
    async def async_text(name: str, context: ToolContext) -> str:
        """Greet."""
        await trio.lowlevel.checkpoint()
        return f"hello {name} from {context.agent_id}"

    @tool
    def result(flag: bool) -> ToolResult:
        """A ToolResult as is."""
        return ToolResult.error("flagged") if flag else ToolResult.ok("fine", seen=True)

    @tool
    def nothing() -> None:
        """Returns nothing."""

    @tool
    def not_json() -> object:
        """Returns an object msgspec cannot encode."""
        return object()

    assert await dispatch(sync_json, {"n": 3}, ctx) == ToolResult.ok("[0,1,2]")
    assert threads == [True]  # a sync function runs in a worker thread
    assert "context" not in input_schema(async_text.arguments_type)["properties"]
    assert await dispatch(async_text, '{"name": "Ada"}', ctx) == ToolResult.ok(
        "hello Ada from test-agent"
    )
    assert await dispatch(result, {"flag": True}, ctx) == ToolResult.error("flagged")
    assert (await dispatch(result, {"flag": False}, ctx)).details == {"seen": True}
    assert await dispatch(nothing, None, ctx) == ToolResult.ok("")
    bad = await dispatch(not_json, {}, ctx)
    assert bad.is_error
    assert "not JSON" in bad.content


async def test_bad_arguments_and_exceptions_are_tool_errors(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    missing = await dispatch(word_count, {}, ctx)
    assert missing.is_error
    assert "text" in missing.content
    wrong = await dispatch(word_count, {"text": "a", "minimum": -1}, ctx)
    assert wrong.is_error
    assert "minimum" in wrong.content
    extra = await dispatch(word_count, {"text": "a", "colour": "red"}, ctx)
    assert extra.is_error
    assert "colour" in extra.content

    @tool
    def boom(path: str) -> str:
        """Fail."""
        raise FileNotFoundError(f"no such file: {path}")

    @tool
    async def aboom() -> str:
        """Fail, async."""
        raise ValueError("bad state")

    failed = await dispatch(boom, {"path": "x.txt"}, ctx)
    assert failed.is_error
    assert failed.content == "Tool 'boom' failed: FileNotFoundError: no such file: x.txt"
    assert failed.details == {"exception": "FileNotFoundError"}
    assert (await dispatch(aboom, {}, ctx)).content == "Tool 'aboom' failed: ValueError: bad state"


async def test_a_sync_call_past_its_timeout_returns_an_error_at_once(
    make_ctx: MakeCtx, autojump_clock: trio.testing.MockClock
) -> None:
    release = threading.Event()

    @tool(timeout=5)
    def stuck() -> str:
        """Blocks until released."""
        release.wait(timeout=30)
        return "late"

    start = trio.current_time()
    result = await dispatch(stuck, {}, make_ctx())
    release.set()
    assert result.is_error
    assert result.details == {"timed_out": True}
    assert "did not finish within 5 seconds" in result.content
    assert trio.current_time() - start == pytest.approx(5)


async def test_a_sync_call_without_a_timeout_is_abandoned_when_the_agent_is_cancelled(
    make_ctx: MakeCtx, autojump_clock: trio.testing.MockClock
) -> None:
    """No timeout of its own: the agent's cancellation still ends the call at once, and the
    worker thread is left to finish on its own."""
    release = threading.Event()
    finished: list[str] = []

    @tool
    def stuck() -> str:
        """Blocks until released."""
        release.wait(timeout=30)
        finished.append("late")
        return "late"

    start = trio.current_time()
    with trio.move_on_after(3) as scope:
        await dispatch(stuck, {}, make_ctx())
    assert scope.cancelled_caught
    assert trio.current_time() - start == pytest.approx(3)
    assert finished == []  # the thread still waits: the call did not
    release.set()


async def test_an_async_call_past_its_timeout_and_cancellation(
    make_ctx: MakeCtx, autojump_clock: trio.testing.MockClock
) -> None:
    @tool(timeout=2)
    async def slow() -> str:
        """Sleeps."""
        await trio.sleep(100)
        return "late"

    result = await dispatch(slow, {}, make_ctx())
    assert result.is_error
    assert "within 2 seconds" in result.content

    @tool
    async def forever() -> str:
        """Sleeps without a timeout of its own."""
        await trio.sleep_forever()
        return ""

    with trio.move_on_after(3) as scope:  # the agent's cancellation propagates
        await dispatch(forever, {}, make_ctx())
    assert scope.cancelled_caught

    with pytest.raises(ToolRegistrationError, match="positive"):
        tool(timeout=0)


async def test_a_definition_naming_a_function_tool_gets_it_through_the_runtime(
    tmp_path: Path,
) -> None:
    """``open_runtime(tools=[...])`` offers it; a definition's ``tools:`` list grants it."""
    world = World(tmp_path)
    world.agent("counter", tools="word_count")
    provider = ScriptedProvider(
        [testing.call("word_count", text="one two three"), testing.say("Three words.")]
    )
    async with world.open(provider, tools=[word_count]) as rt:
        handle = await rt.spawn("counter", "Count the words")
        waited = await rt.wait([handle.agent_id], timeout=10)
        assert waited.statuses[handle.agent_id] == Completed("Three words.")
        results = tool_results(rt.conversation(handle.agent_id).messages)
        assert [(r.content, r.is_error) for r in results] == [("3", False)]
