"""Progress tracking: per-agent and subtree totals folded from bus events, lossy streams."""

from __future__ import annotations

import gc
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
import trio
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from subagents import testing
from subagents._exceptions import SubagentsError
from subagents.actors import (
    PENDING_INIT,
    RUNNING,
    SHUTDOWN,
    ActorContext,
    AgentSpawned,
    ChildFinished,
    Completed,
    Errored,
    Event,
    InvalidConfiguration,
    Lagged,
    Status,
    StatusChanged,
    SupervisorConfig,
    is_live,
    open_supervisor,
)
from subagents.runtime import ScriptedProvider
from subagents.runtime._events import (
    GracePeriodEnded,
    GracePeriodStarted,
    RunFinished,
    TextChunk,
    ThoughtChunk,
    ToolCallEnded,
    ToolCallStarted,
    TurnCompleted,
    TurnStarted,
    UsageReported,
)
from subagents.runtime._exceptions import ProgressNotFound
from subagents.runtime._progress.facts import ProgressFeed
from subagents.runtime._progress.text import describe_tool_call
from subagents.runtime._progress.tracker import (
    DEFAULT_MAX_AGENTS,
    ProgressTracker,
    agents_to_keep,
    follow,
)
from subagents.runtime._progress.values import ACTIVITY_LIMIT, AgentProgress
from subagents.runtime._providers.base import Usage
from tests.runtime.world import World

# -- building events by hand -------------------------------------------------------


@attrs.frozen
class Who:
    """An agent's envelope, to stamp hand-made events with."""

    agent_id: str
    nickname: str
    parent_id: str | None = None
    depth: int = 0

    def env(self, t: float) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "parent_id": self.parent_id,
            "depth": self.depth,
            "nickname": self.nickname,
            "time": t,
        }

    def spawned(self, label: str, t: float = 0.0) -> AgentSpawned:
        return AgentSpawned(**self.env(t), label=label)

    def status(self, status: Status, t: float = 0.0) -> StatusChanged:
        return StatusChanged(**self.env(t), status=status)

    def turn(self, n: int, t: float = 0.0, *, grace: bool = False) -> TurnStarted:
        return TurnStarted(**self.env(t), turn=n, model="m", grace=grace)

    def usage(self, n: int, usage: Usage, total: Usage, t: float = 0.0) -> UsageReported:
        return UsageReported(**self.env(t), turn=n, usage=usage, total=total)

    def tool(
        self, n: int, call: str, name: str, args: dict[str, Any], t: float = 0.0
    ) -> ToolCallStarted:
        return ToolCallStarted(**self.env(t), turn=n, tool_use_id=call, tool_name=name, input=args)

    def tool_end(
        self, n: int, call: str, name: str, t: float = 0.0, *, error: bool = False
    ) -> ToolCallEnded:
        return ToolCallEnded(
            **self.env(t), turn=n, tool_use_id=call, tool_name=name, is_error=error, duration=0.1
        )

    def turn_done(self, n: int, calls: int, t: float = 0.0) -> TurnCompleted:
        return TurnCompleted(
            **self.env(t), turn=n, stop_reason="end_turn", tool_calls=calls, usage=Usage()
        )

    def finished(
        self, turns: int, tools: int, usage: Usage, t: float = 0.0, *, reason: str = "goal"
    ) -> RunFinished:
        return RunFinished(
            **self.env(t),
            terminate_reason=reason,
            turns=turns,
            tool_uses=tools,
            usage=usage,
            duration=1.0,
        )


LEAD = Who("lead", "Lee")
ADA = Who("ada", "Ada", "lead", 1)
BO = Who("bo", "Bo", "lead", 1)
GUS = Who("gus", "Gus", "ada", 2)


def feed(tracker: ProgressTracker, events: Iterable[Event | Lagged]) -> ProgressTracker:
    for event in events:
        tracker.handle(event)
    return tracker


def one_turn(
    who: Who, n: int, usage: Usage, total: Usage, tools: list[tuple[str, dict[str, Any]]]
) -> list[Event]:
    """A whole turn: started, usage, the tool calls (one after the other), completed."""
    events: list[Event] = [who.turn(n), who.usage(n, usage, total)]
    for index, (name, args) in enumerate(tools):
        call = f"{who.agent_id}-{n}-{index}"
        events += [who.tool(n, call, name, args), who.tool_end(n, call, name)]
    events.append(who.turn_done(n, len(tools)))
    return events


def family() -> list[Event]:
    """A lead with two children (Ada, Bo); Ada has a child (Gus). Everyone completes."""
    u1, u2 = Usage(100, 10, 5, 1), Usage(200, 20, 0, 0)
    events: list[Event] = [LEAD.spawned("general-purpose"), LEAD.status(RUNNING)]
    events += one_turn(LEAD, 1, u1, u1, [("spawn_agent", {"agent_type": "Explore"})])
    events += [ADA.spawned("Explore"), ADA.status(RUNNING)]
    events += [BO.spawned("Plan"), BO.status(RUNNING)]
    events += one_turn(ADA, 1, u2, u2, [("Read", {"file_path": "src/app.py"})])
    events += [GUS.spawned("Bash"), GUS.status(RUNNING)]
    events += one_turn(GUS, 1, Usage(7, 3), Usage(7, 3), [("Bash", {"command": "ls"})])
    events += [GUS.finished(1, 1, Usage(7, 3)), GUS.status(Completed("ok"))]
    events += one_turn(ADA, 2, u2, u2 + u2, [("Grep", {"pattern": "TODO"}), ("LS", {})])
    events += [ADA.finished(2, 3, u2 + u2), ADA.status(Completed("found"))]
    events += one_turn(BO, 1, Usage(50, 5), Usage(50, 5), [])
    events += [BO.finished(1, 0, Usage(50, 5)), BO.status(Completed("plan"))]
    events += one_turn(LEAD, 2, u1, u1 + u1, [])
    events += [LEAD.finished(2, 1, u1 + u1), LEAD.status(Completed("done"))]
    return events


# -- per-agent and subtree totals --------------------------------------------------


