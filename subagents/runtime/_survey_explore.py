"""The offline Explore policy: a scripted model that surveys one folder with the real tools.

:class:`ExplorePolicy` answers each model call of an ``Explore`` agent from the
conversation alone (never from state of its own, so a resumed agent goes on
where it was). For a task naming a folder (see :func:`folder_task`; a task
without one surveys the working directory) it:

1. lists every file with ``Glob`` (``**/*``). Glob shows at most a fixed number
   of paths (the newest) and says how many it left out; then the folder is
   split: ``LS`` gives its subfolders, each is globbed on its own (recursively,
   splitting again as needed) and its own files with ``*``;
2. counts lines and TODO/FIXME lines with ``Grep`` in ``count`` mode (one call
   per listed scope, ``head_limit`` set to the scope's file count so nothing is
   cut): pattern ``^`` matches every line of a text file, so the per-file
   counts are exact line counts; binary files (skipped by Grep, which says how
   many) and empty files (no line to match) have none;
3. reads the likeliest entry points (``__main__.py``, ``main.py``,
   ``pyproject.toml``...) with a small ``limit``;
4. ends with a short summary and a fenced JSON block of the facts.

File sizes in bytes are not reported: no read-only tool gives them. A
follow-up (:func:`followup_question`) is answered with one more tool call:
``largest-files N`` with a fresh ``^`` count, ``todo-lines`` with a ``content``
Grep. Every number comes from a tool result; the report says ``"exact":
false`` (with notes) when a cap kept some of it out of reach.

The survey itself (which calls are still needed, the facts so far) is
:class:`~subagents.runtime._survey_folder.Survey`; this module holds the policy,
its report and its answers to follow-ups.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final

import attrs

from subagents.runtime._messages import Origin
from subagents.runtime._providers.base import ModelRequest
from subagents.runtime._providers.reply import Reply
from subagents.runtime._survey import (
    DEFAULT_SURVEY_LATENCY,
    Exchange,
    call_key,
    calls_reply,
    episode_start,
    exchanges,
    fenced,
    final_reply,
    is_instruction,
    jitter,
    message_text,
    own_messages,
    parse_folder,
    parse_question,
    shown,
)
from subagents.runtime._survey_folder import EVERY_LINE, MAX_READS, TODO, Call, Survey
from subagents.runtime._survey_results import result_lines

__all__ = ["ExplorePolicy"]

_TODO_LINES_SHOWN: Final = 50


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _summary(facts: Mapping[str, Any]) -> str:
    """The report: a few sentences for people, then the facts as JSON."""
    where = shown(str(facts["folder"]))
    if "error" in facts:
        return f"I could not survey {where}: {facts['error']}\n\n{fenced(facts)}"
    kinds = ", ".join(
        f"{n} {kind}"
        for kind, n in (
            ("text", facts["text_files"]),
            ("binary", facts["binary_files"]),
            ("empty", facts["empty_files"]),
            ("too large to scan", facts["large_files"]),
        )
        if n
    )
    languages = ", ".join(f"{k} {v}" for k, v in facts["languages"].items()) or "none recognised"
    parts = [
        f"Surveyed {where}: {_plural(facts['files'], 'file')}"
        + (f" ({kinds})" if kinds else "")
        + f", {_plural(facts['lines'], 'line')}.",
        f"Languages: {languages}.",
        f"TODO/FIXME: {_plural(facts['todo_fixme'], 'line')} in "
        f"{_plural(facts['todo_fixme_files'], 'file')}.",
        f"Tests: {_plural(facts['tests'], 'test file')}"
        + (f" (test folders: {', '.join(facts['test_dirs'])})." if facts["test_dirs"] else "."),
    ]
    if facts["entry_points"]:
        parts.append(f"Entry points: {', '.join(facts['entry_points'][:MAX_READS])}.")
    if not facts["exact"]:
        parts.append("Some numbers are incomplete: " + "; ".join(facts["notes"]) + ".")
    return " ".join(parts) + "\n\n" + fenced(facts)


# -- the policy -----------------------------------------------------------------------------------


@final
@attrs.frozen
class ExplorePolicy:
    """The scripted model of an ``Explore`` agent surveying a folder (see the module doc).

    ``latency`` (seconds, jittered 50-150% per turn) is how long each reply
    takes, so a live view has something to show; 0 answers at once.
    """

    latency: float = DEFAULT_SURVEY_LATENCY

    def __call__(self, request: ModelRequest) -> Reply:
        """The next reply, worked out from the conversation so far."""
        messages = own_messages(request.messages)
        latency = jitter(self.latency, request)
        start = episode_start(messages)
        every = exchanges(messages)
        results = {call_key(e.name, e.input): e for e in every if e.content is not None}
        fresh = {
            call_key(e.name, e.input): e for e in every if e.content is not None and e.at >= start
        }
        tasks = [i for i, m in enumerate(messages) if m.origin is Origin.TASK]
        task_at = tasks[-1] if tasks else None
        if task_at is None:
            task_at = next((i for i, m in enumerate(messages) if is_instruction(m)), 0)
        task = message_text(messages[task_at]) if messages else ""
        survey = Survey(parse_folder(task) or ".", results)
        asked = [
            message_text(m)
            for i, m in enumerate(messages)
            if i >= start and i > task_at and is_instruction(m)
        ]
        if survey.needed and (start <= task_at or asked) and not request.grace:
            return calls_reply(_step_text(survey), survey.needed, latency)
        answers: list[str] = []
        for question in asked:
            kind, count = parse_question(question)
            needed = _followup_calls(survey, kind, fresh)
            if needed and not request.grace:
                return calls_reply(_followup_text(kind, survey.folder), needed, latency)
            answers.append(_answer(survey, kind, count, fresh))
        parts = [_summary(survey.facts())] if start <= task_at or not answers else []
        return final_reply(request, "\n\n".join([*parts, *answers]), latency)


def _step_text(survey: Survey) -> str:
    where = shown(survey.folder)
    if survey.stage == "list":
        if any(name == "LS" for name, _ in survey.needed):
            return f"Glob did not list every file of {where}; splitting it by subfolder."
        return f"Listing every file in {where} with Glob."
    if survey.stage == "count":
        return "Counting lines (pattern ^) and TODO/FIXME lines with Grep in count mode."
    return "Reading the likeliest entry points: " + ", ".join(
        a["file_path"] for _, a in survey.needed
    )


def _followup_calls(survey: Survey, kind: str, fresh: Mapping[str, Exchange]) -> list[Call]:
    """The calls a follow-up needs that this episode (``fresh``) has not made yet."""
    needed: list[Call] = []
    for scope, listing in survey.scopes:
        total = listing.count
        if not total:
            continue
        if kind == "largest-files":
            args = scope.grep(EVERY_LINE, total)
        elif kind == "todo-lines":
            args = scope.grep(TODO, _TODO_LINES_SHOWN, mode="content")
        else:
            continue
        if survey.result("Grep", args, fresh) is None:
            needed.append(("Grep", args))
    return needed


def _followup_text(kind: str, folder: str) -> str:
    if kind == "largest-files":
        return f"Counting the lines of every file in {shown(folder)} again to rank them."
    return f"Listing the TODO/FIXME lines of {shown(folder)} with Grep."


def _answer(survey: Survey, kind: str, count: int, fresh: Mapping[str, Exchange]) -> str:
    """The text (and JSON block) answering one follow-up from this episode's results."""
    if kind == "largest-files":
        return _largest_files(survey, count, fresh)
    if kind == "todo-lines":
        return _todo_lines(survey, fresh)
    facts = survey.facts()
    return (
        "I can answer questions about the files, lines, languages, TODO/FIXME lines, tests "
        "and entry points of the folder. What I found: " + _summary(facts).split("\n\n")[0]
    )


