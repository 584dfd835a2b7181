"""Property test of the whole runtime: random operation sequences against a model.

Each example draws a sequence from :func:`subagents.testing.operations` (spawn,
foreground or background, top-level or under an agent; send_input with or
without interrupt; wait; close; resume with or without a prompt; cancel) and
runs it, inside one ``trio.run`` with an autojumping clock, against a runtime
whose agents follow :class:`~subagents.testing.DirectivePolicy` (they finish,
fail, hang, use a tool, or make a malformed tool call, as told). After every
step: the statuses match a model of what each agent was last told, the
kernel's counters are in bounds, and a resumed agent's conversation is the one
its transcript holds. Throughout, :class:`~subagents.testing.InvariantChecker`
reads every event as it is published: slots, transitions (one final status per
run), order, every run's result on disk before its final status, SubagentStart
and SubagentStop paired. After the runtime's block (left normally or by
cancellation): nothing left running, every transcript loads cleanly, every
agent had as many SubagentStop as SubagentStart hooks.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import attrs
import trio
import trio.testing
from hypothesis import HealthCheck, example, given, settings

from subagents import testing
from subagents.actors import (
    AgentClosed,
    AgentLimitReached,
    Bus,
    DepthLimitReached,
    Status,
    WaitResult,
    is_final,
    kind_of,
)
from subagents.runtime import AgentHandle, Runtime, ScriptedProvider, load_transcript
from subagents.testing import ScriptedBehavior
from tests.runtime.helpers import SlowTool
from tests.runtime.operations import run_operations
from tests.runtime.world import World

MAX_THREADS = 3
_KIND = {
    ScriptedBehavior.FINISH: "completed",
    ScriptedBehavior.TOOL: "completed",
    ScriptedBehavior.MALFORMED: "completed",
    ScriptedBehavior.FAIL: "errored",
    ScriptedBehavior.HANG: "running",
}
_counter = itertools.count()


@attrs.define
class Expected:
    """What the model says about one agent."""

    behavior: ScriptedBehavior
    parent: str | None
    closed: bool = False
    closed_alone: bool = False  # closed as the target of a close, not with an ancestor
    kind: str = "running"  # settled status kind; a closed running agent is shutdown

    def settle(self) -> None:
        if not self.closed:
            self.kind = _KIND[self.behavior]


@attrs.define
class Model:
    agents: dict[str, Expected] = attrs.field(factory=dict)

    def live(self) -> int:
        return sum(1 for m in self.agents.values() if m.kind == "running" and not m.closed)

    def subtree(self, root: str) -> list[str]:
        found, stack = [], [root]
        while stack:
            node = stack.pop()
            found.append(node)
            stack.extend(a for a, m in self.agents.items() if m.parent == node)
        return found


async def _step(rt: Runtime, op: Any, agents: list[str], model: Model) -> None:
    """Perform ``op`` and update (and check against) the model."""
    before = set(agents)
    target = agents[op.target % len(agents)] if agents and hasattr(op, "target") else None
    old_conversation = None
    if isinstance(op, testing.Resume) and target is not None and model.agents[target].closed:
        old_conversation = list(rt.conversation(target))
        path = rt.transcript_path(target)
        assert path is not None
        assert list(load_transcript(path).conversation()) == old_conversation
    outcome = await testing.apply_operation(rt, op, agents, agent_type="worker")
    if isinstance(op, testing.Spawn):
        _spawned(op, outcome, agents, before, model)
    elif isinstance(op, testing.SendInput) and target is not None:
        _sent(model.agents[target], op.behavior, op.interrupt, outcome, model)
    elif isinstance(op, testing.Close) and target is not None:
        assert isinstance(outcome, Status), outcome
        for node in model.subtree(target):
            entry = model.agents[node]
            if not entry.closed:
                entry.kind = "shutdown"  # a finished agent too, as Codex's close_agent
                entry.closed_alone = node == target
            entry.closed = True
    elif isinstance(op, testing.Resume) and target is not None:
        _resumed(rt, target, op, outcome, model, old_conversation)
    elif isinstance(op, testing.Wait):
        _waited(op, outcome, agents, model)


def _spawned(op: Any, outcome: Any, agents: list[str], before: set[str], model: Model) -> None:
    parent = None
    if op.parent is not None and before:
        parent = sorted(before, key=agents.index)[op.parent % len(before)]
    if isinstance(outcome, AgentHandle):
        assert outcome.parent_id == parent
        model.agents[outcome.agent_id] = Expected(op.behavior, parent)
        return
    if model.live() >= MAX_THREADS:
        assert isinstance(outcome, AgentLimitReached | DepthLimitReached | AgentClosed), outcome
    else:
        assert parent is not None, outcome
        assert isinstance(outcome, DepthLimitReached | AgentClosed), outcome


def _sent(
    entry: Expected, behavior: ScriptedBehavior, interrupt: bool, outcome: Any, model: Model
) -> None:
    if entry.closed:
        assert isinstance(outcome, AgentClosed), outcome
        return
    if entry.kind != "running" and model.live() >= MAX_THREADS:
        assert isinstance(outcome, AgentLimitReached), outcome
        return
    assert isinstance(outcome, Status), outcome
    if entry.kind != "running" or interrupt:
        entry.behavior = behavior  # a hanging run without interrupt never reads it
    entry.kind = "running"


def _resumed(
    rt: Runtime,
    target: str,
    op: Any,
    outcome: Any,
    model: Model,
    old: list[Any] | None,
) -> None:
    entry = model.agents[target]
    if not entry.closed:
        if op.behavior is not None:
            _sent(entry, op.behavior, False, outcome, model)
        return
    if isinstance(outcome, AgentLimitReached):
        assert model.live() >= MAX_THREADS
        return
    assert isinstance(outcome, Status), outcome
    assert old is not None
    restored = list(rt.conversation(target))
    assert restored[: len(old)] == old  # the whole conversation, user prompts included
    entry.closed = entry.closed_alone = False
    handle = rt.handle(target)
    entry.parent = handle.parent_id
    if op.behavior is not None:
        entry.behavior = op.behavior
    entry.kind = kind_of(rt.status(target))
    _reopened(rt, target, model)


def _reopened(rt: Runtime, root: str, model: Model) -> None:
    """Codex's resume: the descendants open when ``root`` stopped come back with it, and
    one closed on its own stays closed (unless a limit refused one, which is logged)."""
    rows = {row.id: row for row in rt.list()}
    stack = [root]
    while stack:
        parent = stack.pop()
        for child, entry in model.agents.items():
            if entry.parent != parent or not entry.closed:
                continue
            if child in rows:
                assert not entry.closed_alone, (child, "closed on its own, yet reopened")
                assert rows[child].parent_id == parent
                entry.closed = False
                entry.kind = kind_of(rt.status(child))
                stack.append(child)
            else:
                refused = rt.statistics().supervisor.live >= MAX_THREADS or (
                    rows[parent].depth >= rt.config.limits.max_depth
                )
                assert entry.closed_alone or refused, (child, "open when its parent stopped")


def _waited(op: Any, outcome: Any, agents: list[str], model: Model) -> None:
    if not agents:
        return
    assert isinstance(outcome, WaitResult), outcome
    ids = list(dict.fromkeys(agents[i % len(agents)] for i in op.targets))
    settled = [model.agents[i].closed or _KIND[model.agents[i].behavior] != "running" for i in ids]
    done = any(settled) if op.mode == "any" else all(settled)
    assert outcome.timed_out is (not done)


def _check_settled(rt: Runtime, model: Model) -> None:
    for agent, entry in model.agents.items():
        entry.settle()
        actual = rt.status(agent)
        if entry.closed and entry.kind == "running":
            entry.kind = "shutdown"
        if entry.closed:
            assert is_final(actual) or kind_of(actual) == "not_found", (agent, actual)
            if kind_of(actual) != "not_found":
                entry.kind = kind_of(actual)
        else:
            assert kind_of(actual) == entry.kind, (agent, actual, entry)
    assert rt.statistics().supervisor.live == model.live()
    # No two agents ever shown under one nickname (a resume keeps its own).
    shown = [row.nickname for row in rt.list(include_closed=True)]
    assert len(shown) == len(set(shown)), shown


async def _scenario(root: Path, ops: list[Any]) -> None:
    model = Model()

    async def step(
        rt: Runtime, op: Any, agents: list[str], checker: testing.InvariantChecker
    ) -> None:
        await _step(rt, op, agents, model)
        await trio.testing.wait_all_tasks_blocked()
        _check_settled(rt, model)
        checker.check_statistics(rt.supervisor.statistics())

    await run_operations(root, ops, step, max_threads=MAX_THREADS)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=testing.operations(max_size=14, timeouts=(0.0, 2.0)))
@example(  # a subtree closed with its root comes back with it; a child closed alone does not
    ops=[
        testing.Spawn(ScriptedBehavior.FINISH),
        testing.Spawn(ScriptedBehavior.HANG, parent=0),
        testing.Spawn(ScriptedBehavior.FINISH, parent=0),
        testing.Close(2),
        testing.Close(0),
        testing.Resume(0),
    ]
)
def test_random_operations_keep_every_promise(ops: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / f"example-{next(_counter)}"
        trio.run(_scenario, root, ops, clock=trio.testing.MockClock(autojump_threshold=0))


@settings(max_examples=30, deadline=None)
@given(script=testing.agent_scripts(tool="Note"))
def test_any_agent_script_ends_in_one_final_status_with_its_result_on_disk(
    script: list[Any],
) -> None:
    async def main(root: Path) -> None:
        world = World(root)
        world.agent("worker", tools="Note")
        bus = Bus()
        checker = testing.InvariantChecker(max_threads=8, state_dir=world.state)
        with checker.listen(bus):  # each event read as it is published
            provider = ScriptedProvider(script)
            async with world.open(provider, bus=bus, tools=[SlowTool("Note")]) as rt:
                agent = (await rt.spawn("worker", "Go.")).agent_id
                await rt.wait([agent], timeout=50)
            await trio.testing.wait_all_tasks_blocked()
            checker.check_after_exit(rt.supervisor.statistics())
        checker.assert_ok()

    with tempfile.TemporaryDirectory() as folder:
        trio.run(main, Path(folder), clock=trio.testing.MockClock(autojump_threshold=0))