def test_each_agent_has_its_own_counters() -> None:
    tracker = feed(ProgressTracker(), family())
    ada = tracker.progress("ada", now=0)
    assert (ada.turns, ada.tool_uses, ada.usage) == (2, 3, Usage(400, 40, 0, 0))
    assert (ada.nickname, ada.label, ada.parent_id, ada.depth) == ("Ada", "Explore", "lead", 1)
    assert ada.status == Completed("found")
    assert ada.children == ("gus",)
    lead = tracker.progress("lead", now=0)
    assert (lead.turns, lead.tool_uses, lead.usage) == (2, 1, Usage(200, 20, 10, 2))
    assert lead.usage.total_tokens == 232
    gus = tracker.progress("gus", now=0)
    assert (gus.turns, gus.tool_uses, gus.usage, gus.depth) == (1, 1, Usage(7, 3), 2)


def test_a_later_runs_smaller_usage_total_counts_from_zero_and_reaches_the_ancestors() -> None:
    """A run's usage total only grows: one below what the current run counted comes from a
    later run whose start was lost, and counts in full, in the agent's row and its parent's
    subtree; the finished run's totals then add only what its lost events had not told."""
    tracker = feed(
        ProgressTracker(),
        [
            LEAD.spawned("lead"),
            ADA.spawned("Explore"),
            ADA.turn(1),
            ADA.usage(1, Usage(100, 10), Usage(100, 10)),
            # the run ended and a new one began, unseen: its turn 2 reports 30 so far
            ADA.usage(2, Usage(20, 2), Usage(30, 3)),
        ],
    )
    assert tracker.progress("ada", now=0).usage == Usage(130, 13)
    assert tracker.progress("lead", now=0).subtree.usage == Usage(130, 13)
    feed(tracker, [ADA.finished(2, 0, Usage(50, 5))])  # 20 and 2 of it were never told
    assert tracker.progress("ada", now=0).usage == Usage(150, 15)
    assert tracker.progress("lead", now=0).subtree.usage == Usage(150, 15)


def test_subtree_totals_roll_up_the_tree() -> None:
    tracker = feed(ProgressTracker(), family())
    ada = tracker.progress("ada", now=0).subtree
    assert (ada.turns, ada.tool_uses, ada.usage, ada.agents, ada.running) == (
        3,
        4,
        Usage(407, 43, 0, 0),
        2,
        0,
    )
    lead = tracker.progress("lead", now=0).subtree
    assert (lead.turns, lead.tool_uses, lead.agents, lead.running) == (6, 5, 4, 0)
    assert lead.usage == Usage(200, 20, 10, 2) + Usage(407, 43) + Usage(50, 5)
    gus = tracker.progress("gus", now=0).subtree
    assert (gus.turns, gus.tool_uses, gus.agents) == (1, 1, 1)


def test_running_agents_are_counted_in_every_ancestor() -> None:
    events = family()
    cut = events.index(GUS.status(RUNNING)) + 1
    tracker = feed(ProgressTracker(), events[:cut])
    assert tracker.progress("lead", now=0).subtree.running == 4
    assert tracker.progress("ada", now=0).subtree.running == 2
    tracker.handle(GUS.status(Errored("boom")))
    assert tracker.progress("lead", now=0).subtree.running == 3
    assert tracker.progress("ada", now=0).subtree.running == 1


def test_tree_is_depth_first_with_children_in_spawn_order() -> None:
    tracker = feed(ProgressTracker(), family())
    rows = tracker.tree(now=0)
    assert [(r.agent_id, r.depth) for r in rows] == [
        ("lead", 0),
        ("ada", 1),
        ("gus", 2),
        ("bo", 1),
    ]
    assert tracker.roots() == ["lead"]
    assert len(tracker) == 4
    assert "gus" in tracker
    assert "nobody" not in tracker


def test_a_parent_notes_the_children_it_spawned() -> None:
    tracker = feed(ProgressTracker(), family()[:20])
    texts = [a.text for a in tracker.progress("lead", now=0).activities]
    assert "spawned Ada (Explore)" in texts
    assert "spawned Bo (Plan)" in texts


# -- activities and status messages ------------------------------------------------


def test_only_the_last_five_activities_are_kept_newest_last() -> None:
    tracker = ProgressTracker()
    tracker.handle(ADA.spawned("Explore", t=1.0))
    tracker.handle(ADA.status(RUNNING, t=1.0))
    tracker.handle(ADA.turn(1, t=2.0))
    for n in range(8):
        tracker.handle(ADA.tool(1, f"c{n}", "Read", {"file_path": f"f{n}.py"}, t=10.0 + n))
        tracker.handle(ADA.tool_end(1, f"c{n}", "Read", t=10.5 + n))
    progress = tracker.progress("ada", now=20)
    assert len(progress.activities) == ACTIVITY_LIMIT == 5
    assert [a.text for a in progress.activities] == [f"Read f{n}.py" for n in range(3, 8)]
    assert [a.time for a in progress.activities] == [13.0, 14.0, 15.0, 16.0, 17.0]
    assert str(progress.activities[-1]) == progress.last_activity == "Read f7.py"
    assert progress.tool_uses == 8
    # Kept in a few hundred bytes per agent (a bounded deque allocated 760 for any five).
    kept = tracker._nodes["ada"].activities
    assert len(kept) == ACTIVITY_LIMIT
    assert sys.getsizeof(kept) < 200


