"""The invariant checker our own stateful tests use, for property tests of any runtime setup.

Re-exported by :mod:`subagents.testing`. Feed an :class:`InvariantChecker`
every bus event as it is published (:meth:`InvariantChecker.listen` to the bus
before the runtime opens, so the last events of its exit are seen too; or
:meth:`InvariantChecker.follow` on a lossless subscription, which reads each
transcript when it gets to the event, so only where it cannot fall behind), and
the runtime's statistics when you like; it records a violation for anything that
breaks the runtime's promises:

- slots: the live agents counted from the events never go below zero or over
  ``max_threads``, and the kernel's own count stays within the same bounds;
- statuses: each agent's statuses follow the kernel's transition table from
  ``pending_init``, so every run ends with exactly one final status;
- order: sequence numbers strictly increase, so each agent's events are in
  order; no event is lost (a lag marker is a violation);
- results: when a run that began (an ``ActivationStarted`` event) ends, its
  transcript is read at once: a new result line must be on disk already, with
  the status just published (an agent resumed idle shows the result it came
  back with);
- hooks: when every ``SubagentStart`` hook has a ``SubagentStop`` twin, each
  final status is published after as many stops as starts (``pair_hooks``);
- exit: after the runtime's block, no task, no live agent, no open agent is
  left, and every agent's last status is final.

:meth:`InvariantChecker.assert_ok` raises one ``AssertionError`` listing them all.
"""

from __future__ import annotations

import collections
import os
from pathlib import Path
from typing import final

import attrs

from subagents._exceptions import SubagentsError
from subagents.actors import (
    AgentSpawned,
    Bus,
    Event,
    IllegalTransition,
    Lagged,
    Listener,
    Running,
    Status,
    StatusChanged,
    Subscription,
    SupervisorStatistics,
    check_transition,
    is_final,
    is_live,
    kind_of,
)
from subagents.runtime import (
    ActivationStarted,
    HookEvent,
    HookFired,
    find_transcript,
    load_transcript,
)

__all__ = ["InvariantChecker"]

_MAX_VIOLATIONS = 200


@attrs.define
class _Life:
    """One agent from a spawn (or a resume) to its retirement, as the events tell it."""

    status: Status | None = None
    baseline: int = 0
    """Result lines on disk when the last check (or the spawn) read its transcript."""
    began: bool = False
    """An activation began since it last became Running."""
    resumed: bool = False
    """It had result lines before this life began: its first final may show the last one."""


