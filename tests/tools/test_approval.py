"""Approval routing: modes, the chain up the tree, deadlines, and approval in dispatch."""

from __future__ import annotations

import math
from typing import Any

import trio

from subagents.tools import (
    ApprovalDecision,
    ApprovalMode,
    ApprovalRequest,
    ApprovalRouter,
    CallbackApprover,
    ToolFlags,
    ToolRegistry,
    ToolResult,
    builtin_tools,
    dispatch,
)

NEEDS_APPROVAL = ToolFlags(read_only=False, background_safe=True, needs_approval=True)


def request(agent_id: str = "child") -> ApprovalRequest:
    return ApprovalRequest(agent_id=agent_id, tool_name="Bash", summary='{"command":"ls"}')


def chain(root: Any, *modes: ApprovalMode) -> ApprovalRouter:
    """Routers from the top-level agent (first mode) down to the caller (last mode)."""
    parent: Any = root
    router = None
    for depth, mode in enumerate(modes):
        router = ApprovalRouter(agent_id=f"agent-{depth}", mode=mode, parent=parent)
        parent = router
    assert router is not None
    return router


async def test_route_to_parent_reaches_the_root_callback(recording_approver: Any) -> None:
    root = recording_approver(ApprovalDecision.approve("user said yes"))
    route = ApprovalMode.ROUTE_TO_PARENT
    decision = await chain(root, route, route, route).request(request())
    assert decision == ApprovalDecision.approve("user said yes")
    (seen,) = root.requests
    assert seen.route == ("agent-2", "agent-1", "agent-0")
    assert seen.agent_id == "child"
    assert seen.summary == '{"command":"ls"}'


async def test_a_denial_comes_back_down(recording_approver: Any) -> None:
    root = recording_approver(ApprovalDecision.deny("not today"))
    decision = await chain(root, ApprovalMode.ROUTE_TO_PARENT).request(request())
    assert not decision.approved
    assert decision.reason == "not today"


async def test_auto_approve_answers_without_asking(recording_approver: Any) -> None:
    root = recording_approver(ApprovalDecision.deny("should not be asked"))
    decision = await chain(root, ApprovalMode.AUTO_APPROVE).request(request())
    assert decision.approved
    assert root.requests == []


async def test_auto_approve_higher_up_covers_the_subtree(recording_approver: Any) -> None:
    root = recording_approver(ApprovalDecision.deny("should not be asked"))
    router = chain(root, ApprovalMode.AUTO_APPROVE, ApprovalMode.ROUTE_TO_PARENT)
    decision = await router.request(request())
    assert decision.approved
    assert "agent-0" in decision.reason
    assert root.requests == []


async def test_suppress_denies_without_asking(recording_approver: Any) -> None:
    root = recording_approver()
    decision = await chain(root, ApprovalMode.ROUTE_TO_PARENT, ApprovalMode.SUPPRESS).request(
        request()
    )
    assert not decision.approved
    assert "suppressed" in decision.reason
    assert root.requests == []


async def test_no_parent_means_denied() -> None:
    decision = await ApprovalRouter("lonely").request(request())
    assert not decision.approved
    assert "no approver" in decision.reason


async def test_callback_approver_wraps_the_embedders_callback() -> None:
    seen: list[ApprovalRequest] = []

    async def prompt(req: ApprovalRequest) -> ApprovalDecision:
        seen.append(req)
        return ApprovalDecision.approve()

    router = ApprovalRouter("lead", parent=CallbackApprover(prompt))
    assert (await router.request(request())).approved
    assert [r.route for r in seen] == [("lead",)]


async def test_a_failing_callback_is_a_denial() -> None:
    async def broken(req: ApprovalRequest) -> ApprovalDecision:
        raise RuntimeError("terminal closed")

    async def confused(req: ApprovalRequest) -> Any:
        return True

    for callback in (broken, confused):
        decision = await ApprovalRouter("lead", parent=CallbackApprover(callback)).request(
            request()
        )
        assert not decision.approved
        assert "approval prompt" in decision.reason


async def test_pending_approval_ends_at_the_request_deadline(
    silent_approver: Any, autojump_clock: Any
) -> None:
    root = silent_approver()
    router = chain(root, ApprovalMode.ROUTE_TO_PARENT)
    start = trio.current_time()
    deadline = start + 30
    decision = await router.request(
        ApprovalRequest(agent_id="child", tool_name="Bash", summary="", deadline=deadline)
    )
    assert decision.timed_out
    assert not decision.approved
    assert trio.current_time() == deadline
    assert root.requests[0].deadline == deadline


