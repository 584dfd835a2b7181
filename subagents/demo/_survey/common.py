"""Scripted policies that survey a directory for real: the offline ``subagents run``.

Without an API key, ``subagents run`` drives its agents with the
:class:`~subagents.runtime.ScriptedProvider`; :func:`survey_policies` gives it
two policies that do real work with the real tools, so the run is worth
watching and its answer is right for the directory:

- the lead (:class:`~subagents.demo._survey.lead.LeadPolicy`, every agent
  type but ``Explore``) lists the top-level folders with ``LS``, spawns one
  ``Explore`` agent per folder with ``spawn_agent`` (queuing the rest when the
  agent limit is reached), ``wait``\\ s for them, sends one follow-up with
  ``send_input`` to the agent of the largest folder, and writes a Markdown
  table of the facts with totals;
- each ``Explore`` agent (:class:`~subagents.demo._survey.explore.ExplorePolicy`)
  surveys its folder with ``Glob``, ``Grep`` and ``Read`` and reports files,
  lines, languages, TODO/FIXME lines, tests and entry points.

Both policies work everything out from the conversation (tool calls, their
results, notices), never from state of their own, so a resumed agent goes on
where it was. This module holds what they share: the message formats between
lead and Explore (:func:`folder_task`, :func:`followup_question`, fenced JSON
report blocks), the pairing of tool calls with their results, and the shape
of their replies. The parsing of tool-result text is in
:mod:`~subagents.demo._survey.results`.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from subagents.runtime import (
    COMPLETE_TASK,
    Message,
    ModelRequest,
    Origin,
    Reply,
    ReplyPolicy,
    ScriptedToolCall,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = [
    "DEFAULT_SURVEY_LATENCY",
    "Exchange",
    "call_key",
    "calls_reply",
    "episode_start",
    "exchanges",
    "final_reply",
    "fenced",
    "folder_task",
    "followup_question",
    "is_instruction",
    "jitter",
    "json_blocks",
    "message_text",
    "own_messages",
    "parse_folder",
    "parse_question",
    "shown",
    "survey_policies",
]

#: Seconds a surveying agent "thinks" before each reply (jittered per turn).
DEFAULT_SURVEY_LATENCY: Final = 0.1

_JSON_BLOCK = re.compile(r"```json[ \t]*\n(.*?)\n```", re.DOTALL)
_FOLDER_LINE = re.compile(r"^folder:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_FOLDER_PROSE = re.compile(r"\bfolder\s+`([^`\n]+)`")
_QUESTION_LINE = re.compile(r"^question:[ \t]*([a-z-]+)(?:[ \t]+(\d+))?[ \t]*$", re.MULTILINE)
_LARGEST = re.compile(r"(\d+)\s+(?:largest|biggest)|(?:largest|biggest)\b", re.IGNORECASE)


def survey_policies(latency: float = DEFAULT_SURVEY_LATENCY) -> dict[str, ReplyPolicy]:
    """The policies of an offline survey, by agent type, for ``ScriptedProvider(policies=...)``.

    ``Explore`` agents survey a folder; every other type (``*``) leads.
    ``latency`` is each reply's delay in seconds (jittered 50-150% per turn).
    """
    # Imported here: both policy modules import this one.
    from subagents.demo._survey.explore import ExplorePolicy
    from subagents.demo._survey.lead import LeadPolicy

    return {"Explore": ExplorePolicy(latency), "*": LeadPolicy(latency)}


# -- message formats (lead -> Explore) ------------------------------------------------------------


def shown(folder: str) -> str:
    """A folder as prose shows it: in backticks, or "the working directory" for ``.``."""
    return "the working directory" if folder == "." else f"`{folder}`"


def folder_task(folder: str) -> str:
    """The task a lead gives an Explore agent to survey ``folder``.

    The last line, ``folder: "<name>"`` (a JSON string, so any name fits), is
    what :func:`parse_folder` reads; the prose is for people and real models.
    """
    return (
        f"Survey the folder {shown(folder)} of the working directory: list its files with "
        "Glob, count lines and TODO/FIXME lines with Grep, read its entry points, and end "
        "with a short summary and a fenced JSON block of the facts.\n"
        f"folder: {json.dumps(folder, ensure_ascii=False)}"
    )


def _clean_folder(raw: str) -> str:
    folder = raw.strip()
    while folder.startswith("./"):
        folder = folder[2:]
    if len(folder) > 1:
        folder = folder.rstrip("/") or "/"
    return folder or "."


def parse_folder(text: str) -> str | None:
    """The folder a task names (its last ``folder:`` line, else a ``folder `x``` phrase)."""
    lines = _FOLDER_LINE.findall(text)
    if lines:
        raw = lines[-1]
        if raw.startswith('"'):
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw.strip('"')
            raw = value if isinstance(value, str) else raw
        return _clean_folder(raw)
    prose = _FOLDER_PROSE.search(text)
    return _clean_folder(prose.group(1)) if prose else None


def followup_question(folder: str, count: int = 3) -> str:
    """The follow-up a lead sends: the ``count`` largest files of ``folder`` by line count."""
    return (
        f"Follow-up: which are the {count} largest files in {shown(folder)}, by line count?\n"
        f"question: largest-files {count}"
    )


def parse_question(text: str) -> tuple[str, int]:
    """A follow-up as ``("largest-files", n)``, ``("todo-lines", 0)`` or ``("other", 0)``.

    The explicit ``question:`` line wins; otherwise words such as "3 largest"
    or "TODO" in the text decide.
    """
    line = _QUESTION_LINE.search(text)
    if line is not None and line.group(1) in ("largest-files", "todo-lines"):
        return line.group(1), int(line.group(2) or 3)
    largest = _LARGEST.search(text)
    if largest is not None:
        return "largest-files", int(largest.group(1) or 3)
    if "TODO" in text or "FIXME" in text:
        return "todo-lines", 0
    return "other", 0


def json_blocks(text: str) -> list[dict[str, Any]]:
    """Every fenced ```json block of ``text`` that holds an object, in order."""
    blocks = []
    for body in _JSON_BLOCK.findall(text):
        try:
            value = json.loads(body)
        except ValueError:
            continue
        if isinstance(value, dict):
            blocks.append(value)
    return blocks


def fenced(value: Mapping[str, Any]) -> str:
    """``value`` as an indented JSON object in a fenced ```json block."""
    return "```json\n" + json.dumps(value, indent=2, ensure_ascii=False) + "\n```"


# -- the conversation as tool exchanges -----------------------------------------------------------


@attrs.frozen
class Exchange:
    """One tool call and its result (``content`` is None while unanswered).

    ``at`` is the index of the message holding the call; ``answered`` is the
    (message, block) position of the result, for ordering it against notices.
    """

    name: str
    input: Mapping[str, Any]
    at: int
    content: str | None = None
    is_error: bool = False
    answered: tuple[int, int] = (-1, -1)


def exchanges(messages: Sequence[Message]) -> list[Exchange]:
    """Every tool call of the conversation with its result, in call order."""
    calls: dict[str, Exchange] = {}
    for index, message in enumerate(messages):
        for position, block in enumerate(message.content):
            if type(block) is ToolUseBlock:
                calls[block.id] = Exchange(block.name, block.input, index)
            elif type(block) is ToolResultBlock and block.tool_use_id in calls:
                calls[block.tool_use_id] = attrs.evolve(
                    calls[block.tool_use_id],
                    content=block.content,
                    is_error=block.is_error,
                    answered=(index, position),
                )
    return list(calls.values())


def call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """A key equal for calls of the same tool with the same arguments."""
    return name + json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def is_instruction(message: Message) -> bool:
    """A user message that asks something (the task, input, a notice), not a tool result."""
    if message.role != "user" or message.origin in (
        Origin.TOOL_RESULTS,
        Origin.GRACE,
        Origin.FORK_BOUNDARY,
    ):
        return False
    return bool(message.text) and not any(type(b) is ToolResultBlock for b in message.content)


def message_text(message: Message) -> str:
    """The message's text blocks, one per line (a task may hold a reminder and the task)."""
    return "\n".join(b.text for b in message.content if type(b) is TextBlock)