def test_a_tool_calls_activity_is_described_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17: folding a tool call costs no description; only the kept five are described,
    and only when a row is read."""
    from subagents.runtime._progress import facts as facts_module

    described: list[str] = []
    real = facts_module.describe_tool_call

    def counting(name: str, arguments: Any) -> str:
        described.append(name)
        return real(name, arguments)

    monkeypatch.setattr(facts_module, "describe_tool_call", counting)
    tracker = ProgressTracker()
    tracker.handle(ADA.spawned("Explore", t=1.0))
    tracker.handle(ADA.turn(1, t=2.0))
    for n in range(100):
        tracker.handle(ADA.tool(1, f"c{n}", "Read", {"file_path": f"f{n}.py"}, t=10.0 + n))
    assert described == []
    activities = tracker.progress("ada").activities
    assert [a.text for a in activities] == [f"Read f{n}.py" for n in range(95, 100)]
    assert len(described) == ACTIVITY_LIMIT


def test_status_message_follows_what_the_agent_is_doing() -> None:
    tracker = ProgressTracker()

    def message() -> str:
        return tracker.progress("ada", now=0).status_message

    tracker.handle(ADA.spawned("Explore"))
    assert message() == "starting"
    tracker.handle(ADA.status(RUNNING))
    assert message() == "running"
    tracker.handle(ADA.turn(1))
    assert message() == "waiting for the model (turn 1)"
    tracker.handle(ThoughtChunk(**ADA.env(0), text="hmm"))
    assert message() == "thinking (turn 1)"
    tracker.handle(TextChunk(**ADA.env(0), text="Let me look"))
    assert message() == "writing (turn 1)"
    tracker.handle(ADA.usage(1, Usage(1, 1), Usage(1, 1)))
    assert message() == "running turn 1"
    tracker.handle(ADA.tool(1, "a", "Grep", {"pattern": "TODO"}))
    assert message() == "calling Grep"
    tracker.handle(ADA.tool(1, "b", "Read", {"file_path": "x.py"}))
    assert message() == "calling Grep, Read (2 calls)"
    tracker.handle(ADA.tool_end(1, "a", "Grep"))
    assert message() == "calling Read"
    tracker.handle(ADA.tool_end(1, "b", "Read", error=True))
    assert message() == "running turn 1"
    tracker.handle(ADA.turn_done(1, 2))
    assert message() == "turn 1 done"
    tracker.handle(GracePeriodStarted(**ADA.env(0), reason="max_turns", grace_seconds=60))
    tracker.handle(ADA.turn(2, grace=True))
    assert message() == "in grace period"
    tracker.handle(GracePeriodEnded(**ADA.env(0), reason="max_turns", outcome="no_call"))
    tracker.handle(ADA.finished(2, 2, Usage(1, 1), reason="max_turns"))
    assert message() == "finished its run (max_turns)"
    tracker.handle(ADA.status(Errored("AgentRunFailed: max turns\ntraceback...")))
    assert message() == "errored: AgentRunFailed: max turns"
    texts = [a.text for a in tracker.progress("ada", now=0).activities]
    assert texts == [
        "turn 1 done",
        "grace period (max turns)",
        "grace period ended: no call",
        "finished: max_turns",
        "errored: AgentRunFailed: max turns",
    ]
    tracker.handle(ADA.status(RUNNING))
    assert message() == "running"
    assert tracker.progress("ada", now=0).last_activity == "running again"
    tracker.handle(ADA.status(Completed("ok")))
    assert message() == "completed"
    tracker.handle(BO.status(SHUTDOWN))
    assert tracker.progress("bo", now=0).status_message == "shut down"


def test_a_failed_tool_call_is_an_activity() -> None:
    tracker = feed(
        ProgressTracker(),
        [
            ADA.turn(1),
            ADA.tool(1, "a", "Bash", {"command": "make"}),
            ADA.tool_end(1, "a", "Bash", error=True),
        ],
    )
    texts = [a.text for a in tracker.progress("ada", now=0).activities]
    assert texts == ["Bash: make", "Bash failed"]


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("Read", {"file_path": "src/app.py", "offset": 3}, "Read src/app.py"),
        ("Grep", {"pattern": "TODO", "-i": True}, "Grep 'TODO'"),
        ("Grep", {"pattern": "TODO", "path": "src"}, "Grep 'TODO' in src"),
        ("Glob", {"pattern": "**/*.py"}, "Glob '**/*.py'"),
        ("Bash", {"command": "git status\n  && ls", "timeout": 10}, "Bash: git status && ls"),
        ("LS", {}, "LS"),
        ("LS", {"path": "docs"}, "LS docs"),
        ("WebFetch", {"url": "https://x.org/a", "prompt": "sum"}, "WebFetch https://x.org/a"),
        (
            "spawn_agent",
            {"agent_type": "Explore", "prompt": "find the entry point"},
            "spawn_agent Explore: find the entry point",
        ),
        ("wait", {"ids": ["a1"], "timeout": 5}, "wait"),
        ("send_input", {"agent_id": "a1", "text": "go on"}, "send_input go on"),
        ("Custom", {"n": 1, "note": "free text"}, "Custom free text"),
    ],
)
def test_tool_calls_are_described_by_their_telling_argument(
    name: str, args: dict[str, Any], expected: str
) -> None:
    assert describe_tool_call(name, args) == expected


def test_long_arguments_are_shortened_to_about_sixty_characters() -> None:
    path = "/very/long/" + "nested/" * 20 + "module.py"
    read = describe_tool_call("Read", {"file_path": path})
    assert len(read) <= 60
    assert read.startswith("Read …")
    assert read.endswith("/module.py")
    bash = describe_tool_call("Bash", {"command": "echo " + "x" * 200})
    assert len(bash) <= 60
    assert bash.startswith("Bash: echo xx")
    assert bash.endswith("…")
    grep = describe_tool_call("Grep", {"pattern": "p" * 100, "path": "src"})
    assert len(grep) <= 60
    assert grep.startswith("Grep 'ppp")
    assert len(describe_tool_call("T" * 100, {"command": "x"})) == 60


# -- elapsed time ------------------------------------------------------------------


def test_elapsed_runs_until_now_then_stops_at_the_end() -> None:
    tracker = feed(
        ProgressTracker(), [ADA.spawned("Explore", t=100.0), ADA.status(RUNNING, t=101.0)]
    )
    running = tracker.progress("ada", now=130.0)
    assert (running.started_at, running.ended_at, running.elapsed) == (100.0, None, 30.0)
    assert tracker.progress("ada", now=90.0).elapsed == 0.0  # a clock behind never goes negative
    tracker.handle(ADA.status(Completed("ok"), t=150.0))
    done = tracker.progress("ada", now=1000.0)
    assert (done.ended_at, done.elapsed) == (150.0, 50.0)
    tracker.handle(ADA.status(RUNNING, t=200.0))
    again = tracker.progress("ada", now=260.0)
    assert (again.ended_at, again.elapsed) == (None, 160.0)


# -- runs, lost events, odd orders -------------------------------------------------


def test_a_follow_up_run_adds_to_the_counters() -> None:
    first = Usage(10, 1)
    second = Usage(4, 2)
    events = [ADA.spawned("Explore"), ADA.status(RUNNING)]
    events += one_turn(ADA, 1, first, first, [("Read", {"file_path": "a"})])
    events += [ADA.finished(1, 1, first), ADA.status(Completed("a")), ADA.status(RUNNING)]
    events += one_turn(ADA, 1, second, second, [])
    events += one_turn(ADA, 2, second, second + second, [])
    events += [ADA.finished(2, 0, second + second), ADA.status(Completed("b"))]
    progress = feed(ProgressTracker(), events).progress("ada", now=0)
    assert (progress.turns, progress.tool_uses, progress.usage) == (3, 1, first + second + second)


def test_lost_usage_reports_are_made_up_by_the_run_totals() -> None:
    u = Usage(10, 2, 1, 1)
    events: list[Event | Lagged] = [ADA.turn(1), Lagged(dropped=1)]  # its usage report was lost
    events += [ADA.turn(2), ADA.usage(2, u, u + u)]
    tracker = feed(ProgressTracker(), events)
    assert tracker.progress("ada", now=0).usage == u + u
    tracker.handle(ADA.finished(3, 2, u + u + u))  # turn 3 and both tool calls were lost too
    progress = tracker.progress("ada", now=0)
    assert (progress.turns, progress.tool_uses, progress.usage) == (3, 2, u + u + u)
    assert tracker.lagged == 1


def test_a_new_run_is_recognised_when_its_end_and_start_were_lost() -> None:
    u = Usage(100, 10)
    events: list[Event | Lagged] = [ADA.turn(1), ADA.usage(1, u, u), ADA.turn(2)]
    events += [ADA.usage(2, u, u + u), Lagged(dropped=3)]  # RunFinished, status, TurnStarted(1)
    events += [ADA.usage(1, Usage(5, 5), Usage(5, 5)), ADA.turn(2)]
    progress = feed(ProgressTracker(), events).progress("ada", now=0)
    assert progress.turns == 4
    assert progress.usage == u + u + Usage(5, 5)


def test_a_run_cut_short_is_followed_by_a_new_run() -> None:
    events = [ADA.turn(1), ADA.turn(2), ADA.status(Errored("cancelled")), ADA.status(RUNNING)]
    events += [ADA.turn(1), ADA.tool(1, "a", "LS", {})]
    progress = feed(ProgressTracker(), events).progress("ada", now=0)
    assert (progress.turns, progress.tool_uses) == (3, 1)


def test_events_about_an_agent_whose_spawn_was_lost_create_its_row() -> None:
    tracker = feed(ProgressTracker(), [LEAD.spawned("lead"), Lagged(dropped=2), ADA.turn(1)])
    ada = tracker.progress("ada", now=0)
    assert (ada.label, ada.status, ada.turns, ada.parent_id) == ("", PENDING_INIT, 1, "lead")
    assert tracker.progress("lead", now=0).subtree.turns == 1
    assert tracker.progress("lead", now=0).children == ("ada",)


def test_an_agent_seen_before_its_parent_is_adopted_when_the_parent_appears() -> None:
    tracker = feed(ProgressTracker(), [GUS.turn(1), GUS.status(RUNNING)])
    assert tracker.roots() == ["gus"]
    feed(tracker, [ADA.spawned("Explore"), ADA.turn(1)])
    assert tracker.roots() == ["ada"]
    ada = tracker.progress("ada", now=0)
    assert ada.children == ("gus",)
    assert (ada.subtree.turns, ada.subtree.agents, ada.subtree.running) == (2, 2, 2)


def test_text_before_any_other_event_is_ignored_and_unknown_kinds_too() -> None:
    class HookFired(Event, frozen=True, kw_only=True, tag="test_hook_fired"):
        hook: str

    tracker = feed(
        ProgressTracker(),
        [TextChunk(**ADA.env(0), text="x"), HookFired(**ADA.env(0), hook="PreToolUse")],
    )
    assert len(tracker) == 0
    assert tracker.statistics().events == 2


def test_subclasses_of_known_kinds_are_folded_like_their_base() -> None:
    class FancyTurn(TurnStarted, frozen=True, kw_only=True, tag="test_fancy_turn"):
        colour: str = "red"

    tracker = feed(ProgressTracker(), [FancyTurn(**ADA.env(0), turn=1, model="m")])
    assert tracker.progress("ada", now=0).turns == 1


# -- forgetting and the max_agents bound -------------------------------------------


def test_forget_drops_a_subtree_but_keeps_its_work_in_the_ancestors() -> None:
    events = family()
    cut = events.index(GUS.status(RUNNING)) + 1
    tracker = feed(ProgressTracker(), events[:cut])
    before = tracker.progress("lead", now=0).subtree
    assert tracker.forget("ada") is True
    assert "ada" not in tracker
    assert "gus" not in tracker
    after = tracker.progress("lead", now=0)
    assert after.children == ("bo",)
    assert (after.subtree.turns, after.subtree.usage, after.subtree.agents) == (
        before.turns,
        before.usage,
        before.agents,
    )
    assert after.subtree.running == before.running - 2
    assert tracker.forget("ada") is False
    assert tracker.statistics().forgotten == 2
    with pytest.raises(ProgressNotFound):
        tracker.progress("gus", now=0)


def test_past_max_agents_the_longest_finished_go_first() -> None:
    tracker = ProgressTracker(max_agents=3)
    feed(tracker, [LEAD.spawned("lead"), LEAD.status(RUNNING)])
    feed(tracker, [ADA.spawned("Explore"), ADA.status(RUNNING), ADA.turn(1)])
    feed(tracker, [BO.spawned("Plan"), BO.status(RUNNING), BO.status(Completed("x"))])
    feed(tracker, [ADA.status(Completed("y"))])
    carl = Who("carl", "Carl", "lead", 1)
    feed(tracker, [carl.spawned("Explore"), carl.status(RUNNING)])
    assert [r.agent_id for r in tracker.tree(now=0)] == ["lead", "ada", "carl"]
    dora = Who("dora", "Dora", "lead", 1)
    feed(tracker, [dora.spawned("Explore")])
    assert [r.agent_id for r in tracker.tree(now=0)] == ["lead", "carl", "dora"]
    lead = tracker.progress("lead", now=0).subtree
    assert (lead.turns, lead.agents, lead.running) == (1, 5, 3)
    assert tracker.statistics().evicted == 2
    eve = Who("eve", "Eve", "lead", 1)
    feed(tracker, [eve.spawned("Explore")])  # nobody finished: the oldest leaf goes
    assert [r.agent_id for r in tracker.tree(now=0)] == ["lead", "dora", "eve"]
    assert tracker.progress("lead", now=0).subtree.running == 3


def test_max_agents_must_be_positive() -> None:
    with pytest.raises(InvalidConfiguration, match="max_agents"):
        ProgressTracker(max_agents=0)


def test_an_unknown_id_is_a_typed_error_that_says_what_to_do() -> None:
    tracker = feed(ProgressTracker(), family())
    with pytest.raises(ProgressNotFound, match="roots\\(\\)") as caught:
        tracker.progress("nobody", now=0)
    assert isinstance(caught.value, SubagentsError)
    assert isinstance(caught.value, LookupError)
    assert caught.value.agent_id == "nobody"


# -- following a subscription ------------------------------------------------------


async def items(*events: Event | Lagged) -> AsyncIterator[Event | Lagged]:
    for event in events:
        yield event


async def test_follow_notes_gaps_and_stays_consistent() -> None:
    tracker = ProgressTracker()
    await follow(
        tracker,
        items(
            ADA.spawned("Explore"),
            Lagged(dropped=4),
            ADA.usage(3, Usage(1), Usage(9, 9)),
            Lagged(dropped=2),
            ADA.status(Completed("done")),
        ),
    )
    stats = tracker.statistics()
    assert (stats.lagged, stats.gaps, stats.events) == (6, 2, 5)
    ada = tracker.progress("ada", now=0)
    assert (ada.turns, ada.usage, ada.status) == (3, Usage(9, 9), Completed("done"))
    assert ada.subtree.running == 0


async def test_a_dropping_subscription_that_overflows_is_followed_consistently() -> None:
    tracker = ProgressTracker()
    async with open_supervisor() as sup:
        bus = sup.bus
        with bus.subscribe(capacity=4, policy="drop_oldest") as sub:
            for event in family():
                bus.publish_nowait(event)
            sub.close()
            await follow(tracker, sub)
    assert tracker.lagged == len(family()) - 4
    for row in tracker.tree(now=0):
        assert row.turns >= 0
        assert row.subtree.running >= 0
    assert tracker.progress("lead", now=0).status == Completed("done")


async def publish(ctx: ActorContext, kind: type[Event], **fields: Any) -> None:
    """Publish a runtime event about ``ctx``'s agent, envelope filled in by hand."""
    event = kind(
        agent_id=ctx.id, parent_id=ctx.parent_id, depth=ctx.depth, nickname=ctx.nickname, **fields
    )
    await ctx.bus.publish(event)


