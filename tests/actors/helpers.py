"""Behaviors and helpers shared by the kernel tests."""

from __future__ import annotations

from typing import Any

import trio

from subagents.actors import (
    ActorContext,
    ChildFinished,
    Event,
    Lagged,
    Request,
    StatusChanged,
    Subscription,
    kind_of,
)


async def scripted(ctx: ActorContext) -> str | None:
    """Obeys commands: ("finish", r), ("fail", m), ("hang",), ("spawn",); replies to requests."""
    async for message in ctx:
        if isinstance(message, ChildFinished):
            continue
        if isinstance(message, Request):
            message.reply(("pong", message.payload))
            continue
        command = message[0]
        if command == "finish":
            return message[1]  # type: ignore[no-any-return]
        if command == "fail":
            raise RuntimeError(message[1])
        if command == "hang":
            await trio.sleep_forever()
        if command == "spawn":
            await ctx.spawn(scripted)
    return None


async def idle(ctx: ActorContext) -> None:
    """Waits for one message and returns."""
    await ctx.receive()


async def stubborn(ctx: ActorContext) -> None:
    """Ignores the close request: only cancellation ends it."""
    await trio.sleep_forever()


def drain(sub: Subscription) -> list[Event | Lagged]:
    """Everything buffered in ``sub`` right now."""
    out: list[Event | Lagged] = []
    while True:
        try:
            out.append(sub.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            return out


def kinds(events: list[Any], agent_id: str) -> list[str]:
    """The status kinds published for ``agent_id``, in order."""
    return [
        kind_of(e.status) for e in events if isinstance(e, StatusChanged) and e.agent_id == agent_id
    ]
