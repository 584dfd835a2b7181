"""Conversations: messages made of text, thinking, tool_use and tool_result blocks.

Blocks are ``msgspec`` structs tagged by ``type`` whose fields are spelled as
the Anthropic Messages API spells them, so ``msgspec.to_builtins(block)`` is
the wire form. A :class:`Message` adds an ``origin`` (why the runtime put it
there: the task, a tool result, the grace notice...) which providers do not
send. A :class:`Conversation` is appended to as the agent works, forked for a
child, written as JSON lines (one message per line) and rebuilt from them; its
optional :attr:`~Conversation.on_append` observer sees every message as it is
added (the runtime writes each one to the agent's transcript there).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Any, Literal, final, overload

import msgspec

__all__ = [
    "Block",
    "Conversation",
    "Message",
    "Origin",
    "RedactedThinkingBlock",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "WebFetchToolResultBlock",
    "WebSearchToolResultBlock",
]


class TextBlock(msgspec.Struct, frozen=True, tag_field="type", tag="text", gc=False):
    """Text written by the user, the runtime or the model."""

    text: str


class ThinkingBlock(msgspec.Struct, frozen=True, tag_field="type", tag="thinking", gc=False):
    """The model's extended thinking; ``signature`` must be sent back unchanged."""

    thinking: str
    signature: str = ""


class RedactedThinkingBlock(
    msgspec.Struct, frozen=True, tag_field="type", tag="redacted_thinking", gc=False
):
    """Thinking the provider encrypted; sent back as it came."""

    data: str


class ToolUseBlock(msgspec.Struct, frozen=True, tag_field="type", tag="tool_use", gc=False):
    """A tool call the model made."""

    id: str
    name: str
    input: dict[str, Any]


class ToolResultBlock(
    msgspec.Struct, frozen=True, tag_field="type", tag="tool_result", omit_defaults=True, gc=False
):
    """The answer to one :class:`ToolUseBlock`, in the next user message."""

    tool_use_id: str
    content: str
    is_error: bool = False


class ServerToolUseBlock(
    msgspec.Struct, frozen=True, tag_field="type", tag="server_tool_use", gc=False
):
    """A call of a tool the provider runs itself (Anthropic's ``web_search``, ``web_fetch``).

    The API runs it within the same response; nothing here answers it.
    """

    id: str
    name: str
    input: dict[str, Any]


class WebSearchToolResultBlock(
    msgspec.Struct, frozen=True, tag_field="type", tag="web_search_tool_result", gc=False
):
    """The provider's answer to a ``web_search`` call, kept verbatim to be sent back."""

    tool_use_id: str
    content: Any


class WebFetchToolResultBlock(
    msgspec.Struct, frozen=True, tag_field="type", tag="web_fetch_tool_result", gc=False
):
    """The provider's answer to a ``web_fetch`` call, kept verbatim to be sent back."""

    tool_use_id: str
    content: Any


#: The provider-side results: each answers one :class:`ServerToolUseBlock`.
ServerToolResultBlock = WebSearchToolResultBlock | WebFetchToolResultBlock

Block = (
    TextBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ToolUseBlock
    | ToolResultBlock
    | ServerToolUseBlock
    | WebSearchToolResultBlock
    | WebFetchToolResultBlock
)
"""One piece of a message's content."""


class Origin(enum.Enum):
    """Why a message is in the conversation (kept in transcripts, never sent to a model)."""

    #: The agent's task (its first user message).
    TASK = "task"
    #: Follow-up input sent to the agent.
    INPUT = "input"
    #: The results of the model's tool calls.
    TOOL_RESULTS = "tool_results"
    #: The notice that opens the grace turn.
    GRACE = "grace"
    #: The boundary after the parent's forked messages.
    FORK_BOUNDARY = "fork_boundary"
    #: A message the model wrote.
    MODEL = "model"
    #: A note from the runtime (a child finished...).
    NOTICE = "notice"