async def explorer(ctx: ActorContext) -> str:
    """A child that reads two files in one turn."""
    usage = Usage(30, 3)
    await publish(ctx, TurnStarted, turn=1, model="m")
    await publish(ctx, UsageReported, turn=1, usage=usage, total=usage)
    for n, path in enumerate(["a.py", "b.py"]):
        call = {"turn": 1, "tool_use_id": f"r{n}", "tool_name": "Read"}
        await publish(ctx, ToolCallStarted, **call, input={"file_path": path})
        await publish(ctx, ToolCallEnded, **call, is_error=False, duration=0.0)
    await publish(ctx, TurnCompleted, turn=1, stop_reason="end_turn", tool_calls=2, usage=usage)
    await publish(
        ctx, RunFinished, terminate_reason="goal", turns=1, tool_uses=2, usage=usage, duration=0.0
    )
    return "read both"


async def lead(ctx: ActorContext) -> str:
    """A lead that spawns an explorer and waits for its notice inside one tool call."""
    usage = Usage(100, 10)
    call = {"turn": 1, "tool_use_id": "s", "tool_name": "spawn_agent"}
    await publish(ctx, TurnStarted, turn=1, model="m")
    await publish(ctx, ToolCallStarted, **call, input={"agent_type": "Explore", "prompt": "read"})
    child = await ctx.spawn(explorer, label="Explore")
    notice = await ctx.receive()  # taken, so it does not revive the lead once it completed
    assert isinstance(notice, ChildFinished)
    assert notice.agent_id == child.id
    await publish(ctx, ToolCallEnded, **call, is_error=False, duration=0.0)
    await publish(ctx, UsageReported, turn=1, usage=usage, total=usage)
    await publish(
        ctx, RunFinished, terminate_reason="goal", turns=1, tool_uses=1, usage=usage, duration=0.0
    )
    return "all done"


