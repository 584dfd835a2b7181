"""Team benchmarks: claims on the shared task board against a raw-Trio lock and dict.

``board_claims``: 100 members contend for 10,000 tasks. Every member walks the
task list from its own starting point (member ``i`` at task ``i * tasks /
members``), claiming each task it reaches; a claim that finds the task taken
fails and the member walks on, and a member stops after as many refusals in a
row as its stretch is long (it has run into tasks the others took). Both sides
follow the same walk, so they make the same claims; the figure is successful
claims per second.

- ``subagents``: the board actor (:func:`subagents.teams.open_board`), each
  claim a request with its deadline, the journal written (and fsync'd, in
  batches) to a temporary folder: what a team pays for atomic, durable claims.
- ``trio``: a ``trio.Lock`` and a ``dict`` of owners in memory: no journal,
  no deadline, no event.

    python bench/bench_teams.py             # 100 members, 10,000 tasks, 5 repetitions
    python bench/bench_teams.py --quick     # 20 members, 2,000 tasks
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

from subagents.teams import BoardConfig, TaskAlreadyClaimed, open_board


def _walk(member: int, members: int, tasks: int) -> tuple[int, int]:
    """Where member ``member`` starts, and how many refusals in a row end its walk."""
    stride = max(1, tasks // members)
    return (member * stride) % tasks, stride


async def board_claims(members: int, tasks: int, folder: Path) -> tuple[float, int]:
    """Seconds for the members to claim through the board, and the claims made."""
    config = BoardConfig(max_tasks=max(tasks, 1))
    async with open_board(folder / "board.jsonl", config=config) as board:
        # The tasks are made before the clock starts, by the members at once (so their
        # journal lines are written in batches, not one fsync each).
        async def make(index: int) -> None:
            for n in range(index, tasks, members):
                await board.create(f"task {n}", "")

        async with trio.open_nursery() as nursery:
            for index in range(members):
                nursery.start_soon(make, index)
        ids = [task.id for task in board.snapshot()]
        made = 0

        async def member(index: int) -> None:
            nonlocal made
            position, patience = _walk(index, members, tasks)
            name = f"m{index}"
            refused = 0
            while refused < patience:
                try:
                    await board.claim(ids[position], name)
                except TaskAlreadyClaimed:
                    refused += 1
                else:
                    made += 1
                    refused = 0
                position = (position + 1) % tasks

        start = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for index in range(members):
                nursery.start_soon(member, index)
        return time.perf_counter() - start, made


async def raw_claims(members: int, tasks: int) -> tuple[float, int]:
    """The same walk on a ``trio.Lock`` and a ``dict``, in memory."""
    lock = trio.Lock()
    owners: dict[int, str] = {}
    made = 0

    async def member(index: int) -> None:
        nonlocal made
        position, patience = _walk(index, members, tasks)
        name = f"m{index}"
        refused = 0
        while refused < patience:
            async with lock:
                taken = position in owners
                if not taken:
                    owners[position] = name
            if taken:
                refused += 1
            else:
                made += 1
                refused = 0
            position = (position + 1) % tasks

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for index in range(members):
            nursery.start_soon(member, index)
    return time.perf_counter() - start, made


def run_board(members: int, tasks: int) -> tuple[float, int]:
    """One measurement on the board, its journal in a fresh temporary folder."""
    with tempfile.TemporaryDirectory(prefix="subagents-bench-board-") as tmp:
        return trio.run(board_claims, members, tasks, Path(tmp))


def run_raw(members: int, tasks: int) -> tuple[float, int]:
    """One measurement on the lock and dict."""
    return trio.run(raw_claims, members, tasks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 members, 2,000 tasks")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args(argv)
    members, tasks = (20, 2_000) if args.quick else (100, 10_000)
    board: list[float] = []
    raw: list[float] = []
    for _ in range(args.reps):
        seconds, made = run_raw(members, tasks)
        raw.append(made / seconds)
        seconds, made = run_board(members, tasks)
        board.append(made / seconds)
    for name, rates in (("raw Trio (lock + dict)", raw), ("subagents board", board)):
        print(f"{name}: {max(rates):,.0f} claims/s (median {statistics.median(rates):,.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
