"""A hook's JSON answer on stdout: Claude Code's structured output, read defensively.

Claude Code's hooks reference (https://code.claude.com/docs/en/hooks, "JSON
output" and "Decision control") lets a hook that exits 0 print one JSON object
on stdout instead of (or as well as) using exit code 2:

- common fields: ``continue`` (``false``: the agent stops, whatever else was
  decided), ``stopReason``, ``suppressOutput``, ``systemMessage`` (a warning
  for the user);
- ``Stop`` and ``SubagentStop``: ``{"decision": "block", "reason": ...}``
  blocks the stop, and ``reason`` (required) is what the agent is told to do
  next; no ``decision`` lets it stop;
- ``SubagentStart``: ``{"hookSpecificOutput": {"hookEventName":
  "SubagentStart", "additionalContext": ...}}`` adds ``additionalContext`` to
  the subagent's context (it cannot block);
- ``PostToolUse``: ``decision: "block"`` with a ``reason``, and
  ``additionalContext``, are texts for the model after the tool's result;
- ``PreToolUse``: ``hookSpecificOutput.permissionDecision: "deny"`` (with
  ``permissionDecisionReason``), or the older ``decision: "block"``, blocks
  the call.

Codex implements the same contract for its subagent hooks (openai/codex pull
requests #22782 and #22873; ``codex-rs/hooks/schema/generated/
stop.command.output.schema.json`` requires ``reason`` with ``block``), and so
does this module: a ``block`` without a reason is refused.

stdout is JSON when its first non-blank character is ``{``, or when it is a
valid JSON array (refused: the answer is an object); anything else, such as
``[note] ...``, is plain text (which ``SubagentStart`` adds to the context).
JSON comes from a program the repository may control: it is read from the
capped, redacted stdout only, decoded into a typed :class:`HookOutput`
(unknown keys skipped), and anything wrong with it (cut by the output cap,
invalid, nested past the decoder's depth, not an object, a field of the wrong
type) makes :func:`parse_hook_output` return an error message instead, which
the runner reports to the user: the JSON is ignored, never raised.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["HookOutput", "HookSpecificOutput", "parse_hook_output"]


class HookSpecificOutput(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """``hookSpecificOutput``: the event it answers, the context it adds, a ``PreToolUse`` verdict.

    Only ``permissionDecision: "deny"`` is acted on: ``"allow"`` would skip
    the approval a tool needs, which a hook is not trusted to do here.
    """

    hook_event_name: str | None = None
    additional_context: str | None = None
    permission_decision: Literal["allow", "deny", "ask"] | None = None
    permission_decision_reason: str | None = None


class HookOutput(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The JSON object a hook may print on stdout (Claude Code's field names)."""

    continue_: bool = msgspec.field(default=True, name="continue")
    stop_reason: str | None = None
    suppress_output: bool = False
    system_message: str | None = None
    #: ``"approve"`` is Claude Code's older spelling of "no decision".
    decision: Literal["block", "approve"] | None = None
    reason: str | None = None
    hook_specific_output: HookSpecificOutput | None = None


_DECODER = msgspec.json.Decoder(HookOutput)


def parse_hook_output(stdout: str, *, truncated: bool) -> tuple[HookOutput | None, str | None]:
    """``(output, None)`` for JSON, ``(None, why)`` for bad JSON, ``(None, None)`` for text.

    ``truncated`` says the output cap cut the hook's output: JSON cut short is
    refused as such. Never raises, whatever ``stdout`` holds.
    """
    text = stdout.strip()
    if not text.startswith(("{", "[")):
        return None, None
    if truncated:
        return None, "its JSON output was cut by the output cap and was ignored"
    try:
        if text.startswith("["):
            try:
                msgspec.json.decode(text)
            except msgspec.DecodeError:  # "[note] ...": text that opens with a bracket
                return None, None
            return None, "its JSON output is an array, not an object, and was ignored"
        return _DECODER.decode(text), None
    except msgspec.ValidationError as exc:
        return None, f"its JSON output was ignored: {exc}"
    except msgspec.DecodeError as exc:
        return None, f"its output is not valid JSON and was ignored ({exc})"
    except RecursionError:
        return None, "its JSON output is nested too deeply and was ignored"
