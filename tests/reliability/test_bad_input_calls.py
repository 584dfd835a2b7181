"""Reliability, bad input through calls: tool arguments and lifecycle calls never crash a runtime.

The properties, each through a real runtime (``open_runtime`` in a temporary
project, scripted models):

- **Tool arguments.** For any JSON value a model sends as the arguments of any
  built-in tool (Read, Write, Edit, Glob, Grep, LS, Bash) or lifecycle tool
  (spawn_agent, send_input, wait, close_agent, resume_agent, Task, Agent,
  TaskOutput), the call's result is either a success (only when the arguments
  are valid) or an ``is_error`` tool result with a message naming what is
  wrong; never an unexpected failure. The agent keeps running, its next,
  correct call of the same tool succeeds, and it ends ``Completed``.
- **Lifecycle calls from code.** For any sequence of ``Runtime.send_input``,
  ``wait``, ``close``, ``resume`` and ``status`` on unknown ids, ids of closed
  agents and ids of another runtime, with any timeout or grace (negative, NaN,
  infinite, 1e300, strings, ``None``, booleans), the outcome is a value or a
  :class:`~subagents.SubagentsError` whose message names the id or the bad
  value; another runtime's agents are never touched; the runtime is usable
  afterwards.
- **Lifecycle calls from a model.** The same bad ids and absurd ``timeout_ms``
  / ``timeout`` values through the lifecycle tools give the model an
  ``is_error`` result naming the id (``wait`` reports ``not_found`` and clamps
  any positive timeout into its bounds, by design), or naming the bad timeout
  (``wait`` refuses ``timeout_ms <= 0`` as Codex does; ``TaskOutput`` takes
  Claude Code's 0-600000 ms), and the lead finishes its task.

Lower levels already prove the pieces: ``tests/tools/builtin/test_properties.py``
(random arguments straight into each file tool, no escape from the workspace),
``tests/runtime/test_runtime_tools.py`` (each lifecycle refusal once)
and ``tests/actors`` (the kernel's argument checks). The tests at the end pin
two bugs this suite found: integer timeouts too large for a float, and a bad
``grace`` accepted when the agent was closed already.

The design (DESIGN.md) does not restrict which agent may address which: a
lifecycle call on another subtree's agent is allowed, so it is not tested as a
refusal here.
"""

from __future__ import annotations

import itertools
import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents import SubagentsError, testing
from subagents.actors import (
    AgentClosed,
    AgentNotFound,
    Completed,
    InvalidConfiguration,
    NotFound,
    Running,
    Status,
    is_final,
)
from subagents.runtime import (
    ModelRequest,
    Reply,
    Runtime,
    ScriptedProvider,
    ScriptedToolCall,
    ToolResultBlock,
    TranscriptError,
    load_transcript,
)
from subagents.tools import (
    ApprovalDecision,
    ApprovalRequest,
    BashArgs,
    CloseAgentArgs,
    EditArgs,
    GlobArgs,
    GrepArgs,
    LSArgs,
    ReadArgs,
    ResumeAgentArgs,
    SendInputArgs,
    SpawnAgentArgs,
    TaskArgs,
    TaskOutputArgs,
    ToolArgumentsError,
    WaitArgs,
    WriteArgs,
    decode_arguments,
    input_schema,
)
from tests.runtime import world as runtime_world
from tests.tools.builtin import test_properties as tools_hypothesis

_TESTS = Path(__file__).resolve().parents[1]


World = runtime_world.World
tool_results = runtime_world.tool_results

ARGUMENT_TYPES: dict[str, type[msgspec.Struct]] = {
    "Read": ReadArgs,
    "Write": WriteArgs,
    "Edit": EditArgs,
    "Glob": GlobArgs,
    "Grep": GrepArgs,
    "LS": LSArgs,
    "Bash": BashArgs,
    "spawn_agent": SpawnAgentArgs,
    "send_input": SendInputArgs,
    "wait": WaitArgs,
    "close_agent": CloseAgentArgs,
    "resume_agent": ResumeAgentArgs,
    "Task": TaskArgs,
    "Agent": TaskArgs,
    "TaskOutput": TaskOutputArgs,
}
LEAD_TOOLS = ", ".join(ARGUMENT_TYPES)
SAFE_COMMAND = "echo subagents-bad-input"
LEAD_DONE = "Lead done."


