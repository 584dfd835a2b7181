"""A small world for runtime tests: a project folder, a home folder, agents, config, hooks."""

from __future__ import annotations

import json
import textwrap
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs

from subagents.actors import Bus, Event, Lagged, StatusChanged, kind_of
from subagents.runtime import (
    Hook,
    HookPayload,
    LimitsConfig,
    Message,
    Origin,
    Provider,
    Runtime,
    RuntimeConfig,
    ToolResultBlock,
    open_runtime,
)

LEAD_TOOLS = "spawn_agent, wait, send_input, close_agent, resume_agent, Task, TaskOutput, LS"


def write_agent(
    project: Path, name: str, body: str = "You are a test agent.", **fields: Any
) -> Path:
    """Write ``.claude/agents/<name>.md`` with ``fields`` in the frontmatter (YAML values)."""
    folder = project / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"name: {name}", f"description: The {name} agent of the tests."]
    for key, value in fields.items():
        lines.append(f"{key}: {json.dumps(value) if not isinstance(value, str) else value}")
    path = folder / f"{name}.md"
    path.write_text("---\n" + "\n".join(lines) + "\n---\n\n" + textwrap.dedent(body) + "\n")
    return path


@attrs.define
class World:
    """A temporary project and home, and the runtime configuration pointing at them."""

    root: Path
    limits: dict[str, Any] = attrs.field(factory=dict)
    hooks: dict[str, Any] = attrs.field(factory=dict)
    extra: dict[str, Any] = attrs.field(factory=dict)

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def state(self) -> Path:
        return self.root / "state"

    def __attrs_post_init__(self) -> None:
        self.project.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        (self.project / ".git").mkdir(exist_ok=True)
        (self.project / "README.md").write_text("# A project\n")

    def config(self, **changes: Any) -> RuntimeConfig:
        limits = {"close_grace_period": 1.0, "max_time_seconds": 1000.0, **self.limits}
        return RuntimeConfig(
            state_dir=self.state,
            limits=LimitsConfig(**limits),
            hooks=self.hooks,
            **{**self.extra, **changes},
        )

    def agent(self, name: str, body: str = "You are a test agent.", **fields: Any) -> Path:
        return write_agent(self.project, name, body, **fields)

    @asynccontextmanager
    async def open(
        self,
        provider: Provider,
        *,
        bus: Bus | None = None,
        hooks: Sequence[Hook] = (),
        **options: Any,
    ) -> AsyncIterator[Runtime]:
        # The world's project is the test's own: trusted, so its agents' hooks apply.
        options.setdefault("trust_project", True)
        async with open_runtime(
            self.config(),
            cwd=self.project,
            home=self.home,
            env={},
            provider=provider,
            bus=bus,
            hooks=hooks,
            **options,
        ) as rt:
            yield rt


@attrs.define(eq=False)
class HookLog:
    """Python hooks that record every firing: ``(event, agent_id, agent_type)``."""

    fired: list[tuple[str, str, str]] = attrs.field(factory=list)
    payloads: list[HookPayload] = attrs.field(factory=list)

    async def __call__(self, payload: HookPayload) -> None:
        self.fired.append((payload.hook_event_name, payload.agent_id, payload.agent_type))
        self.payloads.append(payload)

    def hooks(self, *events: str) -> list[Hook]:
        names = events or ("SubagentStart", "SubagentStop")
        return [Hook(name, function=self) for name in names]

    def count(self, event: str, agent_id: str) -> int:
        return sum(1 for e, a, _ in self.fired if e == event and a == agent_id)


def drain(subscription: Any) -> list[Event]:
    """Every event buffered in ``subscription``, lag markers refused."""
    events: list[Event] = []
    while True:
        try:
            event = subscription.receive_nowait()
        except Exception:
            return events
        assert not isinstance(event, Lagged)
        events.append(event)


def statuses_of(events: Sequence[Event], agent_id: str) -> list[str]:
    """The status kinds an agent went through, in order."""
    return [
        kind_of(e.status) for e in events if isinstance(e, StatusChanged) and e.agent_id == agent_id
    ]


def tool_results(messages: Sequence[Message]) -> list[ToolResultBlock]:
    """Every tool result of a conversation, in order."""
    return [
        block
        for message in messages
        if message.origin is Origin.TOOL_RESULTS
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]
