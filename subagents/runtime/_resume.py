"""Rebuilding an agent that is no longer in memory, from its transcript.

:func:`load_resumable` reads what a resume needs: who the agent was (id,
nickname, type, parent, model), its definition (the one in memory, else the
catalog's current definition of its type), its whole conversation (user
prompts included) and how its last run ended. :func:`plan_resume` then decides
how the rebuilt agent starts:

- with a prompt: the prompt is its next input, and it runs;
- without one, when its conversation ends with a user message (it was stopped
  or crashed mid-run), it carries on from there;
- without one, when it had given its final answer, it comes back idle: final
  and open, with the status of its last run, until it is sent input;
- otherwise (stopped right after answering) it is told it was resumed and
  carries on.

Tool calls left without a result by a crash are answered with an error first,
so the conversation is one a model accepts.

:func:`children_to_reopen` says which children come back with a resumed agent:
those its transcripts name as children and that were still open when it
stopped. One closed on its own (``close_agent`` on it) stays closed; one closed
with its parent's subtree, or left open when the process ended, comes back.
This is Codex's ``resume_agent_from_rollout``, which reopens the spawn edges
still marked open (openai/codex ``codex-rs/core/src/agent/control.rs``).

The transcript is read on the Trio thread, in one read of one file, as the
writer writes it: a worker thread would give a mock clock an idle moment to
jump in, which would make resumes in tests non-deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

import attrs
import msgspec

from subagents.agents import AgentCatalog, AgentDefinition, build_system_prompt
from subagents.runtime._agent_record import AgentRecord
from subagents.runtime._exceptions import TranscriptError, TranscriptNotFound
from subagents.runtime._messages import (
    Conversation,
    Message,
    Origin,
    ToolResultBlock,
    ToolUseBlock,
)
from subagents.runtime._result import AgentResult
from subagents.runtime._services import Services
from subagents.runtime._transcripts.load import (
    Transcript,
    find_transcript,
    list_transcripts,
    load_transcript,
)
from subagents.runtime._transcripts.records import ClosedRecord, FinalStatus, MetaRecord
from subagents.teams import format_peer_message

__all__ = [
    "RESUMED_NOTICE",
    "ResumePlan",
    "Resumable",
    "answer_dangling_calls",
    "children_to_reopen",
    "load_resumable",
    "unread_peer_messages",
    "plan_resume",
]

#: Told to an agent resumed without a prompt that had stopped right after answering.
RESUMED_NOTICE = (
    "You were stopped and have now been resumed. Continue your task from where you left off."
)
_CRASHED = "Not completed: the agent stopped before this call finished."


@attrs.frozen
class Resumable:
    """An agent as its transcript (or, without transcripts, its record) describes it."""

    agent_id: str
    nickname: str
    parent_id: str | None
    model: str
    definition: AgentDefinition
    system_prompt: str
    conversation: Conversation = attrs.field(eq=False)
    last_result: AgentResult | None = None
    last_status: FinalStatus | None = None
    transcript: Transcript | None = attrs.field(default=None, eq=False)


@attrs.frozen
class ResumePlan:
    """How a rebuilt agent starts: ``restore`` set means idle, with that last result."""

    prompt: str | None
    restore: AgentResult | None


def _task_text(conversation: Conversation) -> str:
    for message in conversation:
        if message.origin is Origin.TASK:
            return message.text
    return ""


def load_resumable(
    services: Services,
    catalog: AgentCatalog,
    agent_id: str,
    record: AgentRecord | None,
    path: Path | None = None,
) -> Resumable:
    """What resuming ``agent_id`` starts from; ``record`` is its record if still in memory.

    ``path`` is its transcript when already found (and claimed), else it is
    looked up in the state directory.

    Raises :class:`TranscriptNotFound` when there is neither a transcript nor a
    record, :class:`TranscriptError` for a file that is not a transcript, and
    :class:`~subagents.agents.UnknownAgentError` when its type no longer exists.
    """
    config = services.config
    if not services.transcripts_enabled:
        if record is None:
            raise TranscriptNotFound(agent_id, config.state_dir)
        return Resumable(
            agent_id=agent_id,
            nickname=record.nickname,
            parent_id=record.parent_id,
            model=record.model,
            definition=record.definition,
            system_prompt=record.system_prompt,
            conversation=record.conversation.copy(),
            last_result=record.last_result,
            last_status=record.last_status,
        )
    transcript = load_transcript(
        find_transcript(config.state_dir, agent_id) if path is None else path
    )
    log = services.log.for_agent(
        agent_id=agent_id, nickname=transcript.meta.nickname, depth=transcript.meta.depth
    )
    for problem in transcript.problems:
        log.warning("transcript problem", problem=str(problem))
    meta = transcript.meta
    conversation = transcript.conversation()
    if record is not None and record.agent_type == meta.agent_type:
        definition = record.definition
        system_prompt = record.system_prompt
    else:
        definition = catalog.get(meta.agent_type)
        system_prompt = build_system_prompt(
            definition,
            cwd=services.cwd,
            prompt=_task_text(conversation),
            home=services.home,
            project_root=services.cwd,
        )
    last = transcript.last_result
    return Resumable(
        agent_id=agent_id,
        nickname=meta.nickname,
        parent_id=meta.parent_id,
        model=meta.model,
        definition=definition,
        system_prompt=system_prompt,
        conversation=conversation,
        last_result=None if last is None else last.to_result(),
        last_status=None if last is None else last.status,
        transcript=transcript,
    )


def answer_dangling_calls(conversation: Conversation) -> bool:
    """Answer the tool calls of the last assistant message that have no result; whether any."""
    last = conversation.last
    if last is None or last.role != "assistant":
        return False
    calls: list[ToolUseBlock] = last.tool_uses
    if not calls:
        return False
    conversation.append(
        Message(
            "user",
            tuple(ToolResultBlock(call.id, _CRASHED, True) for call in calls),
            Origin.TOOL_RESULTS,
        )
    )
    return True


def plan_resume(source: Resumable, prompt: str | None) -> ResumePlan:
    """Prepare ``source.conversation`` for the rebuilt agent and say how it starts."""
    conversation = source.conversation
    answer_dangling_calls(conversation)
    if prompt is not None:
        conversation.append(Message.user(prompt, origin=Origin.INPUT))
        return ResumePlan(prompt, None)
    last = conversation.last
    if last is None:
        raise TranscriptError(
            f"Agent {source.agent_id} has no messages to resume from (its transcript holds "
            "only its metadata); spawn a new agent instead."
        )
    if last.role == "user":
        return ResumePlan(None, None)
    if source.last_result is not None and source.last_status in ("completed", "errored"):
        return ResumePlan(None, source.last_result)
    conversation.append(Message.user(RESUMED_NOTICE, origin=Origin.NOTICE))
    return ResumePlan(None, None)


#: How the lines :func:`children_to_reopen` reads start (``msgspec`` writes the tag first).
_IDENTITY_LINES: Final = (b'{"record":"meta"', b'{"record":"closed"')
_identity_decoder: Final = msgspec.json.Decoder(MetaRecord | ClosedRecord)


def children_to_reopen(state_dir: Path) -> dict[str, list[str]]:
    """Each agent's children to reopen with it: those its transcripts name as its
    children that were open when they stopped, oldest first (see the module docstring).

    A transcript's newest meta line names its agent's parent; a ``closed`` line
    after it whose ``root`` is the agent itself means it was closed on its own.
    Only meta and closed lines are decoded; unreadable files and lines are skipped.
    """
    tree: dict[str, list[str]] = {}
    for info in reversed(list_transcripts(state_dir)):  # oldest first
        if info.problem is not None:
            continue
        parent: str | None = None
        closed_alone = False
        try:
            with info.path.open("rb") as file:
                for line in file:
                    if not line.startswith(_IDENTITY_LINES):
                        continue
                    try:
                        record = _identity_decoder.decode(line)
                    except (msgspec.MsgspecError, RecursionError):
                        continue
                    if record.agent_id != info.agent_id:
                        continue
                    if isinstance(record, MetaRecord):
                        parent, closed_alone = record.parent_id, False
                    else:
                        closed_alone = record.root == info.agent_id
        except OSError:
            continue
        if parent is not None and parent != info.agent_id and not closed_alone:
            tree.setdefault(parent, []).append(info.agent_id)
    return tree


class _PeerRow(msgspec.Struct):
    agent_id: str = ""
    delivered: bool = False


class _PeerResult(msgspec.Struct):
    recipients: list[_PeerRow] = []


_peer_result_decoder: Final = msgspec.json.Decoder(_PeerResult)


def unread_peer_messages(
    team_name: str,
    names: Mapping[str, str],
    conversations: Mapping[str, Conversation],
) -> list[tuple[str, str]]:
    """``(recipient id, framed message)`` of each peer message a resumed team's member
    was told was delivered (its ``SendMessage`` result, in its transcript) that its
    recipient's conversation does not hold: it was still in the recipient's mailbox
    when the process ended. In the order each sender sent them.

    ``names`` maps each member's agent id to its name in the team (``"lead"`` for the
    lead); ``conversations`` holds the members that came back. A message is matched by
    its framed text (sender, team and text), counted: two identical messages need two
    copies. Messages an embedding program sent (``Team.send``) leave no ``SendMessage``
    in any transcript and are not found here.
    """
    expected: list[tuple[str, str]] = []
    for sender_id, conversation in conversations.items():
        sender = names.get(sender_id)
        if sender is None:
            continue
        results = {
            block.tool_use_id: block
            for message in conversation
            for block in message.content
            if type(block) is ToolResultBlock
        }
        for message in conversation:
            for call in message.tool_uses:
                result = results.get(call.id)
                text = call.input.get("message")
                if call.name != "SendMessage" or result is None or not isinstance(text, str):
                    continue
                try:
                    rows = _peer_result_decoder.decode(result.content).recipients
                except (msgspec.MsgspecError, RecursionError):
                    continue  # not a peer message (a message to an agent by id), or no result
                framed = format_peer_message(team_name, sender, sender_id, text)
                expected += [(row.agent_id, framed) for row in rows if row.delivered]
    held: dict[tuple[str, str], int] = {}
    missing: list[tuple[str, str]] = []
    for key in expected:
        to_id, framed = key
        if to_id not in conversations:
            continue  # it did not come back: nothing can read it
        if key not in held:
            held[key] = sum(m.text.count(framed) for m in conversations[to_id])
        if held[key] > 0:
            held[key] -= 1
        else:
            missing.append(key)
    return missing