def _largest_files(survey: Survey, count: int, fresh: Mapping[str, Exchange]) -> str:
    per_file = {p: n for c in survey.counts(EVERY_LINE, fresh) for p, n in c.per_file.items()}
    top = sorted(per_file.items(), key=lambda item: (-item[1], item[0]))[:count]
    listed = ", ".join(f"{p} ({_plural(n, 'line')})" for p, n in top) or "none (no text files)"
    facts = {
        "followup": "largest-files",
        "folder": survey.folder,
        "files": [{"path": p, "lines": n} for p, n in top],
    }
    return (
        f"The {count} largest files in {shown(survey.folder)} by line count: {listed}.\n\n"
        f"{fenced(facts)}"
    )


def _todo_lines(survey: Survey, fresh: Mapping[str, Exchange]) -> str:
    found: list[str] = []
    for scope, listing in survey.scopes:
        args = scope.grep(TODO, _TODO_LINES_SHOWN, mode="content")
        result = survey.result("Grep", args, fresh) if listing.count else None
        if result is not None and not result.is_error:
            lines, _ = result_lines(result.content or "")
            found.extend(x for x in lines if x and x != "No matches found." and x[0] != "[")
    total = sum(sum(c.per_file.values()) for c in survey.counts(TODO))
    facts = {"followup": "todo-lines", "folder": survey.folder, "total": total, "lines": found}
    listed = "\n".join(f"- {line}" for line in found) or "(none)"
    return (
        f"TODO/FIXME lines in {shown(survey.folder)} ({len(found)} shown of {total}):\n"
        f"{listed}\n\n{fenced(facts)}"
    )
