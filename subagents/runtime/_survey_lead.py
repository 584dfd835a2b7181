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

Results may come in any order; rows are sorted by folder name. The replay is
:class:`~subagents.runtime._survey_replay.Replay`; the summary is written by
:func:`~subagents.runtime._survey_summary.summary`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, final

import attrs

from subagents.runtime._providers.base import ModelRequest
from subagents.runtime._providers.reply import Reply
from subagents.runtime._survey import (
    DEFAULT_SURVEY_LATENCY,
    calls_reply,
    final_reply,
    folder_task,
    followup_question,
    jitter,
    own_messages,
    shown,
)
from subagents.runtime._survey_replay import Child, Replay, folders_to_survey, number
from subagents.runtime._survey_summary import summary

__all__ = ["LeadPolicy"]

_EXPLORE: Final = "Explore"
_WAIT_MS: Final = 300_000
_FOLLOWUP_FILES: Final = 3
#: Spawns tried in one turn while the agent limit is unknown (the rest wait a turn).
_FIRST_BURST: Final = 16


def _lines(facts: Mapping[str, Any] | None) -> int:
    return number(facts.get("lines")) if facts else -1


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
        state = Replay(own_messages(request.messages))
        tools = set(request.tool_names)
        if request.grace:
            return final_reply(request, summary(state), latency)
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
            return final_reply(request, summary(state), latency)
        if not {"spawn_agent", "wait"} <= tools:
            text = "I cannot start Explore agents: spawn_agent and wait are not available to me."
            return final_reply(request, text, latency)
        folders = folders_to_survey(state)
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
        return final_reply(request, summary(state), latency)


def _largest(state: Replay) -> Child | None:
    done = [c for c in state.children.values() if c.facts is not None and "error" not in c.facts]
    if not done:
        return None
    return max(
        done, key=lambda c: (_lines(c.facts), number((c.facts or {}).get("files")), c.folder)
    )


def _step_text(spawn: Sequence[str], queued: Sequence[str], live: Sequence[Child]) -> str:
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
