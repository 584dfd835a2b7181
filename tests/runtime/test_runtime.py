"""The embedded runtime: spawn, wait, input, interrupt, close, results, progress, config, logs."""

from __future__ import annotations

import gc
import json
import os
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio
import trio.testing

import subagents
from subagents import testing
from subagents.actors import (
    ActorContext,
    AgentLimitReached,
    AgentStartFailed,
    Bus,
    Completed,
    Errored,
    InvalidConfiguration,
    MailboxFull,
    Running,
    Shutdown,
    SupervisorConfig,
    kind_of,
    open_supervisor,
)
from subagents.agents import UnknownAgentError
from subagents.runtime import (
    AgentBusy,
    InvalidInputs,
    LoggingConfig,
    Message,
    MetaRecord,
    ModelRequest,
    Origin,
    Reply,
    ResultRecord,
    RunControl,
    RuntimeClosed,
    ScriptedProvider,
    ScriptedToolCall,
    TerminateReason,
    TranscriptsConfig,
    TranscriptWriter,
    TurnStarted,
    load_transcript,
    open_runtime,
    transcript_path,
)
from subagents.runtime._logging import RuntimeLog
from subagents.runtime._progress.follower import ProgressFollower
from subagents.tools import ApprovalDecision, ApprovalRequest
from tests.runtime.world import LEAD_TOOLS, World, drain, statuses_of, tool_results


async def test_an_agent_runs_and_every_message_reaches_its_transcript(tmp_path: Path) -> None:
    # The real clock: LS works in a worker thread, which a mock clock would jump over.
    world = World(tmp_path)
    provider = ScriptedProvider([testing.call("LS", path="."), testing.say("Found the README.")])
    async with world.open(provider) as rt:
        handle = await rt.spawn("Explore", "Look around", inputs={"thoroughness": "quick"})
        assert (handle.agent_type, handle.depth, handle.parent_id) == ("Explore", 0, None)
        assert handle.model.startswith("claude-haiku")
        waited = await rt.wait([handle.agent_id], timeout=10)
        assert waited.statuses[handle.agent_id] == Completed("Found the README.")
        result = rt.result(handle.agent_id)
        assert result is not None
        assert (result.terminate_reason, result.turns, result.tool_uses) == (
            TerminateReason.GOAL,
            2,
            1,
        )
        progress = rt.progress(handle.agent_id)
        assert (progress.turns, progress.tool_uses, progress.kind) == (2, 1, "completed")
        assert progress.usage.total_tokens == result.usage.total_tokens > 0
        assert "LS ." in [a.text for a in progress.activities]
        assert rt.conversation(handle.agent_id).last is not None
        path = rt.transcript_path(handle.agent_id)
    assert path is not None
    assert str(path) == handle.output_file
    assert path.parent == world.state / "sessions" / rt.session_id / "subagents"
    transcript = load_transcript(path)
    assert transcript.problems == ()
    meta = transcript.meta
    assert (meta.agent_type, meta.nickname, meta.depth, meta.parent_id) == (
        "Explore",
        handle.nickname,
        0,
        None,
    )
    assert (meta.model, meta.definition_source, meta.session_id) == (
        handle.model,
        "builtin",
        rt.session_id,
    )
    origins = [record.message.origin for record in transcript.messages]
    assert origins == [Origin.TASK, Origin.MODEL, Origin.TOOL_RESULTS, Origin.MODEL]
    assert "READ-ONLY" in transcript.messages[0].message.text  # the critical reminder
    assert [(r.run, r.status, r.text) for r in transcript.results] == [
        (1, "completed", "Found the README.")
    ]


async def test_spawn_refusals_say_what_to_do(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path, limits={"max_threads": 1})
    async with world.open(ScriptedProvider([testing.hang()])) as rt:
        with pytest.raises(UnknownAgentError) as unknown:
            await rt.spawn("Explorer", "Look")
        assert "Explore" in str(unknown.value)
        with pytest.raises(InvalidInputs, match="thoroughness"):
            await rt.spawn("Explore", "Look", inputs={"thoroughness": "extreme"})
        await rt.spawn("Explore", "Look")
        with pytest.raises(AgentLimitReached, match="max_threads=1"):
            await rt.spawn("Explore", "Look again")
        assert rt.statistics().supervisor.failed_spawns == 1