async def test_router_timeout_bounds_a_request_without_deadline(
    silent_approver: Any, autojump_clock: Any
) -> None:
    router = ApprovalRouter("lead", parent=silent_approver(), timeout=7)
    start = trio.current_time()
    decision = await router.request(request())
    assert decision.timed_out
    assert trio.current_time() - start == 7


async def test_default_timeout_is_finite(silent_approver: Any, autojump_clock: Any) -> None:
    router = ApprovalRouter("lead", parent=silent_approver())
    assert math.isfinite(router.timeout)
    assert (await router.request(request())).timed_out


# -- dispatch ---------------------------------------------------------------------


async def test_approved_call_runs(fake_tool: Any, make_ctx: Any, recording_approver: Any) -> None:
    root = recording_approver()
    tool = fake_tool("Deploy", flags=NEEDS_APPROVAL)
    ctx = make_ctx(approver=ApprovalRouter("test-agent", parent=root))
    result = await dispatch(tool, {"text": "prod"}, ctx)
    assert result == ToolResult.ok("Deploy: prod")
    (seen,) = root.requests
    assert (seen.agent_id, seen.tool_name, seen.summary) == (
        "test-agent",
        "Deploy",
        '{"text":"prod"}',
    )


async def test_denied_call_is_a_tool_error_and_does_not_run(
    fake_tool: Any, make_ctx: Any, recording_approver: Any
) -> None:
    tool = fake_tool("Deploy", flags=NEEDS_APPROVAL)
    root = recording_approver(ApprovalDecision.deny("too risky"))
    ctx = make_ctx(approver=ApprovalRouter("test-agent", parent=root))
    result = await dispatch(tool, {"text": "prod"}, ctx)
    assert result.is_error
    assert result.content == (
        "Permission to use 'Deploy' was denied (too risky); the call was not run."
    )
    assert result.details["approval_denied"] is True
    assert tool.calls == []


async def test_without_an_approver_the_call_is_denied(fake_tool: Any, make_ctx: Any) -> None:
    tool = fake_tool("Deploy", flags=NEEDS_APPROVAL)
    result = await dispatch(tool, {}, make_ctx(approver=None))
    assert result.is_error
    assert "no approval channel" in result.content
    assert tool.calls == []


async def test_tools_without_the_flag_never_ask(fake_tool: Any, make_ctx: Any) -> None:
    tool = fake_tool("Look")
    result = await dispatch(tool, {}, make_ctx(approver=None))
    assert not result.is_error


async def test_pending_approval_respects_the_agent_deadline(
    fake_tool: Any, make_ctx: Any, silent_approver: Any, autojump_clock: Any
) -> None:
    tool = fake_tool("Deploy", flags=NEEDS_APPROVAL)
    agent_scope = trio.CancelScope(deadline=trio.current_time() + 42)
    ctx = make_ctx(
        approver=ApprovalRouter("test-agent", parent=silent_approver()), cancel_scope=agent_scope
    )
    start = trio.current_time()
    result = await dispatch(tool, {}, ctx)
    assert trio.current_time() - start == 42
    assert result.is_error
    assert result.details["approval_timed_out"] is True
    assert "timed out" in result.content
    assert tool.calls == []


async def test_a_misbehaving_approver_cannot_outlive_the_deadline(
    fake_tool: Any, make_ctx: Any, silent_approver: Any, autojump_clock: Any
) -> None:
    tool = fake_tool("Deploy", flags=NEEDS_APPROVAL)
    agent_scope = trio.CancelScope(deadline=trio.current_time() + 5)
    ctx = make_ctx(approver=silent_approver(), cancel_scope=agent_scope)
    result = await dispatch(tool, {}, ctx)
    assert result.details["approval_timed_out"] is True


async def test_builtin_write_asks_and_is_refused(
    make_ctx: Any, recording_approver: Any, tmp_path: Any
) -> None:
    root = recording_approver(ApprovalDecision.deny("read-only review"))
    ctx = make_ctx(approver=ApprovalRouter("test-agent", parent=root))
    registry = ToolRegistry(builtin_tools())
    for name, args in [
        ("Write", {"file_path": "new.txt", "content": "x"}),
        ("Bash", {"command": "touch made-by-bash"}),
    ]:
        result = await registry.call(name, args, ctx)
        assert result.is_error, name
        assert "denied (read-only review)" in result.content
    assert [r.tool_name for r in root.requests] == ["Write", "Bash"]
    assert list(tmp_path.iterdir()) == []
