"""Fixtures shared by the tool tests: fake tools, fake approvers and call contexts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
import trio

from subagents.tools import (
    ApprovalDecision,
    ApprovalMode,
    ApprovalRequest,
    ApprovalRouter,
    ToolContext,
    ToolFlags,
    ToolResult,
)


class EchoArgs(msgspec.Struct, forbid_unknown_fields=True):
    """Arguments of the fake tools."""

    text: str = ""


@attrs.define
class FakeTool:
    """A tool that records its calls and echoes its argument."""

    name: str
    flags: ToolFlags = attrs.field(factory=lambda: ToolFlags(read_only=True, background_safe=True))
    description: str = "A fake tool for tests."
    arguments_type: type[msgspec.Struct] = EchoArgs
    calls: list[Any] = attrs.field(factory=list)
    behaviour: Callable[[Any], Any] | None = None

    async def call(self, args: Any, ctx: ToolContext, /) -> ToolResult:
        self.calls.append(args)
        if self.behaviour is not None:
            return await self.behaviour(args)
        return ToolResult.ok(f"{self.name}: {args.text}")


@attrs.define
class RecordingApprover:
    """A root approver that answers every request the same way and records it."""

    decision: ApprovalDecision = attrs.field(factory=lambda: ApprovalDecision.approve("test"))
    requests: list[ApprovalRequest] = attrs.field(factory=list)

    async def request(self, req: ApprovalRequest, /) -> ApprovalDecision:
        self.requests.append(req)
        return self.decision


@attrs.define
class SilentApprover:
    """A root approver that never answers."""

    requests: list[ApprovalRequest] = attrs.field(factory=list)

    async def request(self, req: ApprovalRequest, /) -> ApprovalDecision:
        self.requests.append(req)
        await trio.sleep_forever()
        raise AssertionError("unreachable")


@pytest.fixture
def fake_tool() -> Callable[..., FakeTool]:
    """Build a :class:`FakeTool`."""
    return FakeTool


@pytest.fixture
def make_ctx(tmp_path: Path) -> Callable[..., ToolContext]:
    """Build a context rooted in ``tmp_path`` (or elsewhere) that auto-approves by default."""

    def make(
        root: Path | None = None,
        *,
        depth: int = 1,
        approver: Any = "auto",
        cancel_scope: trio.CancelScope | None = None,
    ) -> ToolContext:
        if approver == "auto":
            approver = ApprovalRouter("test-agent", ApprovalMode.AUTO_APPROVE)
        return ToolContext(
            agent_id="test-agent",
            depth=depth,
            workspace_root=root if root is not None else tmp_path,
            cancel_scope=cancel_scope,
            approver=approver,
        )

    return make


@pytest.fixture
def recording_approver() -> Callable[..., RecordingApprover]:
    """Build a :class:`RecordingApprover`."""
    return RecordingApprover


@pytest.fixture
def silent_approver() -> Callable[..., SilentApprover]:
    """Build a :class:`SilentApprover`."""
    return SilentApprover
