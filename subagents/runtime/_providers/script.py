"""Scripts: policies that play a list of replies, one per turn, read from YAML or JSON.

A :class:`Script` answers an agent's turn ``n`` (``request.turn``) with its
reply ``n``; :func:`load_scripts` reads a file of them::

    - text: Looking for the entry point.
      tool_calls:
        - {name: Glob, input: {pattern: "**/main.py"}}
    - error: {type: overloaded_error, message: busy}       # a fault
    - tool_calls: [{name: Read, raw_input: "{not json"}]    # a malformed call
    - hang: true                                            # never answers
    - complete_task: {report: {summary: done, issues: []}}

A file may also map agent types to such lists (``"*"`` for every other type).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, final

import msgspec
import yaml

from subagents.runtime._complete_task import COMPLETE_TASK
from subagents.runtime._exceptions import ScriptError, provider_error
from subagents.runtime._providers.base import ModelRequest, Usage
from subagents.runtime._providers.reply import Reply, ScriptedToolCall

__all__ = ["Script", "load_scripts"]


class _CallSpec(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    input: dict[str, Any] | None = None
    raw_input: str | None = None
    id: str | None = None


class _ErrorSpec(msgspec.Struct, forbid_unknown_fields=True):
    type: str = "api_error"
    message: str = "scripted provider error"
    status: int | None = None


class _UsageSpec(msgspec.Struct, forbid_unknown_fields=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class _TurnSpec(msgspec.Struct, forbid_unknown_fields=True):
    text: str = ""
    thinking: str = ""
    tool_calls: list[_CallSpec] = []
    complete_task: dict[str, Any] | None = None
    usage: _UsageSpec | None = None
    latency: float | None = None
    error: _ErrorSpec | None = None
    hang: bool = False
    stop_reason: str | None = None

    def reply(self) -> Reply:
        calls = [
            ScriptedToolCall(c.name, c.raw_input if c.raw_input is not None else c.input, c.id)
            for c in self.tool_calls
        ]
        if self.complete_task is not None:
            calls.append(ScriptedToolCall(COMPLETE_TASK, self.complete_task))
        error = None
        if self.error is not None:
            error = provider_error(
                self.error.message, error_type=self.error.type, status_code=self.error.status
            )
        usage = None
        if self.usage is not None:
            usage = Usage(
                self.usage.input_tokens,
                self.usage.output_tokens,
                self.usage.cache_read_tokens,
                self.usage.cache_write_tokens,
            )
        return Reply(
            text=self.text,
            thinking=self.thinking,
            tool_calls=tuple(calls),
            usage=usage,
            latency=self.latency,
            error=error,
            hang=self.hang,
            stop_reason=self.stop_reason,
        )


def _parse_turns(document: Any, where: str) -> tuple[Reply, ...]:
    try:
        specs = msgspec.convert(document, type=list[_TurnSpec])
    except msgspec.ValidationError as exc:
        raise ScriptError(f"{where}: not a valid script ({exc}).") from None
    return tuple(spec.reply() for spec in specs)


@final
class Script:
    """A policy that plays ``replies`` in order: reply ``n`` answers the agent's turn ``n``.

    The agent's turn is ``request.turn`` (its own assistant messages so far), so
    one script serves any number of agents, and a resumed agent picks up where
    it was. Past the end it raises :class:`ScriptError`, or with ``repeat_last``
    plays the last reply again.
    """

    __slots__ = ("repeat_last", "replies")

    def __init__(self, replies: Sequence[Reply], *, repeat_last: bool = False) -> None:
        self.replies = tuple(replies)
        self.repeat_last = repeat_last

    def __repr__(self) -> str:
        return f"<Script {len(self.replies)} replies>"

    def __len__(self) -> int:
        return len(self.replies)

    def __call__(self, request: ModelRequest) -> Reply:
        turn = request.turn
        replies = self.replies
        if turn < len(replies):
            return replies[turn]
        if self.repeat_last and replies:
            return replies[-1]
        raise ScriptError(
            f"The script of {len(replies)} replies has no reply for turn {turn + 1} of agent "
            f"{request.agent_id or request.agent_type or '?'}; add replies or end it with a "
            "final message."
        )

    @classmethod
    def from_data(cls, document: Any, *, where: str = "script") -> Script:
        """A script from a parsed YAML/JSON list of turns."""
        return cls(_parse_turns(document, where))

    @classmethod
    def from_text(cls, text: str, *, where: str = "script") -> Script:
        """A script from YAML (or JSON, which is YAML) text."""
        return cls.from_data(_load_yaml(text, where), where=where)


def _load_yaml(text: str, where: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScriptError(f"{where}: not valid YAML or JSON ({exc}).") from None


def load_scripts(source: str | Path) -> dict[str, Script]:
    """Scripts by agent type from a file: a list (for every type, key ``*``) or a mapping."""
    path = Path(source)
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{where}: cannot read the script ({exc.strerror}).") from None
    document = _load_yaml(text, where)
    if isinstance(document, list):
        return {"*": Script.from_data(document, where=where)}
    if isinstance(document, dict):
        return {
            str(agent_type): Script.from_data(turns, where=f"{where}: {agent_type}")
            for agent_type, turns in document.items()
        }
    raise ScriptError(
        f"{where}: a script is a list of turns, or a mapping of agent types to lists."
    )
