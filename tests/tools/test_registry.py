"""Argument validation, input schemas, the registry and dispatch."""

from __future__ import annotations

import json
from typing import Annotated, Any

import msgspec
import pytest
import trio

from subagents.tools import (
    ReadArgs,
    ToolArgumentsError,
    ToolError,
    ToolFlags,
    ToolRegistrationError,
    ToolRegistry,
    ToolResult,
    builtin_tools,
    decode_arguments,
    dispatch,
    input_schema,
    tool_spec,
    validate_tool_name,
)


class Inner(msgspec.Struct, forbid_unknown_fields=True):
    """A nested argument."""

    depth: int


class NestedArgs(msgspec.Struct, forbid_unknown_fields=True):
    """Arguments with a nested struct and constraints."""

    name: str
    count: Annotated[int, msgspec.Meta(ge=1)] = 1
    inner: Inner | None = None
    tags: list[str] = msgspec.field(default_factory=list)


class LooseArgs(msgspec.Struct):
    """Arguments that would silently drop unknown fields."""

    x: int = 0


class Node(msgspec.Struct, forbid_unknown_fields=True):
    """A recursive structure, which has no finite schema."""

    child: Node | None = None


# -- validation ------------------------------------------------------------------


def _error(raw: Any, arguments_type: type[msgspec.Struct] = NestedArgs) -> str:
    with pytest.raises(ToolArgumentsError) as info:
        decode_arguments("T", arguments_type, raw)
    return str(info.value)


def test_valid_arguments_decode_from_every_input_form() -> None:
    expected = NestedArgs(name="a", count=2, inner=Inner(depth=3), tags=["x"])
    as_dict = {"name": "a", "count": 2, "inner": {"depth": 3}, "tags": ["x"]}
    for raw in (as_dict, json.dumps(as_dict), json.dumps(as_dict).encode()):
        assert decode_arguments("T", NestedArgs, raw) == expected


def test_none_is_an_empty_object() -> None:
    assert decode_arguments("T", LooseArgs, None) == LooseArgs()


def test_wrong_type_names_the_field_and_the_expected_type() -> None:
    message = _error({"name": "a", "count": "three"})
    assert "$.count" in message
    assert "Expected `int`, got `str`" in message
    assert message.startswith("Invalid arguments for tool 'T'")


def test_nested_wrong_type_names_the_path() -> None:
    assert "$.inner.depth" in _error({"name": "a", "inner": {"depth": "deep"}})
    assert "$.tags[1]" in _error({"name": "a", "tags": ["x", 2]})


def test_missing_field_is_named() -> None:
    message = _error({})
    assert "missing required field `name`" in message
    assert "name (string, required)" in message


def test_unknown_field_is_named() -> None:
    message = _error({"name": "a", "colour": "red"})
    assert "unknown field `colour`" in message


def test_constraint_violation_says_what_was_expected() -> None:
    message = _error({"name": "a", "count": 0})
    assert "$.count" in message
    assert ">= 1" in message


def test_non_object_and_malformed_json() -> None:
    assert "Expected `object`, got `array`" in _error("[1, 2]")
    assert "not valid JSON" in _error("{nope")
    assert "must be a JSON object" in _error(42)
    assert "not JSON" in _error({"name": object()})


def test_huge_input_is_refused_before_decoding() -> None:
    message = _error({"name": "x" * (1024 * 1024 + 10)})
    assert "too large" in message
    assert "1048576" in message


# -- schemas ----------------------------------------------------------------------


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if "$ref" in node else []
        return found + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_schema_is_a_self_contained_object() -> None:
    schema = input_schema(NestedArgs)
    assert schema["type"] == "object"
    assert "$defs" not in schema
    assert _refs(schema) == []
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["name"]
    inner = schema["properties"]["inner"]["anyOf"][0]
    assert inner["type"] == "object"
    assert inner["properties"]["depth"] == {"type": "integer"}


def test_schema_copies_are_independent() -> None:
    first = input_schema(NestedArgs)
    first["properties"].clear()
    assert input_schema(NestedArgs)["properties"]


def test_recursive_arguments_are_refused() -> None:
    with pytest.raises(ToolRegistrationError, match="recursive"):
        input_schema(Node)


def test_builtin_specs_fit_the_tools_api() -> None:
    for tool in builtin_tools():
        spec = tool_spec(tool)
        assert set(spec) == {"name", "description", "input_schema"}
        assert spec["input_schema"]["type"] == "object"
        assert _refs(spec["input_schema"]) == []
        msgspec.json.encode(spec)


def test_grep_flags_use_their_cli_names() -> None:
    properties = input_schema(next(t for t in builtin_tools() if t.name == "Grep").arguments_type)[
        "properties"
    ]
    assert {"-i", "-n", "-A", "-B", "-C"} <= set(properties)


# -- registry ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["Read", "mcp__github__create_issue", "spawn_agent", "a-b", "x" * 64]
)
def test_valid_names(name: str) -> None:
    assert validate_tool_name(name) == name


@pytest.mark.parametrize("name", ["", "has space", "dot.name", "x" * 65, "ünï", None, 3])
def test_invalid_names(name: Any) -> None:
    with pytest.raises(ToolRegistrationError, match="invalid tool name"):
        validate_tool_name(name)


