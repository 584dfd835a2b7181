"""Hypothesis stateful test of the kernel against a model of the expected statuses.

Random sequences of spawn (by the embedder and by actors), send (finish, fail,
hang, spawn), start-up failures, wait, close (graceful and forced) and
cancellation of the whole supervisor. After every step: slots are never
negative, never leaked and never over the limit; every status matches the
model; the events of each actor follow the transition table in sequence order
with exactly one final status per run. At the end no task is left.

Hypothesis calls rules synchronously, so the Trio loop (with an autojump clock)
runs in a thread of its own and each rule runs one step in it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import hypothesis.strategies as st
import trio
import trio.testing
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from subagents.actors import (
    ActorContext,
    AgentClosed,
    AgentLimitReached,
    AgentNotFound,
    AgentSpawned,
    AgentStartFailed,
    Bus,
    Completed,
    DepthLimitReached,
    Errored,
    Event,
    Lagged,
    MailboxFull,
    StatusChanged,
    Supervisor,
    SupervisorConfig,
    check_transition,
    is_final,
    kind_of,
    open_supervisor,
)
from tests.actors.helpers import drain, scripted

MAX_THREADS = 3
MAILBOX = 64


def config(max_depth: int) -> SupervisorConfig:
    return SupervisorConfig(
        max_threads=MAX_THREADS,
        max_depth=max_depth,
        mailbox_size=MAILBOX,
        close_grace_period=1.0,
        nicknames=["Ada", "Alan"],
    )


class TrioHost:
    """A Trio loop with an autojump clock in a thread, hosting one supervisor."""

    def __init__(self, config: SupervisorConfig) -> None:
        self.config = config
        self.bus = Bus()
        self.events = self.bus.subscribe(policy="block", capacity=100_000)
        self.sup: Supervisor | None = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        assert self._ready.wait(10), "the Trio thread did not start"
        if self._error is not None:
            raise self._error

    def _main(self) -> None:
        try:
            trio.run(self._host, clock=trio.testing.MockClock(autojump_threshold=0))
        except BaseException as exc:  # handed to the test thread in finish()
            self._error = exc
        finally:
            self._ready.set()

    async def _host(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        self._scope = trio.CancelScope()
        with self._scope:
            async with open_supervisor(self.config, bus=self.bus) as sup:
                self.sup = sup
                self._ready.set()
                await self._stop.wait()

    def call(self, step: Callable[[Supervisor], Awaitable[Any]]) -> Any:
        """Run ``step`` in the Trio thread and let everything settle before returning."""
        sup = self.sup
        assert sup is not None

        async def settled() -> Any:
            result = await step(sup)
            await trio.testing.wait_all_tasks_blocked()
            return result

        return trio.from_thread.run(settled, trio_token=self.token)

    def finish(self, *, cancel: bool) -> None:
        """Leave the supervisor's scope (normally, or by cancelling it) and join."""
        trio.from_thread.run_sync(
            self._scope.cancel if cancel else self._stop.set, trio_token=self.token
        )
        self._thread.join(30)
        assert not self._thread.is_alive(), "the supervisor did not exit"
        if self._error is not None:
            raise self._error


@attrs.define
class Expected:
    """What the model says about one actor."""

    status: Any
    parent: str | None
    depth: int
    closed: bool = False
    hanging: bool = False  # blocked in its behavior for the rest of this run


async def failing_init(ctx: ActorContext) -> None:
    raise ValueError("cannot start")


