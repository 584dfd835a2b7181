"""The lead's situation, replayed from its conversation: its children and their reports.

The lead policy keeps no state of its own: each turn :class:`Replay` reads the
results of its ``LS``, ``spawn_agent``, ``wait`` and ``send_input`` calls and
the notices of finished children, in order, and tells which folders are
started, refused, running or done, and what each child reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, final

import attrs

from subagents.demo._survey.common import is_instruction, json_blocks, message_text, parse_folder
from subagents.demo._survey.results import parse_ls
from subagents.runtime import Message, ToolResultBlock

__all__ = ["SKIPPED_FOLDERS", "Child", "Replay", "folders_to_survey", "number"]

#: Top-level folders the lead does not survey: version control, environments, caches.
SKIPPED_FOLDERS: Final = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__"}
    | {".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox"}
)
_FINAL_KINDS: Final = frozenset({"completed", "errored", "shutdown", "not_found"})
_NOTICE = re.compile(
    r"Agent (?P<nickname>[^\n]*) \((?P<id>[^()\s]+)\) finished: (?P<kind>[a-z_]+)\."
    r"(?:\n\n(?:<agent_result [^>\n]*>\n)?(?P<detail>.*?)(?:\n</agent_result>)?)?",
    re.DOTALL,
)
_LIMIT = "Agent limit reached"

_Position = tuple[int, int]


@attrs.define
class Child:
    """One Explore agent as the conversation tells of it."""

    folder: str
    agent_id: str
    nickname: str
    live: bool = True
    report: str | None = None
    failure: str | None = None
    followup_at: _Position | None = None
    answer: str | None = None
    answer_failure: str | None = None

    @property
    def facts(self) -> dict[str, Any] | None:
        """The facts block of the report (the last JSON block with ``folder`` and ``files``)."""
        blocks = [b for b in json_blocks(self.report or "") if "files" in b and "followup" not in b]
        return blocks[-1] if blocks else None


@final
class Replay:
    """The lead's situation, from replaying its conversation's tool results and notices."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.listing: tuple[list[str], list[str], bool] | None = None
        self.listing_error: str | None = None
        self.children: dict[str, Child] = {}
        self.refused: dict[str, str] = {}  # folder -> why spawn_agent refused it for good
        self.capacity: int | None = None
        self.limit_hits = 0
        self.followup_tried = False
        self.followup_error: str | None = None
        calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
        for index, message in enumerate(messages):
            if message.role == "assistant":
                calls.update((u.id, (u.name, u.input)) for u in message.tool_uses)
                continue
            for position, block in enumerate(message.content):
                if type(block) is ToolResultBlock and block.tool_use_id in calls:
                    name, args = calls[block.tool_use_id]
                    self._result(name, args, block, (index, position))
            if is_instruction(message):
                notice = _NOTICE.fullmatch(message_text(message).strip())
                if notice is not None:
                    detail = notice.group("detail")
                    self._finished(notice.group("id"), notice.group("kind"), detail, (index, 0))

    @property
    def live(self) -> list[Child]:
        return [c for c in self.children.values() if c.live]

    def _result(
        self, name: str, args: Mapping[str, Any], block: ToolResultBlock, at: _Position
    ) -> None:
        content = block.content
        if name == "LS" and self.listing is None and self.listing_error is None:
            if block.is_error:
                self.listing_error = content
            else:
                self.listing = parse_ls(content)
        elif name == "spawn_agent":
            folder = parse_folder(str(args.get("message", ""))) or "."
            spawned = None if block.is_error else _json(content)
            if spawned is not None and "agent_id" in spawned:
                nickname = str(spawned.get("nickname", spawned["agent_id"]))
                child = Child(folder, str(spawned["agent_id"]), nickname)
                self.children[child.agent_id] = child
            elif content.startswith(_LIMIT):
                self.limit_hits += 1
                self.capacity = len(self.live)
                if not self.live:  # no child of ours to wait for: the slots are not ours
                    self.refused[folder] = content
            else:
                self.refused[folder] = content
        elif name == "wait":
            if block.is_error:
                for agent_id in args.get("ids", ()):
                    self._finished(str(agent_id), "errored", f"wait failed: {content}", at)
                return
            statuses = (_json(content) or {}).get("status", {})
            for agent_id, status in statuses.items():
                kind = str(status.get("kind", "")) if isinstance(status, dict) else ""
                if kind in _FINAL_KINDS:
                    detail = status.get("result") or status.get("message")
                    self._finished(agent_id, kind, detail, at)
        elif name == "send_input":
            self.followup_tried = True
            target = self.children.get(str(args.get("id", "")))
            if block.is_error or target is None:
                self.followup_error = content
            else:
                target.followup_at = at
                target.live = True

    def _finished(self, agent_id: str, kind: str, detail: str | None, at: _Position) -> None:
        """A child reached a final status (reported by a wait result or a notice)."""
        child = self.children.get(agent_id)
        if child is None:
            return
        if child.followup_at is not None and at > child.followup_at:
            if child.answer is not None or child.answer_failure is not None:
                return
            if kind == "completed" and detail != child.report:
                child.answer = detail or ""
                child.live = False
            elif kind != "completed":
                child.answer_failure = f"{kind}: {detail}" if detail else kind
                child.live = False
            return
        if child.report is None and child.failure is None:
            if kind == "completed":
                child.report = detail or ""
            else:
                child.failure = f"{kind}: {detail}" if detail else kind
            child.live = False


def _json(content: str) -> dict[str, Any] | None:
    try:
        value = json.loads(content)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def number(value: object) -> int:
    """``value`` if it is an int (a count from a report), else 0."""
    return value if isinstance(value, int) else 0


def folders_to_survey(state: Replay) -> list[str]:
    """The top-level folders the listing gives to survey, sorted (skipped ones left out)."""
    folders = state.listing[0] if state.listing is not None else []
    return sorted(f for f in folders if f not in SKIPPED_FOLDERS)