async def test_a_start_up_that_cannot_get_its_tools_fails_the_spawn_with_the_agents_id(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MCP tools are fetched before the kernel registers the agent (the rest of the
    start-up is synchronous, with no handshake); a failure there still fails the spawn as
    a start-up error: an id, an errored status, the slot back."""
    from subagents.runtime import _agent_record

    async def broken(services: object, definition: object) -> list[object]:
        raise RuntimeError("server gone")

    monkeypatch.setattr(_agent_record, "agent_mcp_tools", broken)
    world = World(tmp_path, limits={"max_threads": 1})
    # A type that names an MCP server (with none named and none configured, a spawn
    # has nothing to fetch and asks nothing)
    world.agent("tooled", mcpServers=["docs"])
    async with world.open(ScriptedProvider([testing.say("done")])) as rt:
        with pytest.raises(AgentStartFailed, match="server gone") as failed:
            await rt.spawn("tooled", "Look")
        agent_id = failed.value.agent_id
        assert rt.status(agent_id) == Errored("failed to start: RuntimeError: server gone")
        stats = rt.statistics().supervisor
        assert (stats.failed_spawns, stats.live, stats.tasks) == (1, 0, 0)
        # The one slot is free again. A type that names no server, with none configured,
        # does not ask for MCP tools at all: the broken fetch is not called.
        handle = await rt.spawn("Explore", "Look")
        assert await rt.wait([handle.agent_id], timeout=10)


async def test_follow_up_input_starts_a_new_run_with_the_context_kept(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    recorder = testing.RecordingPolicy(lambda request: testing.say(f"answer {request.turn}"))
    async with world.open(ScriptedProvider(recorder)) as rt:
        events = rt.subscribe(policy="block", capacity=1000)
        agent = (await rt.spawn("general-purpose", "First question")).agent_id
        await rt.wait([agent], timeout=10)
        assert await rt.send_input(agent, "Second question") == Running()
        waited = await rt.wait([agent], timeout=10)
        assert waited.statuses[agent] == Completed("answer 1")
        assert statuses_of(drain(events), agent) == [
            "pending_init",
            "running",
            "completed",
            "running",
            "completed",
        ]
        assert rt.statistics().supervisor.revived == 1
    _, shown = recorder.requests[-1]
    assert [m.text for m in shown] == ["First question", "answer 0", "Second question"]
    transcript = load_transcript(
        world.state / "sessions" / rt.session_id / "subagents" / f"agent-{agent}.jsonl"
    )
    assert [m.message.text for m in transcript.messages] == [
        "First question",
        "answer 0",
        "Second question",
        "answer 1",
    ]
    assert [(r.run, r.status) for r in transcript.results] == [(1, "completed"), (2, "completed")]


async def test_interrupt_aborts_the_run_and_goes_on_with_the_input(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    provider = ScriptedProvider(testing.directive_policy)
    async with world.open(provider) as rt:
        events = rt.subscribe(policy="block", capacity=1000)
        agent = (
            await rt.spawn("general-purpose", testing.directive(testing.ScriptedBehavior.HANG))
        ).agent_id
        await trio.sleep(5)
        status = await rt.send_input(
            agent, testing.directive(testing.ScriptedBehavior.FINISH), interrupt=True
        )
        assert status == Running()
        waited = await rt.wait([agent], timeout=10)
        assert waited.statuses[agent] == Completed("done (finish)")
        # The run went on in the same activation: never a final status in between.
        assert statuses_of(drain(events), agent) == ["pending_init", "running", "completed"]
        path = rt.transcript_path(agent)
    assert path is not None
    results = load_transcript(path).results
    assert [(r.status, r.terminate_reason) for r in results] == [
        ("shutdown", TerminateReason.ABORTED),
        ("completed", TerminateReason.GOAL),
    ]


async def test_input_to_a_full_mailbox_waits_as_long_as_its_timeout_says(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path, limits={"mailbox_size": 2})
    recorder = testing.RecordingPolicy(testing.directive_policy)
    async with world.open(ScriptedProvider(recorder)) as rt:
        hang = testing.directive(testing.ScriptedBehavior.HANG)
        agent = (await rt.spawn("general-purpose", hang)).agent_id
        await trio.sleep(1)  # in its endless model call: it reads no input
        await rt.send_input(agent, "one")
        await rt.send_input(agent, "two")
        started = trio.current_time()
        with pytest.raises(AgentBusy, match=r"busy: 2 messages .* within 3 s") as busy:
            await rt.send_input(agent, "three", timeout=3)
        assert trio.current_time() - started == pytest.approx(3)
        assert isinstance(busy.value, MailboxFull)
        assert busy.value.nickname == rt.handle(agent).nickname
        # No timeout: the embedder's own deadline bounds the wait (backpressure).
        with trio.move_on_after(100) as waiting:
            await rt.send_input(agent, "three")
        assert waiting.cancelled_caught
        # A full mailbox with interrupt=True: the run stops, its mailbox drains, and the
        # input gets through well within the timeout.
        started = trio.current_time()
        finish = testing.directive(testing.ScriptedBehavior.FINISH)
        status = await rt.send_input(agent, finish, interrupt=True, timeout=3)
        # The agent may have run on its input already by the time the send returns.
        assert status in (Running(), Completed("done (finish)"))
        assert trio.current_time() - started < 3
        waited = await rt.wait([agent], timeout=10)
        assert waited.statuses[agent] == Completed("done (finish)")
    _, shown = recorder.requests[-1]
    assert [m.text for m in shown][-3:] == ["one", "two", finish]


async def test_close_ends_the_agent_and_its_transcript(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.hang()])) as rt:
        agent = (await rt.spawn("Explore", "Look")).agent_id
        assert rt.statistics().transcripts_open == 1
        before = trio.current_time()
        with pytest.raises(InvalidConfiguration, match="grace"):  # the grace reaches the kernel
            await rt.close(agent, grace=-1)
        assert await rt.close(agent) == Running()
        assert trio.current_time() - before < 1.0  # the watcher aborts the stalled call
        assert rt.status(agent) == Shutdown()
        assert await rt.close(agent) == Shutdown()  # idempotent
        assert rt.statistics().transcripts_open == 0
        assert [row.id for row in rt.list(include_closed=True)] == [agent]
        assert rt.list() == []
        path = rt.transcript_path(agent)
    assert path is not None
    (result,) = load_transcript(path).results
    assert (result.status, result.terminate_reason) == ("shutdown", TerminateReason.ABORTED)


async def test_models_follow_env_spawn_definition_then_parent(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    provider = ScriptedProvider([testing.say("ok")])
    async with world.open(provider) as rt:
        explore = await rt.spawn("Explore", "Look")
        assert explore.model.startswith("claude-haiku")
        custom = await rt.spawn("Explore", "Look", model="opus")
        assert custom.model.startswith("claude-opus")
        plan = await rt.spawn("Plan", "Plan it")  # inherits: the configured default
        assert plan.model.startswith("claude-sonnet")
    async with open_runtime(
        world.config(),
        cwd=world.project,
        home=world.home,
        env={"SUBAGENTS_MODEL": "my-own-model"},
        provider=provider,
    ) as rt:
        overridden = await rt.spawn("Explore", "Look", model="opus")
        assert overridden.model == "my-own-model"


async def test_agents_of_one_type_share_their_limits_and_each_type_has_its_own(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path, limits={"max_turns": 40})
    world.agent("short", maxTurns=3)
    world.agent("plain")
    async with world.open(ScriptedProvider(lambda request: testing.say("ok"))) as rt:
        ids = [(await rt.spawn(kind, "Go")).agent_id for kind in ("short", "plain", "short")]
        limits = [rt.services.records[agent_id].spec.limits for agent_id in ids]
    assert limits[0] is limits[2]  # one value for the type, made once
    assert (limits[0].max_turns, limits[1].max_turns) == (3, 40)
    assert limits[0].max_time_seconds == limits[1].max_time_seconds == 1000.0


async def test_an_agent_keeps_no_container_for_children_inputs_or_requests_it_has_none_of(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # Each list a waiting agent keeps is one more object every full collection walks:
    # those most agents never use are made at their first use.
    world = World(tmp_path)
    world.agent("lead", tools="spawn_agent, wait")
    async with world.open(ScriptedProvider(lambda request: testing.say("ok"))) as rt:
        lead = (await rt.spawn("lead", "Lead")).agent_id
        child = (await rt.spawn("Explore", "Look", parent=lead)).agent_id
        await rt.wait([lead, child], timeout=5, mode="all")
        lead_record, child_record = rt.services.records[lead], rt.services.records[child]
        assert list(lead_record.children) == [child]
        assert not gc.is_tracked(lead_record.children)  # strings only
        assert not gc.is_tracked(child_record.children)
        assert child_record.actor is not None
        assert child_record.actor._requests is None
    control = RunControl()
    assert control._inbox is None
    assert not control.inbox_full
    assert control.take_inputs() == []
    assert control.add_input(Message.user("more", origin=Origin.INPUT))
    assert [message.text for message in control.take_inputs()] == ["more"]
    assert control._inbox is None


async def test_background_agents_keep_only_background_safe_tools(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("lead", tools="spawn_agent, wait, LS")
    recorder = testing.RecordingPolicy(lambda request: testing.say("ok"))
    async with world.open(ScriptedProvider(recorder)) as rt:
        await rt.spawn("lead", "In front")
        await rt.spawn("lead", "Behind", background=True)
        await rt.wait([row.id for row in rt.list()], timeout=5, mode="all")
        foreground, background = (
            {spec["name"] for spec in request.tools} for request, _ in recorder.requests
        )
    assert foreground == {"spawn_agent", "wait", "LS"}
    assert background == {"LS"}


async def test_configuration_comes_from_the_project_file(tmp_path: Path) -> None:
    world = World(tmp_path)
    (world.project / "subagents.toml").write_text(
        'state_dir = "../state"\n[limits]\nmax_threads = 1\n[transcripts]\nretention_days = 3\n'
    )
    async with open_runtime(
        cwd=world.project,
        home=world.home,
        env={},
        provider=ScriptedProvider([testing.hang()]),
        trust_project=True,  # state_dir and retention apply only in a trusted project
    ) as rt:
        assert rt.config.limits.max_threads == 1
        assert rt.config.state_dir.resolve() == world.state.resolve()
        await rt.spawn("Explore", "Look")
        with pytest.raises(AgentLimitReached):
            await rt.spawn("Explore", "Look")


async def test_without_a_provider_the_scripted_one_answers(tmp_path: Path) -> None:
    world = World(tmp_path)
    async with open_runtime(world.config(), cwd=world.project, home=world.home, env={}) as rt:
        agent = (await rt.spawn("general-purpose", "Say hello")).agent_id
        status = (await rt.wait([agent], timeout=10)).statuses[agent]
    assert isinstance(status, Completed)
    assert status.result is not None
    assert status.result.startswith("[scripted reply")


async def test_progress_is_current_the_moment_each_event_is_published(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The runtime's tracker is fed where each event is published (a bus listener of the
    kernel's events and each loop's direct feed, issue 17), not through a subscription of its
    own: it holds no buffer and never lags or holds a publisher, and a subscriber reading an
    event finds the tracker already past it."""
    world = World(tmp_path)
    provider = ScriptedProvider(
        lambda request: testing.say("done") if request.turn > 3 else testing.call("TodoWrite")
    )
    async with world.open(provider) as rt:
        stats = rt.statistics().bus
        assert (stats.subscribers, stats.listeners) == (0, 1)
        behind: list[str] = []
        read = 0

        activations = 0

        async def check(sub: subagents.actors.Subscription) -> None:
            nonlocal read, activations
            async for event in sub:
                read += 1
                activations += isinstance(event, subagents.runtime.ActivationStarted)
                assert not isinstance(event, subagents.actors.Lagged)
                try:
                    progress = rt.tracker.progress(event.agent_id)
                except subagents.runtime.ProgressNotFound:
                    behind.append(f"{type(event).__name__}: agent unknown")
                    continue
                if isinstance(event, TurnStarted) and progress.turns < event.turn:
                    behind.append(f"turn {event.turn} started, tracker at {progress.turns}")

        with rt.subscribe(policy="block", capacity=100) as sub:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(check, sub)
                ids = [(await rt.spawn("general-purpose", "Go")).agent_id for _ in range(20)]
                await rt.wait(ids, timeout=10, mode="all")
                await trio.testing.wait_all_tasks_blocked()
                sub.close()
        assert behind == []
        results = [rt.result(agent_id) for agent_id in ids]
        assert [rt.progress(agent_id).turns for agent_id in ids] == [
            r.turns if r is not None else None for r in results
        ]
        assert all(r is not None and r.turns > 2 for r in results)
        stats = rt.statistics()
        # every event but the activations (which say nothing of progress) reached the tracker
        assert stats.bus.published == read
        assert stats.progress.events == read - activations
        assert activations == len(ids)
        assert (stats.progress.lagged, stats.bus.subscribers, stats.bus.listeners) == (0, 0, 1)


async def test_log_lines_name_the_agent(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.say("done")])) as rt:
        handle = await rt.spawn("Explore", "Look")
        await rt.wait([handle.agent_id], timeout=5)
    path = world.state / "logs" / f"{rt.session_id}.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    events = [line["event"] for line in lines]
    assert events[0] == "runtime opened"
    assert events[-1] == "runtime closed"
    mine = [line for line in lines if line.get("agent_id") == handle.agent_id]
    assert {"agent spawned", "run finished"} <= {line["event"] for line in mine}
    for line in mine:
        assert (line["nickname"], line["depth"], line["session_id"]) == (
            handle.nickname,
            0,
            rt.session_id,
        )