async def test_a_real_run_through_the_kernel_bus() -> None:
    tracker = ProgressTracker()
    async with open_supervisor(SupervisorConfig(max_threads=4, max_depth=1)) as sup:
        with sup.bus.subscribe(capacity=64, policy="block", max_block=10) as sub:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(follow, tracker, sub)
                ref = await sup.spawn(lead, label="general-purpose")
                await sup.wait([ref.id], timeout=10)
                sub.close()
    assert tracker.lagged == 0
    rows = tracker.tree(now=0)
    assert [(r.label, r.depth, r.kind) for r in rows] == [
        ("general-purpose", 0, "completed"),
        ("Explore", 1, "completed"),
    ]
    top, child = rows
    assert child.parent_id == top.agent_id
    assert (child.turns, child.tool_uses, child.usage) == (1, 2, Usage(30, 3))
    assert [a.text for a in child.activities] == [
        "Read a.py",
        "Read b.py",
        "turn 1 done",
        "finished: goal",
        "completed",
    ]
    assert (top.turns, top.tool_uses, top.usage) == (1, 1, Usage(100, 10))
    assert f"spawned {child.nickname} (Explore)" in [a.text for a in top.activities]
    assert top.subtree == attrs.evolve(
        top.subtree, turns=2, tool_uses=3, usage=Usage(130, 13), agents=2, running=0
    )
    assert top.ended_at is not None
    assert top.elapsed >= 0


# -- Hypothesis: random trees, random interleavings, random losses ------------------


@attrs.frozen
class Plan:
    """One agent's events in order, and the counters they add up to."""

    who: Who
    events: list[Event]
    turns: int
    tool_uses: int
    usage: Usage


run_shape = st.lists(  # one run: per turn, (tool calls, input tokens, output tokens)
    st.tuples(st.integers(0, 2), st.integers(0, 50), st.integers(0, 20)), min_size=1, max_size=3
)
agent_shape = st.tuples(
    st.lists(st.tuples(run_shape, st.booleans()), min_size=0, max_size=3),  # (turns, cut short)
    st.sampled_from(["completed", "errored", "shutdown"]),
    st.integers(0, 10),  # where a cut-short run stops
)