class KernelMachine(RuleBasedStateMachine):
    """The default shape: max_depth 1, so every child is a leaf (no nursery of its own)."""

    max_depth = 1

    def __init__(self) -> None:
        super().__init__()
        self.host = TrioHost(config(self.max_depth))
        self.model: dict[str, Expected] = {}
        self.events: list[Event] = []
        self.finished = False

    # -- model helpers --------------------------------------------------------

    def live(self) -> int:
        return sum(1 for m in self.model.values() if m.status == "running")

    def open_ids(self) -> list[str]:
        return [i for i, m in reversed(self.model.items()) if not m.closed]

    def known_ids(self) -> list[str]:
        return [*reversed(self.model), "no-such-agent"]

    def expect_spawn_error(self, depth: int) -> type[Exception] | None:
        if depth > self.max_depth:
            return DepthLimitReached
        if self.live() >= MAX_THREADS:
            return AgentLimitReached
        return None

    def new_ids(self, before: set[str]) -> list[str]:
        sup = self.host.sup
        assert sup is not None
        return [row.id for row in sup.list(include_closed=True) if row.id not in before]

    # -- rules ------------------------------------------------------------------

    @precondition(lambda self: not self.finished)
    @rule()
    def spawn(self) -> None:
        self.spawn_below(None)

    @precondition(lambda self: not self.finished and self.open_ids())
    @rule(data=st.data())
    def spawn_child(self, data: st.DataObject) -> None:
        self.spawn_below(data.draw(st.sampled_from(self.open_ids())))

    def spawn_below(self, parent: str | None) -> None:
        depth = 0 if parent is None else self.model[parent].depth + 1

        async def step(sup: Supervisor) -> Any:
            try:
                return await sup.spawn(scripted, parent=parent)
            except (AgentLimitReached, DepthLimitReached) as exc:
                return exc

        outcome = self.host.call(step)
        expected_error = self.expect_spawn_error(depth)
        if expected_error is not None:
            assert isinstance(outcome, expected_error), outcome
        else:
            assert (outcome.depth, outcome.parent_id) == (depth, parent)
            self.model[outcome.id] = Expected("running", parent, depth)

    @precondition(lambda self: not self.finished)
    @rule()
    def spawn_that_fails_to_start(self) -> None:
        before = set(self.model)

        async def step(sup: Supervisor) -> Any:
            try:
                return await sup.spawn(scripted, init=failing_init)
            except (AgentStartFailed, AgentLimitReached) as exc:
                return exc

        outcome = self.host.call(step)
        if self.live() >= MAX_THREADS:
            assert isinstance(outcome, AgentLimitReached)
            return
        assert isinstance(outcome, AgentStartFailed)
        (new,) = self.new_ids(before)
        self.model[new] = Expected(
            Errored("failed to start: ValueError: cannot start"), None, 0, closed=True
        )

    @precondition(lambda self: not self.finished and self.open_ids())
    @rule(data=st.data())
    def hang(self, data: st.DataObject) -> None:
        """An agent busy in its behavior that ignores close requests until cancelled."""
        self.send_command(data.draw(st.sampled_from(self.open_ids())), "hang")

    @precondition(lambda self: not self.finished)
    @rule(data=st.data(), command=st.sampled_from(["finish", "fail", "spawn", "hang"]))
    def send(self, data: st.DataObject, command: str) -> None:
        self.send_command(data.draw(st.sampled_from(self.known_ids())), command)

    def send_command(self, target: str, command: str) -> None:
        message = (command, f"{command}-{len(self.events)}")
        before = set(self.model)

        async def step(sup: Supervisor) -> Any:
            try:
                sup.send_nowait(target, message)
            except (AgentNotFound, AgentClosed, AgentLimitReached, MailboxFull) as exc:
                return exc
            return None

        outcome = self.host.call(step)
        m = self.model.get(target)
        if m is None:
            assert isinstance(outcome, AgentNotFound)
            return
        if m.closed:
            assert isinstance(outcome, AgentClosed)
            return
        if m.hanging:  # queued, never read (the mailbox is larger than any run's sends)
            assert outcome is None
            return
        if m.status != "running" and self.live() >= MAX_THREADS:
            # final and open: the message would revive it, but no slot is free
            assert isinstance(outcome, AgentLimitReached)
            return
        assert outcome is None
        m.status = "running"  # now processing the command
        if command == "finish":
            m.status = Completed(message[1])
        elif command == "fail":
            m.status = Errored(f"RuntimeError: {message[1]}")
        elif command == "hang":
            m.hanging = True
        else:
            error = self.expect_spawn_error(m.depth + 1)
            if error is None:
                (child,) = self.new_ids(before)
                self.model[child] = Expected("running", target, m.depth + 1)
            else:
                assert self.new_ids(before) == []
                m.status = "errored-by-spawn"

    @precondition(lambda self: not self.finished)
    @rule(data=st.data(), grace=st.sampled_from([0.0, 0.5, 2.0]))
    def close(self, data: st.DataObject, grace: float) -> None:
        target = data.draw(st.sampled_from(self.known_ids()))

        async def step(sup: Supervisor) -> Any:
            start = trio.current_time()
            try:
                outcome = await sup.close(target, grace=grace)
            except AgentNotFound as exc:
                outcome = exc
            return outcome, trio.current_time() - start

        outcome, elapsed = self.host.call(step)
        m = self.model.get(target)
        if m is None:
            assert isinstance(outcome, AgentNotFound)
            return
        self.assert_status(outcome, m.status)
        if m.closed:
            assert elapsed == 0
            return
        subtree, stack = [], [target]
        while stack:
            node = stack.pop()
            if not self.model[node].closed:
                subtree.append(node)
                stack.extend(i for i, c in self.model.items() if c.parent == node)
        # The ladder is bounded by the grace period, and an agent that stops when
        # asked (everyone but a hanging one) does not make anyone wait.
        if any(self.model[n].hanging for n in subtree):
            assert 0 < elapsed <= grace or grace == 0 == elapsed
        else:
            assert elapsed == 0
        for node in subtree:
            entry = self.model[node]
            entry.closed = True
            entry.status = "shutdown"  # a finished agent too, as Codex's close_agent
            entry.hanging = False

    @precondition(lambda self: not self.finished)
    @rule(
        data=st.data(),
        mode=st.sampled_from(["any", "all"]),
        timeout=st.sampled_from([0.0, 1.5]),
    )
    def wait(self, data: st.DataObject, mode: str, timeout: float) -> None:
        ids = data.draw(st.lists(st.sampled_from(self.known_ids()), max_size=4, unique=True))

        async def step(sup: Supervisor) -> Any:
            start = trio.current_time()
            result = await sup.wait(ids, timeout=timeout, mode=mode)  # type: ignore[arg-type]
            return result, trio.current_time() - start

        result, elapsed = self.host.call(step)
        settled = [
            i not in self.model or self.model[i].closed or self.model[i].status != "running"
            for i in ids
        ]
        done = (any(settled) if mode == "any" else all(settled)) if ids else True
        assert result.timed_out is (not done)
        assert elapsed == (0 if done else timeout)
        assert set(result.statuses) == set(ids)

    @precondition(lambda self: not self.finished)
    @rule()
    def cancel_everything(self) -> None:
        self.host.finish(cancel=True)
        self.finished = True
        for m in self.model.values():
            if m.status == "running":
                m.status = "shutdown"
            m.closed = True
        self.check_after_exit()

    @precondition(lambda self: self.finished)
    @rule()
    def reopen(self) -> None:
        """A new supervisor after the last one was cancelled: nothing carries over."""
        self.host = TrioHost(config(self.max_depth))
        self.model = {}
        self.events = []
        self.finished = False

    # -- checks -------------------------------------------------------------------

    def assert_status(self, actual: Any, expected: Any) -> None:
        if expected == "running":
            assert kind_of(actual) == "running", actual
        elif expected == "shutdown":
            assert kind_of(actual) == "shutdown", actual
        elif expected == "errored-by-spawn":
            assert isinstance(actual, Errored), actual
            assert "LimitReached" in actual.message, actual
        else:
            assert actual == expected, (actual, expected)

    @invariant()
    def statuses_slots_and_events_agree_with_the_model(self) -> None:
        if self.finished:
            return

        async def snapshot(sup: Supervisor) -> Any:
            return (
                sup.statistics(),
                {i: sup.status(i) for i in self.model},
                drain(self.host.events),
                len(sup._nicknames),
            )

        stats, statuses, events, nicknames = self.host.call(snapshot)
        assert not any(isinstance(e, Lagged) for e in events)  # lossless subscriber
        self.events.extend(e for e in events if isinstance(e, Event))
        for agent_id, m in self.model.items():
            self.assert_status(statuses[agent_id], m.status)
            if m.status == "errored-by-spawn":
                m.status = statuses[agent_id]
        assert stats.live == self.live()
        assert 0 <= stats.live <= MAX_THREADS
        assert stats.open == len(self.open_ids())
        assert nicknames == stats.open  # a nickname per open actor, none leaked
        self.check_events()

    def check_events(self) -> None:
        seqs = [e.seq for e in self.events]
        assert seqs == sorted(seqs)
        assert len(set(seqs)) == len(seqs)
        per_agent: dict[str, list[Any]] = {}
        nicknames: dict[str, str] = {}
        for event in self.events:
            if isinstance(event, AgentSpawned):
                assert event.agent_id not in per_agent
                per_agent[event.agent_id] = []
                # No two agents ever shown under one nickname: a closed agent's name is
                # not handed out again (Codex's used_agent_nicknames), and the pool's
                # next cycle carries an ordinal.
                assert nicknames.setdefault(event.nickname, event.agent_id) == event.agent_id
            elif isinstance(event, StatusChanged):
                per_agent[event.agent_id].append(event.status)
        for agent_id, statuses in per_agent.items():
            # Legal transitions force running and final statuses to alternate: one
            # final per run. After exit every run has ended.
            assert kind_of(statuses[0]) == "pending_init", (agent_id, statuses)
            for old, new in itertools.pairwise(statuses):
                check_transition(agent_id, old, new)
            if self.finished:
                assert is_final(statuses[-1]), (agent_id, statuses)

    def check_after_exit(self) -> None:
        sup = self.host.sup
        assert sup is not None
        self.events.extend(e for e in drain(self.host.events) if isinstance(e, Event))
        stats = sup.statistics()
        assert (stats.tasks, stats.live, stats.open) == (0, 0, 0)
        assert len(sup._nicknames) == 0
        for agent_id, m in self.model.items():
            self.assert_status(sup.status(agent_id), m.status)
        self.check_events()

    def teardown(self) -> None:
        if not self.finished:
            self.host.finish(cancel=False)
            self.finished = True
            for m in self.model.values():
                if m.status == "running":
                    m.status = "shutdown"
                m.closed = True
            self.check_after_exit()


class DeepKernelMachine(KernelMachine):
    """Trees three levels deep: leaves at depth 2, actors with nurseries above them."""

    max_depth = 2


SETTINGS = settings(
    max_examples=100,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
KernelMachine.TestCase.settings = SETTINGS
DeepKernelMachine.TestCase.settings = SETTINGS
TestKernel = KernelMachine.TestCase
TestDeepKernel = DeepKernelMachine.TestCase