@pytest.mark.parametrize("level", ["info", "debug"])
async def test_an_agent_logs_one_line_per_lifecycle_step_and_its_statuses_at_debug(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, level: str
) -> None:
    """At the default ``info`` an agent's lines are its start and each activation's end, said
    once (issue 17: a status line per event cost every turn, and the kernel's final status
    said again what "run finished" had just said); ``debug`` adds the kernel's statuses."""
    world = World(tmp_path, extra={"logging": LoggingConfig(file_level=level)})
    gate = trio.Event()

    async def answer(request: Any) -> Any:
        if "Wait" in str(request.messages[0]):
            await gate.wait()  # closed while its model call is under way
        return testing.say("done")

    async with world.open(ScriptedProvider(answer)) as rt:
        done = await rt.spawn("Explore", "Look")
        await rt.wait([done.agent_id], timeout=5)
        closed = await rt.spawn("Explore", "Wait")
        await trio.testing.wait_all_tasks_blocked()
        await rt.close(closed.agent_id)
    path = world.state / "logs" / f"{rt.session_id}.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for handle, end in ((done, "completed"), (closed, "shutdown")):
        mine = [line for line in lines if line.get("agent_id") == handle.agent_id]
        info = [(line["event"], line.get("status")) for line in mine if line["level"] == "info"]
        assert info == [("agent spawned", None), ("run finished", end)]
        statuses = [
            (line["level"], line["status"]) for line in mine if line["event"] == "status changed"
        ]
        said = [("debug", "pending_init"), ("debug", "running"), ("debug", end)]
        assert statuses == (said if level == "debug" else [])


