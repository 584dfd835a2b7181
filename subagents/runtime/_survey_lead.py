"""The offline lead policy: survey the working directory by fanning out Explore agents.

:class:`LeadPolicy` answers each model call of the lead from the conversation
alone: the results of its ``LS``, ``spawn_agent``, ``wait`` and
``send_input`` calls and the notices of finished children. Each turn it
replays them in order and then acts:

1. ``LS`` the working directory; every top-level folder but version-control,
   virtual-environment and cache folders is to be surveyed;
2. spawn one ``Explore`` agent per folder (:func:`folder_task` names it), as
   many in one turn as the limit allows (while it is unknown, up to 16). A tool
   error saying the agent limit is reached leaves that folder queued, and the
   number of children running at that moment becomes the most it runs at once
   from then on (refused while none runs, the folder is given up: no slot of
   its own can free up);
3. ``wait`` for the running children; as each finishes (by the wait's result
   or its notice, whichever comes first) the freed slots go to queued folders;
4. when all are done, ``send_input`` one follow-up (:func:`followup_question`)
   to the agent of the largest folder and wait for its answer;
5. write the summary: a Markdown table (folder, files, lines, languages,
   TODO/FIXME, tests) with totals, the follow-up's answer, and the main facts
   again as a fenced JSON block (one line per folder) for programs to read.

Results may come in any order; rows are sorted by folder name.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, final

import attrs

from subagents.runtime._messages import Message, ToolResultBlock
from subagents.runtime._provider import ModelRequest
from subagents.runtime._scripted import Reply
from subagents.runtime._survey import (
    DEFAULT_SURVEY_LATENCY,
    calls_reply,
    final_reply,
    folder_task,
    followup_question,
    is_instruction,
    jitter,
    json_blocks,
    message_text,
    own_messages,
    parse_folder,
    parse_ls,
    shown,
)

__all__ = ["SKIPPED_FOLDERS", "LeadPolicy"]

#: Top-level folders the lead does not survey: version control, environments, caches.
SKIPPED_FOLDERS: Final = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__"}
    | {".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox"}
)
_EXPLORE: Final = "Explore"
_WAIT_MS: Final = 300_000
_FOLLOWUP_FILES: Final = 3
_LANGUAGES_SHOWN: Final = 3
_FINAL_KINDS: Final = frozenset({"completed", "errored", "shutdown", "not_found"})
_NOTICE = re.compile(
    r"Agent (?P<nickname>[^\n]*) \((?P<id>[^()\s]+)\) finished: (?P<kind>[a-z_]+)\."
    r"(?:\n\n(?:<agent_result [^>\n]*>\n)?(?P<detail>.*?)(?:\n</agent_result>)?)?",
    re.DOTALL,
)
_LIMIT = "Agent limit reached"
#: Spawns tried in one turn while the agent limit is unknown (the rest wait a turn).
_FIRST_BURST: Final = 16
#: The facts of each folder the summary's JSON block repeats.
_ROW_KEYS: Final = (
    "folder",
    "files",
    "lines",
    "text_files",
    "binary_files",
    "empty_files",
    "languages",
    "todo_fixme",
    "tests",
    "exact",
)

_Position = tuple[int, int]


@attrs.define
class _Child:
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
class _Replay:
    """The lead's situation, from replaying its conversation's tool results and notices."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.listing: tuple[list[str], list[str], bool] | None = None
        self.listing_error: str | None = None
        self.children: dict[str, _Child] = {}
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
    def live(self) -> list[_Child]:
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
                child = _Child(folder, str(spawned["agent_id"]), nickname)
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


def _number(value: object) -> int:
    return value if isinstance(value, int) else 0


def _lines(facts: Mapping[str, Any] | None) -> int:
    return _number(facts.get("lines")) if facts else -1