def _settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


async def _approve_known_calls(request: ApprovalRequest) -> ApprovalDecision:
    """Writes and edits are approved; Bash only for the one safe command (never random text)."""
    if request.tool_name in ("Write", "Edit"):
        return ApprovalDecision.approve("test")
    if request.tool_name == "Bash" and json.loads(request.summary).get("command") == SAFE_COMMAND:
        return ApprovalDecision.approve("test")
    return ApprovalDecision.deny("only known calls are approved in this test")


def _payload(result: ToolResultBlock) -> Any:
    return json.loads(result.content)


Step = Callable[[list[ToolResultBlock]], ScriptedToolCall]


def _correct_call(tool: str, index: int) -> Step:
    """A call of ``tool`` that must succeed; the first tool result holds the lead's child."""

    def child(results: list[ToolResultBlock]) -> str:
        return str(_payload(results[0])["agent_id"])

    calls: dict[str, Callable[[list[ToolResultBlock]], dict[str, Any]]] = {
        "Read": lambda _: {"file_path": "README.md"},
        "Write": lambda _: {"file_path": f"notes/out-{index}.txt", "content": "hello\n"},
        "Edit": lambda _: {
            "file_path": f"edit-{index}.txt",
            "old_string": "alpha",
            "new_string": "beta",
        },
        "Glob": lambda _: {"pattern": "*.md"},
        "Grep": lambda _: {"pattern": "project"},
        "LS": lambda _: {"path": "."},
        "Bash": lambda _: {"command": SAFE_COMMAND},
        "spawn_agent": lambda _: {"agent_type": "Explore", "message": "Look around."},
        "send_input": lambda r: {"id": child(r), "message": "One more thing."},
        "wait": lambda r: {"ids": [child(r)], "timeout_ms": 60_000},
        "close_agent": lambda r: {"id": child(r)},
        "resume_agent": lambda r: {"id": child(r)},
        "Task": lambda _: {"description": "d", "prompt": "Look.", "subagent_type": "Explore"},
        "Agent": lambda _: {"description": "d", "prompt": "Look.", "subagent_type": "Explore"},
        "TaskOutput": lambda r: {"agent_id": child(r), "block": False},
    }
    make = calls[tool]
    return lambda results: ScriptedToolCall(tool, make(results))


def arguments_for(tool: str) -> st.SearchStrategy[Any]:
    """Any JSON value, or an object keyed mostly by the tool's own fields (plus a stranger)."""
    fields = sorted(input_schema(ARGUMENT_TYPES[tool])["properties"])
    values = tools_hypothesis.JSON | st.integers() | st.text(max_size=20) | st.booleans()
    shaped = st.dictionaries(st.sampled_from([*fields, "bogus"]), values, max_size=len(fields) + 1)
    nan = st.just(float("nan")) | st.just(float("inf"))  # json.dumps writes NaN: not JSON
    return st.one_of(shaped, shaped, tools_hypothesis.JSON, st.lists(nan, min_size=1, max_size=2))


#: How a refused call's arguments are described: not an object, or not the tool's fields.
_REFUSALS = ("Invalid arguments for tool ", "The arguments of this ", "Arguments for tool ")


def _is_valid(tool: str, raw: str) -> bool:
    if not raw.startswith("{"):
        return False
    try:
        decode_arguments(tool, ARGUMENT_TYPES[tool], raw)
    except ToolArgumentsError:
        return False
    return True


# -- tool arguments ----------------------------------------------------------------------------


@st.composite
def bad_calls(draw: st.DrawFn) -> list[tuple[str, str]]:
    tools = draw(st.lists(st.sampled_from(sorted(ARGUMENT_TYPES)), min_size=1, max_size=4))
    return [(tool, json.dumps(draw(arguments_for(tool)))) for tool in tools]


