"""Team benchmark: peer messages between 100 teammates, against raw Trio channels.

``team_messages``: a team of 100 idle teammates (and its lead) on the scripted
provider at zero latency. Every teammate sends ``per_member`` messages to the
next one round the ring, all senders at once; the clock stops when every
message has been read and the team is at rest again. The figure is messages
per second.

- ``subagents``: :meth:`subagents.teams.Team.send` through a real runtime
  (``Runtime.team``): each message framed as data, kept in order per sender,
  put in the recipient's bounded mailbox, published as ``message_sent``; an idle
  recipient wakes on it and reads it in a model turn (scripted, instant) before
  going idle again: what a team pays for exactly-once, ordered, woken delivery.
- ``trio``: 100 tasks, each with a bounded memory channel it reads until
  closed; each sender sends its messages to the next one's channel.

    python bench/bench_team_messages.py             # 100 teammates x 10 messages
    python bench/bench_team_messages.py --quick     # 20 teammates x 10 messages
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

from subagents.runtime import (
    LimitsConfig,
    Reply,
    RuntimeConfig,
    ScriptedProvider,
    Teammate,
    TranscriptsConfig,
    open_runtime,
)

#: Seconds one measurement may take before it is abandoned.
TIMEOUT = 600.0
#: Messages each teammate sends per run.
PER_MEMBER = 10
_AGENTS = {
    "bench-lead": {"description": "Leads.", "prompt": "Lead.", "tools": ["SendMessage"]},
    "bench-mate": {"description": "Reads.", "prompt": "Read.", "tools": ["SendMessage"]},
}


async def team_messages(members: int, per_member: int, root: Path) -> tuple[float, int]:
    """Seconds for ``members`` teammates to send ``per_member`` messages each round a ring
    until every one was read; and the messages delivered."""
    config = RuntimeConfig(
        state_dir=root,
        transcripts=TranscriptsConfig(enabled=False),
        limits=LimitsConfig(max_threads=members + 1, max_time_seconds=TIMEOUT),
    )
    names = [f"m{index}" for index in range(members)]
    async with (
        ScriptedProvider(policy=lambda request: Reply(text="read")) as provider,
        open_runtime(
            config,
            cwd=root,
            home=root,
            env={},
            provider=provider,
            agents_json=json.dumps(_AGENTS),
        ) as rt,
        rt.team(
            "bench",
            "bench-lead",
            "Lead.",
            teammates=[Teammate(name, "bench-mate", "Wait.") for name in names],
        ) as team,
    ):
        await team.settled()
        ids = {name: team.agent_id(name) for name in names}
        delivered = 0

        async def sender(index: int) -> None:
            nonlocal delivered
            me, to = names[index], names[(index + 1) % members]
            for n in range(per_member):
                deliveries = await team.send(ids[me], to, f"message {n}")
                delivered += sum(1 for d in deliveries if d.delivered)

        with trio.fail_after(TIMEOUT):
            start = time.perf_counter()
            async with trio.open_nursery() as nursery:
                for index in range(members):
                    nursery.start_soon(sender, index)
            await team.settled()
            elapsed = time.perf_counter() - start
    if delivered != members * per_member:
        raise SystemExit(f"only {delivered} of {members * per_member} messages were delivered")
    return elapsed, delivered


async def raw_messages(members: int, per_member: int) -> tuple[float, int]:
    """The same ring on bounded ``trio`` memory channels, one reading task per member."""
    channels = [trio.open_memory_channel[str](64) for _ in range(members)]
    read = 0

    async def reader(receive: trio.MemoryReceiveChannel[str]) -> None:
        nonlocal read
        async with receive:
            async for _message in receive:
                read += 1

    async def sender(index: int) -> None:
        send = channels[(index + 1) % members][0]
        for n in range(per_member):
            await send.send(f"message {n}")

    start = time.perf_counter()
    async with trio.open_nursery() as readers:
        for _send, receive in channels:
            readers.start_soon(reader, receive)
        async with trio.open_nursery() as senders:
            for index in range(members):
                senders.start_soon(sender, index)
        for send, _receive in channels:
            await send.aclose()
    return time.perf_counter() - start, read


def run_team(members: int, per_member: int = PER_MEMBER) -> tuple[float, int]:
    """One measurement through a real team, its state in a fresh temporary folder."""
    with tempfile.TemporaryDirectory(prefix="subagents-bench-team-") as tmp:
        return trio.run(team_messages, members, per_member, Path(tmp))


def run_raw(members: int, per_member: int = PER_MEMBER) -> tuple[float, int]:
    """One measurement on raw channels."""
    return trio.run(raw_messages, members, per_member)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 teammates")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    members = 20 if args.quick else 100
    team: list[float] = []
    raw: list[float] = []
    for _ in range(args.reps):
        seconds, sent = run_raw(members)
        raw.append(sent / seconds)
        seconds, sent = run_team(members)
        team.append(sent / seconds)
    for name, rates in (("raw Trio (channels)", raw), ("subagents team", team)):
        print(f"{name}: {max(rates):,.0f} messages/s (median {statistics.median(rates):,.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
