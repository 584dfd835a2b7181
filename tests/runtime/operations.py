"""Random operation sequences run against a whole runtime: the set-up and the checks at the
end that the property tests share (``test_runtime_stateful.py`` on a virtual clock,
``transcripts/test_flusher_properties.py`` on the real one)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import trio
import trio.testing

from subagents import SubagentsError, testing
from subagents.actors import Bus, is_final
from subagents.runtime import HookPayload, Runtime, ScriptedProvider, load_transcript
from tests.runtime.helpers import SlowTool
from tests.runtime.world import HookLog, World

#: One operation done, as a test does it: the runtime, the operation, the agents so far
#: (ids, oldest first; a spawn adds one) and the checker reading every event.
Step = Callable[[Runtime, Any, list[str], testing.InvariantChecker], Awaitable[None]]


@attrs.define(eq=False)
class ReadingHooks(HookLog):
    """``SubagentStart`` and ``SubagentStop`` hooks that read the agent's transcript, as a
    hook script may: each firing whose file was missing or not whole is kept in ``unread``."""

    unread: list[tuple[str, str, str]] = attrs.field(factory=list)

    async def __call__(self, payload: HookPayload) -> None:
        await super().__call__(payload)
        path = payload.agent_transcript_path
        problems: tuple[object, ...] = ("no transcript path",)
        if path is not None:
            try:
                problems = load_transcript(path).problems
            except SubagentsError as exc:
                problems = (str(exc),)
        if problems:
            self.unread.append((payload.hook_event_name, payload.agent_id, str(problems[0])))


async def run_operations(root: Path, ops: list[Any], step: Step, *, max_threads: int) -> Runtime:
    """Run ``ops`` on a runtime of ``worker`` agents (``DirectivePolicy`` on a ``Note`` tool)
    in ``root``, each by ``step``; a ``Cancel`` cancels the runtime's scope first.

    Throughout, :class:`~subagents.testing.InvariantChecker` reads every event as it is
    published, and every hook reads the agent's transcript. After the runtime's block
    (left normally or by cancellation): nothing left running, the checker's invariants
    hold, every hook found its agent's transcript whole, every agent is final with as
    many ``SubagentStop`` as ``SubagentStart`` hooks, its transcript loads without a
    problem into the conversation the runtime holds, and no transcript is left open.
    """
    world = World(root, limits={"max_threads": max_threads})
    world.agent("worker", tools="Note")
    bus = Bus()
    checker = testing.InvariantChecker(max_threads=max_threads, state_dir=world.state)
    hooks = ReadingHooks()
    agents: list[str] = []
    provider = ScriptedProvider(testing.DirectivePolicy(tool="Note", arguments={"text": "n"}))
    # Read as each event is published: a subscription's reader falls behind on a loaded
    # machine, and a spawn event read after the run it opens had already written its
    # result took that result for an older one ("ended completed with no result on disk").
    with checker.listen(bus):
        with trio.CancelScope() as scope:
            async with world.open(
                provider, bus=bus, hooks=hooks.hooks(), tools=[SlowTool("Note")]
            ) as rt:
                for op in ops:
                    if isinstance(op, testing.Cancel):
                        scope.cancel()
                        await trio.lowlevel.checkpoint()
                    await step(rt, op, agents, checker)
        await trio.testing.wait_all_tasks_blocked()
        checker.check_after_exit(rt.supervisor.statistics())
    checker.assert_ok()
    assert hooks.unread == []
    for agent in agents:
        assert is_final(checker.final_statuses()[agent])
        assert hooks.count("SubagentStart", agent) == hooks.count("SubagentStop", agent)
        path = rt.transcript_path(agent)
        assert path is not None
        transcript = load_transcript(path)
        assert transcript.problems == (), (agent, transcript.problems)
        assert list(transcript.conversation()) == list(rt.conversation(agent))
    assert rt.statistics().transcripts_open == 0
    return rt