def plan_agent(who: Who, shape: tuple[Any, ...]) -> Plan:
    runs, last, cut_at = shape
    events: list[Event] = [who.spawned("x"), who.status(PENDING_INIT), who.status(RUNNING)]
    turns = tools = 0
    usage = Usage()
    for index, (run, cut_short) in enumerate(runs):
        if index:
            events.append(who.status(RUNNING))
        run_events: list[Event] = []
        total = Usage()
        for n, (calls, inp, out) in enumerate(run, start=1):
            step = Usage(inp, out, inp // 3, out // 4)
            total = total + step
            run_events += one_turn(
                who, n, step, total, [("Read", {"file_path": f"{n}-{c}"}) for c in range(calls)]
            )
        if cut_short:  # cancelled mid-run: no RunFinished, the agent errors
            run_events = run_events[: 1 + cut_at % len(run_events)]
            events += [*run_events, who.status(Errored("cut short"))]
        else:
            run_tools = sum(calls for calls, _, _ in run)
            run_events.append(who.finished(len(run), run_tools, total))
            events += [*run_events, who.status(Completed("ok"))]
        for event in run_events:
            if isinstance(event, TurnStarted):
                turns += 1
            elif isinstance(event, ToolCallStarted):
                tools += 1
            elif isinstance(event, UsageReported):
                usage = usage + event.usage
    if not runs or last != "completed":
        final: Status = SHUTDOWN if last == "shutdown" else Errored("bye")
        if runs:  # a final agent is revived before it can end another way
            events.append(who.status(RUNNING))
        events.append(who.status(final))
    return Plan(who, events, turns, tools, usage)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[Plan], list[Event | Lagged], bool]:
    size = draw(st.integers(1, 7))
    parents = [None] + [draw(st.integers(0, i - 1)) for i in range(1, size)]
    whos: list[Who] = []
    for i, parent in enumerate(parents):
        if parent is None:
            whos.append(Who(f"a{i}", f"N{i}"))
        else:
            above = whos[parent]
            whos.append(Who(f"a{i}", f"N{i}", above.agent_id, above.depth + 1))
    plans = [plan_agent(who, draw(agent_shape)) for who in whos]
    rng = draw(st.randoms(use_true_random=False))
    lossy = draw(st.booleans())
    queues = [list(reversed(plan.events)) for plan in plans]
    spawned = [False] * size
    stream: list[Event | Lagged] = []
    while any(queues):
        ready = [
            i
            for i, queue in enumerate(queues)
            if queue and (parents[i] is None or spawned[parents[i]])  # type: ignore[index]
        ]
        i = rng.choice(ready)
        event = queues[i].pop()
        spawned[i] = True
        if lossy and rng.random() < 0.3:
            if stream and isinstance(stream[-1], Lagged):
                stream[-1] = Lagged(dropped=stream[-1].dropped + 1)
            else:
                stream.append(Lagged(dropped=1))
            continue
        stream.append(msgspec.structs.replace(event, time=float(len(stream))))
    return plans, stream, lossy


def check_invariants(rows: list[AgentProgress]) -> None:
    by_id = {row.agent_id: row for row in rows}
    for row in rows:
        kids = [by_id[c] for c in row.children]
        sub = row.subtree
        assert min(row.turns, row.tool_uses, sub.turns, sub.tool_uses, sub.running) >= 0
        assert min(_usage(row.usage)) >= 0
        assert sub.turns == row.turns + sum(k.subtree.turns for k in kids)
        assert sub.tool_uses == row.tool_uses + sum(k.subtree.tool_uses for k in kids)
        total = row.usage
        for kid in kids:
            total = total + kid.subtree.usage
        assert sub.usage == total
        assert sub.agents == 1 + sum(k.subtree.agents for k in kids)
        assert sub.running == int(is_live(row.status)) + sum(k.subtree.running for k in kids)
        assert row.elapsed >= 0


def _usage(usage: Usage) -> tuple[int, int, int, int]:
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_random_interleavings_keep_totals_consistent(
    scenario: tuple[list[Plan], list[Event | Lagged], bool],
) -> None:
    plans, stream, lossy = scenario
    tracker = ProgressTracker()
    previous: dict[str, tuple[int, ...]] = {}
    for event in stream:
        tracker.handle(event)
        rows = tracker.tree(now=1e9)
        check_invariants(rows)
        for row in rows:  # an agent's own counters never go down
            counters = (row.turns, row.tool_uses, *_usage(row.usage))
            before = previous.get(row.agent_id, (0,) * 6)
            assert all(now >= then for now, then in zip(counters, before, strict=True))
            previous[row.agent_id] = counters
    for plan in plans:
        if plan.who.agent_id not in tracker:
            assert lossy
            continue
        got = tracker.progress(plan.who.agent_id, now=1e9)
        if lossy:
            assert got.turns <= plan.turns
            assert got.tool_uses <= plan.tool_uses
            assert all(g <= e for g, e in zip(_usage(got.usage), _usage(plan.usage), strict=True))
        else:
            assert (got.turns, got.tool_uses, got.usage) == (plan.turns, plan.tool_uses, plan.usage)
            assert got.status == plan.events[-1].status  # type: ignore[attr-defined]
            assert got.subtree.running == 0
    if not lossy:
        assert len(tracker) == len(plans)
        assert tracker.lagged == 0


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.integers(1, 4))
def test_a_small_max_agents_bounds_memory_and_keeps_counts_consistent(
    scenario: tuple[list[Plan], list[Event | Lagged], bool], max_agents: int
) -> None:
    plans, stream, _ = scenario
    parents = {plan.who.agent_id: plan.who.parent_id for plan in plans}

    def chain(agent_id: str | None) -> int:
        return 0 if agent_id is None else 1 + chain(parents[agent_id])

    longest = max(chain(agent_id) for agent_id in parents)
    tracker = ProgressTracker(max_agents=max_agents)
    for event in stream:
        tracker.handle(event)
        assert len(tracker) <= max(max_agents, longest)
        rows = tracker.tree(now=1e9)
        by_id = {row.agent_id: row for row in rows}
        for row in rows:  # dropped agents' work stays above; running agents do not
            kids = [by_id[c] for c in row.children]
            sub = row.subtree
            assert min(row.turns, row.tool_uses, *_usage(row.usage)) >= 0
            assert sub.turns >= row.turns + sum(k.subtree.turns for k in kids)
            assert sub.tool_uses >= row.tool_uses + sum(k.subtree.tool_uses for k in kids)
            assert sub.agents >= 1 + sum(k.subtree.agents for k in kids)
            assert sub.running == int(is_live(row.status)) + sum(k.subtree.running for k in kids)
    stats = tracker.statistics()
    assert stats.agents == len(tracker)