@final
@attrs.frozen
class LeadPolicy:
    """The scripted model of a lead surveying the working directory (see the module doc).

    ``latency`` (seconds, jittered 50-150% per turn) is how long each reply takes.
    """

    latency: float = DEFAULT_SURVEY_LATENCY

    def __call__(self, request: ModelRequest) -> Reply:
        """The next reply, worked out from the conversation so far."""
        latency = jitter(self.latency, request)
        state = _Replay(own_messages(request.messages))
        tools = set(request.tool_names)
        if request.grace:
            return final_reply(request, _summary(state), latency)
        if state.listing is None and state.listing_error is None:
            if "LS" not in tools:
                return final_reply(
                    request, "I cannot survey the directory: LS is not available.", latency
                )
            return calls_reply(
                "Listing the top-level folders of the working directory.",
                [("LS", {"path": "."})],
                latency,
            )
        if state.listing is None:
            return final_reply(request, _summary(state), latency)
        if not {"spawn_agent", "wait"} <= tools:
            text = "I cannot start Explore agents: spawn_agent and wait are not available to me."
            return final_reply(request, text, latency)
        folders = _folders(state)
        started = {c.folder for c in state.children.values()}
        queue = [f for f in folders if f not in started and f not in state.refused]
        live = state.live
        free = _FIRST_BURST if state.capacity is None else max(state.capacity - len(live), 0)
        if not live and queue:
            free = max(free, 1)  # nothing to wait for: try once more
        spawn = queue[:free]
        if spawn or live:
            calls: list[tuple[str, Mapping[str, Any]]] = [
                ("spawn_agent", {"agent_type": _EXPLORE, "message": folder_task(f)}) for f in spawn
            ]
            if live:
                ids = [c.agent_id for c in live]
                calls.append(("wait", {"ids": ids, "timeout_ms": _WAIT_MS}))
            return calls_reply(_step_text(spawn, queue[len(spawn) :], live), calls, latency)
        target = _largest(state)
        if target is not None and not state.followup_tried and "send_input" in tools:
            return calls_reply(
                f"Asking {target.nickname} ({shown(target.folder)}, the largest folder) for its "
                f"{_FOLLOWUP_FILES} largest files.",
                [
                    (
                        "send_input",
                        {
                            "id": target.agent_id,
                            "message": followup_question(target.folder, _FOLLOWUP_FILES),
                        },
                    ),
                    ("wait", {"ids": [target.agent_id], "timeout_ms": _WAIT_MS}),
                ],
                latency,
            )
        return final_reply(request, _summary(state), latency)


def _folders(state: _Replay) -> list[str]:
    folders = state.listing[0] if state.listing is not None else []
    return sorted(f for f in folders if f not in SKIPPED_FOLDERS)


def _largest(state: _Replay) -> _Child | None:
    done = [c for c in state.children.values() if c.facts is not None and "error" not in c.facts]
    if not done:
        return None
    return max(
        done, key=lambda c: (_lines(c.facts), _number((c.facts or {}).get("files")), c.folder)
    )


def _step_text(spawn: Sequence[str], queued: Sequence[str], live: Sequence[_Child]) -> str:
    parts = []
    if spawn:
        parts.append("Spawning Explore agents for " + ", ".join(shown(f) for f in spawn))
    if live:
        parts.append("waiting for " + ", ".join(f"{c.nickname} ({shown(c.folder)})" for c in live))
    text = "; ".join(parts)
    text = text[0].upper() + text[1:]
    if queued:
        text += f" ({len(queued)} more queued until a slot frees up)"
    return text + "."


# -- the summary ------------------------------------------------------------------------------


def _languages(counts: Mapping[str, int]) -> str:
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown_ = ", ".join(f"{name} {n}" for name, n in ranked[:_LANGUAGES_SHOWN])
    if len(ranked) > _LANGUAGES_SHOWN:
        shown_ += f", +{len(ranked) - _LANGUAGES_SHOWN} more"
    return shown_ or "-"