def own_messages(messages: Sequence[Message]) -> Sequence[Message]:
    """The agent's own messages: those after the last fork boundary (all, if none)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].origin is Origin.FORK_BOUNDARY:
            return messages[index + 1 :]
    return messages


def episode_start(messages: Sequence[Message]) -> int:
    """The index after the agent's last final answer (a reply without tool calls), or 0."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "assistant" and not message.tool_uses:
            return index + 1
    return 0


# -- replies --------------------------------------------------------------------------------------


def jitter(latency: float, request: ModelRequest) -> float:
    """``latency`` varied by 50-150% per agent and turn, deterministically."""
    if latency <= 0:
        return 0.0
    seed = zlib.crc32(f"{request.agent_id}:{request.turn}".encode())
    return latency * (0.5 + (seed % 1000) / 1000)


def final_reply(request: ModelRequest, text: str, latency: float) -> Reply:
    """The reply that ends a run: the text, also through ``complete_task`` when it is offered.

    ``complete_task`` is offered when the agent must call it (an output schema,
    or the grace turn after a limit); otherwise a reply without tool calls ends
    the run with its text.
    """
    if COMPLETE_TASK in request.tool_names:
        return Reply(
            text=text,
            tool_calls=(ScriptedToolCall(COMPLETE_TASK, {"result": text}),),
            latency=latency,
        )
    return Reply(text=text, latency=latency)


def calls_reply(text: str, calls: Iterable[tuple[str, Mapping[str, Any]]], latency: float) -> Reply:
    """A reply making ``calls`` (tool name, arguments) after a line of ``text``."""
    return Reply(
        text=text,
        tool_calls=tuple(ScriptedToolCall(name, dict(args)) for name, args in calls),
        latency=latency,
    )