async def test_an_end_no_run_line_gave_is_logged_at_info(tmp_path: Path) -> None:
    """The status log says at ``info`` an end that no "run finished" line said: an actor
    that is no agent of the runtime, or an agent whose line said another status."""
    path = tmp_path / "log.jsonl"
    told: list[tuple[str, str]] = []

    def said_completed(agent_id: str, status: str) -> bool:
        told.append((agent_id, status))
        return agent_id == "agent-1" and status == "completed"

    with RuntimeLog(path=path, env={}) as log:
        follower = ProgressFollower(log, told=said_completed)
        async with open_supervisor(SupervisorConfig(), bus=Bus()) as sup:
            follower.attach(sup.bus)

            async def behavior(ctx: ActorContext) -> str:
                return "ok"

            async def fails(ctx: ActorContext) -> str:
                raise ValueError("boom")

            first = await sup.spawn(behavior, agent_id="agent-1", auto_close=True)
            other = await sup.spawn(behavior, agent_id="actor-2", auto_close=True)
            broken = await sup.spawn(fails, agent_id="agent-3", auto_close=True)
            await sup.wait([first.id, other.id, broken.id], timeout=5)
        follower.detach()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    ends = [(line["agent_id"], line["status"]) for line in lines if line["level"] == "info"]
    assert sorted(ends) == [("actor-2", "completed"), ("agent-3", "errored")]
    assert sorted(told) == [
        ("actor-2", "completed"),
        ("agent-1", "completed"),
        ("agent-3", "errored"),
    ]