def test_registry_accepts_any_tool_and_refuses_duplicates(fake_tool: Any) -> None:
    registry = ToolRegistry([fake_tool("mcp__github__list_issues")])
    registry.register(fake_tool("spawn_agent"))
    assert registry.names == ("mcp__github__list_issues", "spawn_agent")
    assert "spawn_agent" in registry
    assert len(registry) == 2
    assert registry.get("missing") is None
    with pytest.raises(ToolRegistrationError, match="already registered"):
        registry.register(fake_tool("spawn_agent"))


def test_registry_refuses_malformed_tools(fake_tool: Any) -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolRegistrationError, match="description"):
        registry.register(fake_tool("A", description="  "))
    with pytest.raises(ToolRegistrationError, match="forbid_unknown_fields"):
        registry.register(fake_tool("B", arguments_type=LooseArgs))
    with pytest.raises(ToolRegistrationError, match=r"msgspec\.Struct"):
        registry.register(fake_tool("C", arguments_type=dict))
    with pytest.raises(ToolRegistrationError, match="ToolFlags"):
        registry.register(fake_tool("D", flags={"read_only": True}))
    with pytest.raises(ToolRegistrationError, match="recursive"):
        registry.register(fake_tool("E", arguments_type=Node))
    assert len(registry) == 0


# -- dispatch ---------------------------------------------------------------------


async def test_unknown_tool_is_not_available(make_ctx: Any) -> None:
    result = await ToolRegistry().call("Nope", {}, make_ctx())
    assert result == ToolResult.error("Tool 'Nope' is not available to this agent.")


async def test_bad_arguments_reach_the_model_and_the_tool_is_not_called(
    fake_tool: Any, make_ctx: Any
) -> None:
    tool = fake_tool("Echo")
    result = await dispatch(tool, {"text": 5}, make_ctx())
    assert result.is_error
    assert "$.text" in result.content
    assert tool.calls == []


async def test_tool_error_becomes_an_error_result(fake_tool: Any, make_ctx: Any) -> None:
    async def fail(args: Any) -> ToolResult:
        raise ToolError("the file is locked; try later")

    result = await dispatch(fake_tool("Echo", behaviour=fail), {}, make_ctx())
    assert result == ToolResult.error("the file is locked; try later")


async def test_unexpected_exception_becomes_an_error_result(fake_tool: Any, make_ctx: Any) -> None:
    async def crash(args: Any) -> ToolResult:
        raise KeyError("oops")

    result = await dispatch(fake_tool("Echo", behaviour=crash), {}, make_ctx())
    assert result.is_error
    assert "failed unexpectedly (KeyError" in result.content
    assert result.details["exception"] == "KeyError"


async def test_a_tool_returning_garbage_gives_an_error(fake_tool: Any, make_ctx: Any) -> None:
    async def garbage(args: Any) -> Any:
        return "not a ToolResult"

    result = await dispatch(fake_tool("Echo", behaviour=garbage), {}, make_ctx())
    assert result == ToolResult.error("Tool 'Echo' returned no result.")


async def test_cancellation_propagates_out_of_a_tool(
    fake_tool: Any, make_ctx: Any, autojump_clock: Any
) -> None:
    async def hang(args: Any) -> ToolResult:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    results = []
    with trio.move_on_after(5) as scope:
        results.append(await dispatch(fake_tool("Echo", behaviour=hang), {}, make_ctx()))
    assert scope.cancelled_caught
    assert results == []


async def test_keyboard_interrupt_propagates(fake_tool: Any, make_ctx: Any) -> None:
    async def interrupt(args: Any) -> ToolResult:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await dispatch(fake_tool("Echo", behaviour=interrupt), {}, make_ctx())


async def test_long_results_are_capped(fake_tool: Any, make_ctx: Any) -> None:
    async def flood(args: Any) -> ToolResult:
        return ToolResult.ok("x" * 1000, origin="flood")

    result = await dispatch(
        fake_tool("Echo", behaviour=flood), {}, make_ctx(), max_result_chars=100
    )
    assert result.content.startswith("x" * 100 + "\n[result truncated: 900 more characters]")
    assert result.details == {"origin": "flood", "result_truncated": True}


def test_tool_result_details_are_read_only() -> None:
    result = ToolResult.ok("done", exit_code=0)
    with pytest.raises(TypeError):
        result.details["exit_code"] = 1  # type: ignore[index]
    assert ToolResult.ok("a", x=1) == ToolResult.ok("a", x=2)
    assert hash(ToolResult.ok("a"))
    # a copy: the caller's mapping changing later does not change the result
    given = {"k": 1}
    copied = ToolResult("w", details=given)
    given["k"] = 2
    assert copied.details == {"k": 1}
    # none: one shared empty mapping, not two allocations a call, and read-only too
    empty = ToolResult("x").details
    assert empty == {}
    assert ToolResult.ok("y").details is empty
    assert ToolResult.error("z").details is empty
    with pytest.raises(TypeError):
        empty["k"] = 1  # type: ignore[index]


def test_read_args_are_frozen_structs() -> None:
    args = decode_arguments("Read", ReadArgs, {"file_path": "a.txt", "offset": 3})
    assert args == ReadArgs(file_path="a.txt", offset=3)
    assert ToolFlags().needs_approval is False
