"""Reliability: model faults, end to end through a runtime, each next to healthy siblings.

Every test runs several agents side by side in one runtime (``open_runtime``);
one of them meets the fault. The faulty agent ends in the status the design
promises, with a result and a message that say what happened; its siblings
complete with their full results and transcripts, as if nothing had happened.

Scripted provider (autojump clock):

- a provider exception errors the agent with the provider's own typed error;
- a model call that hangs past ``max_time_seconds`` gets the grace turn and the
  run ends within the deadline plus the grace period (``goal`` if the grace
  turn completes, ``timeout`` otherwise);
- malformed tool calls (unknown tool, arguments that are not JSON or not an
  object, arguments of the wrong types) come back to the model as tool errors
  it can recover from, and a model that never stops making them ends at
  ``max_turns`` (a property test), never with a crash;
- an empty response (no content blocks) ends the run as a final message would:
  ``goal`` with the last text the model gave, and nothing empty is kept in the
  conversation, so a follow-up input still works.

The real ``anthropic`` SDK against the loopback Messages API server:

- a 429 storm is retried by the SDK, honouring ``retry-after``, and the agent
  completes; its sibling is not held up by it;
- a 529 storm that never ends errors the agent with ``Overloaded`` after
  exactly ``1 + max_retries`` requests;
- a connection dropped mid-stream errors the agent with a typed
  ``ProviderConnectionError`` (the SDK does not retry a response that has
  started) and none of the partial answer is kept.

The provider-level mapping of each error is proven in
``tests/runtime/providers/test_anthropic.py``; the loop's grace and malformed-call
handling in ``tests/runtime/test_loop.py``. Here they are proven at the
runtime level, with isolation.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subagents import testing
from subagents.actors import Completed, Errored
from subagents.runtime import (
    AgentHandle,
    AnthropicProvider,
    ModelRequest,
    Origin,
    Reply,
    Runtime,
    TerminateReason,
    load_transcript,
)
from tests.reliability.siblings import (
    HEALTHY_PROMPTS,
    check_healthy,
    make_world,
    scripted,
    spawn_siblings,
)
from tests.runtime.helpers import SlowTool
from tests.runtime.world import World, tool_results

# -- the scripted provider -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("error_type", "kind"),
    [
        ("overloaded_error", "Overloaded"),
        ("rate_limit_error", "RateLimited"),
        ("api_error", "ServerError"),
        ("authentication_error", "AuthenticationFailed"),
    ],
)
async def test_a_model_exception_errors_only_that_agent_with_the_typed_error(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, error_type: str, kind: str
) -> None:
    world = make_world(tmp_path)
    fault = testing.fail(error_type, "the model broke; try again later", text="Starting")
    provider = scripted([testing.call("Note", text="first"), fault])
    async with world.open(provider, tools=[SlowTool("Note")]) as rt:
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Do the risky thing.")).agent_id
        waited = await rt.wait([faulty, *siblings], timeout=60, mode="all")
        assert not waited.timed_out
        assert rt.status(faulty) == Errored(f"{kind}: the model broke; try again later")
        result = rt.result(faulty)
        assert result is not None
        assert result.terminate_reason is TerminateReason.ERROR
        assert result.error == f"{kind}: the model broke; try again later"
        assert (result.turns, result.tool_uses) == (2, 1)
        # The failed call left nothing half-made in the conversation.
        assert [m.origin for m in rt.conversation(faulty)] == [
            Origin.TASK,
            Origin.MODEL,
            Origin.TOOL_RESULTS,
        ]
        path = rt.transcript_path(faulty)
        check_healthy(rt, siblings)
    assert path is not None
    (record,) = load_transcript(path).results
    assert (record.status, record.terminate_reason, record.error) == (
        "errored",
        TerminateReason.ERROR,
        f"{kind}: the model broke; try again later",
    )


def hang_then(grace_reply: Reply) -> Callable[[ModelRequest], Reply]:
    """The faulty agent: its model hangs on every turn but the grace turn."""

    def policy(request: ModelRequest) -> Reply:
        return grace_reply if request.grace else testing.hang("Thinking...")

    return policy


async def test_a_hung_model_call_times_out_and_the_grace_turn_completes_within_the_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = make_world(tmp_path, runConfig={"maxTimeSeconds": 30, "gracePeriodSeconds": 5})
    provider = scripted(hang_then(testing.finish(result="Best effort: 3 apples.")))
    async with world.open(provider, tools=[SlowTool("Note")]) as rt:
        start = trio.current_time()
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Count everything.")).agent_id
        await rt.wait([faulty, *siblings], timeout=600, mode="all")
        elapsed = trio.current_time() - start
        assert 30 <= elapsed < 31  # the deadline, then a grace turn that answered at once
        assert rt.status(faulty) == Completed("Best effort: 3 apples.")
        result = rt.result(faulty)
        assert result is not None
        assert (result.terminate_reason, result.grace, result.turns) == (
            TerminateReason.GOAL,
            "timeout",
            2,
        )
        assert "after a timeout limit" in result.describe()
        grace = [m for m in rt.conversation(faulty) if m.origin is Origin.GRACE]
        assert len(grace) == 1
        assert "exceeded the time limit" in grace[0].text
        check_healthy(rt, siblings)


async def test_a_model_that_hangs_through_the_grace_turn_ends_with_timeout(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = make_world(tmp_path, runConfig={"maxTimeSeconds": 30, "gracePeriodSeconds": 5})
    provider = scripted([testing.hang("Thinking...")])  # every turn, the grace one too
    async with world.open(provider, tools=[SlowTool("Note")]) as rt:
        start = trio.current_time()
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Count everything.")).agent_id
        await rt.wait([faulty, *siblings], timeout=600, mode="all")
        elapsed = trio.current_time() - start
        assert 35 <= elapsed < 36  # the deadline plus the whole grace period, no more
        status = rt.status(faulty)
        assert isinstance(status, Errored)
        assert status.message == (
            "AgentRunFailed: timeout: the agent ran out of time before completing its task "
            "after 2 turns and 0 tool uses"
        )
        result = rt.result(faulty)
        assert result is not None
        assert (result.terminate_reason, result.grace, result.succeeded) == (
            TerminateReason.TIMEOUT,
            "timeout",
            False,
        )
        path = rt.transcript_path(faulty)
        check_healthy(rt, siblings)
    assert path is not None
    (record,) = load_transcript(path).results
    assert (record.status, record.terminate_reason) == ("errored", TerminateReason.TIMEOUT)


MALFORMED_TURNS = (
    testing.call("Shred", text="everything"),  # a tool the agent does not have
    testing.malformed("Note", '{"text": "unterminated'),  # arguments that are not JSON
    testing.malformed("Note", '["a", "list"]'),  # JSON, but not an object
    testing.call("Note", text=42, seconds="soon"),  # the wrong types
    testing.call("Note", text="at last"),  # a good call
    testing.say("Recovered after four mistakes."),
)


async def test_malformed_tool_calls_come_back_as_tool_errors_and_the_agent_recovers(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = make_world(tmp_path)
    recorder = testing.RecordingPolicy(lambda request: MALFORMED_TURNS[request.turn])
    note = SlowTool("Note")
    async with world.open(scripted(recorder), tools=[note]) as rt:
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Take a note.")).agent_id
        await rt.wait([faulty, *siblings], timeout=60, mode="all")
        assert rt.status(faulty) == Completed("Recovered after four mistakes.")
        result = rt.result(faulty)
        assert result is not None
        assert (result.terminate_reason, result.turns) == (TerminateReason.GOAL, 6)
        results = tool_results(rt.conversation(faulty).messages)
        check_healthy(rt, siblings)
    unknown, not_json, not_object, wrong_types, good = results
    assert unknown.is_error
    assert unknown.content.startswith("Tool 'Shred' is not available to this agent.")
    assert not_json.is_error
    assert "were not a valid JSON object (invalid JSON" in not_json.content
    assert "Send it again with valid JSON." in not_json.content
    assert not_object.is_error
    assert "(expected a JSON object, got list)" in not_object.content
    assert wrong_types.is_error
    assert wrong_types.content == (
        "Invalid arguments for tool 'Note': Expected `str`, got `int` - at `$.text`. "
        "Expected: text (string), seconds (number)."
    )
    assert (good.content, good.is_error) == ("Note: at last", False)
    # The tool ran only for the good call (and for the two siblings).
    assert sum(1 for event, _, _ in note.log if event == "start") == 3
    # Each error was what the model read on its next turn.
    faulty_requests = [
        messages for request, messages in recorder.requests if request.agent_type == "faulty"
    ]
    for turn, seen in enumerate(faulty_requests[1:]):
        assert tool_results(seen)[-1] == results[turn]


_examples = itertools.count()
MALFORMED_KINDS = st.sampled_from(
    [
        testing.call("Shred"),
        testing.malformed("Note", '{"text": '),
        testing.malformed("Note", "null"),
        testing.malformed("Note", ""),
        testing.call("Note", text=["not", "a", "string"]),
        testing.call("Note", text="ok", colour="blue"),  # an unknown field
    ]
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(mistakes=st.lists(MALFORMED_KINDS, min_size=1, max_size=4), max_turns=st.integers(1, 5))
def test_a_model_that_keeps_making_malformed_calls_ends_at_max_turns(
    mistakes: list[Reply], max_turns: int
) -> None:
    def policy(request: ModelRequest) -> Reply:
        return mistakes[request.turn % len(mistakes)]

    async def main(root: Path) -> None:
        world = make_world(root, maxTurns=max_turns)
        async with world.open(scripted(policy), tools=[SlowTool("Note")]) as rt:
            siblings = await spawn_siblings(rt)
            faulty = (await rt.spawn("faulty", "Take a note.")).agent_id
            waited = await rt.wait([faulty, *siblings], timeout=600, mode="all")
            assert not waited.timed_out
            result = rt.result(faulty)
            assert result is not None
            assert (result.terminate_reason, result.grace) == (
                TerminateReason.MAX_TURNS,
                "max_turns",
            )
            assert result.turns == max_turns + 1  # every turn, then the grace turn
            assert rt.status(faulty) == Errored(f"AgentRunFailed: {result.describe()}")
            assert result.describe().startswith(
                f"max_turns: the agent used all its turns before completing its task "
                f"after {max_turns + 1} turns"
            )
            answers = tool_results(rt.conversation(faulty).messages)
            assert len(answers) == max_turns + 1
            assert all(answer.is_error for answer in answers)
            check_healthy(rt, siblings)

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / f"example-{next(_examples)}"
        trio.run(main, root, clock=trio.testing.MockClock(autojump_threshold=0))


async def test_an_empty_response_ends_the_run_with_the_last_text_and_keeps_nothing_empty(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = make_world(tmp_path)
    replies = iter(
        [
            testing.call("Note", "Two apples so far.", text="apples"),
            Reply(),  # no content blocks at all
            testing.say("Two apples, checked."),
        ]
    )
    async with world.open(scripted(lambda _: next(replies)), tools=[SlowTool("Note")]) as rt:
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Count the apples.")).agent_id
        await rt.wait([faulty, *siblings], timeout=60, mode="all")
        assert rt.status(faulty) == Completed("Two apples so far.")
        result = rt.result(faulty)
        assert result is not None
        assert (result.terminate_reason, result.text, result.turns) == (
            TerminateReason.GOAL,
            "Two apples so far.",
            2,
        )
        assert all(m.content for m in rt.conversation(faulty))
        # A follow-up input goes on from a conversation the API would accept.
        await rt.send_input(faulty, "Check again.")
        await rt.wait([faulty], timeout=60)
        assert rt.status(faulty) == Completed("Two apples, checked.")
        path = rt.transcript_path(faulty)
        conversation = list(rt.conversation(faulty))
        check_healthy(rt, siblings)
    assert [m.role for m in conversation] == ["user", "assistant", "user", "user", "assistant"]
    assert all(m.content for m in conversation)
    assert path is not None
    transcript = load_transcript(path)
    assert list(transcript.conversation()) == conversation
    assert [r.status for r in transcript.results] == ["completed", "completed"]


async def test_an_empty_response_from_an_agent_that_must_call_complete_task_errors_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = make_world(tmp_path, tools="Note, complete_task")
    async with world.open(scripted([Reply()]), tools=[SlowTool("Note")]) as rt:
        siblings = await spawn_siblings(rt)
        faulty = (await rt.spawn("faulty", "Count the apples.")).agent_id
        await rt.wait([faulty, *siblings], timeout=60, mode="all")
        assert rt.status(faulty) == Errored(
            "AgentRunFailed: no_complete_task_call: the agent ended its turn without calling "
            "complete_task after 1 turns and 0 tool uses"
        )
        check_healthy(rt, siblings)


# -- the real SDK against the loopback server -------------------------------------------------

# These use real loopback sockets under a jumping virtual clock: the SDK waits between
# retries with ``anyio.sleep`` (Trio's clock), so a 20 s ``retry-after`` costs no real
# time and can be measured exactly. The clock jumps only after LOOPBACK_SETTLE_SECONDS
# of real idleness, not at once: under load the kernel can deliver a loopback packet
# after Trio's next poll, and a clock that jumped then ran every 600 s deadline out
# (a 429-storm run saw its siblings' wait time out, once in a loaded suite).
LOOPBACK_SETTLE_SECONDS = 0.05


@pytest.fixture
def loopback_clock() -> trio.testing.MockClock:
    """A virtual clock that jumps to the next deadline once the run has been idle for
    :data:`LOOPBACK_SETTLE_SECONDS` of real time."""
    return trio.testing.MockClock(autojump_threshold=LOOPBACK_SETTLE_SECONDS)


FAULTY_MARK = "[faulty]"


def answer(text: str) -> testing.SSEReply:
    return testing.SSEReply(testing.message_events([testing.text(text)]))


def is_faulty(request: testing.RecordedRequest) -> bool:
    return FAULTY_MARK in request.body.decode()


def by_agent(
    faulty: Callable[[int], testing.LoopbackReply],
) -> Callable[[testing.RecordedRequest], testing.LoopbackReply]:
    """A loopback script: the faulty agent's ``n``-th request gets ``faulty(n)``;
    the others are answered at once with their task."""
    seen = itertools.count()

    def reply(request: testing.RecordedRequest) -> testing.LoopbackReply:
        if is_faulty(request):
            return faulty(next(seen))
        task = request.json()["messages"][0]["content"][0]["text"]
        return answer(f"Done: {task}")

    return reply


def anthropic(server: testing.LoopbackAnthropic, **options: Any) -> AnthropicProvider:
    options.setdefault("timeout", 600.0)
    return AnthropicProvider(api_key="sk-dummy", base_url=server.base_url, env={}, **options)


def check_wire_siblings(rt: Runtime, agents: Sequence[str]) -> None:
    for agent, prompt in zip(agents, HEALTHY_PROMPTS, strict=True):
        assert rt.status(agent) == Completed(f"Done: {prompt}")
        messages = list(rt.conversation(agent))
        assert [m.text for m in messages] == [prompt, f"Done: {prompt}"]
        path = rt.transcript_path(agent)
        assert path is not None
        transcript = load_transcript(path)
        assert list(transcript.conversation()) == messages
        assert [r.status for r in transcript.results] == ["completed"]


async def test_a_429_storm_is_retried_with_retry_after_and_the_agent_completes(
    tmp_path: Path, loopback_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)

    def storm(n: int) -> testing.LoopbackReply:
        if n < 3:
            return testing.ErrorReply(429, "rate_limit_error", "Slow down", retry_after=20)
        return answer("Counted after the storm.")

    async with (
        testing.open_loopback_anthropic(by_agent(storm), idle_timeout=1000) as server,
        anthropic(server, max_retries=3) as provider,
        world.open(provider) as rt,
    ):
        start = trio.current_time()
        faulty = (await spawn_wire(rt, f"{FAULTY_MARK} Count it all.")).agent_id
        siblings = await spawn_wire_siblings(rt)
        waited = await rt.wait(siblings, timeout=600, mode="all")
        assert not waited.timed_out
        siblings_done = trio.current_time() - start
        await rt.wait([faulty], timeout=600)
        elapsed = trio.current_time() - start
        assert rt.status(faulty) == Completed("Counted after the storm.")
        check_wire_siblings(rt, siblings)
    assert siblings_done < 20  # not held up behind the storm
    assert 60 <= elapsed < 61  # three waits of the server's retry-after, honoured
    mine = [r for r in server.requests if is_faulty(r)]
    assert [r.headers["x-stainless-retry-count"] for r in mine] == ["0", "1", "2", "3"]


async def spawn_wire_siblings(rt: Runtime) -> list[str]:
    return [(await spawn_wire(rt, prompt)).agent_id for prompt in HEALTHY_PROMPTS]


async def spawn_wire(rt: Runtime, prompt: str) -> AgentHandle:
    return await rt.spawn("general-purpose", prompt, model=testing.DEFAULT_TEST_MODEL)


async def test_a_529_storm_that_never_ends_errors_the_agent_after_the_sdk_retries(
    tmp_path: Path, loopback_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)

    def storm(n: int) -> testing.LoopbackReply:
        return testing.ErrorReply(529, "overloaded_error", "Overloaded", retry_after=5)

    async with (
        testing.open_loopback_anthropic(by_agent(storm), idle_timeout=1000) as server,
        anthropic(server, max_retries=2) as provider,
        world.open(provider) as rt,
    ):
        start = trio.current_time()
        faulty = (await spawn_wire(rt, f"{FAULTY_MARK} Count it all.")).agent_id
        siblings = await spawn_wire_siblings(rt)
        waited = await rt.wait([faulty, *siblings], timeout=600, mode="all")
        assert not waited.timed_out
        elapsed = trio.current_time() - start
        status = rt.status(faulty)
        result = rt.result(faulty)
        check_wire_siblings(rt, siblings)
    mine = [r for r in server.requests if is_faulty(r)]
    assert len(mine) == 1 + 2  # the first try and the SDK's two retries
    assert 10 <= elapsed < 11  # two waits of the server's retry-after, then it gave up
    assert isinstance(status, Errored)
    last_id = f"req_loopback_{server.requests.index(mine[-1]) + 1:04d}"
    assert status.message == (
        "Overloaded: Anthropic API error 529 (overloaded_error): Overloaded; still failing "
        f"after the SDK's retries, try again later [request-id {last_id}]"
    )
    assert result is not None
    assert result.terminate_reason is TerminateReason.ERROR
    assert result.error == status.message


async def test_a_mid_stream_disconnect_errors_the_agent_with_a_connection_error(
    tmp_path: Path, loopback_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    head = testing.message_events([testing.text("Half an answ")])[:5]

    def cut(n: int) -> testing.LoopbackReply:
        return testing.SSEReply([*head, testing.Disconnect()])

    async with (
        testing.open_loopback_anthropic(by_agent(cut), idle_timeout=1000) as server,
        anthropic(server) as provider,
        world.open(provider) as rt,
    ):
        faulty = (await spawn_wire(rt, f"{FAULTY_MARK} Count it all.")).agent_id
        siblings = await spawn_wire_siblings(rt)
        waited = await rt.wait([faulty, *siblings], timeout=600, mode="all")
        assert not waited.timed_out
        status = rt.status(faulty)
        conversation = [m.text for m in rt.conversation(faulty)]
        check_wire_siblings(rt, siblings)
    assert len([r for r in server.requests if is_faulty(r)]) == 1  # a started answer is not retried
    assert isinstance(status, Errored)
    assert status.message.startswith(
        "ProviderConnectionError: The connection to the Anthropic API dropped in the middle "
        "of a response"
    )
    assert conversation == [f"{FAULTY_MARK} Count it all."]  # nothing of the half answer kept