class Message(msgspec.Struct, frozen=True, omit_defaults=True, gc=False):
    """One message: its role, its blocks, and why it is there."""

    role: Literal["user", "assistant"]
    content: tuple[Block, ...]
    origin: Origin | None = None

    @classmethod
    def user(cls, *texts: str, origin: Origin | None = None) -> Message:
        """A user message of text blocks (empty texts are left out)."""
        return cls("user", tuple(TextBlock(t) for t in texts if t), origin)

    @classmethod
    def assistant(cls, *texts: str) -> Message:
        """An assistant message of text blocks (for building conversations in code)."""
        return cls("assistant", tuple(TextBlock(t) for t in texts if t), Origin.MODEL)

    @property
    def text(self) -> str:
        """The message's text blocks, joined."""
        return "".join(b.text for b in self.content if type(b) is TextBlock)

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The message's tool calls, in order."""
        return [b for b in self.content if type(b) is ToolUseBlock]


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Message)


@final
class Conversation:
    """The messages of one agent, appended to as it works.

    Appending is O(1) and nothing copies the whole list per turn: providers are
    handed :attr:`messages` itself and must not keep it past their call.
    :attr:`turns` counts the agent's own model turns (assistant messages after
    the last fork boundary), which scripted policies use to pick their reply.
    :attr:`on_append`, when set, is called with each message once it is added
    (not with the messages the conversation was built from). :attr:`on_settle`,
    when set, is called by the agent loop once a turn's last message is added,
    before the loop goes on: an awaitable it returns is awaited first (the
    transcript writer's file being made, so that the turn is on disk).
    """

    __slots__ = ("_messages", "_turns", "on_append", "on_settle")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = []
        self._turns = 0
        self.on_append: Callable[[Message], object] | None = None
        self.on_settle: Callable[[], Awaitable[object] | None] | None = None
        for message in messages:
            self.append(message)

    def append(self, message: Message) -> None:
        """Add ``message`` at the end, then tell :attr:`on_append` (if set).

        An exception raised by the observer propagates to the caller, after the
        message was added.
        """
        self._messages.append(message)
        if message.role == "assistant":
            self._turns += 1
        elif message.origin is Origin.FORK_BOUNDARY:
            self._turns = 0
        if self.on_append is not None:
            self.on_append(message)

    def extend(self, messages: Iterable[Message]) -> None:
        """Add each of ``messages`` at the end, in order."""
        for message in messages:
            self.append(message)

    @property
    def messages(self) -> Sequence[Message]:
        """The messages, oldest first (a live view: do not keep it across appends)."""
        return self._messages

    @property
    def turns(self) -> int:
        """Assistant messages since the last fork boundary (the agent's own turns so far)."""
        return self._turns

    @property
    def last(self) -> Message | None:
        """The newest message, or ``None`` when empty."""
        return self._messages[-1] if self._messages else None

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        return self._messages[index]

    def __repr__(self) -> str:
        return f"<Conversation {len(self._messages)} messages, {self._turns} turns>"

    def copy(self) -> Conversation:
        """An independent conversation with the same messages (messages are immutable).

        The copy has no :attr:`on_append` or :attr:`on_settle` observer.
        """
        return Conversation(self._messages)

    def fork(self) -> list[Message]:
        """The messages a forked child gets: unresolved tool uses removed, text kept.

        See :func:`subagents.runtime.fork_messages`.
        """
        from subagents.runtime._fork import fork_messages

        return fork_messages(self._messages)

    # -- transcripts ------------------------------------------------------------

    @staticmethod
    def encode_line(message: Message) -> bytes:
        """One message as a JSON line (with its newline), for append-only transcripts."""
        return _encoder.encode(message) + b"\n"

    def to_jsonl(self) -> bytes:
        """Every message as JSON lines."""
        return b"".join(_encoder.encode(m) + b"\n" for m in self._messages)

    @classmethod
    def from_jsonl(cls, data: bytes | str) -> Conversation:
        """Rebuild a conversation from JSON lines.

        Blank lines are skipped; a last line that does not decode (a write torn
        by a crash) is ignored; a bad line anywhere else raises
        ``msgspec.ValidationError`` or ``msgspec.DecodeError``.
        """
        raw = data.encode("utf-8") if isinstance(data, str) else data
        lines = [line for line in raw.split(b"\n") if line.strip()]
        conversation = cls()
        for number, line in enumerate(lines, start=1):
            try:
                message = _decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                if number == len(lines):
                    break
                raise
            conversation.append(message)
        return conversation