async def _tool_scenario(root: Path, calls: list[tuple[str, str]]) -> None:
    world = World(root)
    world.agent("lead", tools=LEAD_TOOLS)
    for index in range(len(calls)):
        (world.project / f"edit-{index}.txt").write_text("alpha\n")
    # Turn 0 spawns the child the lifecycle calls use; then, per drawn call, the bad
    # call and the same tool called correctly; then the final answer.
    plan: list[Step] = [_correct_call("spawn_agent", 0)]
    for index, (tool, raw) in enumerate(calls):
        plan.append(lambda _, tool=tool, raw=raw: ScriptedToolCall(tool, raw))
        plan.append(_correct_call(tool, index))
        if tool == "close_agent":  # the child is needed open for what follows
            plan.append(_correct_call("resume_agent", index))

    def lead(request: ModelRequest) -> Reply:
        if request.turn < len(plan):
            return Reply(tool_calls=(plan[request.turn](tool_results(request.messages)),))
        return testing.say(LEAD_DONE)

    provider = ScriptedProvider(policies={"lead": lead, "*": lambda _: testing.say("ok")})
    async with world.open(provider, approval_callback=_approve_known_calls) as rt:
        with trio.fail_after(60):  # a safety net, never reached when the promise holds
            handle = await rt.spawn("lead", "Use every tool.")
            waited = await rt.wait([handle.agent_id], timeout=3600)
        assert waited.statuses[handle.agent_id] == Completed(LEAD_DONE)
        results = tool_results(rt.conversation(handle.agent_id).messages)
        assert len(results) == len(plan)
        position = 1
        for tool, raw in calls:
            bad, good = results[position], results[position + 1]
            position += 3 if tool == "close_agent" else 2
            assert bad.content.strip(), (tool, raw)
            # Neither the tool's nor the loop's last-resort error boundary was needed.
            assert f"Tool '{tool}' failed" not in bad.content, (tool, raw, bad.content)
            assert "Traceback" not in bad.content
            if not _is_valid(tool, raw):
                assert bad.is_error, (tool, raw, bad.content)
                assert bad.content.startswith(_REFUSALS), (tool, raw, bad.content)
                assert tool in bad.content, (tool, raw, bad.content)
            assert not good.is_error, (tool, raw, good.content)
        # The runtime is still good for new work.
        other = await rt.spawn("general-purpose", "Still there?")
        done = await rt.wait([other.agent_id], timeout=60)
        assert done.statuses[other.agent_id] == Completed("ok")


@_settings(30)
@given(calls=bad_calls())
def test_any_tool_arguments_give_a_tool_error_and_the_agent_goes_on(
    calls: list[tuple[str, str]],
) -> None:
    # Real clock: Bash runs a real process, which an autojumping clock would time out.
    # Nothing here waits on time (scripted replies have no latency).
    with tempfile.TemporaryDirectory() as folder:
        trio.run(_tool_scenario, Path(folder), calls)


# -- lifecycle calls from code -----------------------------------------------------------------

ABSURD_SECONDS = (
    st.sampled_from(
        [-1, -1e-9, -math.inf, math.nan, math.inf, "5", "", None, True, False, [1], 1e300, 0, 0.5]
    )
    | st.floats(allow_subnormal=False)
    | st.integers(min_value=-(2**70), max_value=2**70)
)
ID_KINDS = st.sampled_from(["unknown", "closed", "foreign", "live", "empty"])
OPERATIONS = st.sampled_from(["send_input", "wait", "close", "resume", "status"])

_finite = st.floats(min_value=0, max_value=1e6, allow_nan=False)