def _row(cells: Iterable[object]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def _summary(state: _Replay) -> str:
    """The final answer: table with totals, notes, the follow-up's answer, and a JSON block."""
    if state.listing is None:
        why = state.listing_error or "the directory was not listed"
        return f"I could not survey the working directory: {why}"
    folders = _folders(state)
    by_folder = {c.folder: c for c in state.children.values()}
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    entry_points: list[str] = []
    table = [
        _row(("Folder", "Files", "Lines", "Languages", "TODO/FIXME", "Tests")),
        "|---|---:|---:|---|---:|---:|",
    ]
    for folder in folders:
        child = by_folder.get(folder)
        facts = child.facts if child is not None else None
        if facts is None or "error" in facts:
            why = (
                (facts or {}).get("error")
                or (child.failure if child else None)
                or state.refused.get(folder)
                or (("still running" if child.live else "no report") if child else "not surveyed")
            )
            problems.append(f"{shown(folder)}: {why}")
            table.append(_row((f"{folder}/", "?", "?", "?", "?", "?")))
            continue
        rows.append({key: facts[key] for key in _ROW_KEYS if key in facts})
        entry_points.extend(facts.get("entry_points", ())[:1])
        if not facts.get("exact", True):
            problems.append(f"{shown(folder)}: " + "; ".join(facts.get("notes", ())))
        table.append(
            _row(
                (
                    f"{folder}/",
                    facts.get("files", "?"),
                    facts.get("lines", "?"),
                    _languages(facts.get("languages", {})),
                    facts.get("todo_fixme", "?"),
                    facts.get("tests", "?"),
                )
            )
        )
    languages: Counter[str] = Counter()
    for facts in rows:
        languages.update(facts.get("languages", {}))
    totals = {
        key: sum(_number(r.get(key)) for r in rows)
        for key in ("files", "lines", "todo_fixme", "tests")
    }
    table.append(
        _row(
            (
                "**Total**",
                totals["files"],
                totals["lines"],
                _languages(languages),
                totals["todo_fixme"],
                totals["tests"],
            )
        )
    )
    skipped = sorted(set(state.listing[0]) & SKIPPED_FOLDERS)
    lines = [
        f"Surveyed {len(rows)} of {len(folders)} top-level folders of the working directory "
        f"with {len(state.children)} Explore agents"
        + (
            f" (the agent limit was reached {_times(state.limit_hits)}; queued folders started "
            "as slots freed up)."
            if state.limit_hits
            else "."
        ),
        "",
        *table,
        "",
        f"Top-level files (not in any folder, not counted above): {len(state.listing[1])}.",
    ]
    if skipped:
        lines.append("Not surveyed: " + ", ".join(f"{f}/" for f in skipped) + ".")
    if not state.listing[2]:
        lines.append("LS did not list every top-level entry; some folders may be missing.")
    if entry_points:
        lines.append("Entry points: " + ", ".join(entry_points) + ".")
    lines.extend(f"Incomplete: {p}." for p in problems)
    followup = _followup(state)
    if followup:
        lines.extend(["", followup])
    data = {
        "folders": rows,
        "totals": {**totals, "languages": dict(languages.most_common())},
        "top_level_files": len(state.listing[1]),
        "skipped": skipped,
        "problems": problems,
    }
    return "\n".join(lines) + "\n\n" + _compact(data)


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _compact(data: Mapping[str, Any]) -> str:
    """``data`` as a fenced JSON block with one line per folder, short enough to read."""
    head = {k: v for k, v in data.items() if k != "folders"}
    rows = ",\n    ".join(json.dumps(r, ensure_ascii=False) for r in data["folders"])
    rest = json.dumps(head, ensure_ascii=False)[1:-1]
    body = f'{{\n  "folders": [\n    {rows}\n  ],\n  {rest}\n}}' if rows else json.dumps(data)
    return f"```json\n{body}\n```"


def _followup(state: _Replay) -> str:
    child = next((c for c in state.children.values() if c.followup_at is not None), None)
    if child is None:
        if state.followup_error:
            return f"The follow-up could not be sent: {state.followup_error}"
        return ""
    who = f"{child.nickname} ({shown(child.folder)})"
    if child.answer_failure is not None:
        return f"Follow-up to {who}: no answer ({child.answer_failure})."
    if child.answer is None:
        return f"Follow-up to {who}: no answer yet."
    blocks = [b for b in json_blocks(child.answer) if b.get("followup") == "largest-files"]
    if not blocks:
        return f"Follow-up to {who}: {child.answer.strip()}"
    files = blocks[-1].get("files", [])
    listed = ", ".join(f"{f['path']} ({f['lines']} lines)" for f in files) or "no text files"
    return f"Follow-up to {who}, the largest folder: its {len(files)} largest files are {listed}."
