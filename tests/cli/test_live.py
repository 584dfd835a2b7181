"""What ``subagents run`` shows: the live tree, plain lines, JSON lines, the summary, approvals."""

from __future__ import annotations

import io
import json
import re
import threading
from collections.abc import Iterator
from typing import Any, TextIO, cast

import attrs
import msgspec
import pytest
import trio
from rich.console import Console
from rich.live import Live

from subagents.actors import (
    PENDING_INIT,
    RUNNING,
    SHUTDOWN,
    AgentSpawned,
    Bus,
    Completed,
    Errored,
    Event,
    Lagged,
    Status,
    StatusChanged,
)
from subagents.cli._formatting import format_duration, format_tokens
from subagents.cli._json_lines import JsonLinesWriter, open_json_lines
from subagents.cli._live import LiveView, open_live_view, render_progress
from subagents.cli._plain_printer import PlainPrinter, open_plain_printer
from subagents.cli._report import print_summary, summarize, summary_table
from subagents.cli._terminal_approver import TerminalApprover
from subagents.runtime._events import (
    RunFinished,
    TextChunk,
    ToolCallEnded,
    ToolCallStarted,
    TurnCompleted,
    TurnStarted,
    UsageReported,
)
from subagents.runtime._progress.tracker import DEFAULT_MAX_AGENTS, ProgressTracker
from subagents.runtime._providers.base import Usage
from subagents.runtime._result import AgentResult, TerminateReason
from subagents.tools._approval import ApprovalRequest

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
ENVELOPE = ("seq", "type", "agent_id", "parent_id", "depth", "nickname", "time")


def plain(text: str) -> str:
    return ANSI.sub("", text)


def terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=140, height=40), out


# -- a synthetic team ----------------------------------------------------------------