def _good_seconds(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


@st.composite
def lifecycle_ops(draw: st.DrawFn) -> list[tuple[str, str, Any, str]]:
    ops = []
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        ops.append(
            (
                draw(OPERATIONS),
                draw(ID_KINDS),
                draw(ABSURD_SECONDS),
                draw(st.text(max_size=12)),
            )
        )
    return ops


def _hang_or_answer(request: ModelRequest) -> Reply:
    return testing.hang() if "hang" in request.messages[0].text else testing.say("ok")


async def _lifecycle_scenario(root: Path, ops: list[tuple[str, str, Any, str]]) -> None:
    home = World(root / "home-runtime")
    away = World(root / "away-runtime", limits={"max_time_seconds": 1e7})  # outlives the ops
    provider = ScriptedProvider(_hang_or_answer)
    async with home.open(provider) as rt, away.open(provider) as other:
        foreign = (await other.spawn("general-purpose", "hang")).agent_id
        live = (await rt.spawn("general-purpose", "hang")).agent_id
        closed = (await rt.spawn("general-purpose", "answer")).agent_id
        await rt.wait([closed], timeout=60)
        await rt.close(closed)
        foreign_before = other.status(foreign)
        unknown_ids = itertools.count()
        for op, kind, seconds, text in ops:
            target = {
                "unknown": f"nobody-{text}-{next(unknown_ids)}",
                "closed": closed,
                "foreign": foreign,
                "live": live,
                "empty": "",
            }[kind]
            state = _state(rt, target)
            if state == "open" and _good_seconds(seconds):
                # A valid but astronomical wait on a live agent jumps the mock clock
                # there, past which later relative deadlines vanish in float rounding.
                seconds = min(seconds, 1000)
            try:
                outcome = await _call(rt, op, target, seconds)
            except SubagentsError as error:
                _check_refusal(error, op, state, target, seconds)
            else:
                _check_success(outcome, op, state, seconds)
        assert other.status(foreign) == foreign_before
        assert [m.text for m in other.conversation(foreign)] == ["hang"]
        assert {a.id for a in rt.list(include_closed=True)}.isdisjoint({foreign})
        # Still usable: a new agent runs to its end.
        fresh = (await rt.spawn("general-purpose", "answer")).agent_id
        assert (await rt.wait([fresh], timeout=60)).statuses[fresh] == Completed("ok")


async def _call(rt: Runtime, op: str, target: str, seconds: Any) -> Any:
    if op == "send_input":
        return await rt.send_input(target, "more")
    if op == "wait":
        return await rt.wait([target], timeout=seconds)
    if op == "close":
        return await rt.close(target, grace=seconds)
    if op == "resume":
        return await rt.resume(target)
    return rt.status(target)


def _state(rt: Runtime, agent_id: str) -> str:
    """``absent`` (never this runtime's), ``closed`` or ``open``."""
    for info in rt.list(include_closed=True):
        if info.id == agent_id:
            return "closed" if info.closed else "open"
    return "absent"


def _names(message: str, agent_id: str) -> bool:
    """Whether ``message`` shows the id (as written, or quoted with escapes)."""
    return repr(agent_id) in message or (bool(agent_id) and agent_id in message)


def _check_refusal(error: SubagentsError, op: str, state: str, target: str, seconds: Any) -> None:
    message = str(error)
    if isinstance(error, InvalidConfiguration):
        assert op in ("wait", "close"), (op, error)
        assert not _good_seconds(seconds)
        assert op == "wait" or seconds is not None
        assert ("timeout" if op == "wait" else "grace") in message
        assert "finite number of seconds" in message
        return
    assert _names(message, target), message
    if isinstance(error, AgentNotFound):
        assert state == "absent", (op, state, error)
        assert op in ("send_input", "close"), (op, error)
    elif isinstance(error, AgentClosed):
        assert (op, state) == ("send_input", "closed"), (op, state, error)
    else:  # only resume reads transcripts: this runtime has none for the id
        assert isinstance(error, TranscriptError), error
        assert (op, state) == ("resume", "absent"), (op, state, error)


def _check_success(outcome: Any, op: str, state: str, seconds: Any) -> None:
    # Only status and wait answer for an id the runtime does not have.
    assert state != "absent" or op in ("status", "wait"), (op, state)
    assert (op, state) != ("send_input", "closed")
    if op == "status":
        assert isinstance(outcome, Status)
        assert state != "absent" or outcome == NotFound()
    if op == "wait":
        assert _good_seconds(seconds), seconds
        (status,) = outcome.statuses.values()
        assert state != "absent" or status == NotFound()
        assert outcome.timed_out or is_final(status) or status == NotFound()
    if op == "close" and state == "open":  # see test_a_bad_grace_is_refused_for_a_closed_agent
        assert seconds is None or _good_seconds(seconds), seconds


@_settings(40)
@given(ops=lifecycle_ops())
def test_lifecycle_calls_with_bad_ids_or_timeouts_are_typed_refusals(
    ops: list[tuple[str, str, Any, str]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        trio.run(
            _lifecycle_scenario,
            Path(folder),
            ops,
            clock=trio.testing.MockClock(autojump_threshold=0),
        )


# -- lifecycle calls from a model --------------------------------------------------------------

MODEL_CALLS = st.sampled_from(
    ["send_input", "close_agent", "resume_agent", "TaskOutput", "Task", "wait"]
)
TIMEOUTS = st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from(
    [0, -1, 2**63 - 1, -(2**63), 2**64, 10**400, -(10**400)]
)


@st.composite
def model_calls(draw: st.DrawFn) -> list[tuple[str, str, int, str]]:
    size = draw(st.integers(min_value=1, max_value=6))
    return [
        (
            draw(MODEL_CALLS),
            draw(st.sampled_from(["unknown", "foreign", "closed"])),
            draw(TIMEOUTS),
            draw(st.text(min_size=1, max_size=12)),
        )
        for _ in range(size)
    ]


def _lifecycle_call(tool: str, agent_id: str, timeout: int) -> ScriptedToolCall:
    arguments: dict[str, Any] = {
        "send_input": {"id": agent_id, "message": "More."},
        "close_agent": {"id": agent_id},
        "resume_agent": {"id": agent_id, "message": "Again."},
        "TaskOutput": {"agent_id": agent_id, "block": True, "timeout": timeout},
        "Task": {"description": "d", "prompt": "Again.", "subagent_type": "Explore",
                 "resume": agent_id},
        "wait": {"ids": [agent_id], "timeout_ms": timeout},
    }[tool]  # fmt: skip
    return ScriptedToolCall(tool, arguments)


async def _model_scenario(root: Path, calls: list[tuple[str, str, int, str]]) -> None:
    home = World(root / "home-runtime")
    away = World(root / "away-runtime")
    home.agent("lead", tools=LEAD_TOOLS)
    setup = 3  # spawn a child, wait for it, close it: its id is then a closed agent's

    def lead(request: ModelRequest) -> Reply:
        results = tool_results(request.messages)
        turn = request.turn
        if turn == 0:
            return testing.call("spawn_agent", agent_type="Explore", message="Look.")
        child = str(_payload(results[0])["agent_id"])
        if turn == 1:
            return testing.call("wait", ids=[child], timeout_ms=60_000)
        if turn == 2:
            return testing.call("close_agent", id=child)
        if turn - setup < len(calls):
            tool, kind, timeout, text = calls[turn - setup]
            target = {"unknown": f"nobody-{text}", "foreign": foreign[0], "closed": child}[kind]
            return Reply(tool_calls=(_lifecycle_call(tool, target, timeout),))
        return testing.say(LEAD_DONE)

    provider = ScriptedProvider(policies={"lead": lead, "*": _hang_or_answer})
    async with home.open(provider) as rt, away.open(provider) as other:
        foreign = [(await other.spawn("general-purpose", "hang")).agent_id]
        handle = await rt.spawn("lead", "Manage your agents.")
        waited = await rt.wait([handle.agent_id], timeout=36_000)
        assert waited.statuses[handle.agent_id] == Completed(LEAD_DONE)
        results = tool_results(rt.conversation(handle.agent_id).messages)[setup:]
        assert len(results) == len(calls)
        for (tool, kind, timeout, text), result in zip(calls, results, strict=True):
            assert result.content.strip()
            assert "failed unexpectedly" not in result.content, result.content
            assert "the agent keeps running" not in result.content, result.content  # loop boundary
            if tool == "wait" and timeout <= 0:
                assert result.is_error
                assert result.content == "timeout_ms must be greater than zero"
                continue
            if tool == "TaskOutput" and not 0 <= timeout <= 600_000:
                assert result.is_error
                assert "$.timeout" in result.content, result.content
                continue
            if kind == "closed":
                continue  # closing again is harmless and resuming allowed: no refusal to check
            target = f"nobody-{text}" if kind == "unknown" else foreign[0]
            if tool == "wait":
                assert not result.is_error, result.content
                assert _payload(result)["status"] == {target: {"kind": "not_found"}}
            else:
                assert result.is_error, (tool, result.content)
                assert _names(result.content, target), result.content
        assert other.status(foreign[0]) == Running()
        # Still usable: a new agent runs to its end.
        fresh = (await rt.spawn("general-purpose", "answer")).agent_id
        assert (await rt.wait([fresh], timeout=60)).statuses[fresh] == Completed("ok")


@_settings(40)
@given(calls=model_calls())
def test_lifecycle_tools_with_bad_ids_or_timeouts_give_the_model_a_tool_error(
    calls: list[tuple[str, str, int, str]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        trio.run(
            _model_scenario, Path(folder), calls, clock=trio.testing.MockClock(autojump_threshold=0)
        )


# -- bugs found here -----------------------------------------------------------------------------


async def test_a_wait_longer_than_any_float_is_a_typed_refusal(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with World(tmp_path).open(ScriptedProvider(_hang_or_answer)) as rt:
        live = (await rt.spawn("general-purpose", "hang")).agent_id
        with pytest.raises(InvalidConfiguration, match="timeout"):
            await rt.wait([live], timeout=10**400)


async def test_a_grace_longer_than_any_float_is_a_typed_refusal(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with World(tmp_path).open(ScriptedProvider(_hang_or_answer)) as rt:
        live = (await rt.spawn("general-purpose", "hang")).agent_id
        with pytest.raises(InvalidConfiguration, match="grace"):
            await rt.close(live, grace=10**400)


async def test_a_bad_grace_is_refused_for_a_closed_agent(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with World(tmp_path).open(ScriptedProvider(_hang_or_answer)) as rt:
        agent = (await rt.spawn("general-purpose", "answer")).agent_id
        await rt.close(agent)
        with pytest.raises(InvalidConfiguration, match="grace"):
            await rt.close(agent, grace="5")  # type: ignore[arg-type]


async def test_a_lone_surrogate_a_model_writes_costs_no_transcript_line(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """JSON's ``"\\ud800"`` decodes to a lone surrogate, which msgspec will not encode.
    It ended the agent as ``Errored`` and lost its messages, or (in its final answer)
    the whole transcript: now the agent completes and every line is on disk, with
    U+FFFD in its place, so the agent can be resumed."""
    lone = json.loads('"x\\ud800y"')

    def policy(request: ModelRequest) -> Reply:
        if request.turn == 0:
            return testing.call("Echo", text=lone)
        return testing.say("done " + lone)

    # Echo runs in the Trio thread: a tool in a worker thread would let the autojump
    # clock pass the wait's deadline meanwhile.
    provider = ScriptedProvider(policies={"*": policy})
    async with World(tmp_path).open(provider, tools=[testing.EchoTool()]) as rt:
        agent = (await rt.spawn("general-purpose", "Go.")).agent_id
        status = (await rt.wait([agent], timeout=10)).statuses[agent]
        path = rt.transcript_path(agent)
    assert isinstance(status, Completed)
    assert path is not None
    transcript = load_transcript(path)
    messages = [record.message for record in transcript.messages]
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1].tool_uses[0].input["text"] == "x\ufffdy"
    assert messages[-1].text == "done x\ufffdy"
    assert transcript.results[-1].status == "completed"