def test_with_as_many_agents_as_live_ones_a_live_agent_is_dropped() -> None:
    """Why agents_to_keep counts the finished ancestors: a lead that ended while its child
    runs is no leaf, so a tracker sized to the live agents alone drops the live child."""
    carl = Who("carl", "Carl")
    events = [LEAD.spawned("lead"), LEAD.status(RUNNING), ADA.spawned("x"), ADA.status(RUNNING)]
    events += [LEAD.status(Completed("done")), carl.spawned("x"), carl.status(RUNNING)]
    small = feed(ProgressTracker(max_agents=2), events)  # two live agents at most
    assert "ada" not in small
    kept = feed(ProgressTracker(max_agents=agents_to_keep(2, 1, floor=1)), events)
    assert ("ada" in kept, "carl" in kept, kept.statistics().evicted) == (True, True, 0)


def _live_agents(stream: list[Event | Lagged]) -> Iterator[tuple[Event | Lagged, set[str]]]:
    """Each event of a lossless stream, with the agents live once it happened."""
    live: dict[str, bool] = {}
    for event in stream:
        if isinstance(event, AgentSpawned):
            live[event.agent_id] = True
        elif isinstance(event, StatusChanged):
            live[event.agent_id] = is_live(event.status)
        yield event, {agent_id for agent_id, on in live.items() if on}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_a_tracker_of_agents_to_keep_never_drops_a_live_agent(
    scenario: tuple[list[Plan], list[Event | Lagged], bool],
) -> None:
    plans, stream, lossy = scenario
    assume(not lossy)
    most = max(len(live) for _, live in _live_agents(stream))
    depth = max(plan.who.depth for plan in plans)
    tracker = ProgressTracker(max_agents=agents_to_keep(most, depth, floor=1))
    for event, live in _live_agents(stream):
        tracker.handle(event)
        assert all(agent_id in tracker for agent_id in live)


async def test_a_runtime_keeps_every_agent_max_threads_lets_run(tmp_path: Path) -> None:
    """The runtime sizes its tracker from its limits: with max_threads past the tracker's
    default, no running agent's row is dropped and made again at each of its turns."""
    world = World(tmp_path, limits={"max_threads": 5000, "max_depth": 2})
    async with world.open(ScriptedProvider([testing.say("ok")])) as rt:
        assert rt.tracker.max_agents == agents_to_keep(5000, 2) == 20_000
    async with World(tmp_path / "small").open(ScriptedProvider([testing.say("ok")])) as rt:
        assert rt.tracker.max_agents == DEFAULT_MAX_AGENTS  # 8 threads: the floor


# -- the direct feed (issue 17, third round) ------------------------------------------


def _fed(tracker: ProgressTracker, feeds: dict[str, ProgressFeed], event: Event) -> None:
    """Tell ``tracker`` what ``event`` says the way the runtime does: the kernel's events
    folded, the loop's facts through the agent's :class:`ProgressFeed`."""
    if isinstance(event, AgentSpawned | StatusChanged):
        tracker.handle(event)
        return
    who = feeds.get(event.agent_id)
    if who is None:
        who = feeds[event.agent_id] = ProgressFeed(
            tracker,
            agent_id=event.agent_id,
            parent_id=event.parent_id,
            depth=event.depth,
            nickname=event.nickname,
        )
    match event:
        case TurnStarted():
            who.turn_started(event.turn, grace=event.grace)
        case UsageReported():
            who.usage(event.usage)
        case ToolCallStarted():
            who.tool_started(event.tool_use_id, event.tool_name, event.input)
        case ToolCallEnded():
            who.tool_ended(event.tool_use_id, event.tool_name, is_error=event.is_error)
        case TurnCompleted():
            who.turn_completed()
        case TextChunk():
            who.text()
        case ThoughtChunk():
            who.thought()
        case GracePeriodStarted():
            who.grace_started(event.reason)
        case GracePeriodEnded():
            who.grace_ended(event.outcome)
        case RunFinished():
            who.run_finished(event.terminate_reason, event.error)
        case _:
            raise AssertionError(f"not a loop event: {event!r}")


def _row(p: AgentProgress) -> tuple[Any, ...]:
    """A row without its activities' times (a feed stamps its own)."""
    return (
        p.agent_id,
        p.parent_id,
        p.depth,
        p.status,
        p.status_message,
        p.turns,
        p.tool_uses,
        p.usage,
        p.subtree,
        p.children,
        p.started_at,
        p.ended_at,
        [a.text for a in p.activities],
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios().filter(lambda scenario: not scenario[2]))
def test_the_direct_feed_tracks_what_folding_every_event_tracks(
    scenario: tuple[list[Plan], list[Event | Lagged], bool],
) -> None:
    """A tree of agents told its turns through :class:`ProgressFeed` (no event) has, after
    every step, the rows a tracker folding every event has, and each subtree's totals are
    the sum of the own totals in it."""
    plans, stream, _ = scenario
    folded, direct = ProgressTracker(), ProgressTracker()
    feeds: dict[str, ProgressFeed] = {}
    for event in stream:
        assert isinstance(event, Event)
        folded.handle(event)
        _fed(direct, feeds, event)
        rows = direct.tree(now=1e9)
        check_invariants(rows)
        assert [_row(p) for p in rows] == [_row(p) for p in folded.tree(now=1e9)]
    for plan in plans:
        got = direct.progress(plan.who.agent_id, now=1e9)
        assert (got.turns, got.tool_uses, got.usage) == (plan.turns, plan.tool_uses, plan.usage)
    assert direct.statistics().events == folded.statistics().events == len(stream)