@final
class InvariantChecker:
    """Checks a runtime's events, as they arrive, against the invariants in the module docstring.

    ``state_dir`` is where transcripts are looked for (``None``: the results
    are not checked, for runtimes with transcripts off).
    """

    def __init__(
        self,
        *,
        max_threads: int,
        state_dir: str | os.PathLike[str] | None = None,
        pair_hooks: bool = True,
    ) -> None:
        self.max_threads = max_threads
        self.state_dir = None if state_dir is None else Path(state_dir)
        self.pair_hooks = pair_hooks
        self.violations: list[str] = []
        self.events = 0
        self.live = 0
        self._last_seq = 0
        self._lives: dict[str, _Life] = {}
        self._hooks: collections.Counter[tuple[str, str]] = collections.Counter()

    def __repr__(self) -> str:
        return f"<InvariantChecker events={self.events} violations={len(self.violations)}>"

    def _violate(self, text: str) -> None:
        if len(self.violations) < _MAX_VIOLATIONS:
            self.violations.append(text)

    # -- events -----------------------------------------------------------------------------

    def handle(self, event: Event | Lagged) -> None:
        """Check one event (or lag marker), reading transcripts when a run ends."""
        self.events += 1
        if isinstance(event, Lagged):
            self._violate(f"{event.dropped} events were lost: subscribe with policy='block'")
            return
        if event.seq <= self._last_seq:
            self._violate(f"seq {event.seq} after {self._last_seq}: events out of order")
        self._last_seq = event.seq
        if isinstance(event, AgentSpawned):
            self._spawned(event)
        elif isinstance(event, StatusChanged):
            self._status(event)
        elif isinstance(event, ActivationStarted):
            life = self._lives.get(event.agent_id)
            if life is None or not isinstance(life.status, Running):
                self._violate(f"{event.agent_id}: an activation began while not running")
            else:
                life.began = True
        elif isinstance(event, HookFired):
            self._hook(event)

    def listen(self, bus: Bus) -> Listener:
        """Check every event ``bus`` publishes from now on, as it is published; close the
        returned handle (or use it as a context manager) to stop.

        The transcripts are read at the moment each event describes. A subscription is
        read later, by a task that falls behind on a loaded machine: by then the agent
        may have written its next run's result, which a late spawn event would count as
        there before the run, and the run would seem to have written none.
        """
        return bus.listen(self.handle)

    async def follow(self, subscription: Subscription) -> None:
        """Check every event of ``subscription`` until it is closed and drained (see
        :meth:`listen`: only where the reader cannot fall behind the runtime)."""
        async for event in subscription:
            self.handle(event)

    def _spawned(self, event: AgentSpawned) -> None:
        life = self._lives.get(event.agent_id)
        if life is not None and life.status is not None and not is_final(life.status):
            self._violate(f"{event.agent_id}: spawned again while {kind_of(life.status)}")
        count = self._results(event.agent_id)[0]
        self._lives[event.agent_id] = _Life(baseline=count, resumed=count > 0)

    def _status(self, event: StatusChanged) -> None:
        agent = event.agent_id
        life = self._lives.get(agent)
        if life is None:
            self._violate(f"{agent}: a status before its spawn event")
            life = self._lives[agent] = _Life()
        old, new = life.status, event.status
        if old is None:
            if kind_of(new) != "pending_init":
                self._violate(f"{agent}: first status {kind_of(new)}, not pending_init")
        else:
            try:
                check_transition(agent, old, new)
            except IllegalTransition as exc:
                self._violate(str(exc))
        if is_live(new) and (old is None or not is_live(old)):
            self.live += 1
        elif is_final(new) and old is not None and is_live(old):
            self.live -= 1
        if not 0 <= self.live <= self.max_threads:
            self._violate(f"{self.live} live agents (max_threads={self.max_threads})")
        if is_final(new) and isinstance(old, Running):
            self._run_ended(agent, life, new)
        life.status = new

    def _run_ended(self, agent: str, life: _Life, status: Status) -> None:
        if self.pair_hooks:
            starts = self._hooks[(agent, HookEvent.SUBAGENT_START.value)]
            stops = self._hooks[(agent, HookEvent.SUBAGENT_STOP.value)]
            if starts != stops:
                self._violate(f"{agent}: {starts} SubagentStart but {stops} SubagentStop")
        if self.state_dir is None:
            life.began = False
            return
        count, last = self._results(agent)
        if life.began:
            if count <= life.baseline:
                self._violate(f"{agent}: its run ended {kind_of(status)} with no result on disk")
            elif last != kind_of(status):
                self._violate(f"{agent}: result on disk says {last}, status {kind_of(status)}")
        elif life.resumed and count and last != kind_of(status):
            self._violate(f"{agent}: came back {kind_of(status)}, its last result says {last}")
        life.baseline = count
        life.began = False
        life.resumed = False

    def _hook(self, event: HookFired) -> None:
        key = (event.agent_id, event.hook_event_name)
        self._hooks[key] += 1
        if (
            self.pair_hooks
            and event.hook_event_name == HookEvent.SUBAGENT_STOP.value
            and self._hooks[key] > self._hooks[(event.agent_id, HookEvent.SUBAGENT_START.value)]
        ):
            self._violate(f"{event.agent_id}: more SubagentStop than SubagentStart hooks")

    def _results(self, agent: str) -> tuple[int, str | None]:
        """How many result lines the agent's transcript holds, and the last one's status."""
        if self.state_dir is None:
            return 0, None
        try:
            transcript = load_transcript(find_transcript(self.state_dir, agent))
        except SubagentsError:
            return 0, None
        results = transcript.results
        return len(results), (results[-1].status if results else None)

    # -- state ---------------------------------------------------------------------------------

    def check_statistics(self, stats: SupervisorStatistics) -> None:
        """The kernel's own counters are within bounds."""
        if not 0 <= stats.live <= stats.max_threads:
            self._violate(f"kernel: {stats.live} live agents (max_threads={stats.max_threads})")
        if stats.live > stats.open:
            self._violate(f"kernel: {stats.live} live agents but only {stats.open} open")

    def check_after_exit(self, stats: SupervisorStatistics) -> None:
        """After the runtime's block: nothing left running, every agent final."""
        self.check_statistics(stats)
        if (stats.tasks, stats.live, stats.open) != (0, 0, 0):
            self._violate(
                f"after exit: {stats.tasks} tasks, {stats.live} live, {stats.open} open agents left"
            )
        if self.live != 0:
            self._violate(f"after exit: {self.live} agents live by the events")
        for agent, life in self._lives.items():
            if life.status is None or not is_final(life.status):
                seen = "none" if life.status is None else kind_of(life.status)
                self._violate(f"after exit: {agent} ended {seen}, not final")

    def forget_finished(self) -> int:
        """Forget every agent whose last status is final; return how many were forgotten.

        Call it after :meth:`check_after_exit`, when a runtime's agents are all
        over: one brought back later starts a new life with a spawn event, and a
        forgotten agent's stray event is still a violation, so nothing is
        checked less. A checker that watches runtime after runtime then holds
        the agents of one runtime, not of all it ever saw. Their hook counts go
        too, unless starts and stops differ (that is still to be reported).
        """
        finished = {
            agent
            for agent, life in self._lives.items()
            if life.status is not None and is_final(life.status)
        }
        for agent in finished:
            del self._lives[agent]
        start, stop = HookEvent.SUBAGENT_START.value, HookEvent.SUBAGENT_STOP.value
        unpaired = {a for a in finished if self._hooks[(a, start)] != self._hooks[(a, stop)]}
        for key in [k for k in self._hooks if k[0] in finished]:
            if not (key[0] in unpaired and key[1] in (start, stop)):
                del self._hooks[key]
        return len(finished)

    def final_statuses(self) -> dict[str, Status]:
        """Every agent's last status seen."""
        return {a: life.status for a, life in self._lives.items() if life.status is not None}

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` listing every violation seen, if any."""
        if self.violations:
            listed = "\n".join(f"- {v}" for v in self.violations)
            raise AssertionError(f"{len(self.violations)} invariant violation(s):\n{listed}")
