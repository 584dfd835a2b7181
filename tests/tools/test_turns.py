"""CallTurn: the ordered part of concurrent calls runs in call order, whatever the scheduling."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing

from subagents.tools import ToolContext, call_turns


async def test_ordered_parts_run_in_call_order_even_when_started_in_reverse(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turns = call_turns(4)
    seen: list[int] = []

    async def call(index: int) -> None:
        await trio.sleep(4 - index)  # the last call is ready first
        async with turns[index].ordered():
            seen.append(index)
        await trio.sleep(10)

    async with trio.open_nursery() as nursery:
        for index in reversed(range(4)):
            nursery.start_soon(call, index)
    assert seen == [0, 1, 2, 3]


async def test_a_call_that_ends_without_its_ordered_part_frees_the_next(
    autojump_clock: trio.testing.MockClock,
) -> None:
    turns = call_turns(2)
    seen: list[str] = []

    async def plain() -> None:
        await trio.sleep(3)
        seen.append("first ended")
        turns[0].release()

    async def ordered() -> None:
        async with turns[1].ordered():
            seen.append("second ordered")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ordered)
        nursery.start_soon(plain)
    assert seen == ["first ended", "second ordered"]
    assert trio.current_time() == 3


async def test_in_call_order_is_a_no_op_outside_a_batch(tmp_path: Path) -> None:
    ctx = ToolContext("a", 0, tmp_path)
    async with ctx.in_call_order():
        pass