@attrs.frozen
class Who:
    agent_id: str
    nickname: str
    parent_id: str | None = None
    depth: int = 0

    def env(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "parent_id": self.parent_id,
            "depth": self.depth,
            "nickname": self.nickname,
        }

    def spawned(self, label: str) -> AgentSpawned:
        return AgentSpawned(**self.env(), label=label)

    def status(self, status: Status) -> StatusChanged:
        return StatusChanged(**self.env(), status=status)

    def turn(self, turn: int, total: int) -> list[Event]:
        usage = Usage(input_tokens=total // 2, output_tokens=total // 2)
        return [
            TurnStarted(**self.env(), turn=turn, model="scripted"),
            TextChunk(**self.env(), text="thinking about it"),
            UsageReported(**self.env(), turn=turn, usage=usage, total=usage),
        ]

    def tool(self, turn: int, call: str, name: str, **args: Any) -> list[Event]:
        return [
            ToolCallStarted(**self.env(), turn=turn, tool_use_id=call, tool_name=name, input=args),
            ToolCallEnded(
                **self.env(),
                turn=turn,
                tool_use_id=call,
                tool_name=name,
                is_error=False,
                duration=0.1,
            ),
        ]

    def finished(self, reason: str, turns: int, tools: int, total: int) -> RunFinished:
        usage = Usage(input_tokens=total // 2, output_tokens=total // 2)
        return RunFinished(
            **self.env(),
            terminate_reason=reason,
            turns=turns,
            tool_uses=tools,
            usage=usage,
            duration=2.5,
            error="provider exploded" if reason == "error" else None,
        )


LEAD = Who("a-lead", "Lead")
ADA = Who("a-ada", "Ada", "a-lead", 1)
BOB = Who("a-bob", "Bob", "a-lead", 1)
CY = Who("a-cy", "Cy", "a-lead", 1)
TYPES = {LEAD: "general-purpose", ADA: "Explore", BOB: "Explore", CY: "Plan"}
FINAL = {LEAD: "completed", ADA: "completed", BOB: "errored", CY: "shutdown"}


def script() -> Iterator[list[Event]]:
    """The team's events, in steps: every status kind, tools, usage, finished runs."""
    yield [LEAD.spawned("general-purpose"), LEAD.status(PENDING_INIT), LEAD.status(RUNNING)]
    yield [
        *LEAD.turn(1, 1000),
        *LEAD.tool(1, "l1", "spawn_agent", subagent_type="Explore", prompt="find main"),
    ]
    for who in (ADA, BOB, CY):
        yield [who.spawned(TYPES[who]), who.status(PENDING_INIT), who.status(RUNNING)]
    yield [*ADA.turn(1, 400), *ADA.tool(1, "x1", "Read", file_path="src/app.py")]
    yield [*BOB.turn(1, 200), *BOB.tool(1, "x2", "Grep", pattern="TODO", path="src")]
    yield [*CY.turn(1, 100)]
    yield [
        TurnCompleted(**ADA.env(), turn=1, stop_reason="end_turn", tool_calls=1, usage=Usage()),
        ADA.finished("goal", 1, 1, 400),
        ADA.status(Completed(result="main is in src/app.py")),
    ]
    yield [BOB.finished("error", 1, 1, 200), BOB.status(Errored(message="boom\nTraceback ..."))]
    yield [CY.finished("aborted", 1, 0, 100), CY.status(SHUTDOWN)]
    yield [
        *LEAD.turn(2, 1500),
        LEAD.finished("goal", 2, 1, 1500),
        LEAD.status(Completed(result="The entry point is src/app.py:main.")),
    ]


def all_events() -> list[Event]:
    return [event for step in script() for event in step]


def row_of(text: str, nickname: str) -> str:
    """The line of ``nickname``'s row: its name comes first, after the tree guides."""
    row = re.compile(rf"^[│├└─ ]*{nickname}\b")
    return next(line for line in text.splitlines() if row.search(line))


# -- the live view -------------------------------------------------------------------


async def test_live_view_draws_every_agent_with_its_type_and_final_status(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bus = Bus()
    tracker = ProgressTracker()
    console, out = terminal()
    start = trio.current_time()
    with bus.subscribe(capacity=256, policy="drop_oldest") as sub:
        async with open_live_view(tracker, sub, console, redirect_io=False) as view:
            for step in script():
                for event in step:
                    bus.publish_nowait(event)
                await trio.sleep(0.5)
            mid_frames = view.frames
    elapsed = trio.current_time() - start
    assert mid_frames >= 2  # it redrew while the team worked
    assert view.frames <= elapsed * 8 + 3  # ... at a bounded rate
    drawn = plain(out.getvalue())
    for who in FINAL:
        assert who.nickname in drawn
        assert TYPES[who] in drawn
    # The final frame, left on screen, is the run's end.
    last = drawn[drawn.rindex("subagents  4 agents") :]
    assert "0 running" in last
    for who, kind in FINAL.items():
        line = row_of(last, who.nickname)
        assert TYPES[who] in line
        assert kind in line
    assert "├─ Ada" in last
    assert "└─ Cy" in last
    assert "errored: boom" in row_of(last, "Bob")
    assert "not shown" not in last


async def test_an_error_in_the_body_ends_the_view_and_comes_out_unwrapped(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bus = Bus()
    tracker = ProgressTracker()
    console, out = terminal()
    with (
        bus.subscribe(capacity=256, policy="drop_oldest") as sub,
        pytest.raises(ValueError, match="lead failed"),
    ):
        async with open_live_view(tracker, sub, console, redirect_io=False):
            for event in all_events()[:3]:
                bus.publish_nowait(event)
            raise ValueError("the lead failed")
    # The buffered events made the final frame, and the display was stopped.
    assert "Lead" in row_of(plain(out.getvalue()).split("subagents  ")[-1], "Lead")
    with Live(console=console, auto_refresh=False):  # would raise if a display were left on
        pass


async def test_live_view_renders_counters_and_activity() -> None:
    tracker = ProgressTracker()
    for event in all_events()[:22]:  # mid-run: Ada has read a file, Cy is still starting
        if not (event.agent_id == CY.agent_id and getattr(event, "status", None) == RUNNING):
            tracker.handle(msgspec.structs.replace(event, time=10.0))
    console, out = terminal()
    view = LiveView(tracker, console, clock=lambda: 52.5)
    console.print(view.render())
    text = plain(out.getvalue())
    ada = row_of(text, "Ada")
    assert re.search(r"Explore\s+running\s+1\s+400\s+1\s+42s\s", ada)
    assert "Read src/app.py" in ada
    assert "running turn 1 · spawned Cy (Plan)" in row_of(text, "Lead")
    assert "starting" in row_of(text, "Cy")  # pending_init reads "starting"


async def test_view_fed_faster_than_it_draws_stays_bounded(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bus = Bus()
    tracker = ProgressTracker()
    console, out = terminal()
    with bus.subscribe(capacity=32, policy="drop_oldest") as sub:
        async with open_live_view(tracker, sub, console, redirect_io=False) as view:
            for event in all_events()[:3]:
                bus.publish_nowait(event)
            await trio.sleep(0.5)
            before = trio.current_time()
            for n in range(5000):  # a burst: the agents never yield to the view
                await bus.publish(TextChunk(**LEAD.env(), text=f"chunk {n}"))
                assert sub.statistics().buffered <= 32
            assert trio.current_time() == before  # publishing never waited for the view
            await trio.sleep(0.5)
            assert tracker.lagged >= 5000 - 32
            assert len(tracker) == 1
            frames = view.frames
    assert sub.statistics().dropped == tracker.lagged
    assert frames >= 2
    drawn = plain(out.getvalue())
    assert f"{tracker.lagged} events not shown (view fell behind)" in drawn


def test_a_large_tree_is_cut_to_the_rows_that_fit_keeping_live_agents() -> None:
    tracker = ProgressTracker()
    lead = Who("root", "Root")
    for event in (lead.spawned("general-purpose"), lead.status(RUNNING)):
        tracker.handle(event)
    for i in range(199):
        child = Who(f"c{i}", f"Kid{i}", "root", 1)
        tracker.handle(child.spawned("Explore"))
        tracker.handle(child.status(RUNNING))
        if i % 40 != 7:  # five stay running
            tracker.handle(child.status(Completed(result="ok")))
    console, out = terminal()
    console.print(render_progress(tracker.tree(), max_rows=10))
    text = plain(out.getvalue())
    rows = [line for line in text.splitlines() if re.search(r"\b(Root|Kid\d+)\b", line)]
    assert len(rows) == 10
    for i in (7, 47, 87, 127, 167):
        assert re.search(rf"\bKid{i}\b.*running", text)
    assert "190 more agents not shown" in text
    assert "200 agents · 6 running" in text


# -- plain lines ---------------------------------------------------------------------


async def test_plain_printer_writes_one_readable_line_per_significant_event() -> None:
    bus = Bus()
    out = io.StringIO()
    with bus.subscribe(capacity=256, policy="drop_oldest") as sub:
        async with open_plain_printer(sub, out) as printer:
            for step in script():
                for event in step:
                    await bus.publish(event)
                await trio.sleep(0)
    text = out.getvalue()
    assert "\x1b" not in text
    lines = [line.split(" ", 1)[1] for line in text.splitlines()]
    assert all(re.match(r"\d\d:\d\d:\d\d ", line) for line in text.splitlines())
    assert lines == [
        "Lead (general-purpose) started",
        "Lead: running",
        "Lead: spawn_agent Explore: find main",
        "  Ada (Explore) spawned by Lead",
        "  Ada: running",
        "  Bob (Explore) spawned by Lead",
        "  Bob: running",
        "  Cy (Plan) spawned by Lead",
        "  Cy: running",
        "  Ada: Read src/app.py",
        "  Bob: Grep 'TODO' in src",
        "  Ada: finished: goal after 1 turn, 1 tool use, 400 tokens, 2.5s",
        "  Ada: completed: main is in src/app.py",
        "  Bob: finished: error after 1 turn, 1 tool use, 200 tokens, 2.5s (provider exploded)",
        "  Bob: errored: boom",
        "  Cy: finished: aborted after 1 turn, 0 tool uses, 100 tokens, 2.5s",
        "  Cy: shutdown",
        "Lead: finished: goal after 2 turns, 1 tool use, 1.5k tokens, 2.5s",
        "Lead: completed: The entry point is src/app.py:main.",
    ]
    assert printer.lines == len(lines)


def test_plain_printer_notes_lost_events() -> None:
    printer = PlainPrinter(io.StringIO())
    line = printer.format(Lagged(dropped=7))
    assert line is not None
    assert line.endswith("… 7 events not shown (fell behind)")
    assert printer.lagged == 7


# -- JSON lines ----------------------------------------------------------------------


async def test_json_lines_size_their_tracker_as_the_run_asks() -> None:
    """``subagents run --json`` sizes the writer's tracker as the runtime's (agents_to_keep):
    a run of more agents at once than the default keeps drops no running agent's row."""
    async with open_json_lines(Bus(), io.StringIO(), max_agents=12_000) as writer:
        pass
    assert writer.tracker.max_agents == 12_000
    async with open_json_lines(Bus(), io.StringIO()) as writer:
        pass
    assert writer.tracker.max_agents == DEFAULT_MAX_AGENTS


async def test_json_lines_are_lossless_and_end_with_the_run_summary() -> None:
    bus = Bus()
    out = io.StringIO()
    async with open_json_lines(bus, out, capacity=4, max_block=5.0) as writer:
        for step in script():
            for event in step:
                await bus.publish(event)
            for n in range(30):  # chatter, faster than the writer drains a 4-event buffer
                await bus.publish(TextChunk(**LEAD.env(), text=f"chunk {n}"))
    summary = writer.write_summary(
        session_id="sess-1",
        lead_id=LEAD.agent_id,
        transcripts_dir="/tmp/state/sessions/sess-1/subagents",
    )
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    events, last = lines[:-1], lines[-1]
    assert len(events) == bus.last_seq == writer.written
    assert [e["seq"] for e in events] == list(range(1, bus.last_seq + 1))  # nothing lost
    for line in lines:
        assert set(ENVELOPE) <= line.keys()
    statuses = [e["status"] for e in events if e["type"] == "status_changed"]
    assert {s["kind"] for s in statuses} == {
        "pending_init",
        "running",
        "completed",
        "errored",
        "shutdown",
    }
    assert {"kind": "completed", "result": "main is in src/app.py"} in statuses
    assert {"kind": "errored", "message": "boom\nTraceback ..."} in statuses
    assert writer.lagged == 0
    assert bus.statistics().blocked_publishes > 0  # the writer did hold publishers back

    assert last["type"] == "run_finished"
    assert last["summary"] is True
    assert last["seq"] == bus.last_seq + 1
    assert last["session_id"] == "sess-1"
    assert (last["agent_id"], last["nickname"], last["depth"]) == ("a-lead", "Lead", 0)
    assert last["status"] == {"kind": "completed", "result": "The entry point is src/app.py:main."}
    assert last["terminate_reason"] == "goal"
    assert last["transcripts_dir"] == "/tmp/state/sessions/sess-1/subagents"
    agents = {a["nickname"]: a for a in last["agents"]}
    assert {name: a["status"]["kind"] for name, a in agents.items()} == {
        who.nickname: kind for who, kind in FINAL.items()
    }
    assert {name: a["agent_type"] for name, a in agents.items()} == {
        who.nickname: label for who, label in TYPES.items()
    }
    assert agents["Bob"]["terminate_reason"] == "error"
    assert agents["Cy"]["terminate_reason"] == "aborted"
    assert agents["Lead"]["usage"] == {
        "input_tokens": 750,
        "output_tokens": 750,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
    }
    assert last["counts"] == {
        "agents": 4,
        "pending_init": 0,
        "running": 0,
        "completed": 2,
        "errored": 1,
        "shutdown": 1,
        "events": len(events),
        "dropped": 0,
    }
    assert last["totals"]["total_tokens"] == 1500 + 400 + 200 + 100
    assert summary.lead is not None
    assert summary.lead.result == "The entry point is src/app.py:main."


class Quiet(Event, frozen=True, kw_only=True, omit_defaults=True, tag="quiet"):
    """A kind that omits defaults: its null parent_id must still be written."""

    note: str = ""


class Odd:
    def __str__(self) -> str:
        return "odd"


def test_json_lines_keep_the_envelope_for_every_kind_and_for_gaps() -> None:
    writer = JsonLinesWriter(io.StringIO())
    quiet = json.loads(writer.line(Quiet(**LEAD.env(), seq=3)))
    assert quiet["type"] == "quiet"
    assert set(ENVELOPE) <= quiet.keys()
    assert quiet["parent_id"] is None
    gap = json.loads(writer.line(Lagged(dropped=5)))
    assert gap["type"] == "lagged"
    assert gap["dropped"] == 5
    assert gap["seq"] == 3
    assert set(ENVELOPE) <= gap.keys()
    assert writer.lagged == 5
    odd = ToolCallStarted(**ADA.env(), turn=1, tool_use_id="t", tool_name="X", input={"o": Odd()})
    assert json.loads(writer.line(odd))["input"] == {"o": "odd"}  # not JSON: written as str


# -- the summary ---------------------------------------------------------------------


def test_summary_shows_the_lead_result_every_agent_and_where_transcripts_are() -> None:
    tracker = ProgressTracker()
    events = all_events()
    for event in events:
        tracker.handle(event)
    results: dict[str, AgentResult | RunFinished] = {
        e.agent_id: e for e in events if isinstance(e, RunFinished)
    }
    results[LEAD.agent_id] = AgentResult(
        terminate_reason=TerminateReason.GOAL,
        text="The entry point is src/app.py:main, as Ada found.",
        turns=2,
        tool_uses=1,
        usage=Usage(input_tokens=750, output_tokens=750),
        duration=75.0,
    )
    summary = summarize(
        tracker, session_id="sess-42", results=results, transcripts_dir="/state/sess-42"
    )
    assert summary.lead_id == LEAD.agent_id
    assert [a.nickname for a in summary.agents] == ["Lead", "Ada", "Bob", "Cy"]
    assert summary.counts()["errored"] == 1
    assert summary.events == len(events)

    out = io.StringIO()
    console = Console(file=out, width=140)  # not a terminal: no ANSI
    print_summary(console, summary)
    text = out.getvalue()
    assert "\x1b" not in text
    assert "The entry point is src/app.py:main, as Ada found." in text
    assert re.search(r"Lead\s+general-purpose\s+completed \(goal\)", text)
    assert re.search(r"Lead\s*│ general-purpose\s*│ completed\s*│ goal\s*│\s+2 │\s+1\.5k │", text)
    assert re.search(r"├─ Ada\s*│ Explore\s*│ completed\s*│ goal\s*│\s+1 │\s+400 │\s+1 │", text)
    assert re.search(r"├─ Bob\s*│ Explore\s*│ errored\s*│ error\s*│", text)
    assert re.search(r"└─ Cy\s*│ Plan\s*│ shutdown\s*│ aborted\s*│", text)
    assert re.search(r"total\s*│.*│\s+5 │\s+2\.2k │\s+3 │", text)
    assert "1m15s" in text  # the lead's run duration
    assert "session sess-42" in text
    assert "transcripts /state/sess-42" in text


def test_summary_without_outcomes_uses_progress_alone() -> None:
    tracker = ProgressTracker()
    for event in all_events():
        if not isinstance(event, RunFinished):
            tracker.handle(event)
    summary = summarize(tracker.tree(), session_id="s")
    assert summary.lead_id == LEAD.agent_id
    assert {a.nickname: a.terminate_reason for a in summary.agents} == dict.fromkeys(
        ["Lead", "Ada", "Bob", "Cy"]
    )
    console, out = terminal()
    console.print(summary_table(summary))
    assert re.search(r"Bob\s*│ Explore\s*│ errored\s*│ -", plain(out.getvalue()))


def test_final_statuses_win_over_a_view_that_stopped_before_the_shutdown() -> None:
    """Ctrl-C stops the view first: the supervisor's statuses, given, say what became of all."""
    tracker = ProgressTracker()
    writer = JsonLinesWriter(io.StringIO(), threaded=False)
    for event in all_events():
        if isinstance(event, StatusChanged) and event.status not in (PENDING_INIT, RUNNING):
            continue  # the final statuses: after the view stopped
        if not isinstance(event, RunFinished):
            tracker.handle(event)
            writer.tracker.handle(event)
    aborted = {who.agent_id: who.finished("aborted", 1, 0, 100) for who in (LEAD, ADA, BOB)}
    finals: dict[str, Status] = {LEAD.agent_id: SHUTDOWN, ADA.agent_id: SHUTDOWN}
    summary = summarize(tracker, session_id="s", results=aborted, statuses=finals)
    assert {a.nickname: a.kind for a in summary.agents} == {
        "Lead": "shutdown",
        "Ada": "shutdown",
        "Bob": "running",  # no final status known: the view's
        "Cy": "running",
    }
    console, out = terminal()
    print_summary(console, summary)
    text = plain(out.getvalue())
    assert re.search(r"Lead\s+general-purpose\s+shutdown \(aborted\)", text)
    assert re.search(r"├─ Ada\s*│ Explore\s*│ shutdown\s*│ aborted\s*│", text)
    line = writer.summary_line(
        writer.summary(session_id="s", lead_id=LEAD.agent_id, results=aborted, statuses=finals)
    )
    assert line["status"] == {"kind": "shutdown"}


def test_short_formats() -> None:
    assert [format_tokens(n) for n in (0, 999, 1000, 12_345, 999_949, 2_500_000)] == [
        "0",
        "999",
        "1.0k",
        "12.3k",
        "999.9k",
        "2.50M",
    ]
    assert [format_duration(s) for s in (4.24, 65, 3725, float("nan"))] == [
        "4.2s",
        "1m05s",
        "1h02m",
        "-",
    ]
    assert format_duration(4.9, tenths=False) == "4s"


# -- approvals -----------------------------------------------------------------------


def approver_for(
    stdin: TextIO | None, *, auto_yes: bool = False
) -> tuple[TerminalApprover, io.StringIO]:
    tracker = ProgressTracker()
    for event in all_events()[:12]:
        tracker.handle(event)
    out = io.StringIO()
    console = Console(file=out, width=140)
    approver = TerminalApprover(console, auto_yes=auto_yes, tracker=tracker, stdin=stdin)
    return approver, out


def bash_request(deadline: float = float("inf")) -> ApprovalRequest:
    return ApprovalRequest(ADA.agent_id, "Bash", "rm -rf build/", deadline=deadline)


async def test_yes_approves_everything_and_says_so() -> None:
    approver, out = approver_for(None, auto_yes=True)
    decision = await approver(bash_request())
    assert decision.approved
    assert "approved (--yes): Ada (Explore) wants to run Bash: rm -rf build/" in out.getvalue()


@pytest.mark.parametrize(("typed", "approved"), [("y\n", True), ("YES\n", True), ("n\n", False)])
async def test_the_terminal_answers_a_prompt_labelled_by_agent(typed: str, approved: bool) -> None:
    approver, out = approver_for(io.StringIO(typed))
    decision = await approver(bash_request())
    assert decision.approved is approved
    text = out.getvalue()
    assert "approval needed: Ada (Explore) wants to run Bash: rm -rf build/" in text
    assert ("approved Bash for Ada (Explore)" in text) is approved


async def test_end_of_input_denies_this_and_every_later_request() -> None:
    approver, _ = approver_for(io.StringIO(""))
    first = await approver(bash_request())
    second = await approver(bash_request())
    assert not first.approved
    assert not second.approved
    assert "terminal input is closed" in second.reason


class Silent:
    """A terminal nobody types into, until released."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def readline(self) -> str:
        self.release.wait(10)
        return ""


async def test_an_unanswered_prompt_is_denied_at_its_deadline(
    autojump_clock: trio.testing.MockClock,
) -> None:
    silent = Silent()
    approver, out = approver_for(cast(TextIO, silent))
    try:
        start = trio.current_time()
        decision = await approver(bash_request(deadline=start + 30))
        assert decision.timed_out
        assert not decision.approved
        assert trio.current_time() - start == pytest.approx(30)
        assert "(within 30s)" in out.getvalue()
        assert "no answer in time: denied Bash for Ada (Explore)" in out.getvalue()
    finally:
        silent.release.set()


async def test_a_prompt_pauses_the_live_view(autojump_clock: trio.testing.MockClock) -> None:
    bus = Bus()
    tracker = ProgressTracker()
    console, out = terminal()
    approver = TerminalApprover(console, tracker=tracker, stdin=io.StringIO("y\n"))
    with bus.subscribe(capacity=256, policy="drop_oldest") as sub:
        async with open_live_view(tracker, sub, console, redirect_io=False) as view:
            approver.live = view
            for event in all_events()[:12]:
                bus.publish_nowait(event)
            await trio.sleep(0.5)
            before = view.frames
            decision = await approver(bash_request())
            assert view.frames == before + 1  # redrawn on resume
            await trio.sleep(0.5)
    assert decision.approved
    drawn = plain(out.getvalue())
    prompt = drawn.index("approval needed: Ada (Explore) wants to run Bash")
    assert drawn.index("approved Bash for Ada (Explore)") > prompt
    assert "subagents  3 agents" in drawn[prompt:]  # the view came back below the prompt


def test_statuses_encode_with_their_kind() -> None:
    # The JSON-lines contract rests on msgspec's tagged encoding of statuses.
    encoded = msgspec.json.encode(LEAD.status(Errored(message="x")))
    assert json.loads(encoded)["status"] == {"kind": "errored", "message": "x"}