def test_the_direct_feed_words_grace_text_and_failures_as_the_events_do() -> None:
    """What the random scenarios do not draw: a grace period, streamed text and thoughts, a
    failed tool call and a failed run, told both ways."""
    u = Usage(10, 2)
    events: list[Event] = [ADA.spawned("Explore", t=1.0), ADA.status(RUNNING, t=1.0)]
    events += [ADA.turn(1), ThoughtChunk(**ADA.env(0), text="hm")]
    events += [TextChunk(**ADA.env(0), text="hi"), ADA.usage(1, u, u)]
    events += [ADA.tool(1, "c1", "Bash", {"command": "false"})]
    events += [ADA.tool_end(1, "c1", "Bash", error=True), ADA.turn_done(1, 1)]
    events += [GracePeriodStarted(**ADA.env(0), reason="max_turns", grace_seconds=5.0)]
    events += [ADA.turn(2, grace=True), ADA.usage(2, u, u + u), ADA.turn_done(2, 0)]
    events += [GracePeriodEnded(**ADA.env(0), reason="max_turns", outcome="no_call")]
    events += [
        msgspec.structs.replace(ADA.finished(2, 1, u + u, reason="max_turns"), error="x\ny"),
        ADA.status(Errored("max turns"), t=9.0),
    ]
    folded, direct = ProgressTracker(), ProgressTracker()
    feeds: dict[str, ProgressFeed] = {}
    messages: list[tuple[str, str]] = []
    noted: set[str] = set()
    for event in events:
        folded.handle(event)
        _fed(direct, feeds, event)
        mine, theirs = direct.progress("ada", now=10), folded.progress("ada", now=10)
        assert _row(mine) == _row(theirs)
        messages.append((type(event).__name__, mine.status_message))
        noted.update(a.text for a in mine.activities)
    assert ("ThoughtChunk", "thinking (turn 1)") in messages
    assert ("TextChunk", "writing (turn 1)") in messages
    assert {"Bash: false", "Bash failed", "turn 1 done"} <= noted
    texts = [a.text for a in direct.progress("ada").activities]
    assert texts[-3:] == [
        "grace period ended: no call",
        "finished: max_turns (x)",
        "errored: max turns",
    ]


def test_a_feed_brings_back_a_row_forgotten_while_its_agent_runs() -> None:
    """A feed holds its agent's row between facts, and lets it go once the tree drops it: a
    row forgotten (or evicted) while the agent runs comes back under its parent, as an
    event about it would bring it back."""
    tracker = feed(ProgressTracker(), [LEAD.spawned("lead"), ADA.spawned("Explore")])
    ada = ProgressFeed(tracker, agent_id="ada", parent_id="lead", depth=1, nickname="Ada")
    ada.turn_started(1)
    assert tracker.forget("ada")
    ada.tool_started("c1", "Read", {"file_path": "a.py"})
    again = tracker.progress("ada")
    assert (again.parent_id, again.nickname, again.tool_uses, again.turns) == ("lead", "Ada", 1, 0)
    lead = tracker.progress("lead")
    assert lead.children == ("ada",)
    assert (lead.subtree.turns, lead.subtree.tool_uses) == (1, 1)  # forgotten work stays above


def test_a_feed_follows_its_row_made_again_by_an_event_and_a_phase_brings_none_back() -> None:
    """A row forgotten and made again by an event about the agent is the one the feed goes
    on with (not the dropped one it held, nor a second of its own); after a forget a
    phase alone (text, thoughts) brings no row back, and the next counted fact does."""
    tracker = feed(ProgressTracker(), [LEAD.spawned("lead"), ADA.spawned("Explore")])
    ada = ProgressFeed(tracker, agent_id="ada", parent_id="lead", depth=1, nickname="Ada")
    ada.turn_started(1)
    assert tracker.forget("ada")
    tracker.handle(ADA.status(RUNNING, t=2.0))  # an event makes the row again
    tracker.handle(ADA.turn(2))
    ada.tool_started("c1", "Read", {"file_path": "a.py"})
    ada.tool_ended("c1", "Read", is_error=False)
    ada.text()
    row = tracker.progress("ada")
    assert (row.turns, row.tool_uses) == (2, 1)  # the event's turns (caught up), the feed's call
    assert row.status_message.startswith("writing")
    assert tracker.progress("lead").children == ("ada",)
    assert tracker.forget("ada")
    ada.text()
    ada.thought()
    with pytest.raises(ProgressNotFound):
        tracker.progress("ada")
    ada.turn_completed()
    again = tracker.progress("ada")
    assert (again.parent_id, again.turns, again.tool_uses) == ("lead", 0, 0)
    assert [a.text for a in again.activities] == ["turn 0 done"]


def test_a_dropped_row_is_held_by_no_feed_between_runs_and_keeps_no_other_row() -> None:
    """A feed lets its row go when the run ends, so an agent kept open (or its record kept
    after its close) holds no row the tree dropped; a dropped row lets go of its links,
    so a feed that held one mid-run keeps no subtree alive."""
    tracker = feed(ProgressTracker(), [LEAD.spawned("lead"), ADA.spawned("Explore")])
    lead = ProgressFeed(tracker, agent_id="lead", nickname="Lead")
    ada = ProgressFeed(tracker, agent_id="ada", parent_id="lead", depth=1, nickname="Ada")
    ada.turn_started(1)
    lead.turn_started(1)
    row, ada_row = tracker._nodes["lead"], tracker._nodes["ada"]
    ada.run_finished("goal")
    assert tracker.forget("lead")  # and its child
    assert not [r for r in gc.get_referrers(ada_row) if isinstance(r, ProgressFeed)]
    assert [r for r in gc.get_referrers(row) if isinstance(r, ProgressFeed)] == [lead]
    assert (row.parent, row.children, ada_row.parent) == (None, {}, None)
    lead.turn_completed()  # the lead's next fact makes its row again, as an event would
    assert tracker.progress("lead").turns == 0


def test_the_activities_a_turn_keeps_are_not_tracked_by_the_cycle_collector() -> None:
    """Issue 17: every turn keeps a tool call's activity and its "turn N done" in the row
    (and a note for a failed call or a status), and each collection of the young
    generation walks what the collector tracks. None of them holds a cycle or is
    tracked, so a thousand rows of five add nothing to walk; they still read as the
    activities they stand for."""
    tracker = feed(ProgressTracker(), [LEAD.spawned("lead"), ADA.spawned("Explore")])
    ada = ProgressFeed(tracker, agent_id="ada", parent_id="lead", depth=1, nickname="Ada")
    for turn in (1, 2, 3):
        ada.turn_started(turn)
        ada.tool_started(f"c{turn}", "Read", {"file_path": f"f{turn}.py"})
        ada.tool_ended(f"c{turn}", "Read", is_error=turn == 3)
        ada.turn_completed()
    kept = tracker._nodes["ada"].activities
    assert len(kept) == 5
    assert not [a for a in kept if gc.is_tracked(a)]
    assert [a.text for a in tracker.progress("ada").activities] == [
        "Read f2.py",
        "turn 2 done",
        "Read f3.py",
        "Read failed",
        "turn 3 done",
    ]