async def test_old_sessions_are_removed_when_the_runtime_closes(tmp_path: Path) -> None:
    world = World(tmp_path)
    session = "20200101-000000-abcdef"
    old = transcript_path(world.state, session, "x")
    meta = MetaRecord(agent_id="x", agent_type="Explore", nickname="Ada", session_id=session)
    TranscriptWriter(old, meta).close()
    (old.parents[1].parent / "20200101-000000-abcdee").mkdir()  # not ours: no transcript
    stale = time.time() - 90 * 86_400
    for path in (old, old.parent, old.parents[1]):
        os.utime(path, (stale, stale))
    async with world.open(ScriptedProvider([testing.say("ok")])) as rt:
        assert old.exists()  # not at start-up: an agent of it may be resumed in this block
    assert not old.parents[1].exists()
    assert (old.parents[1].parent / "20200101-000000-abcdee").is_dir()
    log = world.state / "logs" / f"{rt.session_id}.jsonl"
    closed = json.loads(log.read_text().splitlines()[-1])
    assert (closed["event"], closed["transcripts_removed"]) == ("runtime closed", 1)


async def test_leaving_the_block_shuts_everything_down(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    async with world.open(ScriptedProvider([testing.hang()])) as rt:
        agent = (await rt.spawn("Explore", "Look")).agent_id
    stats = rt.statistics()
    assert (stats.supervisor.tasks, stats.supervisor.live, stats.transcripts_open) == (0, 0, 0)
    assert rt.status(agent) == Shutdown()
    path = rt.transcript_path(agent)
    assert path is not None
    assert load_transcript(path).results[-1].status == "shutdown"
    with pytest.raises(RuntimeClosed):
        await rt.spawn("Explore", "Too late")
    with pytest.raises(RuntimeClosed):
        await rt.send_input(agent, "Too late")


async def test_approval_requests_reach_the_embedders_callback(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.agent("shell", tools="Bash")
    asked: list[ApprovalRequest] = []

    async def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.deny("not today")

    provider = ScriptedProvider(
        [testing.call("Bash", command="rm -rf build"), testing.say("gave up")]
    )
    async with world.open(provider, approval_callback=callback) as rt:
        agent = (await rt.spawn("shell", "Clean up")).agent_id
        await rt.wait([agent], timeout=10)
        results = [
            block
            for message in rt.conversation(agent)
            for block in message.content
            if isinstance(block, subagents.runtime.ToolResultBlock)
        ]
    (request,) = asked
    assert (request.agent_id, request.tool_name, request.route) == (agent, "Bash", (agent,))
    assert "rm -rf build" in request.summary
    assert results[0].is_error
    assert "denied (not today)" in results[0].content


async def test_the_bus_announces_each_approval_request_and_its_answer(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """DESIGN.md's "approval requested" event, and the answer after it: a UI sees a call
    wait for a person, between the call's start and its end."""

    @subagents.tool(needs_approval=True)
    async def deploy(env: str) -> str:
        """Deploy to ``env``."""
        return f"deployed to {env}"

    world = World(tmp_path)
    world.agent("shell", tools="deploy")
    published_when_asked: list[int] = []

    async def callback(request: ApprovalRequest) -> ApprovalDecision:
        published_when_asked.append(rt.statistics().bus.published)
        if "staging" in request.summary:
            return ApprovalDecision.approve()
        return ApprovalDecision.deny("not today")

    provider = ScriptedProvider(
        [
            testing.call("deploy", env="staging"),
            testing.call("deploy", env="production"),
            testing.say("done"),
        ]
    )
    kinds = (
        subagents.runtime.ToolCallStarted,
        subagents.runtime.ApprovalRequested,
        subagents.runtime.ApprovalDecided,
        subagents.runtime.ToolCallEnded,
    )
    async with world.open(provider, approval_callback=callback, tools=[deploy]) as rt:
        with rt.subscribe(types=list(kinds), policy="block", capacity=100) as sub:
            agent = (await rt.spawn("shell", "Clean up")).agent_id
            await rt.wait([agent], timeout=10)
            events = drain(sub)
    trail = [
        (type(e).__name__, e.turn, getattr(e, "approved", None))  # type: ignore[attr-defined]
        for e in events
    ]
    assert trail == [
        ("ToolCallStarted", 1, None),
        ("ApprovalRequested", 1, None),
        ("ApprovalDecided", 1, True),
        ("ToolCallEnded", 1, None),
        ("ToolCallStarted", 2, None),
        ("ApprovalRequested", 2, None),
        ("ApprovalDecided", 2, False),
        ("ToolCallEnded", 2, None),
    ]
    # One call's events share its id.
    assert len({e.tool_use_id for e in events[:4]}) == 1  # type: ignore[attr-defined]
    assert events[0].tool_use_id is not None  # type: ignore[attr-defined]
    requested = [e for e in events if isinstance(e, subagents.runtime.ApprovalRequested)]
    assert all(e.agent_id == agent and e.tool_name == "deploy" for e in requested)
    assert "production" in requested[1].summary
    denied = events[6]
    assert isinstance(denied, subagents.runtime.ApprovalDecided)
    assert (denied.reason, denied.timed_out, denied.turn) == ("not today", False, 2)
    # Each request was on the bus before the callback was asked, its answer after.
    decided = [e for e in events if isinstance(e, subagents.runtime.ApprovalDecided)]
    for asked_at, request, answer in zip(published_when_asked, requested, decided, strict=True):
        assert request.seq <= asked_at < answer.seq


async def test_errors_and_results_reach_the_status_and_the_transcript(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    provider = ScriptedProvider([testing.fail("invalid_request_error", "prompt is too long")])
    async with world.open(provider) as rt:
        agent = (await rt.spawn("Explore", "Look")).agent_id
        status = (await rt.wait([agent], timeout=10)).statuses[agent]
        path = rt.transcript_path(agent)
    assert status == Errored("BadRequest: prompt is too long")
    assert path is not None
    record: ResultRecord = load_transcript(path).results[-1]
    assert (record.status, record.terminate_reason, record.error) == (
        "errored",
        TerminateReason.ERROR,
        "BadRequest: prompt is too long",
    )


async def test_a_transcript_that_cannot_be_opened_follows_the_disk_error_policy(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    world = World(tmp_path)
    world.state.mkdir()
    (world.state / "sessions").write_text("not a folder")
    provider = ScriptedProvider([testing.say("Worked anyway.")])
    async with world.open(provider) as rt:  # on_disk_error="memory": the run goes on
        agent = (await rt.spawn("Explore", "Look")).agent_id
        status = (await rt.wait([agent], timeout=10)).statuses[agent]
        assert status == Completed("Worked anyway.")
    log = world.state / "logs" / f"{rt.session_id}.jsonl"
    problems = [
        line
        for line in map(json.loads, log.read_text().splitlines())
        if line["event"] in ("transcript problem", "transcript incomplete")
    ]
    assert problems
    assert all(line["agent_id"] == agent for line in problems)
    stop = TranscriptsConfig(on_disk_error="stop")
    async with open_runtime(
        world.config(transcripts=stop),
        cwd=world.project,
        home=world.home,
        env={},
        provider=provider,
    ) as rt:
        with pytest.raises(AgentStartFailed, match="Could not write the transcript"):
            await rt.spawn("Explore", "Look")
        assert rt.list() == []
        assert rt.statistics().agents == 0


async def test_a_codex_agent_takes_its_nicknames_from_its_candidates(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Codex's ``nickname_candidates``: the display names of the agents of that type.

    (https://developers.openai.com/codex/subagents and Codex's configuration
    reference: an optional pool of display nicknames for agents spawned with that
    role.) Each is used while no open agent holds it; then the kernel's ordinals.
    """
    world = World(tmp_path)
    folder = world.project / ".codex" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.toml").write_text(
        'name = "reviewer"\ndescription = "Reviews"\n'
        'nickname_candidates = ["Atlas", "Delta"]\ndeveloper_instructions = "Review."\n'
    )
    async with world.open(ScriptedProvider([testing.hang()])) as rt:
        names = [(await rt.spawn("reviewer", "Look")).nickname for _ in range(3)]
        other = await rt.spawn("Explore", "Look")
        assert names == ["Atlas", "Delta", "Atlas the 2nd"]
        assert other.nickname not in names


async def test_a_result_collected_with_wait_is_not_sent_again_as_a_notice(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Codex suppresses the completion notice of an agent its parent's ``wait`` collected
    (openai/codex ``codex-rs/core/src/agent/collab_wait_tracking.rs``,
    ``is_collab_wait_suppressed``); a child the parent closed itself sends none either."""
    world = World(tmp_path)
    world.agent("lead", "You lead.", tools=LEAD_TOOLS)

    def lead(request: ModelRequest) -> Reply:
        results = [json.loads(b.content) for b in tool_results(request.messages)]
        if request.turn == 0:
            return Reply(
                tool_calls=tuple(
                    ScriptedToolCall("spawn_agent", {"agent_type": "Explore", "message": task})
                    for task in ("Answer", "Hang")
                )
            )
        answers, hangs = (r["agent_id"] for r in results[:2])
        if request.turn == 1:
            return testing.call("wait", ids=[answers], timeout_ms=60_000)
        if request.turn == 2:
            return testing.call("close_agent", id=hangs)
        return testing.say("Done.")

    def explore(request: ModelRequest) -> Reply:
        if any("Hang" in m.text for m in request.messages):
            return testing.hang()
        return attrs.evolve(testing.say("The answer."), latency=2.0)

    provider = ScriptedProvider(policies={"lead": lead, "Explore": explore})
    async with world.open(provider) as rt:
        handle = await rt.spawn("lead", "Go.")
        waited = await rt.wait([handle.agent_id], timeout=60)
        assert waited.statuses[handle.agent_id] == Completed("Done.")
        messages = list(rt.conversation(handle.agent_id))
    assert [m.text for m in messages if m.origin is Origin.NOTICE] == []


def _peek_tool(rt_box: list[subagents.runtime.Runtime], seen: list[tuple[Any, ...]]) -> Any:
    """A tool that notes how far the runtime's tracker has its caller (the only open agent)."""

    @subagents.tool(name="Peek")
    async def peek(note: str) -> str:
        """Note how far the caller's progress is."""
        rt = rt_box[0]
        (agent_id,) = (row.agent_id for row in rt.tree() if row.ended_at is None)
        now = rt.progress(agent_id)
        seen.append((now.turns, now.tool_uses, now.usage.input_tokens > 0, now.status_message))
        return note

    return peek


def _peeking(turns: int) -> ScriptedProvider:
    """Every agent peeks on its first ``turns`` turns, then says it is done."""
    return ScriptedProvider(
        lambda request: (
            testing.say("done")
            if request.turn >= turns
            else testing.call("Peek", note=f"turn {request.turn}")
        )
    )


def _count_built(monkeypatch: pytest.MonkeyPatch) -> list[type]:
    """The kinds of the events the loop's publishers build from now on, in order."""
    built: list[type] = []
    make = subagents.runtime.Publisher.make

    def counting_make(self: Any, kind: type, **fields: Any) -> Any:
        built.append(kind)
        return make(self, kind, **fields)

    monkeypatch.setattr(subagents.runtime.Publisher, "make", counting_make)
    return built


async def test_a_turn_nobody_subscribes_to_builds_no_event_yet_progress_is_current(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17, third round: each agent's loop tells the runtime's tracker its turns directly
    (a ``ProgressFeed``), so with no subscriber a turn builds and publishes no event (the runtime's
    follower listens to the kernel's spawns and status changes only, and is no subscriber),
    while ``rt.progress`` has every turn, tool use and token, current the moment each happens:
    a tool reading it finds its own turn and call already counted."""
    built = _count_built(monkeypatch)
    published: list[type] = []
    publish_nowait = subagents.actors.Bus.publish_nowait

    def counting_publish(self: Any, event: Any) -> None:
        published.append(type(event))
        publish_nowait(self, event)

    monkeypatch.setattr(subagents.actors.Bus, "publish_nowait", counting_publish)
    rt_box: list[subagents.runtime.Runtime] = []
    seen: list[tuple[Any, ...]] = []
    world = World(tmp_path)
    async with world.open(_peeking(3), tools=[_peek_tool(rt_box, seen)]) as rt:
        rt_box.append(rt)
        assert not rt.bus.has_subscribers
        lead = await rt.spawn("general-purpose", "Go")
        await rt.wait([lead.agent_id], timeout=10)
        child = await rt.spawn("general-purpose", "Go too", parent=lead.agent_id)
        await rt.wait([child.agent_id], timeout=10)
        results = [rt.result(lead.agent_id), rt.result(child.agent_id)]
        rows = [rt.progress(lead.agent_id), rt.progress(child.agent_id)]
    assert built == []
    assert set(published) == {subagents.actors.AgentSpawned, subagents.actors.StatusChanged}
    # each peek saw its own turn and call counted, and the model's usage of that turn
    assert seen == [(n, n, True, "calling Peek") for n in (1, 2, 3)] * 2
    for row, result in zip(rows, results, strict=True):
        assert result is not None
        assert (row.turns, row.tool_uses, row.usage) == (4, 3, result.usage)
        assert result.usage.input_tokens > 0
        texts = [a.text for a in row.activities]
        done = texts.index("turn 4 done")
        assert texts[done : done + 3] == ["turn 4 done", "finished: goal", "completed"]
    lead_row, child_row = rows
    assert lead_row.subtree.turns == lead_row.turns + child_row.turns == 8
    assert lead_row.subtree.tool_uses == 6
    assert lead_row.subtree.usage == lead_row.usage + child_row.usage
    assert (lead_row.subtree.agents, lead_row.subtree.running) == (2, 0)


async def test_a_subscriber_of_some_kinds_makes_no_turn_build_the_others(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19: a Ray worker subscribes to spawns and status changes only (to forward them),
    and ``jobs run`` to job events only. The loop builds no event of any other kind for
    them (each turn's would cost every row's agent), and the subscriber gets all of its own:
    ``TurnCompleted`` asked for alone is built, and nothing else of the loop's."""
    built = _count_built(monkeypatch)
    rt_box: list[subagents.runtime.Runtime] = []
    seen: list[tuple[Any, ...]] = []
    world = World(tmp_path)
    async with world.open(_peeking(3), tools=[_peek_tool(rt_box, seen)]) as rt:
        rt_box.append(rt)
        with rt.subscribe(
            types=[subagents.actors.AgentSpawned, subagents.actors.StatusChanged],
            policy="block",
            capacity=1000,
        ) as forwarded:
            assert not rt.bus.has_subscribers
            lead = await rt.spawn("general-purpose", "Go")
            await rt.wait([lead.agent_id], timeout=10)
            kinds = {type(e).__name__ for e in drain(forwarded)}
        assert built == []
        assert kinds == {"AgentSpawned", "StatusChanged"}
        with rt.subscribe(
            types=[subagents.runtime.TurnCompleted], policy="block", capacity=1000
        ) as turns:
            other = await rt.spawn("general-purpose", "Go")
            await rt.wait([other.agent_id], timeout=10)
            completed = drain(turns)
    assert set(built) == {subagents.runtime.TurnCompleted}
    assert [e.turn for e in completed] == [1, 2, 3, 4]  # type: ignore[attr-defined]


async def test_a_subscriber_sees_every_event_of_a_turn_and_can_track_them_itself(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Issue 17, third round: with a subscriber the loop's events are built and published as
    before the direct feed, in the same order, and a tracker folded from them (the CLI's live
    view and ``--json`` keep their own) agrees with the runtime's on every row."""
    rt_box: list[subagents.runtime.Runtime] = []
    seen: list[tuple[Any, ...]] = []
    world = World(tmp_path)
    own = subagents.runtime.ProgressTracker()
    async with world.open(_peeking(2), tools=[_peek_tool(rt_box, seen)]) as rt:
        rt_box.append(rt)
        with rt.subscribe(policy="block", capacity=1000) as sub:
            assert rt.bus.has_subscribers
            lead = await rt.spawn("general-purpose", "Go")
            await rt.wait([lead.agent_id], timeout=10)
            child = await rt.spawn("general-purpose", "Go too", parent=lead.agent_id)
            await rt.wait([child.agent_id], timeout=10)
            events = drain(sub)
        for event in events:
            own.handle(event)
        theirs = rt.tree()
    turn = [
        "TurnStarted",
        "UsageReported",
        "ToolCallStarted",
        "ToolCallEnded",
        "TurnCompleted",
    ]
    for handle in (lead, child):
        kinds = [
            type(e).__name__ if type(e).__name__ != "StatusChanged" else kind_of(e.status)  # type: ignore[attr-defined]
            for e in events
            if e.agent_id == handle.agent_id
        ]
        assert kinds == [
            "AgentSpawned",
            "pending_init",
            "running",
            "ActivationStarted",
            *turn,
            *turn,
            "TurnStarted",
            "TextChunk",
            "UsageReported",
            "TurnCompleted",
            "RunFinished",
            "completed",
        ]
    mine = own.tree(now=theirs[0].started_at)

    def row(p: subagents.runtime.AgentProgress) -> tuple[Any, ...]:
        return (
            p.agent_id,
            p.parent_id,
            p.status,
            p.status_message,
            p.turns,
            p.tool_uses,
            p.usage,
            p.subtree,
            p.children,
            [a.text for a in p.activities],
        )

    assert [row(p) for p in mine] == [row(p) for p in theirs]
    assert theirs[0].subtree.turns == 6
