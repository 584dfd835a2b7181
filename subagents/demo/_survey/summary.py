"""The lead's final answer: a Markdown table of every folder's facts, with totals.

:func:`summary` writes the table (folder, files, lines, languages, TODO/FIXME,
tests), notes on what is missing or inexact, the follow-up's answer, and the
main facts again as a fenced JSON block (one line per folder) for programs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Final

from subagents.demo._survey.common import json_blocks, shown
from subagents.demo._survey.replay import SKIPPED_FOLDERS, Replay, folders_to_survey, number

__all__ = ["summary"]

_LANGUAGES_SHOWN: Final = 3
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


def _languages(counts: Mapping[str, int]) -> str:
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown_ = ", ".join(f"{name} {n}" for name, n in ranked[:_LANGUAGES_SHOWN])
    if len(ranked) > _LANGUAGES_SHOWN:
        shown_ += f", +{len(ranked) - _LANGUAGES_SHOWN} more"
    return shown_ or "-"


def _row(cells: Iterable[object]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def summary(state: Replay) -> str:
    """The final answer: table with totals, notes, the follow-up's answer, and a JSON block."""
    if state.listing is None:
        why = state.listing_error or "the directory was not listed"
        return f"I could not survey the working directory: {why}"
    folders = folders_to_survey(state)
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
        key: sum(number(r.get(key)) for r in rows)
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


def _followup(state: Replay) -> str:
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
